"""Forms that keep float accuracy: periodic arguments reduced exactly, sums that do not cancel.

Periodic functions of the step are reduced exactly in integers before any float arithmetic.

``cos(pi * t / 7)`` has the period 14 in ``t``.  Formed in floats, the argument
``pi * t / 7`` carries the rounding of ``pi / 7`` times ``t``: at step 2**40 the value
is off by 2e-5.  Every printer therefore rewrites a trigonometric function of
``pi * N / D`` (``N``, ``D`` whole-number expressions of the step and of integer
parameters: ``t``, a local step, ``Mod(t, period)``, ``total``) with the remainder of
``N`` modulo the period computed in integers (Python ints, int64 tensors, JAX's
int32/int64 with its wrap-safe ``Mod``), and only then forms the float argument
from the small remainder:

* ``sin(pi N / D)`` is ``sin(pi W / D)`` with ``W = s * min(u, D - u)``,
* ``cos(pi N / D)`` is ``sin(pi W / (2 D))`` with ``W = s * (D - 2 u)``,

where ``r = N mod 2D``, ``k = floor(r / D)`` (0 or 1), ``u = r - k D`` and
``s = 1 - 2 k``.  ``|pi W / E| <= pi / 2`` and ``W`` is the distance to the nearest
zero of the function, so the one float product ``(pi / E) * W`` has a relative
rounding only, and the value near a zero (a cosine's end) keeps its relative
accuracy.  ``tan`` (period ``D``) is reduced to ``tan(pi (N mod D) / D)``.

A cosine segment ``b + a cos(x)`` (what ``v1 + (v0 - v1) (1 + cos(x)) / 2`` becomes
once sympy expands it) cancels near ``cos(x) = -1`` (the end of a decay) in floats.
``half_angle`` writes it ``(b - a) + 2 a cos(x/2)**2`` (or ``(b + a) - 2 a sin(x/2)**2``
when that form adds terms of one sign), whose square is small exactly where the
value is close to ``b - a``.

``a + c sqrt(x)`` with ``a`` and ``c`` of opposite signs (``1 - sqrt(1 - t/n)``, a
"1-sqrt" warmup or decay) cancels where ``c**2 x`` is close to ``a**2``; ``conjugate``
writes it ``(a**2 - c**2 x) / (a - c sqrt(x))``, whose numerator is a polynomial in the
step computed over one whole denominator (``step_ratio``) and whose denominator adds
terms of one sign.

The rewriting is sympy to sympy (``sinpi`` is the one node it adds); each printer
prints the whole-number parts with its own exact integer code, and calls ``stable_sum``
for every sum.
"""

from __future__ import annotations

import sympy as sp
from sympy.core.cache import cacheit

from ..core.algebra import periodic, t
from ..core.functions import BY_NODE
from .integers import affine_step, integer_ratio, is_whole, remainder


class sinpi(sp.Function):  # noqa: N801 - sympy function classes are lower case
    """``sinpi(W, E)``: ``sin(pi * W / E)`` for a whole ``W`` with ``|W| <= E / 2``, a
    reduced argument (printers only: it never appears in a schedule's formula)."""

    nargs = 2


@cacheit
def pi_ratio(arg: sp.Expr):
    """``(N, D)`` with ``arg == pi * N / D``, ``N`` and ``D`` whole-number expressions, when
    ``arg`` is a rational multiple of pi in the step; else None.  ``D`` is a number made
    positive, or an expression of parameters (``decay - warmup``): a segment's length,
    which the checks made positive for every accepted value."""
    if t not in arg.free_symbols:
        return None
    quotient = sp.expand(arg / sp.pi)
    if quotient.has(sp.pi):
        return None
    coefficient, rest = quotient.as_coeff_Mul()
    if isinstance(rest, (sp.Min, sp.Max)) and coefficient.is_Rational and coefficient > 0:
        ratio = _min_max_ratio(rest.func(*(coefficient * a for a in rest.args)))
    else:
        ratio = integer_ratio(quotient)
    if ratio is None:
        return None
    numerator, denominator = ratio
    if denominator.is_number:
        if denominator < 0:
            numerator, denominator = -numerator, -denominator
    elif denominator.is_negative:
        return None  # a period is a duration: positive wherever a checked schedule uses it
    if t not in numerator.free_symbols or t in denominator.free_symbols:
        return None
    return numerator, denominator


