"""The exact-integer rules every printer shares: which nodes are whole numbers, and how to
write floors, ceilings, remainders, bounds and ratios of them so integer code computes them.

Why one module: a step boundary, a restart cycle or a periodic argument is exact only
when every target reads the same whole number out of the same formula.  The Python
reference, the torch and the JAX printers (and ``stable.py``'s argument reduction) all
decide with these functions what is integer arithmetic; kept in one place, a fix for
one target's ``floor`` is a fix for all of them, and no target's printer is another's
dependency.  They are sympy to sympy (exact rationals, no floats): each printer then
spells the whole-number parts in its own integers (Python ints, int64 tensors, JAX's
int32/int64).  ``ExactIntegerPrinting`` is the one spelling in plain Python, used by the
reference and for the step-free whole numbers JAX needs concrete at trace time.
"""

from __future__ import annotations

import math

import sympy as sp
from sympy.printing.pycode import PythonCodePrinter

from .base import AtomicPrinting


def is_whole(expr: sp.Expr) -> bool:
    """Whether ``expr`` is a whole number wherever the schedule uses it.

    sympy's ``is_integer``, except that a ``Mod`` of whole numbers is whole too: sympy
    answers None for ``Mod(t, total)`` when ``total`` may be 0 (a parameter only known to
    be >= 0), but a modulus of 0 is a period of 0, which lowering never lets a schedule use.
    """
    if expr.is_integer:
        return True
    if isinstance(expr, (sp.floor, sp.ceiling)):
        return True  # floor(Mod(t, 6*total)/3): sympy cannot call the argument real either
    if isinstance(expr, (sp.Mod, sp.Add, sp.Mul)):
        return all(is_whole(a) for a in expr.args)
    return False


def whole_mods(expr: sp.Expr) -> sp.Expr:
    """Every ``Mod`` of whole-number ratios written ``Mod(N*E, M*D) / (D*E)`` (``integer_mod``):
    ``Mod(t/2, 7)`` is ``Mod(t, 14)/2``, so a floor around it is integer division."""
    if not expr.has(sp.Mod):
        return expr

    def whole(node):
        parts = integer_mod(node)
        if parts is None:
            return node
        numerator, modulus, denominator = parts
        return sp.Mod(numerator, modulus, evaluate=False) / denominator
    return expr.replace(lambda n: isinstance(n, sp.Mod), whole)


def integer_ratio(expr: sp.Expr):
    """``(numerator, denominator)`` when ``expr`` is a ratio of whole-number expressions, a
    ``Mod`` of such ratios counting as one (``Mod(t, 14*total/25)/3 - 100/3`` is
    ``(Mod(25*t, 14*total) - 2500)/75``: its floor is integer division, not a float that
    lands a hair below 0 where the exact value is 0)."""
    linear = _linear_ratio(expr)
    if linear is not None:
        return linear
    numerator, denominator = sp.fraction(sp.together(whole_mods(expr)))
    if is_whole(numerator) and is_whole(denominator):
        return numerator, denominator
    return None


