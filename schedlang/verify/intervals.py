"""Breakpoints of a schedule and the integer intervals between them (used by ``verify``).

A schedule is piecewise in the step: every branch condition that is linear in
``t`` can be written, for *integer* ``t``, as ``t < b`` or ``not (t < b)``
with an integer-valued threshold ``b`` (``t <= c`` is ``t < floor(c) + 1``).
Once the thresholds of two schedules are merged and put in order, each
schedule restricted to one interval ``[b_i, b_{i+1})`` is a single formula
without branches, and the two formulas can be compared there.

Thresholds may hold parameters.  Their order is then decided from the
parameters' declared assumptions plus *facts* (``g > 0`` / ``g >= 0``, from
``where`` clauses and duration positivity); an order that cannot be decided
raises ``Undecidable`` so the caller can split into cases.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass

import sympy as sp
from sympy.core.relational import Relational

from ..core import exact_eval as ev
from ..core.algebra import t


class Undecidable(Exception):  # noqa: N818 - a state, not a failure
    """The order of two thresholds does not follow from what is known."""

    def __init__(self, x: sp.Expr, y: sp.Expr):
        super().__init__(f"cannot order {x} and {y}")
        self.x, self.y = x, y


@dataclass(frozen=True)
class Fact:
    """``expr > 0`` (strict) or ``expr >= 0``, about parameters only."""

    expr: sp.Expr
    strict: bool


# -- normal form --------------------------------------------------------------------------


def normalise(expr: sp.Expr) -> sp.Expr:
    """Min/Max/Abs as Piecewise, and every comparison in ``t`` as ``t < b`` / ``t >= b``."""
    if expr.has(sp.Min, sp.Max):
        expr = expr.replace(lambda e: isinstance(e, (sp.Min, sp.Max)), _flat_clamp)
    if expr.has(sp.Min, sp.Max) and expr.has(Relational):
        expr = expr.replace(lambda e: isinstance(e, Relational), _distribute)
    if expr.has(sp.Min, sp.Max, sp.Abs):
        expr = expr.rewrite(sp.Piecewise)
    if not expr.has(Relational):
        return expr
    expr = expr.replace(lambda e: isinstance(e, Relational), _threshold_form)
    if expr.has(sp.ITE):
        # ``min(a, b(max(t, 1)))`` rewrites to ``ITE(t < 2, ...)``: its few steps one by one
        expr = expr.replace(lambda e: isinstance(e, sp.ITE),
                            lambda e: sp.ITE(e.args[0], _at_few_steps(e.args[0], e.args[1]), e.args[2]))
    return expr


def _flat_clamp(e: sp.Expr) -> sp.Expr:
    """A nest of ``min``/``max`` of one formula ``x`` and numbers as one ``min(hi, max(lo, x))``.

    sympy's Piecewise form of ``min(max(min(max(t, 1), 1001), 2), 1002)`` doubles with every
    level (10 levels ran past a minute); each ``max(., c)`` or ``min(., c)`` is monotone, so the
    whole nest is a clamp of ``x``, found here in one pass (``replace`` goes bottom-up)."""
    found = _clamp_parts(e)
    if found is None:
        return e
    x, lo, hi = found
    return sp.Min(hi, sp.Max(lo, x))


def _clamp_parts(e: sp.Expr):
    """``(x, lo, hi)`` with ``e == min(hi, max(lo, x))``, or None when ``e`` is not such a nest."""
    if not isinstance(e, (sp.Min, sp.Max)):
        return None
    numbers = [a for a in e.args if a.is_number and a.is_extended_real]
    others = [a for a in e.args if not (a.is_number and a.is_extended_real)]
    if len(others) != 1 or not numbers:
        return None
    x, lo, hi = _clamp_parts(others[0]) or (others[0], sp.S.NegativeInfinity, sp.S.Infinity)
    if isinstance(e, sp.Max):
        c = sp.Max(*numbers)
        return x, sp.Max(lo, c), sp.Max(hi, c)
    c = sp.Min(*numbers)
    return x, sp.Min(lo, c), sp.Min(hi, c)


def _distribute(rel: Relational):
    """``t < min(a, b)`` as ``t < a and t < b`` (and the like), so ``a`` and ``b`` stay thresholds.

    A duration built by ``combine`` (``max(d1, d2)``) or a user's ``t < min(w, n)`` would
    otherwise become one threshold hidden in a Piecewise, which cannot be ordered.
    """
    if not isinstance(rel, (sp.StrictLessThan, sp.LessThan, sp.StrictGreaterThan, sp.GreaterThan)):
        return rel
    if rel.lhs == t and isinstance(rel.rhs, (sp.Min, sp.Max)) and t not in rel.rhs.free_symbols:
        op, bound = type(rel), rel.rhs
    elif rel.rhs == t and isinstance(rel.lhs, (sp.Min, sp.Max)) and t not in rel.lhs.free_symbols:
        op = {sp.StrictLessThan: sp.StrictGreaterThan, sp.LessThan: sp.GreaterThan,
              sp.StrictGreaterThan: sp.StrictLessThan, sp.GreaterThan: sp.LessThan}[type(rel)]
        bound = rel.lhs
    else:
        return rel
    below = op in (sp.StrictLessThan, sp.LessThan)
    # t < min: every one; t < max: any one; t > min: any one; t > max: every one.
    every = below == isinstance(bound, sp.Min)
    parts = [_distribute(op(t, arg)) for arg in bound.args]
    return sp.And(*parts) if every else sp.Or(*parts)


def _threshold_form(rel: Relational):
    """``t < b`` (as ``Lt``) or ``t >= b`` (as ``Ge``) with integer-valued ``b``, when linear in t."""
    if t not in rel.free_symbols:
        return rel
    if isinstance(rel, (sp.Eq, sp.Ne)):
        eq = _threshold_form(sp.Le(rel.lhs, rel.rhs)), _threshold_form(sp.Ge(rel.lhs, rel.rhs))
        both = sp.And(*eq)
        return both if isinstance(rel, sp.Eq) else sp.Not(both)
    if not isinstance(rel, (sp.StrictLessThan, sp.LessThan, sp.StrictGreaterThan, sp.GreaterThan)):
        return rel
    inner = next((p for p in sorted(rel.atoms(sp.Piecewise), key=sp.default_sort_key)
                  if t in p.free_symbols), None)
    if inner is not None:
        # ``t / 1000 <= 1 / sqrt(max(t, 1))``: one comparison per branch of the inner Piecewise
        # (only when that leaves thresholds alone: otherwise the comparison stays one atom,
        # the same in both schedules)
        parts, taken = [], sp.false
        for value, cond in inner.args:
            part = _threshold_form(rel.xreplace({inner: value}))
            if any(t in r.free_symbols and as_threshold(r) is None for r in part.atoms(Relational)):
                return rel
            part = _at_few_steps(_threshold_form(cond), part)
            parts.append(sp.And(cond, sp.Not(taken), part))
            taken = sp.Or(taken, cond)
        return sp.Or(*parts)
    diff = sp.expand(rel.lhs - rel.rhs)
    if not diff.is_polynomial(t) or sp.degree(diff, t) != 1:
        return _crossings(rel, diff)
    slope = diff.coeff(t, 1)
    rest = sp.expand(diff - slope * t)  # ``t/w + t/n``: the slope is a sum, ``slope * t`` is not expanded
    if t in rest.free_symbols:
        return rel
    op = type(rel)
    if slope.is_negative:
        op = {sp.StrictLessThan: sp.StrictGreaterThan, sp.LessThan: sp.GreaterThan,
              sp.StrictGreaterThan: sp.StrictLessThan, sp.GreaterThan: sp.LessThan}[op]
    elif not slope.is_positive:
        return rel
    c = -rest / slope  # t op c
    if slope.is_Add:  # ``(1 + w/n) / (1/w + 1/n)`` is ``w``
        c = sp.cancel(sp.together(c))
    if op is sp.StrictLessThan:
        return sp.Lt(t, sp.ceiling(c))
    if op is sp.LessThan:
        return sp.Lt(t, sp.floor(c) + 1)
    if op is sp.StrictGreaterThan:
        return sp.Ge(t, sp.floor(c) + 1)
    return sp.Ge(t, sp.ceiling(c))


FEW_STEPS = 4  # a branch ``t < k`` with k at most this is written step by step


def _at_few_steps(cond, part):
    """``part`` under a branch ``t < k`` of a few steps, as one parameter condition per step.

    ``t / w**1.5 <= 1 / sqrt(max(t, 1))`` has, on the branch ``t < 2``, the threshold
    ``t < floor(w**1.5) + 1``, which cannot be ordered against ``2`` from ``w >= 1``; at
    ``t = 0`` and ``t = 1`` it is ``0 <= w**1.5`` (true) and ``1 <= w**1.5``, a condition on
    parameters alone that the prover splits on like any other.
    """
    bound = as_threshold(cond)
    if bound is None or not bound[1] or not bound[0].is_Integer or not 0 < bound[0] <= FEW_STEPS:
        return part
    if all(as_threshold(r) is None or as_threshold(r)[0].is_number for r in part.atoms(Relational)):
        return part
    steps = []
    for j in range(int(bound[0])):
        at = part.xreplace({t: sp.Integer(j)})
        steps.append(sp.And(sp.Ge(t, j), sp.Lt(t, j + 1), at))
    return sp.Or(*steps)


MAX_CROSSING_DEGREE = 16  # polynomials whose real roots are found exactly
MAX_CROSSING_ROOT = 12  # t = u**L for at most this L (t**(1/12))


def _crossings(rel: Relational, diff: sp.Expr):
    """A comparison not linear in ``t`` (``t <= sqrt(t)``, Noam's ``t / w**1.5 < t**-0.5``) as
    thresholds, when ``diff`` is a rational function of ``t`` and of powers ``b**(p/q)`` of
    one increasing ``b = a*t + c`` (``c >= 0``; ``b = t`` when there is no such power).

    With ``b = u**L`` (``L`` the common denominator) ``diff`` is a polynomial in ``u > 0``
    over a positive monomial; its positive real roots are found exactly (sympy's
    ``real_roots``), every integer within one of a crossing ``t = (u**L - c)/a`` is a piece of its own
    and each piece is decided by exact (or enclosed) evaluation at one step, so the
    comparison becomes an ``or`` of ``b_i <= t < b_{i+1}``.  Otherwise it is left as it is.
    """
    monomials = _monomial_crossing(rel)
    if monomials is not None:
        return monomials
    if diff.free_symbols != {t} or diff.has(sp.Piecewise, sp.floor, sp.ceiling, sp.Mod, sp.Min, sp.Max):
        return rel
    crossing = _exponential_crossing(diff)
    if crossing is not None:
        return _decided_pieces(rel, crossing)
    exponents = {sp.Integer(1)}
    bases = set()
    for p in diff.atoms(sp.Pow):
        if t not in p.free_symbols or p.exp.is_Integer and p.base.is_polynomial(t):
            continue
        if not p.exp.is_Rational:
            return rel
        bases.add(sp.expand(p.base))
        exponents.add(p.exp)
    base = bases.pop() if len(bases) == 1 else t if not bases else None
    if base is None or not base.is_polynomial(t) or sp.degree(base, t) != 1:
        return rel
    slope, offset = base.coeff(t, 1), sp.expand(base - base.coeff(t, 1) * t)
    if not (slope.is_Rational and slope > 0 and offset.is_Rational):
        return rel
    # ``b < 0`` before ``t = -c / a`` (a decay that starts there: HF's ``sqrt(t/100 - 3/2)``):
    # the powers have no real value at those steps, which lowering refuses wherever the formula
    # is used, so ``u > 0`` covers every step that counts; the first step of it is a cut, and
    # ``_decided_pieces`` leaves the steps before it undecided, as it leaves any undefined step
    start = [sp.ceiling(-offset / slope)] if offset < 0 else []
    if any(t in f.free_symbols for f in diff.atoms(sp.Function)):
        return rel
    power = 1
    for e in exponents:
        power = power * int(e.q) // sp.igcd(power, int(e.q))
    if power > MAX_CROSSING_ROOT:
        return rel
    u = sp.Dummy("u", positive=True)
    try:
        # t = (u**power - offset) / slope, so that base = u**power
        in_u = sp.expand(diff.xreplace({t: (u ** power - offset) / slope}))
        numer, denom = sp.together(in_u).as_numer_denom()
        if not denom.is_positive:
            return rel
        poly = sp.Poly(sp.expand(numer), u)
        if poly.degree() > MAX_CROSSING_DEGREE or poly.degree() < 1:
            return rel
        poly = _over_rationals(poly, u)
        if poly is None:
            return rel
        roots = [r for r in poly.real_roots() if r.is_positive]
        crossings = [sp.N((r ** power - offset) / slope, 40) for r in roots] + start
    except (ZeroDivisionError, ValueError, TypeError, NotImplementedError, sp.PolynomialError):
        return rel
    return _decided_pieces(rel, crossings)


MAX_RESULTANT_DEGREE = 48  # degree of the rational multiple of a polynomial with algebraic coefficients


def _over_rationals(poly: sp.Poly, u: sp.Symbol) -> sp.Poly | None:
    """A polynomial with rational coefficients whose roots include every root of ``poly``.

    Noam's crossing with numbers (``(t + 1) * 4000**-1.5`` against ``(t + 1)**-0.5``) has
    coefficients such as ``sqrt(10)``, and sympy isolates real roots over the rationals only.
    Each radical ``a = r**(p/q)`` (``r``, ``p/q`` rational) becomes a symbol ``y`` with
    ``y**q = r**p``; the resultant in ``y`` is ``prod P(u, y_j)`` over all conjugates
    ``y_j``, which vanishes wherever ``P(u, a)`` does.  So its real roots are a superset of
    the crossings, which is all the cuts need (extra cuts only make more pieces, each decided
    by evaluation).  None when a coefficient is not such a radical (``pi``, ``E``).
    """
    if poly.domain.is_QQ or poly.domain.is_ZZ:
        return poly
    expr = poly.as_expr()
    radicals = sorted((p for p in expr.atoms(sp.Pow) if p.is_number and p.base.is_Rational
                       and p.exp.is_Rational and not p.is_Rational), key=sp.default_sort_key)
    ys = [sp.Dummy("y") for _ in radicals]
    expr = expr.xreplace(dict(zip(radicals, ys)))
    if (expr.free_symbols - {u} - set(ys)) or any(not c.is_Rational for c in sp.Poly(
            expr, u, *ys).coeffs()):
        return None
    for radical, y in zip(radicals, ys):
        minimal = y ** int(radical.exp.q) - radical.base ** int(radical.exp.p)
        expr = sp.resultant(expr, minimal, y)
    result = sp.Poly(sp.expand(expr), u)
    if result.is_zero or result.degree() < 1 or result.degree() > MAX_RESULTANT_DEGREE \
            or not (result.domain.is_QQ or result.domain.is_ZZ):
        return None
    return result


def _monomial_crossing(rel: Relational):
    """``c1 * t**p1 < c2 * t**p2`` with positive (symbolic) ``c1``, ``c2`` and ``p1 != p2``: for
    ``t >= 1`` it is ``t < (c2 / c1) ** (1 / (p1 - p2))`` (``>`` when ``p1 < p2``), a threshold
    in the parameters (Noam's ``t / w**1.5 < t**-0.5`` is ``t < w``).  Step 0 is decided by
    itself (``t**-0.5`` has no value there)."""
    shift = _common_shift(rel)
    if shift is None:
        return None
    # ``(t + 1) * w**-1.5 < (t + 1)**-0.5`` (Noam counts from 1) is solved in ``s = t + 1``
    # (written ``t`` below), which is at least 1 at every step: no step is left to decide alone
    body = rel if not shift else rel.func(rel.lhs.xreplace({t: t - shift}), rel.rhs.xreplace({t: t - shift}))
    sides = []
    for side in (body.lhs, body.rhs):
        coeff, exponent = sp.powsimp(side, force=False).as_coeff_exponent(t)
        if t in coeff.free_symbols or not exponent.is_Rational or not coeff.is_positive:
            return None
        sides.append((coeff, exponent))
    (c1, p1), (c2, p2) = sides
    if p1 == p2 or not rel.free_symbols - {t}:
        return None
    flip = {sp.StrictLessThan: sp.StrictGreaterThan, sp.LessThan: sp.GreaterThan,
            sp.StrictGreaterThan: sp.StrictLessThan, sp.GreaterThan: sp.LessThan}
    op = type(rel) if p1 > p2 else flip[type(rel)]
    crossing = sp.powsimp((c2 / c1) ** (1 / (p1 - p2)), force=False)
    threshold = _threshold_form(op(t + shift, crossing))
    if as_threshold(threshold) is None:
        return None
    if shift:
        return threshold
    try:
        at_zero = rel.subs(t, 0)
    except TypeError:  # zoo < 1
        at_zero = rel
    if at_zero not in (sp.true, sp.false):
        at_zero = rel
    return sp.Or(sp.And(sp.Ge(t, 1), threshold), sp.And(sp.Lt(t, 1), at_zero))


def _common_shift(rel: Relational) -> int | None:
    """The ``c`` of the one ``t + c`` (a whole ``c >= 1``) the comparison is written in, 0 when
    ``t`` appears alone, None when there are several or another kind."""
    shifts = set()
    for side in (rel.lhs, rel.rhs):
        for factor in sp.Mul.make_args(side):
            base = factor.base if isinstance(factor, sp.Pow) else factor
            if t not in base.free_symbols:
                continue
            base = sp.expand(base)
            if base == t:
                shifts.add(0)
            elif base.is_Add and base.coeff(t, 1) == 1 and sp.expand(base - t).is_Integer \
                    and sp.expand(base - t) > 0:
                shifts.add(int(sp.expand(base - t)))
            else:
                return None
    return shifts.pop() if len(shifts) == 1 else None


def _exponential_crossing(diff: sp.Expr):
    """Where ``A * b**(a*t + c) + C`` (numbers, ``b > 0``; ``exp`` too) or ``A * (a*t + c)**p + C``
    (``a > 0``, ``c >= 0``) crosses 0: [] or [t*] (each is monotone)."""
    terms = sp.Add.make_args(diff)
    varying = [x for x in terms if t in x.free_symbols]
    if len(varying) != 1:
        return None
    constant = sp.Add(*[x for x in terms if t not in x.free_symbols])
    coeff, power = varying[0].as_independent(t, as_Add=False)
    if isinstance(power, sp.Pow) and t not in power.exp.free_symbols and power.exp.is_Rational:
        # A * (a*t + c)**p + C, monotone where a*t + c > 0: crosses at ((-C/A)**(1/p) - c) / a
        inner = sp.expand(power.base)
        slope = inner.coeff(t, 1)
        start = sp.expand(inner - slope * t)
        ratio = -constant / coeff
        if not (inner.is_polynomial(t) and sp.degree(inner, t) == 1 and slope.is_Rational and slope > 0
                and start.is_Rational and start >= 0 and coeff.is_number and constant.is_number):
            return None
        if not ratio.is_positive:
            return []
        return [sp.N((ratio ** (1 / power.exp) - start) / slope, 40)]
    if isinstance(power, sp.exp):
        base, exponent = sp.E, power.args[0]
    elif isinstance(power, sp.Pow) and t not in power.base.free_symbols:
        base, exponent = power.base, power.exp
    else:
        return None
    exponent = sp.expand(exponent)
    a = exponent.coeff(t, 1)
    c = sp.expand(exponent - a * t)
    if not all(x.is_number and x.is_real for x in (coeff, constant, base, a, c)) or a == 0 \
            or not base.is_positive or base == 1 or coeff == 0:
        return None
    ratio = -constant / coeff
    if not ratio.is_positive:
        return []
    return [sp.N((sp.log(ratio) / sp.log(base) - c) / a, 40)]


def _decided_pieces(rel: Relational, crossings):
    """``rel`` as an ``or`` of intervals: the integers within one of a crossing (where ``rel``'s
    two sides may be equal) are pieces of their own, and every piece is decided by evaluating
    ``rel`` at its first step (exactly, or with enclosures), as its sign cannot change inside."""
    cuts = {0, 1}
    for x in crossings:
        if not x.is_real or abs(x) > 10**15:
            return rel
        crossing = int(sp.floor(x))
        cuts |= {max(crossing + k, 0) for k in (-1, 0, 1, 2)}
    cuts = sorted(cuts)
    try:
        test = ev.compile_expr(rel)
    except ev.Undetermined:
        return rel
    pieces = []
    for a, b in zip(cuts, cuts[1:] + [None]):
        piece = sp.Ge(t, a) if b is None else sp.And(sp.Ge(t, a), sp.Lt(t, b))
        try:
            holds = test(a)
        except ev.Undetermined:
            # too close to call: the two sides may be equal there (Noam's crossing at
            # ``t + 1 = 4000`` exactly); an algebraic zero is proven, anything else stays open
            holds = _equal_at(rel, a)
        except (ZeroDivisionError, ValueError, TypeError):
            # undefined at that step (``t**-0.5`` at 0): left as it is, for that piece only
            holds = rel
        pieces.append(sp.And(piece, holds))
    return sp.Or(*pieces)


def _equal_at(rel: Relational, step: int):
    """``rel`` at ``step`` when its two sides are provably equal there (an algebraic number
    whose minimal polynomial is ``x``); ``rel`` itself, undecided, otherwise."""
    d = sp.expand((rel.lhs - rel.rhs).xreplace({t: sp.Integer(step)}))
    if d == 0:
        return sp.true if isinstance(rel, (sp.LessThan, sp.GreaterThan)) else sp.false
    if not d.is_number or d.has(sp.pi, sp.E, sp.exp, sp.log, sp.Function):
        return rel
    x = sp.Dummy("x")
    try:
        zero = sp.minimal_polynomial(d, x) == x
    except (NotImplementedError, ValueError, TypeError, RecursionError):
        return rel
    if not zero:
        return rel
    return sp.true if isinstance(rel, (sp.LessThan, sp.GreaterThan)) else sp.false


def as_threshold(rel) -> tuple[sp.Expr, bool] | None:
    """``(b, True)`` for ``t < b``, ``(b, False)`` for ``t >= b``, in either spelling.

    Piecewise may store ``t < d0`` as ``d0 > t`` (sympy's canonical order), so both
    sides are read.
    """
    if isinstance(rel, (sp.StrictLessThan, sp.GreaterThan)) and rel.lhs == t:
        b, below = rel.rhs, isinstance(rel, sp.StrictLessThan)
    elif isinstance(rel, (sp.StrictGreaterThan, sp.LessThan)) and rel.rhs == t:
        b, below = rel.lhs, isinstance(rel, sp.StrictGreaterThan)
    else:
        return None
    return None if t in b.free_symbols else (b, below)


def thresholds(expr: sp.Expr) -> set[sp.Expr]:
    """Every ``b`` of a ``t < b`` / ``t >= b`` in a normalised expression."""
    found = set()
    for rel in expr.atoms(Relational):
        threshold = as_threshold(rel)
        if threshold is not None:
            found.add(sp.expand(threshold[0]))
    return found


# -- facts and order ----------------------------------------------------------------------


def facts_from(constraints) -> list[Fact]:
    """Usable facts from ``where`` clauses; anything else (``or``, ``!=``) is dropped (safe)."""
    found: list[Fact] = []
    for c in constraints:
        if c in (sp.true, True):
            continue
        if isinstance(c, sp.And):
            found += facts_from(c.args)
        elif isinstance(c, (sp.StrictLessThan, sp.StrictGreaterThan)):
            big, small = (c.rhs, c.lhs) if isinstance(c, sp.StrictLessThan) else (c.lhs, c.rhs)
            found.append(Fact(sp.expand(big - small), True))
        elif isinstance(c, (sp.LessThan, sp.GreaterThan)):
            big, small = (c.rhs, c.lhs) if isinstance(c, sp.LessThan) else (c.lhs, c.rhs)
            found.append(Fact(sp.expand(big - small), False))
    return found


def _usable(facts: list[Fact]) -> list[tuple[sp.Expr, bool]]:
    """Facts as ``(g, strict)``; a strict fact on an integer ``g`` also gives ``g - 1 >= 0``."""
    out = []
    for f in facts:
        out.append((f.expr, f.strict))
        if f.strict and f.expr.is_integer:
            out.append((f.expr - 1, False))
    return out


def nonnegative(d: sp.Expr, facts: list[Fact]) -> bool:
    """Whether ``d >= 0`` follows from the assumptions and at most two facts."""
    d = sp.expand(d)
    if d.is_nonnegative:
        return True
    usable = _usable(facts)
    for size in (1, 2):
        for combo in itertools.combinations_with_replacement(usable, size):
            if sp.expand(d - sum(g for g, _ in combo)).is_nonnegative:
                return True
    shifted = _from_one(d)
    if shifted is not None and shifted.is_nonnegative:
        return True
    lower = _lower_bound(d)
    if lower is not None:
        bound, margin = lower
        return nonnegative(bound + margin, facts)
    return False


def _from_one(d: sp.Expr) -> sp.Expr | None:
    """``d`` with each whole ``s >= 1`` written ``s' + 1`` (``s' >= 0``): the same values, but
    sympy then sees that ``n + w - 2 >= 0``.  None when ``d`` has no such symbol."""
    ones = {s: sp.Dummy(s.name, integer=True, nonnegative=True) + 1 for s in d.free_symbols
            if s.is_Symbol and s.is_integer and s.is_positive}
    return sp.expand(d.xreplace(ones)) if ones else None


def _lower_bound(d: sp.Expr):
    """``(L, m)`` with ``d >= 0`` whenever ``L + m >= 0``, from monotone terms of ``d``.

    A term ``c * floor(X)`` (``c > 0``) is more than ``c * (X - 1)``: for an integer ``d``
    that is strictly above ``L``, so ``L >= -1`` suffices (``floor(w**1.5) - 1 >= 0``).  A
    power ``w**p`` of a whole ``w >= 1`` with a positive coefficient is at least ``w``
    (``p >= 1``) or ``1`` (``0 < p < 1``).  Symbolic Noam needs both.  None when nothing
    applies.
    """
    def linear_in(atom) -> bool:  # d = c * atom + rest, c a positive number, rest free of atom
        c = d.coeff(atom)
        return c.is_number and c.is_positive and not sp.expand(d - c * atom).has(atom)

    floors = [f for f in d.atoms(sp.floor) if f.free_symbols]
    if floors and d.is_integer and all(linear_in(f) for f in floors):
        return sp.expand(d.xreplace({f: f.args[0] - 1 for f in floors})), sp.Integer(1)
    powers = {}
    for p in d.atoms(sp.Pow):
        base, exp = p.base, p.exp
        if (base.is_Symbol and base.is_integer and base.is_positive and exp.is_Rational
                and exp > 0 and not exp.is_Integer and linear_in(p)):
            powers[p] = base if exp >= 1 else sp.Integer(1)
    if powers:
        return sp.expand(d.xreplace(powers)), sp.Integer(0)
    return None


def positive(d: sp.Expr, facts: list[Fact]) -> bool:
    """Whether ``d > 0`` follows (an integer ``d`` needs ``d - 1 >= 0``)."""
    d = sp.expand(d)
    if d.is_positive:
        return True
    if d.is_integer and nonnegative(d - 1, facts):
        return True
    for g, strict in _usable(facts):
        if strict and sp.expand(d - g).is_nonnegative:
            return True
    return False


def order(points, facts: list[Fact]) -> list[sp.Expr]:
    """``points`` (with 0) sorted by a proven total preorder; equal ones merged.

    Raises ``Undecidable`` for the first pair whose order does not follow.
    """
    points = {sp.expand(p) for p in points} | {sp.Integer(0)}
    if all(p.is_number for p in points):
        return sorted(points, key=lambda p: sp.Rational(p) if p.is_Rational else float(p))
    distinct: list[sp.Expr] = []
    for p in sorted(points, key=sp.default_sort_key):
        if not any(sp.expand(p - q) == 0 for q in distinct):
            distinct.append(p)

    @functools.cache
    def compare(x, y):
        up, down = nonnegative(y - x, facts), nonnegative(x - y, facts)
        if not (up or down):
            raise Undecidable(x, y)
        return 0 if up and down else -1 if up else 1

    for x, y in itertools.combinations(distinct, 2):
        compare(x, y)  # raise early on an undecidable pair
    ordered = sorted(distinct, key=functools.cmp_to_key(compare))
    # The prover is incomplete, so ``compare`` need not be transitive; the order is
    # trusted only when each neighbour is proven <= the next (<= itself is transitive).
    for x, y in zip(ordered, ordered[1:]):
        if not nonnegative(y - x, facts):
            raise Undecidable(x, y)
    return ordered


def rank_of(points: list[sp.Expr], facts: list[Fact]):
    """A function from a threshold to its index in ``points`` (equal thresholds share it)."""
    index = {p: i for i, p in enumerate(points)}

    @functools.cache  # every interval asks again of each threshold
    def rank(b):
        b = sp.expand(b)
        if b in index:
            return index[b]
        for p, i in index.items():
            if sp.expand(b - p) == 0:
                return i
        raise Undecidable(b, points[0])

    return rank


def restrict(expr: sp.Expr, i: int, rank) -> sp.Expr:
    """``expr`` for ``t`` in ``[points[i], points[i+1])``: each ``t < b`` decided, branches gone.

    A ``Piecewise`` whose conditions up to the first true one are decided is its branch,
    restricted: the branches after it are never rebuilt.  Rebuilding the whole expression for
    each interval (``replace``) made a schedule of n pieces cost n**2 sympy nodes (a 96-stage
    batch ramp: minutes of the prover inside ``export``).  What is left undecided goes
    through ``replace`` as before, with the same result.
    """
    def decide(rel):
        threshold = as_threshold(rel)
        if threshold is None:
            return rel
        b, is_lt = threshold
        below = rank(b) > i  # b >= points[i + 1] > t
        return sp.true if below == is_lt else sp.false

    def general(node):
        return node.replace(lambda e: isinstance(e, Relational), decide)

    def walk(node):
        # A Piecewise first, without ``has``: sympy caches ``has`` by the expression, and the
        # two schedules' equal (not identical) trees then compare node by node at each lookup.
        if isinstance(node, sp.Piecewise):
            for value, cond in node.args:
                decided = decide(cond) if isinstance(cond, Relational) else cond
                if decided is sp.true:
                    return walk(value)
                if decided is not sp.false:
                    return general(node)
            return general(node)
        if not node.has(Relational):
            return node
        if isinstance(node, (Relational, sp.logic.boolalg.Boolean)):
            return general(node)
        args = [walk(a) for a in node.args]
        return node.func(*args) if any(a is not b for a, b in zip(args, node.args)) else node

    return walk(expr)


def decide_parameters(expr: sp.Expr, facts: list[Fact]) -> sp.Expr:
    """Settle comparisons between parameters alone (``total < warm``) that the facts decide."""
    def decide(rel):
        if t in rel.free_symbols or not isinstance(rel, (sp.StrictLessThan, sp.LessThan,
                                                         sp.StrictGreaterThan, sp.GreaterThan)):
            return rel
        small, big = (rel.lhs, rel.rhs) if isinstance(rel, (sp.StrictLessThan, sp.LessThan)) else (
            rel.rhs, rel.lhs)
        strict = isinstance(rel, (sp.StrictLessThan, sp.StrictGreaterThan))
        if (positive if strict else nonnegative)(big - small, facts):
            return sp.true
        if (nonnegative if strict else positive)(small - big, facts):
            return sp.false
        return rel

    if not expr.has(Relational):
        return expr
    return expr.replace(lambda e: isinstance(e, Relational), decide)