def _min_max_ratio(quotient):
    """``Min(a/p, b/q)`` as ``(Min(a*D/p, b*D/q), D)`` over one whole denominator ``D`` (the
    ``p``, ``q`` positive numbers): ``cos(pi * Min(1, (t - 40)/260))`` is ``cos(pi N / 260)``
    with ``N = Min(260, t - 40)``."""
    if not isinstance(quotient, (sp.Min, sp.Max)):  # it folded: Min(1/2, 1/2 + t/2) of a number
        return integer_ratio(quotient)
    parts = [integer_ratio(a) for a in quotient.args]
    if any(p is None or not (p[1].is_Integer and p[1] > 0) for p in parts):
        return None
    denominator = sp.ilcm(*(int(d) for _, d in parts))
    return quotient.func(*(n * (denominator // int(d)) for n, d in parts)), sp.Integer(denominator)


def _within(numerator: sp.Expr, modulus: sp.Expr, steps) -> bool:
    """Whether ``0 <= numerator < modulus`` at every step of ``steps`` (``(lo, hi)`` numbers: the
    interval an array printer clamps a branch's step into), for ``numerator`` linear in it."""
    if steps is None or not modulus.is_number:
        return False
    offset, rest = numerator.as_independent(t, as_Add=True)
    slope, step = rest.as_coeff_Mul()
    if step != t or not offset.is_number:
        return False
    ends = [slope * step + offset for step in steps]
    return min(ends) >= 0 and max(ends) < modulus


def _remainder(numerator: sp.Expr, modulus: sp.Expr, steps=None) -> sp.Expr:
    """``numerator mod modulus``; ``numerator`` itself where it is already in ``[0, modulus)``
    (``Mod(X, M)`` with ``M <= modulus``, or a step clamped into a segment shorter than it)."""
    if isinstance(numerator, sp.Mod) and (modulus - numerator.args[1]).is_nonnegative \
            and is_whole(numerator.args[1]):
        return numerator
    if _within(numerator, modulus, steps):
        return numerator
    return remainder(numerator, modulus)


@cacheit
def reduced(expr: sp.Expr, signed: bool = True, steps=None) -> sp.Expr | None:
    """``expr`` (``sin``, ``cos`` or ``tan`` of a rational multiple of pi in the step) with its
    argument reduced in integers (see the module docstring), else None.  ``signed=False``
    gives the value up to its sign (enough under an even power); ``steps`` (``(lo, hi)``)
    the steps the array code clamps the step into, where a remainder may be known already."""
    row = BY_NODE.get(type(expr))
    if row is None or row.period is None:
        return None
    found = pi_ratio(expr.args[0])
    if found is None:
        return None
    n, d = found
    if not isinstance(expr, (sp.sin, sp.cos)):  # tan: the remainder modulo its period
        return type(expr)(sp.pi * _remainder(n, row.period * d, steps) / d, evaluate=False)
    if signed and not _within(n, d, steps):
        r = _remainder(n, 2 * d, steps)
        k = sp.floor(r / d)
        u, s = r - k * d, 1 - 2 * k
    else:
        u, s = _remainder(n, d, steps), sp.Integer(1)
    if isinstance(expr, sp.cos):
        return sinpi(s * (d - 2 * u), 2 * d)
    return sinpi(s * nearest_zero(u, d), d)


def nearest_zero(u: sp.Expr, d: sp.Expr) -> sp.Expr:
    """``Min(u, d - u)``, the node sympy builds; built without asking sympy for a remainder
    ``u = Mod(N, d)`` or a step ``u = a*s + b`` (``a > 0``, ``2b < d``) the array printers
    clamp into one period.  sympy's ``Min`` compares its arguments through the assumptions
    system (about 40 ms per sine piece) and can decide nothing for these: it knows no upper
    bound of a ``Mod`` or of a step, and ``u <= d - u`` holds at ``s = 0`` but not for large
    ``s``, so both arguments stay."""
    if d.is_Integer and d > 0 and (isinstance(u, sp.Mod) or _below_half(u, d)):
        return sp.Min(u, d - u, evaluate=False)
    return sp.Min(u, d - u)


def _below_half(u: sp.Expr, d: sp.Expr) -> bool:
    """Whether ``u`` is ``a*s + b`` (``s`` a whole step symbol, ``a >= 1``) with ``2b < d``."""
    found = affine_step(u)
    return found is not None and 2 * found[2] < d


@cacheit
def even_power(expr: sp.Expr, steps=None) -> sp.Expr | None:
    """``sin(x)**2k`` / ``cos(x)**2k`` with the base reduced up to its sign, else None."""
    if not isinstance(expr, sp.Pow) or not isinstance(expr.base, (sp.sin, sp.cos)):
        return None
    exponent = expr.exp
    if not (exponent.is_Integer and exponent > 0 and exponent % 2 == 0):
        return None
    base = reduced(expr.base, signed=False, steps=steps)
    return None if base is None else sp.Pow(base, exponent, evaluate=False)


def _one_stepped_term(expr: sp.Expr):
    """``(rest, coefficient, factor)`` with ``expr == rest + coefficient * factor`` for a sum
    with exactly one term in the step (``rest`` and ``coefficient`` free of it), else None."""
    if not isinstance(expr, sp.Add):
        return None
    stepped = [term for term in expr.args if t in term.free_symbols]
    if len(stepped) != 1:
        return None
    term = stepped[0]
    # ``term.as_independent(t, as_Add=False)`` without its commutativity queries (every
    # factor here commutes): the factors free of the step, and the others.
    args = term.args if term.is_Mul else (term,)
    coefficient = sp.Mul(*(a for a in args if t not in a.free_symbols))
    factor = sp.Mul(*(a for a in args if t in a.free_symbols))
    # the other terms as they stand (already a canonical sum's terms), not ``expr - term``
    return sp.Add(*(other for other in expr.args if other is not term)), coefficient, factor


def half_angle(expr: sp.Expr) -> sp.Expr | None:
    """``b + a cos(x)`` (``a``, ``b`` free of the step) in a form that does not cancel where
    ``cos(x)`` is near -1 or 1 (see the module docstring), else None.

    The cosine form ``(b - a) + 2a cos(x/2)**2`` when its two terms have one sign, else the
    sine form ``(b + a) - 2a sin(x/2)**2`` when its terms do; a value that crosses zero is
    left as it is (no form keeps its relative accuracy there).  Where sympy cannot decide
    the signs (parameters), the cosine form: a decay towards ``b - a``, as schedules are.
    """
    split = _one_stepped_term(expr)
    if split is None or not isinstance(split[2], sp.cos):
        return None
    b, a, trig = split
    x = trig.args[0]
    low, high = b - a, b + a  # the values at cos(x) = -1 and cos(x) = 1

    def same_sign(p, q):
        if p.is_Rational and q.is_Rational:  # numbers (the common case): no assumptions asked
            return (p.p >= 0) == (q.p >= 0) or p.p == 0 or q.p == 0
        return (p * q).is_nonnegative is True

    if same_sign(low, a):
        return low + 2 * a * periodic(sp.cos, x / 2) ** 2
    if same_sign(high, -a):
        return high - 2 * a * periodic(sp.sin, x / 2) ** 2
    if (low * high).is_negative is True:
        return None  # crosses zero
    return low + 2 * a * periodic(sp.cos, x / 2) ** 2


def conjugate(expr: sp.Expr) -> sp.Expr | None:
    """``a + c sqrt(x)`` (``a``, ``c`` free of the step, of opposite signs, ``x`` polynomial in
    the step) as ``(a**2 - c**2 x) / (a - c sqrt(x))`` (see the module docstring), else None."""
    split = _one_stepped_term(expr)
    if split is None:
        return None
    a, c, root = split
    if not (isinstance(root, sp.Pow) and root.exp == sp.S.Half and root.base.is_polynomial(t)):
        return None
    if (a * c).is_negative is not True:
        return None
    x = root.base
    return sp.Mul(sp.expand(a**2 - c**2 * x), sp.Pow(a - c * root, -1), evaluate=False)


@cacheit
def stable_sum(expr: sp.Expr) -> sp.Expr | None:
    """A sum rewritten not to cancel (``half_angle``, ``conjugate``), else None.

    ``stable_sum``, ``reduced`` and ``even_power`` are pure functions of sympy expressions,
    kept in sympy's cache (``cacheit``): the Python, torch and JAX printers ask them of the same
    pieces, and each costs milliseconds of sympy arithmetic per piece."""
    return half_angle(expr) or conjugate(expr)