def _linear_ratio(expr: sp.Expr):
    """``integer_ratio`` of a sum of rational multiples of whole symbols and a rational (the
    argument of a periodic piece, ``t/4158 - 4/27``), without ``together``: ``(D*expr, D)``,
    ``D`` the least common denominator, is already in lowest terms (a prime's highest power in
    ``D`` divides one term's denominator, whose numerator it does not divide), which is what
    ``together`` and ``fraction`` return, at a fraction of their cost (milliseconds per piece
    of a long schedule); else None."""
    terms = []
    for term in sp.Add.make_args(expr):
        coefficient, factor = term.as_coeff_Mul()
        whole = factor is sp.S.One or (factor.is_Symbol and factor.is_integer)
        if not coefficient.is_Rational or not whole:
            return None
        terms.append((coefficient, factor))
    denominator = math.lcm(*(int(c.q) for c, _ in terms))
    numerator = sp.Add(*(sp.Integer(c.p * (denominator // c.q)) * f for c, f in terms))
    return numerator, sp.Integer(denominator)


def step_ratio(expr: sp.Expr):
    """``(numerator, denominator)`` of a sum in the step over one whole denominator, else None.

    ``1 - t/n`` in floats rounds ``t/n`` and then cancels: near the end of a long
    segment (``t = n - 1``, ``n = 10**9``) a relative error of 1e-7 is left.  Written
    ``(n - t)/n`` the numerator is a whole number (exact) and the division rounds once.
    """
    if not isinstance(expr, sp.Add) or not any(s.is_integer for s in expr.free_symbols):
        return None  # a sum in the step (global or a branch's local one) or whole parameters
    terms = [term.as_coeff_Mul() for term in expr.args]
    if not all(c.is_Rational for c, _ in terms) or not all(m == 1 or _whole_factor(m) for _, m in terms):
        return None
    denominator = math.lcm(*(int(c.q) for c, _ in terms))
    if denominator == 1:
        return None
    numerator = sp.Add(*(sp.Integer(c.p * (denominator // c.q)) * m for c, m in terms))
    return numerator, sp.Integer(denominator)


def _whole_factor(factor: sp.Expr) -> bool:
    """``factor.is_integer``, answered False at once for a factor holding a sine, cosine or
    tangent: sympy never proves one whole (those it could are evaluated when built:
    ``cos(pi*t)`` is ``(-1)**t``), and asking costs it 5-10 ms per new argument
    (``cos(x)**2`` asks whether ``x`` is a multiple of pi/2), which made the cosine
    segments of a long schedule slow to print."""
    return not factor.has(sp.sin, sp.cos, sp.tan) and bool(factor.is_integer)


def remainder(numerator: sp.Expr, modulus: sp.Expr) -> sp.Expr:
    """``sp.Mod(numerator, modulus)``: the node sympy builds, built without asking sympy when
    ``numerator`` is ``a*s + b`` (``s`` a whole step symbol, ``a >= 1`` and ``b`` integers) and
    ``modulus`` an integer.

    Periodic arguments are reduced with such a remainder once per piece, and sympy's
    ``Mod.eval`` spends 5-40 ms on each (assumption queries comparing ``a*s + b`` with
    multiples of the modulus, a polynomial gcd): with a cosine on the token clock over a
    768-stage batch ramp, most of the time to check and print.  For this form its result is
    known: ``G * Mod(a'*s + (b' mod q'), q')`` with ``G = gcd(a, b, q)``, ``a' = a/G``,
    ``b' = b/G``, ``q' = q/G`` (no comparison with the modulus can be decided, the step being
    unbounded), and ``G * Mod((a' mod q')*s, q')`` when ``q'`` divides ``b'``.  The shortcut
    takes only the cases where nothing else happens (``gcd(a', b')`` is 1 when ``G`` is not
    and ``b`` is not 0, ``q' >= 3``, ``a'`` not a multiple of ``q'``);
    ``tests/test_fast_paths.py`` compares it with sympy.
    """
    found = affine_step(numerator)
    if found is None or not modulus.is_Integer or modulus < 3:
        return sp.Mod(numerator, modulus)
    step, a, b = found
    q = int(modulus)
    g = math.gcd(a, b, q)
    a, b, q = a // g, b // g, q // g
    if q < 3 or a % q == 0 or (g != 1 and b != 0 and math.gcd(a, b) != 1):
        return sp.Mod(numerator, modulus)
    if b % q == 0:  # a multiple of q added: sympy drops it, then reduces the slope too
        inner = sp.Mod(sp.Integer(a % q) * step, sp.Integer(q), evaluate=False)
    else:
        inner = sp.Mod(sp.Integer(a) * step + sp.Integer(b % q), sp.Integer(q), evaluate=False)
    return inner if g == 1 else sp.Mul(sp.Integer(g), inner)


def affine_step(expr: sp.Expr):
    """``(s, a, b)`` (Python ints ``a >= 1``, ``b``) when ``expr`` is ``a*s + b`` for a symbol ``s``
    that is a whole number >= 0 (the step, a branch's local step), else None."""
    b = 0
    step = a = None
    for term in sp.Add.make_args(expr):
        coefficient, factor = term.as_coeff_Mul()
        if not coefficient.is_Integer:
            return None
        if factor is sp.S.One:
            b += int(coefficient)
        elif factor.is_Symbol and step is None and factor.is_integer and factor.is_nonnegative:
            step, a = factor, int(coefficient)
        else:
            return None
    return None if step is None or a < 1 else (step, a, b)


def whole_bound(op: str, bound: sp.Expr) -> sp.Expr:
    """The whole number a whole step is compared with instead of ``bound``.

    For a whole ``t``: ``t < c`` and ``t >= c`` read ``ceil(c)``, ``t <= c`` and ``t > c``
    read ``floor(c)``.  ``t < 11*total/20`` computed in floats is ``t < 55.00000000000001``
    at ``total = 100`` and lets step 55 through; ``t < ceil(11*total/20)`` in integers does not.
    """
    return sp.ceiling(bound) if op in ("<", ">=") else sp.floor(bound)


def whole_argument(expr: sp.Expr) -> sp.Expr:
    """A period the checks made whole, as a whole-number expression: ``7*total/100`` (a
    ``cosine_restarts`` period of ``0.07 * total``) is whole for every accepted ``total``, so
    it is read as ``floor(7*total/100)``, integer division; computed in floats it is
    7000.000000000001 at ``total = 100000`` and moves every restart by a step."""
    if expr.is_integer or integer_ratio(expr) is None:
        return expr
    return sp.floor(expr)


def rounded_inside(expr: sp.Expr) -> sp.Expr | None:
    """``floor(max(a, b))`` as ``max(floor(a), floor(b))`` (likewise ``min`` and ``ceiling``:
    both roundings are nondecreasing), and ``floor(Mod(max(...), n))`` as
    ``Mod(floor(max(...)), n)`` for a whole ``n``, so each side can be integer division;
    None for any other expression.  The end of ``X >> Y`` where one side is ``0.55 * total``
    steps long is such a ``max``, and a restart cycle index (in a ``repeat`` too) asks for
    its floor."""
    inner = expr.args[0] if isinstance(expr, (sp.floor, sp.ceiling)) else None
    if isinstance(inner, (sp.Min, sp.Max)):
        return inner.func(*(expr.func(a) for a in inner.args))
    if isinstance(expr, sp.floor) and isinstance(inner, sp.Mod) and is_whole(inner.args[1]) \
            and isinstance(inner.args[0], (sp.Min, sp.Max)):
        return sp.Mod(sp.floor(inner.args[0]), inner.args[1])
    return None


def first_step(bound: sp.Expr | None) -> sp.Expr | None:
    """The first whole step after a branch ``t < bound``: ``bound`` itself, or its ceiling
    when it is a ratio of whole numbers that may be fractional (``4*total/5``)."""
    if bound is None or bound.is_integer or integer_ratio(bound) is None:
        return bound
    return sp.ceiling(bound)


def integer_mod(expr: sp.Mod):
    """``Mod(N/D, M/E)`` of whole-number ``N, D, M, E`` as ``(N*E mod M*D, D*E)``, else None.

    ``Mod(t/3 + 1/3, 1)`` (a stretched cycle) computed in floats lands a hair below a
    whole number where it should be 0; the remainder of two whole numbers, divided
    once at the end, is exact.
    """
    a, b = (integer_ratio(x) for x in expr.args)
    if a is None or b is None:
        return None
    (n, d), (m, e) = a, b
    return sp.expand(n * e), sp.expand(m * d), sp.expand(d * e)


class ExactIntegerPrinting:
    """Printer mixin: ``floor``, ``ceiling`` and ``Mod`` of whole-number ratios as Python
    integer arithmetic (``//``, ``%``), never a float division that can land a hair below
    a whole number; a rational as the division of its two integers."""

    def _print_floor(self, expr):
        ratio = integer_ratio(expr.args[0])
        if ratio is not None:
            numerator, denominator = ratio
            if denominator == 1:
                return f"({self._print(numerator)})"
            return f"(({self._print(numerator)}) // ({self._print(denominator)}))"
        return f"math.floor({self._print(expr.args[0])})"

    def _print_ceiling(self, expr):
        ratio = integer_ratio(expr.args[0])
        if ratio is not None:
            numerator, denominator = ratio
            return f"(-((-({self._print(numerator)})) // ({self._print(denominator)})))"
        return f"math.ceil({self._print(expr.args[0])})"

    def _print_Mod(self, expr):
        whole = integer_mod(expr)
        if whole is not None:
            numerator, modulus, denominator = (self._print(x) for x in whole)
            remainder = f"(({numerator}) % ({modulus}))"
            return remainder if whole[2] == 1 else f"({remainder} / ({denominator}))"
        a, b = expr.args
        return f"(({self._print(a)}) % ({self._print(b)}))"

    def _print_Rational(self, expr):
        return f"({expr.p}/{expr.q})"


class WholeNumberPrinter(ExactIntegerPrinting, AtomicPrinting, PythonCodePrinter):
    """Plain Python for a step-free whole number over the parameters: what the JAX target
    needs as a concrete number when it traces (a restart period), spelled as the reference
    spells it."""

    def __init__(self):
        super().__init__({"fully_qualified_modules": True, "standard": "python3"})
