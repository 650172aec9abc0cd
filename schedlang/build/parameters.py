"""``sb.param``: a ``param NAME: TYPE = DEFAULT where CLAUSE`` statement made from Python.  A
``where`` clause is ``.sched`` text, parsed by the parser with its spans moved onto the
string in the user's ``.py`` line, or a function of the parameter returning a condition."""

from __future__ import annotations

from dataclasses import replace

from ..errors import SchedlangError, Span
from ..syntax import ir
from ..syntax.parser import RESERVED, parse
from . import site as sites
from .declarations import IDENTIFIER, ORDER, ParamDecl, merge
from .pieces import Expr, Param, as_expr


def param(name: str, type: type | str = float, default=None, where=None) -> Param:  # noqa: A002
    """Declare a parameter: ``param NAME: TYPE = DEFAULT where CLAUSE`` in a ``.sched`` file.

    ``type``: ``int`` (whole numbers >= 0, e.g. steps), ``float``, or ``"group"`` (a float each
    optimizer param group may override).  ``default``: a number, or None for a required
    parameter (bound later by ``params=`` / ``.bind()`` / the scheduler class's constructor).
    ``where``: the clause as ``.sched`` text (``"total > warmup"``, naming any parameter of
    the schedule), or a function of this parameter returning a condition
    (``lambda total: total > warmup``).
    """
    site = sites.caller()
    if not isinstance(name, str) or not IDENTIFIER.match(name):
        raise SchedlangError(f"{name!r} is not a name", site.argument(0),
                             hint="a name is ASCII letters, digits and _, not starting with a digit")

    if name in RESERVED or name == "t":
        raise SchedlangError(f"'{name}' is a word of the language and cannot be a parameter name"
                             if name != "t" else "'t' is the step and cannot be a parameter",
                             site.argument(0), hint=f"pick another name, e.g. 'my_{name}'")
    type_name = {int: "int", float: "float"}.get(type, type)
    type_span = site.argument(1) if site.argument(1) is not site.span else site.argument(keyword="type")
    if not isinstance(type_name, str) or not IDENTIFIER.match(type_name):
        raise SchedlangError(f"unknown parameter type {type_name!r}", type_span,
                             hint="use int (whole numbers, e.g. steps), float, or \"group\"")
    name_node = ir.Name(site.span, name)
    deps: dict[str, ParamDecl] = {}
    default_node = None
    if default is not None:
        value = as_expr(default, _argument_span(site, 2, "default"))
        default_node, deps = value.node, value.params
    where_node = None
    if where is not None:
        where_node, where_params = _where(where, name, type_name, name_node, site)
        deps = merge(site, deps, {k: v for k, v in where_params.items() if k != name})
    stmt = ir.Param(site.span, name, type_name, type_span, default_node, where_node)
    decl = ParamDecl(stmt, next(ORDER))
    return Param(name_node, merge(site, deps, {name: decl}))


def _argument_span(site: sites.Site, index: int, keyword: str) -> Span:
    found = site.argument(index)
    return found if found is not site.span else site.argument(keyword=keyword)


def _where(where, name: str, type_name: str, name_node: ir.Name, site: sites.Site):
    """A ``where`` clause from text (parsed by the parser) or from a function of the parameter."""
    span = _argument_span(site, 3, "where")
    if callable(where) and not isinstance(where, (str, Expr)):
        provisional = ParamDecl(ir.Param(site.span, name, type_name, span, None, None), -1)
        clause = where(Param(name_node, {name: provisional}, check=False))
        clause = as_expr(clause, span)
        return clause.node, clause.params
    if isinstance(where, Expr):
        return where.node, where.params
    if not isinstance(where, str):
        raise SchedlangError(f"where must be .sched text or a function, not {type(where).__name__}", span)

    prefix = f"param {name}: {type_name} where "
    locate = _text_locator(where, span, len(prefix))
    try:
        module = parse(prefix + where, span.source.filename)
    except SchedlangError as exc:
        raise SchedlangError(exc.message, locate(exc.span), exc.hint) from None
    statements = module.statements
    if len(statements) != 1 or statements[0].where is None:
        raise SchedlangError("where must be one condition, e.g. \"total > 0\"", span)
    return _relocated(statements[0].where, locate), {}


def _text_locator(text: str, span: Span, skip: int):
    """Spans in the parsed text mapped into the user's ``.py`` line: onto the string literal
    itself when it is written plainly on one line, else onto the whole ``where=`` argument."""
    one_line = span.end_line == span.line
    written = span.source.line(span.line)[span.column - 1: span.end_column - 1] if one_line else ""
    start = written.find(text) if "\n" not in text and text else -1
    if not written or start < 0 or written.count(text) != 1 or written[start - 1:start] not in ("'", '"'):
        return lambda inner: span
    base = span.column + start

    def locate(inner: Span | None) -> Span:
        if inner is None or inner.line != 1 or inner.end_line != 1:
            return span
        column = max(inner.column - skip, 0)
        end = max(min(inner.end_column - skip, len(text) + 1), column + 1)
        return Span(span.source, span.line, base + column - 1, span.line, base + end - 1)

    return locate


def _relocated(node, locate):
    """``node`` with every span mapped by ``locate`` (the ``where`` text moved into the .py file)."""
    if isinstance(node, tuple):
        return tuple(_relocated(n, locate) for n in node)
    if not isinstance(node, ir.Node):
        return node
    changes = {f: _relocated(getattr(node, f), locate) for f in node.__dataclass_fields__ if f != "span"}
    return replace(node, span=locate(node.span), **changes)
