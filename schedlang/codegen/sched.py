"""sympy → ``.sched`` text: the language itself as a target.  ``sched_text`` writes an exact
number so that it reads back as the same rational; ``SchedPrinter`` writes a lowered schedule
(a sympy expression of ``t`` and parameters) as core ``.sched`` text: ``if ... then ... else``
for ``Piecewise``, the math functions of SPEC §2 for the rest, parameters by their names and
every compound operand parenthesised, so the text reads back as the same expression.  The
importers' ``--lower`` form (``formats/core_text.py``) and ``schedlang show`` print with it.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import sympy as sp
from sympy.printing.printer import Printer

from ..core.clock import expand_counts
from ..core.functions import FUNCTIONS
from ..core.special import as_power
from ..errors import SchedlangError
from .base import is_atomic


def _terminates(r: sp.Rational) -> bool:
    q = int(r.q)
    for p in (2, 5):
        while q % p == 0:
            q //= p
    return q == 1


def sched_text(value: sp.Expr) -> str:
    """A number as schedlang source that reads back as exactly the same value."""
    if value.is_Integer:
        return str(int(value))
    if value.is_Rational:
        if value < 0:
            return "-" + sched_text(-value)
        shortest = repr(float(value))
        if "inf" not in shortest and Fraction(shortest) == Fraction(int(value.p), int(value.q)):
            return shortest
        if _terminates(value):
            text = format(Decimal(int(value.p)) / Decimal(int(value.q)), "f")
            return text
        return f"{int(value.p)} / {int(value.q)}"
    raise ValueError(f"not an exact number: {value}")


#: Functions of one argument written back by their name (``exp`` is written as a power).
_FUNCTIONS = {f.node: f.name for f in FUNCTIONS
              if f.node is not None and f.arity == 1 and f.node is not sp.exp}
_RELATIONS = {sp.StrictLessThan: "<", sp.LessThan: "<=", sp.StrictGreaterThan: ">",
              sp.GreaterThan: ">="}


def text(expr) -> str:
    """``expr`` (a sympy expression, or a Python int) as a schedlang expression, no outer parentheses.
    The language has no count of tokens or samples: a formula reading one is written with a
    branch per batch stage (``core.clock.expand_counts``)."""
    return _print(sp.Integer(expr) if isinstance(expr, int) else expand_counts(expr))


def _atom(expr: sp.Basic) -> str:
    """An operand: parenthesised unless its text already is one (a name, a non-negative
    number, a call, a parenthesised whole).  Decided on the text, not on the node: a
    ``Mod`` is a sympy function but is written ``a - b * floor(a / b)``."""
    shown = _print(expr)
    return shown if is_atomic(shown) else f"({shown})"


def _term(expr: sp.Basic) -> str:
    """A term of a sum: an ``if`` is parenthesised (``if c then 1 else 0 + x`` would take the
    ``+ x`` into its ``else``)."""
    shown = _print(expr)
    return f"({shown})" if isinstance(expr, sp.Piecewise) and not is_atomic(shown) else shown


def _print(expr: sp.Basic) -> str:
    return _PRINTER.doprint(expr)


class SchedPrinter(Printer):
    """sympy → core ``.sched`` text: one ``_print_<Class>`` per node (sympy's ``Printer``
    picks the method of the most derived class), as the printers of ``codegen/`` dispatch;
    the one-argument math functions of ``core.functions`` get theirs below the class."""

    def emptyPrinter(self, expr):  # noqa: N802 - sympy's name
        raise SchedlangError(f"no core form for {type(expr).__name__}", hint="keep the preset style")

    def _print_BooleanTrue(self, expr) -> str:
        return "true"

    def _print_BooleanFalse(self, expr) -> str:
        return "false"

    def _print_Symbol(self, expr: sp.Symbol) -> str:
        return expr.name

    def _print_Pi(self, expr) -> str:
        return "pi"

    def _print_Exp1(self, expr) -> str:
        return "e"

    def _print_Rational(self, expr: sp.Rational) -> str:
        return sched_text(expr)

    def _print_Piecewise(self, expr: sp.Piecewise) -> str:
        return _piecewise(list(expr.args))

    def _print_Max(self, expr) -> str:
        name = "max" if isinstance(expr, sp.Max) else "min"
        return f"{name}({', '.join(_print(a) for a in sorted(expr.args, key=sp.default_sort_key))})"

    def _print_Min(self, expr) -> str:
        return self._print_Max(expr)

    def _print_function(self, expr) -> str:
        return f"{_FUNCTIONS[expr.func]}({_print(expr.args[0])})"

    def _print_logb(self, expr) -> str:
        return f"log({_print(expr.args[0])})"

    def _print_exp(self, expr: sp.exp) -> str:
        power = as_power(expr)
        if power is not None:  # a geometric factor: exp(x * logb(b)) is b ** x
            return f"{_atom(power[0])} ** {_atom(power[1])}"
        return f"e ** {_atom(expr.args[0])}"

    def _print_Mod(self, expr: sp.Mod) -> str:
        a, b = expr.args
        return f"{_atom(a)} - {_atom(b)} * floor({_atom(a)} / {_atom(b)})"

    def _print_Add(self, expr: sp.Add) -> str:
        terms = sorted(expr.args, key=sp.default_sort_key)
        out = _term(terms[0])
        for term in terms[1:]:
            if term.could_extract_minus_sign():
                out += f" - {_atom(-term)}"
            else:
                out += f" + {_term(term)}"
        return out

    def _print_Mul(self, expr: sp.Mul) -> str:
        return _product(expr)

    def _print_Pow(self, expr: sp.Pow) -> str:
        base, exponent = expr.args
        if exponent == sp.Rational(1, 2):
            return f"sqrt({_print(base)})"
        if exponent == -1:
            return f"1 / {_atom(base)}"
        return f"{_atom(base)} ** {_atom(exponent)}"

    def _print_Relational(self, expr) -> str:
        if type(expr) not in _RELATIONS:
            return self.emptyPrinter(expr)
        return f"{_print(expr.lhs)} {_RELATIONS[type(expr)]} {_print(expr.rhs)}"

    def _print_Equality(self, expr: sp.Equality) -> str:
        return f"{_print(expr.lhs)} <= {_print(expr.rhs)} and {_print(expr.lhs)} >= {_print(expr.rhs)}"

    def _print_Unequality(self, expr: sp.Unequality) -> str:
        return f"not ({_print(expr.lhs)} <= {_print(expr.rhs)} and {_print(expr.lhs)} >= {_print(expr.rhs)})"

    def _print_And(self, expr: sp.And) -> str:
        return " and ".join(f"({_print(a)})" for a in expr.args)

    def _print_Or(self, expr: sp.Or) -> str:
        return " or ".join(f"({_print(a)})" for a in expr.args)

    def _print_Not(self, expr: sp.Not) -> str:
        return f"not ({_print(expr.args[0])})"

    def _print_restart_index(self, expr) -> str:
        raise SchedlangError("restarts whose length grows have no core form", hint="keep the preset style")


for _node in _FUNCTIONS:  # a math function of one argument: by its name (before any other rule)
    setattr(SchedPrinter, f"_print_{_node.__name__}", SchedPrinter._print_function)
_PRINTER = SchedPrinter()


def _product(expr: sp.Mul) -> str:
    coefficient, rest = expr.as_coeff_Mul()
    if coefficient < 0:
        return f"-{_atom(-expr)}"
    numerator, denominator = [], []
    for factor in sp.Mul.make_args(expr):
        if factor.is_Pow and factor.exp.is_number and factor.exp < 0:
            denominator.append(sp.Pow(factor.base, -factor.exp))
        elif factor.is_Rational and factor.q != 1:
            if factor.p != 1:
                numerator.append(sp.Integer(factor.p))
            denominator.append(sp.Integer(factor.q))
        else:
            numerator.append(factor)
    top = " * ".join(_atom(f) for f in numerator) if numerator else "1"
    if not denominator:
        return top
    if len(denominator) == 1:
        return f"{top} / {_atom(denominator[0])}"
    return f"{top} / ({' * '.join(_atom(f) for f in denominator)})"


def _piecewise(pieces: list) -> str:
    value, condition = pieces[0]
    if condition is sp.true or len(pieces) == 1:
        return _print(value)
    rest = _piecewise(pieces[1:])
    return f"if {_print(condition)} then {_atom(value)} else {_atom_text(rest, pieces[1:])}"


def _atom_text(shown: str, rest: list) -> str:
    """The ``else`` branch: another ``if`` reads without parentheses, anything compound gets them."""
    if len(rest) > 1 and rest[0][1] is not sp.true:
        return shown
    return _atom(rest[0][0])
