"""A built program or piece as ``.sched`` text (``to_source()``), laid out by ``fmt``: a ``let``
for each piece the user's Python assigned to a variable, so the text keeps the structure
it was built with, and never a ``let`` named like a word of the language."""

from __future__ import annotations

from ..semantics.names import LANGUAGE_NAMES
from ..syntax import ir, unparse
from ..syntax.fmt import format_source
from . import site as sites
from .declarations import IDENTIFIER
from .text import lets


def source_text(statements: list[ir.Node], bare: bool = False) -> str:
    """The statements as ``.sched`` text, with a ``let`` for each piece the user's Python
    assigned to a variable (``decay = sb.cosine(...)``, ``site.assigned_name``) and used in
    a schedule, so the text keeps the structure it was given; ``bare``: a lone schedule
    with no parameter and no ``let`` is written as a bare expression."""
    values = [s.value for s in statements if isinstance(s, (ir.ScheduleDecl, ir.BatchDecl, ir.RunDecl))]
    taken = LANGUAGE_NAMES | {s.name for s in statements if hasattr(s, "name")}
    found = lets(values, _assigned_name, taken)
    params = [s for s in statements if isinstance(s, ir.Param)]
    if bare and not params and not found:
        return _formatted(unparse.expression(values[0]))
    names = {id(node): name for name, node in found}
    lines = [*map(unparse.statement, params)]
    lines += [unparse.statement(ir.Let(node.span, name, node), names) for name, node in found]
    for stmt in statements:
        if isinstance(stmt, (ir.BatchDecl, ir.RunDecl, ir.ScheduleDecl)):
            lines.append(unparse.statement(stmt, names))
        if isinstance(stmt, ir.ScheduleDecl) and not isinstance(stmt.value, ir.Name):
            names.setdefault(id(stmt.value), stmt.name)  # a later schedule built on it names it
    return _formatted("\n".join(lines))


def _assigned_name(node: ir.Node) -> str | None:
    name = sites.assigned_name(node.span)
    return name if name is not None and IDENTIFIER.match(name) else None


def _formatted(source: str) -> str:
    return format_source(source, "<schedlang.build>")
