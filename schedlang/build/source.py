"""A built program or piece as ``.sched`` text (``to_source()``), laid out by ``fmt``: a ``let``
for each piece the user's Python assigned to a variable, so the text keeps the structure
it was built with, and never a ``let`` named like a word of the language."""

from __future__ import annotations

from ..semantics.names import LANGUAGE_NAMES
from ..syntax import ir
from ..syntax.fmt import format_source
from . import site as sites
from . import text as texts
from .declarations import IDENTIFIER


def source_text(statements: list[ir.Node], bare: bool = False) -> str:
    """The statements as ``.sched`` text, with a ``let`` for each piece the user's Python
    assigned to a variable (``decay = sb.cosine(...)``, ``site.assigned_name``) and used in
    a schedule, so the text keeps the structure it was given; ``bare``: a lone schedule
    with no parameter and no ``let`` is written as a bare expression."""
    values = [s.value for s in statements if isinstance(s, (ir.ScheduleDecl, ir.BatchDecl, ir.RunDecl))]
    taken = LANGUAGE_NAMES | {s.name for s in statements if hasattr(s, "name")}
    found = texts.lets(values, _assigned_name, taken)
    params = [s for s in statements if isinstance(s, ir.Param)]
    if bare and not params and not found:
        return _formatted(texts.text(values[0]))
    names = {id(node): name for name, node in found}
    lines = [*map(texts.statement, params)]
    lines += [f"let {name} = {texts.text(node, {k: v for k, v in names.items() if k != id(node)})}"
              for name, node in found]
    for stmt in statements:
        if isinstance(stmt, ir.BatchDecl):
            lines.append(f"batch = {texts.text(stmt.value, names)}")
        elif isinstance(stmt, ir.RunDecl):
            lines.append(f"run = {texts.text(stmt.value, names)}")
        elif isinstance(stmt, ir.ScheduleDecl):
            lines.append(f"schedule {stmt.name} = {texts.text(stmt.value, names)}")
            if not isinstance(stmt.value, ir.Name):  # a later schedule built on it names it
                names.setdefault(id(stmt.value), stmt.name)
    return _formatted("\n".join(lines))


def _assigned_name(node: ir.Node) -> str | None:
    name = sites.assigned_name(node.span)
    return name if name is not None and IDENTIFIER.match(name) else None


def _formatted(source: str) -> str:
    return format_source(source, "<schedlang.build>")
