"""``sb.if_``, ``sb.and_``, ``sb.or_``, ``sb.not_``: the language's ``if``, ``and``, ``or`` and
``not``, which Python keeps for its own truth values (a piece has none: ``Expr.__bool__``);
``& | ~`` are the operator spellings of the last three."""

from __future__ import annotations

from ..syntax import ir
from . import site as sites
from .declarations import merge
from .pieces import Expr, as_expr, boolop


def if_(cond, then, other) -> Expr:
    """``if cond then then else other`` (a condition chooses between two values at each step)."""
    site = sites.caller()
    parts = [as_expr(v, site.argument(i)) for i, v in enumerate((cond, then, other))]
    node = ir.If(site.span, *(p.node for p in parts))
    return Expr(node, merge(site, *(p.params for p in parts)), tuple(parts))


def and_(a, b) -> Expr:
    """``a and b`` (also ``a & b``)."""
    return boolop("and", a, b, sites.caller())


def or_(a, b) -> Expr:
    """``a or b`` (also ``a | b``)."""
    return boolop("or", a, b, sites.caller())


def not_(a) -> Expr:
    """``not a`` (also ``~a``)."""
    site = sites.caller()
    a = as_expr(a, site.argument(0))
    return Expr(ir.Not(site.span, a.node), a.params, (a,))
