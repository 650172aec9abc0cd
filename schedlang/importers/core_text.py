"""Core-style ``.sched`` text for an imported schedule: its formula written in the language.

An importer writes preset-style source first (the framework's own class and
keyword names); ``--lower`` asks for the same schedule without presets.  This
module compiles the preset-style text (parameters left symbolic) and writes
each schedule's formula back as language text: ``if t < c then a else b``
tables, arithmetic, ``cos``/``exp``/``sqrt``/``floor``/``max``..., exact
numbers.  Nothing here reads user text: the input is a formula schedlang built.
"""

from __future__ import annotations

import sympy as sp

from ..errors import SchedlangError
from ..special import as_power, logb, restart_index
from .numbers import sched_text

_FUNCTIONS = {sp.cos: "cos", sp.sin: "sin", sp.tan: "tan", sp.log: "log", sp.floor: "floor",
              sp.ceiling: "ceil", sp.Max: "max", sp.Min: "min", sp.Abs: "abs", sp.exp: "exp"}
_RELATIONS = {sp.StrictLessThan: "<", sp.LessThan: "<=", sp.StrictGreaterThan: ">", sp.GreaterThan: ">=",
              sp.Eq: "==", sp.Ne: "!="}


def core_source(preset_source: str, head: list[str], params: list[str]) -> str:
    """``head`` comments, the ``params`` lines, then each schedule of ``preset_source`` as a formula."""
    from ..program import compile as compile_program

    program = compile_program(preset_source)
    lines = [*head, *params]
    for schedule in program:
        lines.append(f"schedule {schedule.name} = {text(schedule.symbolic_expr)}")
    return "\n".join(lines) + "\n"


def text(e) -> str:
    if isinstance(e, sp.Piecewise):
        out, closing = [], ""
        for value, cond in e.args:
            if cond is sp.true:
                out.append(text(value))
                break
            out.append(f"if {text(cond)} then {text(value)} else ")
        else:  # no default branch: schedlang tables always end in one
            raise SchedlangError("a table without a default branch has no core form")
        return "".join(out) + closing
    if isinstance(e, sp.Symbol):
        return e.name
    if e is sp.pi:
        return "pi"
    if e is sp.E:
        return "e"
    if isinstance(e, sp.Rational):
        return sched_text(e)
    if e.is_Number:
        raise SchedlangError(f"the number {e} has no exact form in the language")
    if isinstance(e, sp.Add):
        return " + ".join(_wrap(a) for a in e.as_ordered_terms())
    if isinstance(e, sp.Mul):
        numerator, denominator = [], []
        for factor in e.args:
            reciprocal = isinstance(factor, sp.Pow) and factor.exp.is_Number and factor.exp < 0
            if reciprocal and as_power(factor) is None:
                denominator.append(factor.base ** -factor.exp)
            elif isinstance(factor, sp.Rational) and factor.p == 1 and factor.q != 1:
                denominator.append(sp.Integer(factor.q))
            else:
                numerator.append(factor)
        top = " * ".join(_wrap(f) for f in numerator) if numerator else "1"
        if not denominator:
            return top
        below = sp.Mul(*denominator)
        return f"{top} / {_wrap(below) if len(denominator) == 1 else '(' + text(below) + ')'}"
    power = as_power(e)
    if power is not None:
        base, exponent = power
        return f"{_wrap(base)} ** {_wrap(exponent)}"
    if isinstance(e, sp.Pow):
        if e.exp == sp.Rational(1, 2):
            return f"sqrt({text(e.base)})"
        if e.exp == -1:
            return f"1 / {_wrap(e.base)}"
        return f"{_wrap(e.base)} ** {_wrap(e.exp)}"
    if isinstance(e, sp.Mod):
        a, b = e.args
        return f"({text(a)} - {_wrap(b)} * floor({_wrap(a)} / {_wrap(b)}))"
    if isinstance(e, (sp.And, sp.Or)):
        word = " and " if isinstance(e, sp.And) else " or "
        return word.join(f"({text(a)})" for a in e.args)
    if type(e) in _RELATIONS:
        return f"{text(e.lhs)} {_RELATIONS[type(e)]} {text(e.rhs)}"
    if isinstance(e, logb):
        return f"log({text(e.args[0])})"
    if isinstance(e, restart_index):
        raise SchedlangError("restarts whose length grows have no core form",
                             hint="keep the preset style (leave out --lower)")
    for function, name in _FUNCTIONS.items():
        if isinstance(e, function):
            return f"{name}({', '.join(text(a) for a in e.args)})"
    raise SchedlangError(f"no core form for {type(e).__name__}", hint="keep the preset style")


def _wrap(e) -> str:
    if isinstance(e, sp.Symbol) or e in (sp.pi, sp.E) or (e.is_Integer and e >= 0):
        return text(e)
    if isinstance(e, sp.Rational) and e >= 0 and "/" not in sched_text(e):
        return text(e)
    if isinstance(e, sp.Function) and not isinstance(e, sp.Piecewise):
        return text(e)
    return f"({text(e)})"
