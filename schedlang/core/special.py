"""Integer-valued helper functions that have no exact sympy spelling.

Cosine restarts with a period multiplier ``m > 1`` need the index of the
cycle that holds step ``t``: the largest ``i`` with ``T0 (m^i - 1)/(m - 1) <= t``.
Written with ``log`` it floors wrongly at exact cycle starts in floating point,
so it is a function of its own, evaluated exactly on integers here and
printed by each backend as an integer computation.
"""

from __future__ import annotations

import sympy as sp


def restart_index_int(step: int, first: int, mult: int) -> int:
    """Exact cycle index for integer ``step >= 0``, ``first >= 1``, ``mult >= 2``."""
    index, start, length = 0, 0, first
    while start + length <= step:
        start += length
        length *= mult
        index += 1
    return index


class restart_index(sp.Function):  # noqa: N801 - sympy function classes are lower case
    """``restart_index(t, T0, m)``: index of the restart cycle that holds step ``t``."""

    is_integer = True
    is_nonnegative = True
    nargs = 3

    @classmethod
    def eval(cls, step, first, mult):
        if step.is_Rational and not step.is_Integer:
            step = sp.floor(step)  # cycles start at whole steps (a stretched schedule asks at t / k)
        if all(arg.is_Integer for arg in (step, first, mult)) and step >= 0 and first >= 1 and mult >= 2:
            return sp.Integer(restart_index_int(int(step), int(first), int(mult)))
        if step == 0:  # the first cycle starts at 0 whatever its (symbolic) length
            return sp.Integer(0)
        return None

    def _eval_is_finite(self):
        return True


def restart_start(index, first, mult):
    """The first step of cycle ``index``: ``T0 (m^i - 1) / (m - 1)``."""
    return first * (mult**index - 1) / (mult - 1)


class logb(sp.Function):  # noqa: N801 - sympy function classes are lower case
    """``log(b)`` of a positive base, opaque to ``exp``: ``b ** x`` is ``exp(x * logb(b))``.

    sympy evaluates ``Rational ** Integer`` exactly, and ``exp(n * log(b))`` back into
    ``b ** n``: the end value of ``0.999 ** t`` over two million steps, or the same
    decay shifted to start at step two million, would be a fraction with millions of
    digits (minutes of work, for a number float64 rounds to 0).  ``exp`` of a multiple
    of ``logb(b)`` stays a formula; every target evaluates it in floating point (as it
    would the power), the exact evaluator and the checks with enclosures.
    """

    nargs = 1
    is_real = True

    @classmethod
    def eval(cls, base):
        if base == 1:
            return sp.Integer(0)
        return None

    def _eval_evalf(self, prec):
        return sp.log(self.args[0])._eval_evalf(prec)

    def _eval_is_positive(self):
        return (self.args[0] - 1).is_positive

    def _eval_is_negative(self):
        return (1 - self.args[0]).is_positive

    def _eval_is_zero(self):
        return sp.Eq(self.args[0], 1) if self.args[0].is_number else None

    def _eval_is_finite(self):
        return True if self.args[0].is_positive else None

    def _sympystr(self, printer):
        return f"log({printer._print(self.args[0])})"

    def _latex(self, printer):
        return rf"\log{{\left({printer._print(self.args[0])} \right)}}"


def geometric(base, exponent):
    """``base ** exponent``; a positive constant base raised to a power that changes with the step
    is ``exp(exponent * logb(base))`` (see ``logb``)."""
    if exponent.free_symbols and base.is_positive and (base.is_number or base.is_Symbol) and base != 1 \
            and not (base.free_symbols & exponent.free_symbols):
        return sp.exp(exponent * logb(base))
    return base**exponent


def as_power(expr) -> tuple | None:
    """``(b, x)`` when ``expr`` is ``exp(x * logb(b))`` (a ``geometric`` factor), else None.

    Printers write it back as the power ``b ** x``: floating point computes it as the
    power it always was (``0.5 ** 3`` stays exactly 0.125).
    """
    if not isinstance(expr, sp.exp):
        return None
    logs = [f for f in sp.Mul.make_args(expr.args[0]) if isinstance(f, logb)]
    if len(logs) != 1:
        return None
    return logs[0].args[0], expr.args[0] / logs[0]


#: The largest exact power (in bits) a folded ``geometric`` factor may become.
FOLD_BITS = 4096


def folded(expr):
    """A ``geometric`` factor whose exponent became a small whole number (a step put into
    ``0.7 ** floor(t / 10)``) as the exact number it is; anything else unchanged.

    Left as ``exp(logb(7/10))``, ``floor(1000 * exp(logb(7/10)))`` is a whole number that
    sympy's ``evalf`` cannot decide (``PrecisionExhausted`` while printing).
    """
    power = as_power(expr)
    if power is None or not power[1].is_Integer or not power[0].is_Rational:
        return expr
    base, exponent = power
    if abs(int(exponent)) * max(int(base.p).bit_length(), int(base.q).bit_length()) > FOLD_BITS:
        return expr
    return base**exponent


def as_powers(expr):
    """``expr`` with every ``geometric`` factor written as the power ``b ** x`` again.

    For the prover, which must see ``step(1, 0.5, 100)`` and a traced ``0.5 ** (t // 100)``
    as the same formula; its own caps keep the exact arithmetic bounded.
    """
    if not expr.has(logb):
        return expr
    return expr.replace(lambda e: as_power(e) is not None, lambda e: sp.Pow(*as_power(e)))
