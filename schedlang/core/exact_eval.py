"""Values of a bound schedule at integer steps, exactly or with proven error bounds.

``verify`` needs values it can trust, not floats: a rational value is computed
as a ``Fraction`` (exact), anything else as an ``mpmath.iv`` interval that is
guaranteed to contain the true value.  Two exact values are equal or not; two
disjoint intervals are provably different; overlapping intervals decide
nothing by themselves (the caller then tries an algebraic proof at that step).

The sympy tree is turned into nested closures once (no ``eval``/``exec``), so
each step costs a walk over the tree with Python numbers.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import mpmath
import sympy as sp
from sympy.core.relational import Relational

from .algebra import t
from .clock import ClockCountBase
from .functions import FUNCTIONS
from .special import restart_index, restart_index_int

iv = mpmath.iv
iv.prec = 160


class Undetermined(Exception):  # noqa: N818 - a state, not a failure
    """An interval straddles a decision (a comparison, a floor) or a case is not supported."""


def is_exact(x) -> bool:
    return isinstance(x, Fraction)


def exact_text(x, max_digits: int = 60) -> str | None:
    """``x`` as ``p/q`` when it is exact and short enough to read; None otherwise.

    A difference found at step 777 777 of ``0.999 ** t`` is a fraction with millions of
    digits: it is shown as a float instead (and ``str`` of it would hit Python's
    4300-digit conversion limit).
    """
    if not is_exact(x):
        return None
    bits = x.numerator.bit_length() + x.denominator.bit_length()
    return str(x) if bits * 0.302 <= max_digits else None


def to_interval(x):
    if isinstance(x, Fraction):
        return iv.mpf(x.numerator) / iv.mpf(x.denominator)
    return x


def to_float(x) -> float:
    if isinstance(x, Fraction):
        return float(x)
    return float(mpmath.mpf(x.mid))


def show_difference(a, b) -> str:
    """``a - b`` to three digits, however small (mpmath has no underflow)."""
    d = to_interval(a) - to_interval(b) if not (is_exact(a) and is_exact(b)) else None
    if d is None:
        exact = a - b
        value = mpmath.mpf(exact.numerator) / exact.denominator
    else:
        value = mpmath.mpf(d.mid)
    return mpmath.nstr(value, 3)


def digits_apart(a, b, most: int = 45) -> tuple[str, str] | None:
    """``a`` and ``b`` with as many significant digits as it takes to tell them apart (from 17,
    float64's round-trip count); None when they are equal or agree to ``most`` digits.

    Two schedules proven different at a step can round to the same float: a table that
    printed ``1.0`` on both sides would show no difference at the very step it is about.
    """
    if is_exact(a) and is_exact(b) and a == b:
        return None
    for digits in range(17, most + 1):
        with mpmath.workdps(digits + 20):
            shown = tuple(mpmath.nstr(mpmath.mpf(x.numerator) / x.denominator if is_exact(x)
                                      else mpmath.mpf(x.mid), digits, strip_zeros=False, min_fixed=-4,
                                      max_fixed=digits)
                          for x in (a, b))
        if shown[0] != shown[1]:
            return shown
    return None


def less(a, b) -> bool:
    """``a < b`` when it is decided, else ``Undetermined``."""
    if is_exact(a) and is_exact(b):
        return a < b
    a, b = to_interval(a), to_interval(b)
    if a.b < b.a:
        return True
    if a.a >= b.b:
        return False
    raise Undetermined("comparison too close to call")


def equal(a, b) -> bool | None:
    """True / False when decided, None when two enclosures overlap."""
    if is_exact(a) and is_exact(b):
        return a == b
    a, b = to_interval(a), to_interval(b)
    if a.b < b.a or b.b < a.a:
        return False
    return None


def within(a, b, rtol) -> bool | None:
    """``|a - b| <= rtol * max(|a|, |b|)``: True / False when decided, else None."""
    if is_exact(a) and is_exact(b):
        return abs(a - b) <= Fraction(rtol) * max(abs(a), abs(b))
    a, b = to_interval(a), to_interval(b)
    diff = abs(a - b)
    scale = iv.mpf(max(abs(a).a, abs(b).a)), iv.mpf(max(abs(a).b, abs(b).b))
    tol = to_interval(Fraction(rtol))
    if diff.b <= (tol * scale[0]).a:
        return True
    if diff.a > (tol * scale[1]).b:
        return False
    return None


def _floor(x) -> Fraction:
    if is_exact(x):
        return Fraction(math.floor(x))
    lo, hi = mpmath.floor(x.a), mpmath.floor(x.b)
    if lo != hi:
        raise Undetermined("floor of an enclosure that straddles an integer")
    return Fraction(int(lo))


#: Bits an exact power may have; past it an enclosure is used (``0.5 ** 7e8`` at step 2**31).
MAX_EXACT_POWER_BITS = 20_000


def _pow(base, exponent):
    if is_exact(base) and is_exact(exponent):
        if exponent.denominator == 1:
            if base == 0 and exponent < 0:
                raise Undetermined("zero to a negative power")
            bits = abs(int(exponent)) * max(base.numerator.bit_length(), base.denominator.bit_length())
            if bits <= MAX_EXACT_POWER_BITS:
                return base ** int(exponent)
            if base > 0:
                return _huge_power(base, int(exponent))
        root = _exact_root(base, exponent.denominator)
        if root is not None:
            return root ** exponent.numerator
    b, e = to_interval(base), to_interval(exponent)
    if is_exact(exponent) and exponent.denominator == 1:
        return b ** int(exponent)
    if b.a <= 0:
        raise Undetermined("non-positive base with a fractional power")
    return iv.exp(e * iv.log(b))


def _huge_power(base: Fraction, exponent: int):
    """A sound enclosure of ``base ** exponent`` (base > 0) past ``MAX_EXACT_POWER_BITS``:
    far below or far above anything a float64 schedule can tell apart, so an interval
    ``[0, 2**-B]`` or ``[2**B, inf]`` (B = the bit cap) decides every comparison that
    matters without building the number."""
    magnitude = exponent * (math.log2(base.numerator) - math.log2(base.denominator))
    cap = iv.mpf(2) ** MAX_EXACT_POWER_BITS
    if magnitude <= -MAX_EXACT_POWER_BITS:
        return iv.mpf([0, (1 / cap).b])
    if magnitude >= MAX_EXACT_POWER_BITS:
        return iv.mpf([cap.a, mpmath.inf])
    return iv.exp(iv.mpf(exponent) * iv.log(to_interval(base)))


def _exact_root(x: Fraction, k: int) -> Fraction | None:
    if x < 0 or max(x.numerator.bit_length(), x.denominator.bit_length()) > 1000:
        return None
    p, q = round(x.numerator ** (1 / k)), round(x.denominator ** (1 / k))
    for dp in (-1, 0, 1):
        for dq in (-1, 0, 1):
            if q + dq > 0 and p + dp >= 0 and Fraction(p + dp, q + dq) ** k == x:
                return Fraction(p + dp, q + dq)
    return None


#: cos(pi * r) for the rationals r (mod 2) where it is rational.
_COS_PI = {Fraction(0): Fraction(1), Fraction(1, 3): Fraction(1, 2), Fraction(1, 2): Fraction(0),
           Fraction(2, 3): Fraction(-1, 2), Fraction(1): Fraction(-1), Fraction(4, 3): Fraction(-1, 2),
           Fraction(3, 2): Fraction(0), Fraction(5, 3): Fraction(1, 2)}


@dataclass(frozen=True)
class Exact:
    """What a math function's interval enclosure would only approximate: its exact values.

    ``at`` gives the value at an exact argument (None: not a nice point), ``at_pi`` the
    value at ``pi * r`` for an exact ``r`` (read off the argument's form, since ``pi * r``
    itself is an enclosure), ``refuse`` says why an enclosure of the argument is outside
    the function's domain (None: inside).  A row of ``functions.FUNCTIONS`` with no entry
    here is its interval function alone.
    """

    at: Callable[[Fraction], Fraction | None] | None = None
    at_pi: Callable[[Fraction], Fraction | None] | None = None
    refuse: Callable[[object], str | None] | None = None


def _zero_at_zero(x: Fraction) -> Fraction | None:
    return Fraction(0) if x == 0 else None


#: The exact special cases of the math functions, by sympy node (the rows are
#: ``functions.FUNCTIONS``; a function without special cases needs no entry).
EXACT: dict[type, Exact] = {
    sp.cos: Exact(at=lambda x: Fraction(1) if x == 0 else None, at_pi=lambda r: _COS_PI.get(r % 2)),
    sp.sin: Exact(at=_zero_at_zero, at_pi=lambda r: _COS_PI.get((r - Fraction(1, 2)) % 2)),
    sp.tan: Exact(at=_zero_at_zero, at_pi=lambda r: Fraction(0) if r.denominator == 1 else None),
    sp.exp: Exact(at=lambda x: Fraction(1) if x == 0 else None),
    sp.log: Exact(at=lambda x: Fraction(0) if x == 1 else None,
                  refuse=lambda x: "log of a non-positive enclosure" if x.a <= 0 else None),
    sp.Abs: Exact(at=abs),
}


def interval_function(row):
    """``x -> enclosure`` of one row: ``mpmath.iv.<interval>``, or the row's own formula in ``iv``."""
    if isinstance(row.interval, str):
        return getattr(iv, row.interval)
    return functools.partial(row.interval, iv)


def _pi_multiple(arg: sp.Expr):
    """``X`` compiled, when ``arg`` is ``pi * X`` (so cos/sin can be exact at nice points)."""
    if isinstance(arg, sp.Mul) and sp.pi in arg.args:
        return compile_expr(arg / sp.pi)
    return None


def _row_compiler(row):
    """``(expr, compiled arguments) -> (step -> value)`` for a one-argument row of the table:
    its exact special cases (``EXACT``) where they apply, else its interval function."""
    enclose = interval_function(row)
    exact = EXACT.get(row.node, Exact())

    def compile_call(expr, args):
        inner = _pi_multiple(expr.args[0]) if exact.at_pi is not None else None
        argument = args[0]

        def run(s):
            if inner is not None:
                r = inner(s)
                if is_exact(r):
                    value = exact.at_pi(r)
                    if value is not None:
                        return value
            x = argument(s)
            if exact.at is not None and is_exact(x):
                value = exact.at(x)
                if value is not None:
                    return value
            x = to_interval(x)
            if exact.refuse is not None:
                why = exact.refuse(x)
                if why is not None:
                    raise Undetermined(why)
            return enclose(x)
        return run
    return compile_call


#: Node type -> ``(expr, compiled arguments) -> (step -> value)``: one function per node
#: type, as sympy's printers have one method per node (``_compiles`` fills it).
_COMPILERS: dict[type, object] = {}


def _compiles(*types):
    def register(function):
        for kind in types:
            _COMPILERS[kind] = function
        return function
    return register


def compile_expr(expr: sp.Basic):
    """A function ``step -> value`` (Fraction, interval, or bool for conditions)."""
    if expr == t:
        return Fraction
    if expr.is_Rational:
        value = Fraction(int(expr.p), int(expr.q))
        return lambda s: value
    if expr is sp.pi:
        return lambda s: iv.pi
    if expr is sp.E:
        return lambda s: iv.e
    if expr in (sp.true, sp.false):
        value = bool(expr)
        return lambda s: value
    compiler = next((_COMPILERS[kind] for kind in type(expr).__mro__ if kind in _COMPILERS), None)
    if compiler is not None:
        args = None if isinstance(expr, sp.Piecewise) else [compile_expr(a) for a in expr.args]
        compiled = compiler(expr, args)
        if compiled is not None:
            return compiled
    if expr.is_number:
        value = expr.evalf(60)
        if value.is_Float:
            enclosure = iv.mpf(str(value)) + iv.mpf([-1, 1]) * iv.mpf("1e-50")
            return lambda s: enclosure
    raise Undetermined(f"cannot evaluate {type(expr).__name__}")


def _fold(args, start, exact_op, interval_op):
    def run(s):
        total = start
        for f in args:
            v = f(s)
            total = exact_op(total, v) if is_exact(total) and is_exact(v) \
                else interval_op(to_interval(total), to_interval(v))
        return total
    return run


@_compiles(sp.Add)
def _add(expr, args):
    return _fold(args, Fraction(0), lambda a, b: a + b, lambda a, b: a + b)


@_compiles(sp.Mul)
def _mul(expr, args):
    return _fold(args, Fraction(1), lambda a, b: a * b, lambda a, b: a * b)


@_compiles(sp.Pow)
def _power(expr, args):
    base, exponent = args
    return lambda s: _pow(base(s), exponent(s))


@_compiles(sp.floor)
def _floor_node(expr, args):
    return lambda s: _floor(args[0](s))


@_compiles(sp.ceiling)
def _ceiling_node(expr, args):
    return lambda s: -_floor(-args[0](s))


@_compiles(sp.Mod)
def _mod_node(expr, args):
    a, b = args
    return lambda s: _mod(a(s), b(s))


@_compiles(ClockCountBase)
def _clock_count(expr, args):
    lookup, (step,) = type(expr).value, args

    def count(s):
        k = step(s)
        if not (is_exact(k) and k.denominator == 1 and k >= 0):
            raise Undetermined("a count of samples or tokens at a step that is not whole")
        return Fraction(lookup(int(k)))
    return count


@_compiles(restart_index)
def _restart_index(expr, args):
    def index(s):
        step, first, mult = (f(s) for f in args)
        if is_exact(step) and step.denominator != 1:
            step = Fraction(math.floor(step))  # cycles start at whole steps (a stretched schedule)
        if not all(is_exact(v) and v.denominator == 1 for v in (step, first, mult)):
            raise Undetermined("restart_index of a non-integer")
        return Fraction(restart_index_int(int(step), int(first), int(mult)))
    return index


@_compiles(sp.Min, sp.Max)
def _extreme(expr, args):
    pick_max = isinstance(expr, sp.Max)

    def extreme(s):
        values = [f(s) for f in args]
        best = values[0]
        for v in values[1:]:
            if less(best, v) == pick_max:
                best = v
        return best
    return extreme


@_compiles(sp.Piecewise)
def _piecewise(expr, args):
    branches = [(compile_expr(e), compile_expr(c)) for e, c in expr.args]

    def piecewise(s):
        for value, cond in branches:
            if cond(s):
                return value(s)
        raise Undetermined("no branch applies")
    return piecewise


_ORDERS = {sp.StrictLessThan: lambda x, y: less(x, y), sp.LessThan: lambda x, y: not less(y, x),
           sp.StrictGreaterThan: lambda x, y: less(y, x), sp.GreaterThan: lambda x, y: not less(x, y)}


@_compiles(Relational)
def _relation(expr, args):
    a, b = args
    if type(expr) in _ORDERS:
        op = _ORDERS[type(expr)]
        return lambda s: op(a(s), b(s))
    if isinstance(expr, (sp.Eq, sp.Ne)):
        want = isinstance(expr, sp.Eq)

        def eq(s):
            verdict = equal(a(s), b(s))
            if verdict is None:
                raise Undetermined("equality of enclosures")
            return verdict == want
        return eq
    return None


@_compiles(sp.And)
def _and(expr, args):
    return lambda s: all(f(s) for f in args)


@_compiles(sp.Or)
def _or(expr, args):
    return lambda s: any(f(s) for f in args)


@_compiles(sp.ITE)
def _ite(expr, args):
    cond, then, other = args
    return lambda s: then(s) if cond(s) else other(s)


@_compiles(sp.Not)
def _not(expr, args):
    return lambda s: not args[0](s)


def _mod(a, b):
    if is_exact(a) and is_exact(b):
        if b == 0:
            raise Undetermined("Mod by zero")
        return a - b * Fraction(math.floor(a / b))
    q = _floor(to_interval(a) / to_interval(b))
    return to_interval(a) - to_interval(b) * to_interval(q)


# Every row with an enclosure is computed from its row (and its exact cases, ``EXACT``):
# adding a row to functions.FUNCTIONS is all the prover needs.
for _row in FUNCTIONS:
    if _row.interval is not None:
        _COMPILERS[_row.node] = _row_compiler(_row)
