"""A finished schedule formula (sympy, in the step ``t``) written back as core ``.sched`` text.

Importers whose preset style is a composite with no short core spelling (mmengine's
chained windows) write ``--lower`` output with this: ``Piecewise`` becomes nested
``if t < c then A else B``, ``floor``/``cos``/``sqrt``/``min``/``max`` keep their
names, numbers are exact (``sched_text``), geometric factors ``exp(x * log(b))``
are written back as ``b ** x``.  The text parses to the same formula, which the
import tests prove with ``schedlang.equivalent``.
"""

from __future__ import annotations

import sympy as sp

from ..special import as_power
from .numbers import sched_text

_FUNCTIONS = {sp.floor: "floor", sp.ceiling: "ceil", sp.cos: "cos", sp.sin: "sin", sp.tan: "tan",
              sp.exp: "exp", sp.log: "log", sp.Abs: "abs"}


def source(expr: sp.Expr) -> str:
    return _text(expr)


def _atom(expr: sp.Expr) -> str:
    text = _text(expr)
    simple = expr.is_Symbol or (expr.is_Integer and expr >= 0) \
        or (isinstance(expr, sp.Function) and not isinstance(expr, sp.Piecewise)) \
        or (expr.is_Rational and expr > 0 and "/" not in text)
    return text if simple else f"({text})"


def _text(expr: sp.Expr) -> str:  # noqa: PLR0911, PLR0912 - one case per node type
    power = as_power(expr)
    if power is not None:
        base, exponent = power
        return f"{_atom(base)} ** {_atom(exponent)}"
    if expr.is_Symbol:
        return expr.name
    if expr is sp.pi:
        return "pi"
    if expr is sp.E:
        return "e"
    if expr.is_Rational:
        return sched_text(expr)
    if isinstance(expr, sp.Piecewise):
        *rest, (last, cond) = expr.args
        text = _text(last)
        for value, condition in reversed(rest):
            text = f"if {_condition(condition)} then {_text(value)} else ({text})"
        return text
    if isinstance(expr, sp.Add):
        parts = [_text(a) if not isinstance(a, sp.Piecewise) else f"({_text(a)})" for a in expr.args]
        return " + ".join(parts).replace("+ -", "- ")
    if isinstance(expr, sp.Mul):
        coeff, rest = expr.as_coeff_Mul()
        if coeff == -1:
            return f"-{_atom(rest)}"
        return " * ".join(_atom(a) for a in expr.args)
    if isinstance(expr, sp.Pow):
        if expr.exp == sp.Rational(1, 2):
            return f"sqrt({_text(expr.base)})"
        if expr.exp == -1:
            return f"1 / {_atom(expr.base)}"
        return f"{_atom(expr.base)} ** {_atom(expr.exp)}"
    if isinstance(expr, (sp.Max, sp.Min)):
        name = "max" if isinstance(expr, sp.Max) else "min"
        return f"{name}({', '.join(_text(a) for a in expr.args)})"
    for function, name in _FUNCTIONS.items():
        if isinstance(expr, function):
            return f"{name}({_text(expr.args[0])})"
    if expr.is_number:
        return repr(float(expr))
    raise ValueError(f"no .sched spelling for {expr.func.__name__}")


def _condition(cond) -> str:
    if isinstance(cond, sp.And):
        return " and ".join(f"({_condition(c)})" for c in cond.args)
    if isinstance(cond, sp.Or):
        return " or ".join(f"({_condition(c)})" for c in cond.args)
    ops = {sp.StrictLessThan: "<", sp.LessThan: "<=", sp.StrictGreaterThan: ">", sp.GreaterThan: ">="}
    for kind, op in ops.items():
        if isinstance(cond, kind):
            return f"{_text(cond.lhs)} {op} {_text(cond.rhs)}"
    raise ValueError(f"no .sched spelling for the condition {cond}")
