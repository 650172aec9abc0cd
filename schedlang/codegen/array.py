"""What the array targets (torch, JAX) print alike: one printer base, one table per target.

``TorchPrinter`` and ``JaxPrinter`` write the same branch-free straight-line code
(``where`` over every branch, each branch in its local step, clamped where it could
blow up; see ``codegen/torch.py``) in two array libraries whose elementwise
functions share their names (``cos``, ``floor``, ``where``, ...).  What is spelled
the same is printed here, with the library's module name ``NS``; each target keeps
what differs (integer arithmetic, dtypes, parameters).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp
from sympy.printing.precedence import PRECEDENCE
from sympy.printing.pycode import PythonCodePrinter

from ..core.algebra import t
from ..core.functions import BY_NODE, FUNCTIONS, HAZARDS
from ..core.special import as_power
from .base import AtomicPrinting, is_atomic
from .integers import step_ratio
from .stable import even_power, reduced, stable_sum

#: A ``Piecewise`` with more branches is printed one ``where`` statement per branch
#: (Python's parser refuses expressions nested ~200 deep; a schedule may have thousands).
MAX_INLINE_BRANCHES = 8




@dataclass(frozen=True)
class Scope:
    """The steps a sub-expression is used on: ``lo <= t <= hi`` (``hi`` None: no end).

    ``clamp`` says whether the expression needs the step clamped into that
    interval (it holds something hazardous); the bounds are kept either way
    so nested ``Piecewise`` can narrow them further.
    """

    lo: sp.Expr = sp.Integer(0)
    hi: sp.Expr | None = None
    clamp: bool = False
    local: bool = False  # the step is a branch's local step, which is negative before the branch

    @property
    def trivial(self) -> bool:
        return not self.clamp or (self.lo == 0 and self.hi is None and not self.local)


def needs_clamp(expr: sp.Basic) -> bool:
    """Whether evaluating ``expr`` off its own segment could misbehave."""
    if isinstance(expr, sp.Piecewise) or t not in expr.free_symbols:
        return False  # nested Piecewise clamp their own branches; constants are safe
    if isinstance(expr, HAZARDS):  # can overflow, go non-finite or lose precision off its segment
        return True
    if isinstance(expr, sp.Pow):
        base, exponent = expr.args
        if t in exponent.free_symbols:
            return True
        if t in base.free_symbols and not (exponent.is_Integer and exponent >= 0):
            return True
    return any(needs_clamp(a) for a in expr.args if isinstance(a, sp.Basic))


def last_step(cond) -> sp.Expr | None:
    """The largest whole step satisfying a canonical ``t < c`` / ``t <= c``, else None."""
    if isinstance(cond, (sp.StrictGreaterThan, sp.GreaterThan)) and cond.rhs == t:
        # sympy may keep ``t < c`` as ``c > t``: read it the other way round.
        flipped = sp.StrictLessThan if isinstance(cond, sp.StrictGreaterThan) else sp.LessThan
        cond = flipped(t, cond.lhs, evaluate=False)
    if isinstance(cond, (sp.StrictLessThan, sp.LessThan)) and cond.lhs == t \
            and t not in cond.rhs.free_symbols:
        c = cond.rhs
        if isinstance(cond, sp.StrictLessThan):
            return c - 1 if c.is_integer else sp.ceiling(c) - 1
        return c if c.is_integer else sp.floor(c)
    return None


def _smaller(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return sp.Min(a, b)


def float32_exact(number: sp.Expr) -> bool:
    """Whether float32 holds ``number`` exactly (a dyadic rational with a 24-bit mantissa)."""
    import struct

    if not number.is_Rational:
        return False
    value = float(number)
    return sp.Rational(value) == number and struct.unpack("f", struct.pack("f", value))[0] == value


def _literal(value: sp.Expr) -> str:
    """A float literal for a number (exact rationals, pi, e, ... rounded once).

    A non-finite number can only stand in a branch no admissible parameter value reaches
    (``check`` decides reachable ones when the parameters are bound): it prints as NaN.
    """
    if value.has(sp.zoo, sp.oo, -sp.oo, sp.nan) or not value.is_finite:
        return "float('nan')"
    number = float(sp.N(value, 40))
    text = repr(number)
    return f"({text})" if number < 0 else text


class ArrayPrinter(AtomicPrinting, PythonCodePrinter):
    """The methods both array printers share; ``NS`` names the array module in the code."""

    NS = ""

    def bind(self, key, code: str) -> str:
        """A name for ``code``, emitted once per ``key`` in this function."""
        name = self.memo.get(key)
        if name is None:
            name = f"_v{len(self.memo)}"
            self.memo[key] = name
            self.lines.append(f"{name} = {code}")
        return name

    def float_code(self, expr: sp.Expr) -> str:
        return self._print(expr)

    def _step_key(self, expr) -> str | None:
        """Which step variable ``expr`` reads, so equal nodes share one computation."""
        return self.int_step() if t in expr.free_symbols else None

    def _print(self, expr, **kwargs):
        if isinstance(expr, sp.Expr) and expr.is_number and not isinstance(expr, sp.Piecewise):
            return _literal(expr)
        if isinstance(expr, sp.Pow):
            square = even_power(expr, self.clamped_steps())  # cos(x)**2: reduced up to its sign
            if square is not None:
                expr = square
        return super()._print(expr, **kwargs)

    def _print_Symbol(self, expr):
        if expr == t:
            return self.float_step()
        if expr in self.params:
            return self.param(expr, integer=False)
        raise ValueError(f"unexpected symbol {expr}")

    def _print_Add(self, expr, order=None):
        stable = stable_sum(expr)  # b + a cos(x) without cancellation (codegen/stable.py)
        if stable is not None:
            return self._print(stable)
        ratio = step_ratio(expr)  # ``(n - t)/n``, not ``1 - t/n`` (see step_ratio)
        if ratio is None:
            return super()._print_Add(expr, order=order)
        numerator, denominator = (self._print(x) for x in ratio)
        return f"({numerator}) / {denominator if is_atomic(denominator) else f'({denominator})'}"

    def _print_Mul(self, expr):
        numbers = [a for a in expr.args if a.is_number]
        if len(numbers) > 1:  # fold pi/500 and friends into one literal
            rest = [a for a in expr.args if not a.is_number]
            folded = sp.Float(float(sp.N(sp.Mul(*numbers), 40)), 17)
            return super()._print_Mul(sp.Mul(folded, *rest, evaluate=False))
        return super()._print_Mul(expr)

    def _print_Float(self, expr):
        return _literal(expr)

    def _function(self, name):
        def printer(expr):
            return f"{self.NS}.{name}({self._print(expr.args[0])})"
        return printer

    def _print_elementwise(self, expr):
        """An elementwise math function, spelled as its row of ``functions.FUNCTIONS`` says
        (one ``_print_<node>`` per row, set below, as sympy's printers do for ``math``)."""
        return self._function(BY_NODE[type(expr)].array)(expr)

    def _print_periodic(self, expr):
        """``sin``/``cos``/``tan`` with the argument reduced in integers (``codegen/stable.py``)."""
        found = reduced(expr, steps=self.clamped_steps())
        if found is not None and not isinstance(found, type(expr)):
            return self._print(found)
        return self._function(BY_NODE[type(expr)].array)(found or expr)

    def clamped_steps(self):
        """``(lo, hi)`` when the step of this expression is clamped into those numbers, else None."""
        scope = self.scope
        if self.raw_step or scope.trivial or scope.hi is None or not (scope.lo.is_number
                                                                       and scope.hi.is_number):
            return None
        return scope.lo, scope.hi

    def _print_sinpi(self, expr):
        """``sin(pi W / E)``: the whole ``W`` converted once, times ``pi / E`` rounded once."""
        whole, denominator = expr.args
        code = self._integer_in_float(whole, lambda: self._print(whole))
        scale = self.float_code(sp.pi / denominator)
        scale, code = (c if is_atomic(c) else f"({c})" for c in (scale, code))
        return f"{self.NS}.sin({scale}*{code})"

    def _print_Pow(self, expr, rational=False):
        base, exponent = expr.args
        if exponent == sp.S.Half:
            return f"{self.NS}.sqrt({self._print(base)})"
        if exponent == -sp.S.Half:
            return f"(1.0/{self.NS}.sqrt({self._print(base)}))"
        if exponent == -1:
            return f"(1.0/{self.parenthesize(base, PRECEDENCE['Pow'])})"
        if exponent.is_Integer and exponent > 0 and t not in exponent.free_symbols:
            return f"{self.parenthesize(base, PRECEDENCE['Pow'])}**{int(exponent)}"
        return self._power(base, exponent)

    def _print_exp(self, expr):
        power = as_power(expr)
        if power is not None:
            return self._power(*power)
        return self._function("exp")(expr)

    def _power(self, base, exponent) -> str:
        """``base ** exponent``: IEEE inf past the float's range, as the reference's ``_pow``.

        A positive constant base that float32 cannot hold (``0.999``) is ``exp(x * log b)``
        with ``log b`` rounded once from the exact base: ``pow`` of the rounded base would
        carry its rounding times ``x`` (5e-5 relative at ``0.999 ** 1675`` in float32; 400
        ulps at ``0.97 ** 1000``), the product carries ``|x log b|`` ulps.  Bases float32
        holds (``0.5``, ``2``) stay powers (``_pow``), exact at whole exponents.
        """
        if base.is_number and base.is_positive and not float32_exact(base):
            return f"{self.NS}.exp({_literal(sp.log(base))}*{self.parenthesize(exponent, PRECEDENCE['Mul'])})"
        return self._pow(base, exponent)

    def _print_floor(self, expr):
        return self._integer_in_float(expr, lambda: f"{self.NS}.floor({self._print(expr.args[0])})")

    def _print_ceiling(self, expr):
        return self._integer_in_float(expr, lambda: f"{self.NS}.ceil({self._print(expr.args[0])})")

    def _print_restart_index(self, expr):
        def refuse():
            raise ValueError("restart_index needs whole-number arguments")
        return self._integer_in_float(expr, refuse)

    def _print_Max(self, expr):
        return self._print_Min(expr)

    def _print_Piecewise(self, expr):
        outer = self.scope
        lo = outer.lo
        branches: list[tuple[str, str | None]] = []
        args = expr.args
        for index, (value, cond) in enumerate(args):
            last = index == len(args) - 1
            bound = None if last else last_step(cond)
            hi = outer.hi if bound is None else _smaller(outer.hi, bound)
            if hi is not None and (lo - hi).is_positive:
                continue  # no step reaches this branch
            self.scope = Scope(lo, hi, clamp=outer.clamp or needs_clamp(value), local=outer.local)
            try:
                code = self._localized(value)
            finally:
                self.scope = outer
            branches.append((code, None if last else self.bool_code(cond)))
            if bound is not None:
                lo = sp.Max(lo, bound + 1)
        out = branches[-1][0]
        for code, cond in reversed(branches[:-1]):
            out = f"{self.NS}.where({cond}, {code}, {out})"
            if len(branches) > MAX_INLINE_BRANCHES:  # one statement per branch, not deep nesting
                out = self.bind(("w", len(self.memo)), out)
        return out

    def _print_Relational(self, expr):
        return self.bool_code(expr)

    def _print_NumberSymbol(self, expr):
        return _literal(expr)

    def _print_Exp1(self, expr):
        return _literal(expr)

    def _print_Pi(self, expr):
        return _literal(expr)


for _row in FUNCTIONS:
    if _row.array is not None:
        setattr(ArrayPrinter, f"_print_{_row.node.__name__}",
                ArrayPrinter._print_periodic if _row.period else ArrayPrinter._print_elementwise)
