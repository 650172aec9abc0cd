"""An exact evaluator of a schedule's sympy expression at integer steps.

Independent of ``schedlang.core.exact_eval`` (which is part of what is under test):
the sympy tree is walked here with

* ``fractions.Fraction`` for every rational value: ``+ - * /``, integer powers,
  ``floor``, ``ceiling``, ``Mod``, ``Abs``, ``Min``/``Max``, comparisons and the
  conditions of ``Piecewise`` are decided exactly;
* ``mpmath`` at 50 significant digits for ``cos``/``sin``/``tan`` (argument
  reduced exactly when it is a rational multiple of pi), ``exp``, ``log`` and
  powers with a non-integer exponent (or an integer exponent so large that the
  exact rational would have more than ``MAX_BITS`` bits).

Besides the value, ``evaluate`` returns a *condition* number ``kappa``: the
largest ``|log(power)|`` of a power or ``exp`` whose exponent depends on the step,
and the largest ``|argument|`` of a trigonometric function of the step.  A
float64 evaluation of such a node carries a relative error of about
``kappa * 2**-53`` that no implementation can avoid (the exponent or argument
is itself rounded); the runner's tolerance uses it (see docs/testing.md).

It also returns ``error``: a first-order bound on the absolute rounding error of
evaluating the expression *as sympy writes it* in float64 (a running error analysis:
each node adds one rounding of its own value, sums add the rounding of their partial
sums and pass on their terms' errors, products, powers, ``exp``, ``log`` and the
trigonometric functions scale their arguments' errors by the derivative).  It is what
cancellation inherent in a formula costs: ``cosine(1e-5, 2, 10)`` is
``200001/200000 - 199999/200000*cos(pi*t/10)``, 1e-5 at step 0 with an absolute error of
about ``2 * 2**-53``; dividing by it makes that error relative.  Sums that are rational
linear functions of the step get one rounding only: schedlang promises to compute
them over one whole denominator (``(n - t)/n``, ``codegen.integers.step_ratio``).
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import sympy as sp

from schedlang.core.clock import expand_counts

DPS = 50
U = 2.0**-53  # the unit roundoff of float64
MAX_BITS = 20_000  # beyond this an exact power is computed with mpmath instead
#: |x| beyond which exp(x) is taken as 0 or inf: float64 has those from |x| > 745.
HUGE_EXPONENT = 2**64

T_NAME = "t"


class NotSupported(Exception):
    """A node this evaluator does not know."""


def _mpf(x):
    if isinstance(x, Fraction):
        return mpmath.mpf(x.numerator) / x.denominator
    return x


def _is_exact(x) -> bool:
    return isinstance(x, Fraction)


def _cmp(a, b) -> int:
    if _is_exact(a) and _is_exact(b):
        return (a > b) - (a < b)
    a, b = _mpf(a), _mpf(b)
    return (a > b) - (a < b)


def _floor(x) -> int:
    if _is_exact(x):
        return math.floor(x)
    return int(mpmath.floor(x))


def _restart_index(step: Fraction, first: Fraction, mult: int) -> int:
    """Largest i with first * (mult**i - 1) / (mult - 1) <= step (written afresh here)."""
    i, total = 0, 0
    while True:
        length = first * mult**i
        if total + length > step:
            return i
        total += length
        i += 1


class Evaluator:
    """``Evaluator(expr)(step) -> (value, kappa, fragile, error)``; value is a Fraction or an mpf."""

    def __init__(self, expr: sp.Basic, values: dict | None = None):
        """``values``: exact numbers for the parameter symbols of a symbolic formula (walked
        as written, as the generated modules compute it: binding with ``xreplace`` would let
        sympy fold ``sin(617*pi*t)`` to 0 and hide what the float evaluation costs)."""
        # a count of the token or sample clock (``T(t + c)``, one lookup in the reference) read
        # as the per-stage linear branches the array targets print: the same exact numbers
        self.expr = expr = expand_counts(expr)
        if any(not isinstance(value, sp.Rational) for value in (values or {}).values()):
            raise NotSupported("a parameter value that is not an exact rational")
        self.values_of = {symbol: Fraction(int(v.p), int(v.q)) for symbol, v in (values or {}).items()}
        self.t = next((s for s in expr.free_symbols if s.name == T_NAME), None)
        extra = [s for s in expr.free_symbols if s.name != T_NAME and s not in self.values_of]
        if extra:
            raise NotSupported(f"unbound symbols {extra}")

    def __call__(self, step: int):
        self.kappa = 0.0
        self.fragile = False
        self.step = step
        self.values: dict = {}  # node -> its value at this step
        self.errors: dict = {}  # node -> the bound on its float64 rounding error (module docstring)
        self.chosen: dict = {}  # Piecewise / Min / Max -> the argument whose value it took
        with mpmath.workdps(DPS):
            value = self.ev(self.expr)
        error = self.errors.get(self.expr, 0.0)
        return value, self.kappa, self.fragile, error if math.isfinite(error) else 0.0

    def ev(self, e):
        value = self._value(e)
        if isinstance(e, sp.Expr) and not isinstance(value, bool):
            self.values[e] = value
            self.errors[e] = self._error(e, value)
        return value

    def _depends(self, e) -> bool:
        return self.t is not None and self.t in e.free_symbols

    # -- the walk ---------------------------------------------------------------------

    def _value(self, e):  # noqa: C901 - one branch per node type
        if e.is_Symbol:
            return self.values_of[e] if e in self.values_of else Fraction(self.step)
        if e.is_Integer:
            return Fraction(int(e))
        if e.is_Rational:
            return Fraction(int(e.p), int(e.q))
        if e.is_Float:
            return Fraction(str(e))  # not expected in schedlang output, but exact if present
        if e is sp.pi:
            return +mpmath.pi
        if e is sp.E:
            return mpmath.e + 0
        if e is sp.true or e is sp.false:
            return bool(e)
        if isinstance(e, sp.Add):
            return self._sum([self.ev(a) for a in e.args])
        if isinstance(e, sp.Mul):
            return self._prod([self.ev(a) for a in e.args])
        if isinstance(e, sp.Pow):
            return self._pow(e)
        if isinstance(e, sp.exp):
            logs = [f for f in sp.Mul.make_args(e.args[0]) if type(f).__name__ == "logb"]
            if len(logs) == 1:  # schedlang's b ** x, kept opaque to sympy: evaluate it as the power
                base = logs[0].args[0]
                return self._pow(sp.Pow(base, e.args[0] / logs[0], evaluate=False))
            x = self.ev(e.args[0])
            if self._depends(e):
                self.kappa = max(self.kappa, abs(float(_mpf(x))))
            if abs(_mpf(x)) > HUGE_EXPONENT:
                # exp(-exp(1.5 ** t)): mpmath would need ln 2 to as many bits as the argument
                # has digits (a hang); the value is 0 or inf in float64 by thousands of orders.
                return mpmath.mpf(0) if x < 0 else mpmath.inf
            return mpmath.exp(_mpf(x)) if x != 0 else Fraction(1)
        if type(e).__name__ == "logb":
            return mpmath.log(_mpf(self.ev(e.args[0])))
        if isinstance(e, sp.log):
            x = self.ev(e.args[0])
            if x == 1:
                return Fraction(0)
            return mpmath.log(_mpf(x))
        if isinstance(e, (sp.cos, sp.sin, sp.tan)):
            return self._trig(e)
        if isinstance(e, sp.floor):
            return Fraction(_floor(self._rounded(e.args[0])))
        if isinstance(e, sp.ceiling):
            return Fraction(-_floor(-self._rounded(e.args[0])))
        if isinstance(e, sp.Mod):
            a, b = self._rounded(e.args[0]), self.ev(e.args[1])
            if _is_exact(a) and _is_exact(b):
                return a - b * math.floor(a / b)
            a, b = _mpf(a), _mpf(b)
            return a - b * mpmath.floor(a / b)
        if isinstance(e, sp.Abs):
            x = self.ev(e.args[0])
            return abs(x)
        if isinstance(e, (sp.Min, sp.Max)):
            values = [self.ev(a) for a in e.args]
            best, chosen = values[0], e.args[0]
            for v, arg in zip(values[1:], e.args[1:]):
                c = _cmp(v, best)
                if (c < 0 and isinstance(e, sp.Min)) or (c > 0 and isinstance(e, sp.Max)):
                    best, chosen = v, arg
            self.chosen[e] = chosen
            return best
        if isinstance(e, sp.Piecewise):
            for value, cond in e.args:
                if self.ev(cond):
                    self.chosen[e] = value
                    return self.ev(value)
            raise NotSupported("Piecewise with no true branch")
        if isinstance(e, sp.core.relational.Relational):
            c = _cmp(self.ev(e.lhs), self.ev(e.rhs))
            return {"<": c < 0, "<=": c <= 0, ">": c > 0, ">=": c >= 0, "==": c == 0, "!=": c != 0}[e.rel_op]
        if isinstance(e, sp.And):
            return all(self.ev(a) for a in e.args)
        if isinstance(e, sp.Or):
            return any(self.ev(a) for a in e.args)
        if isinstance(e, sp.Not):
            return not self.ev(e.args[0])
        if type(e).__name__ == "restart_index":
            step, first, mult = (self.ev(a) for a in e.args)
            if not all(_is_exact(x) for x in (step, first, mult)) or mult.denominator != 1:
                raise NotSupported("restart_index of irrational arguments")
            return Fraction(_restart_index(step, first, int(mult)))
        raise NotSupported(f"{type(e).__name__}: {e}")

    # -- the rounding-error bound (module docstring) -------------------------------------

    def _error(self, e, value) -> float:  # noqa: C901 - one branch per node type
        size = _size(value)
        if e.is_Atom:
            exact = (e == self.t or e.is_Integer or self.values_of.get(e, Fraction(1, 3)).denominator == 1)
            return 0.0 if exact and size <= 2**53 else U * size
        err, val = self.errors.get, (lambda x: _size(self.values.get(x, 0)))
        if isinstance(e, (sp.Add, sp.Mul)) and _linear_in_step(e, self.t):
            return U * size  # a whole-number numerator over one denominator: one rounding
        if isinstance(e, sp.Add):
            return sum(err(a, 0.0) for a in e.args) + (len(e.args) - 1) * U * sum(val(a) for a in e.args)
        if isinstance(e, sp.Mul):
            sizes = [val(a) for a in e.args]
            spread = sum(err(a, 0.0) * math.prod(sizes[:i] + sizes[i + 1:]) for i, a in enumerate(e.args))
            return spread + (len(e.args) - 1) * U * size
        if isinstance(e, sp.Pow):
            return self._pow_error(e.base, e.exp, size)
        if isinstance(e, sp.exp):
            logs = [f for f in sp.Mul.make_args(e.args[0]) if type(f).__name__ == "logb"]
            if len(logs) == 1:
                return self._pow_error(logs[0].args[0], e.args[0] / logs[0], size)
            return size * err(e.args[0], 0.0) + U * size
        if isinstance(e, sp.log):
            x = val(e.args[0])
            return (err(e.args[0], 0.0) / x if x else 0.0) + U * size
        if isinstance(e, (sp.cos, sp.sin, sp.tan)):
            arg = e.args[0]
            spread = err(arg, U * abs(self.phase))
            return spread * (1 + size**2 if isinstance(e, sp.tan) else 1) + U * size
        if isinstance(e, (sp.Abs, sp.Min, sp.Max, sp.Piecewise)):
            inner = self.chosen.get(e, e.args[0])
            return err(inner, 0.0)
        if isinstance(e, sp.Mod):
            return 0.0 if _linear_in_step(e.args[0], self.t) else err(e.args[0], 0.0) + U * size
        return U * size  # floor, ceiling, restart_index, logb of a number: exact or rounded once

    def _pow_error(self, base, exponent, size) -> float:
        b, p = self.values.get(base, 0), self.values.get(exponent, 0)
        b_err, p_err = self.errors.get(base, 0.0), self.errors.get(exponent, 0.0)
        b_size, p_size = _size(b), _size(p)
        if b_size:
            spread = b_err * p_size * size / b_size
        elif 0 < float(_mpf(p)) < 1:
            spread = b_err**p_size  # |(0 + d) ** p| <= |d| ** p
        else:
            spread = 0.0
        if p_err and b_size:
            spread += size * abs(math.log(b_size)) * p_err
        return spread + U * size

    def _rounded(self, arg):
        """The argument of floor/ceiling; marks the step fragile when floats cannot decide it.

        schedlang computes ``floor``/``ceiling`` of a rational linear function of the step
        exactly (integer arithmetic).  Any other argument is a float computation, and one
        within ``1e-9`` of a whole number may round to either side: no float
        implementation can be blamed for that, so the runner skips such a step.
        """
        x = self.ev(arg)
        if not _linear_in_step(arg, self.t):
            nearest = _floor(x + Fraction(1, 2)) if _is_exact(x) else int(mpmath.nint(x))
            if abs(_mpf(x) - nearest) <= mpmath.mpf("1e-9") * max(1, abs(nearest)):
                self.fragile = True
        return x

    @staticmethod
    def _sum(values):
        exact = sum((v for v in values if _is_exact(v)), Fraction(0))
        rest = [v for v in values if not _is_exact(v)]
        if not rest:
            return exact
        return mpmath.fsum(rest) + _mpf(exact)

    @staticmethod
    def _prod(values):
        exact = Fraction(1)
        rest = []
        for v in values:
            if _is_exact(v):
                exact *= v
            else:
                rest.append(v)
        if not rest or exact == 0:
            return exact
        out = _mpf(exact)
        for v in rest:
            out *= v
        return out

    def _pow(self, e):
        base, exponent = self.ev(e.base), self.ev(e.exp)
        if self._depends(e.exp) and base != 0:
            magnitude = abs(float(_mpf(exponent)) * float(mpmath.log(abs(_mpf(base)))))
            self.kappa = max(self.kappa, magnitude)
        if _is_exact(base) and _is_exact(exponent):
            if exponent.denominator == 1:
                k = exponent.numerator
                bits = max(base.numerator.bit_length(), base.denominator.bit_length()) * abs(k)
                if bits <= MAX_BITS:
                    if k < 0 and base == 0:
                        raise ZeroDivisionError("0 ** negative")
                    return base**k
                return mpmath.power(_mpf(base), k)
            if base >= 0:
                root = _exact_root(base, exponent.denominator)
                if root is not None:
                    return self._pow_exact(root, exponent.numerator)
        b = _mpf(base)
        if b < 0:
            raise NotSupported("negative base with a non-integer exponent")
        return mpmath.power(b, _mpf(exponent))

    def _pow_exact(self, base: Fraction, k: int):
        bits = max(base.numerator.bit_length(), base.denominator.bit_length()) * abs(k)
        return base**k if bits <= MAX_BITS else mpmath.power(_mpf(base), k)

    def _trig(self, e):
        fn = {sp.cos: mpmath.cospi, sp.sin: mpmath.sinpi}.get(type(e))
        arg = e.args[0]
        ratio = sp.expand(arg / sp.pi)
        if not ratio.has(sp.pi):
            r = self.ev(ratio)
            self.phase = float(_mpf(r)) * math.pi
            if self._depends(arg):
                self.kappa = max(self.kappa, abs(float(_mpf(r))) * math.pi)
            if _is_exact(r):
                r = r - 2 * math.floor(r / 2)  # exact reduction modulo 2
                if isinstance(e, sp.tan):
                    return mpmath.tan(mpmath.pi * _mpf(r))
                if (2 * r).denominator == 1:  # multiples of pi/2: exact
                    c = {Fraction(0): 1, Fraction(1, 2): 0, Fraction(1): -1, Fraction(3, 2): 0}[r]
                    s = {Fraction(0): 0, Fraction(1, 2): 1, Fraction(1): 0, Fraction(3, 2): -1}[r]
                    return Fraction(c if isinstance(e, sp.cos) else s)
                return fn(_mpf(r))
            x = _mpf(r) * mpmath.pi
        else:
            x = _mpf(self.ev(arg))
            self.phase = float(x)
            if self._depends(arg):
                self.kappa = max(self.kappa, abs(float(x)))
        return {sp.cos: mpmath.cos, sp.sin: mpmath.sin, sp.tan: mpmath.tan}[type(e)](x)


def _linear_in_step(e, t) -> bool:
    if t is None or t not in e.free_symbols:
        return e.is_Rational is True
    poly = sp.Poly(e, t) if e.is_polynomial(t) else None
    return poly is not None and poly.degree() <= 1 and all(c.is_Rational for c in poly.all_coeffs())


def _exact_root(x: Fraction, n: int) -> Fraction | None:
    """The n-th root of x when it is rational, else None."""
    def iroot(k: int) -> int | None:
        if k in (0, 1):
            return k
        if n > k.bit_length():  # 2**n > k: no whole n-th root but 0 and 1
            return None
        r = round(k ** (1.0 / n)) if k < 2**1000 else int(mpmath.nint(mpmath.root(k, n)))
        for c in (r - 1, r, r + 1):
            if c >= 0 and c**n == k:
                return c
        return None

    a, b = iroot(x.numerator), iroot(x.denominator)
    return None if a is None or b is None else Fraction(a, b)


def evaluate(expr: sp.Basic, step: int):
    """``(value, kappa, fragile, error)`` of ``expr`` at ``step``; see the module docstring."""
    return Evaluator(expr)(step)


def to_float(value) -> float:
    """The float64 nearest to the exact value (inf when it overflows)."""
    if _is_exact(value):
        try:
            return float(value)  # Fraction -> float is correctly rounded
        except OverflowError:
            return math.inf if value > 0 else -math.inf
    with mpmath.workdps(DPS):
        if abs(value) > mpmath.mpf("1.8e308"):
            return math.inf if value > 0 else -math.inf
        return float(value)


def _size(value) -> float:
    """``|value|`` as a float (inf past float64's range)."""
    if isinstance(value, bool):
        return float(value)
    return abs(to_float(value))


def magnitude(value) -> float:
    return abs(to_float(value))
