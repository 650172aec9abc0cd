"""Proving that a branch-free difference of two schedules is zero on an interval of steps.

Only transformations that preserve value are used (expand, cancel, trigsimp,
simplify), so ending at ``0`` is a proof; sympy's ``equals`` is *not* used,
because it may answer from random numerical samples.

Step functions need more than algebra.  Two sufficient tricks, tried in order:

* *generalise*: rewrite ``Mod(x, k)`` as ``x - k*floor(x/k)`` and replace every
  ``floor``/``ceiling``/``restart_index`` by a fresh symbol; if the difference
  vanishes for every value of those symbols it vanishes at the real ones;
* *residues*: with numeric periods of least common multiple ``L``, write
  ``t = start + L*q + r`` for each ``r < L``; the floors then split into a
  part linear in ``q`` and a number, and each residue class is checked alone.

A short interval (a few steps) is checked step by step instead.
"""

from __future__ import annotations

import math

import sympy as sp
from sympy.functions.elementary.hyperbolic import HyperbolicFunction
from sympy.functions.elementary.trigonometric import TrigonometricFunction

from ..core import exact_eval as ev
from ..core.algebra import t
from ..core.functions import FUNCTIONS
from ..core.special import restart_index
from .intervals import positive

MAX_RESIDUES = 120
MAX_SHORT = 24
MAX_PINNED = 10_000  # largest floor value written into a formula
_q = sp.Symbol("q_", integer=True, nonnegative=True)
#: The math functions ``trigsimp`` knows (circular and hyperbolic), from their rows: it is
#: tried before the slower ``simplify``.
TRIGONOMETRIC = tuple(f.node for f in FUNCTIONS if f.node is not None
                      and issubclass(f.node, (TrigonometricFunction, HyperbolicFunction)))


def is_zero(d: sp.Expr, cheap: bool = False) -> bool:
    """Whether ``d`` is identically zero (a proof, or False when none is found).

    ``cheap`` stops after expand/cancel: the full ``simplify`` can take a second on a
    large expression, so callers try their cheap rewrites first.
    """
    if d == 0:
        return True
    if d.is_number and d.is_zero is False:
        return False
    try:
        e = sp.expand(d)
        if e == 0:
            return True
        if sp.cancel(sp.together(e)) == 0:
            return True
        if cheap:
            return False
        if e.has(*TRIGONOMETRIC) and sp.expand(sp.trigsimp(e)) == 0:
            return True
        return sp.simplify(e) == 0
    except (NotImplementedError, TypeError, ValueError, RecursionError, ZeroDivisionError):
        return False


def _step_atoms(e: sp.Expr):
    return e.atoms(sp.floor, sp.ceiling, restart_index, sp.Mod)


def generalised(d: sp.Expr) -> sp.Expr:
    """``d`` with Mod written by floor and every step function a fresh symbol."""
    d = as_floors(d)
    atoms = sorted(d.atoms(sp.floor, sp.ceiling, restart_index), key=sp.default_sort_key)
    fresh = {a: sp.Symbol(f"g{i}_", integer=True) for i, a in enumerate(atoms)}
    return d.xreplace(fresh)


def periods(e: sp.Expr) -> int | None:
    """Least common multiple of the step periods of the floors/Mods in ``e``, if all numeric."""
    lcm = 1
    for atom in _step_atoms(e):
        if isinstance(atom, restart_index):
            return None
        arg = atom.args[0] / atom.args[1] if isinstance(atom, sp.Mod) else atom.args[0]
        if isinstance(atom, sp.Mod) and not atom.args[1].is_Rational:
            return None
        slope = sp.expand(arg).coeff(t, 1)
        if t in sp.expand(arg - slope * t).free_symbols or not slope.is_Rational:
            return None
        if slope != 0:
            lcm = math.lcm(lcm, int(slope.q))
    return lcm


def period_grid(d: sp.Expr, start: sp.Expr):
    """``(B, L, L / B)`` for the floors of ``d`` in ``t`` seen from ``start``, or None.

    Each floor must be ``floor((t + c_i) / P_i)`` with every ``P_i`` and every offset
    ``start + c_i`` a whole multiple of one unit ``B`` (numbers, or rational multiples of
    one parameter expression such as ``k`` or ``2 * T``): then the floors change only at
    ``start + j B``, and ``L`` (a common multiple of the ``P_i``) is a period of them all.
    """
    if d.has(restart_index) or any(t in a.free_symbols for a in d.atoms(sp.ceiling)):
        return None
    pairs = _floor_pairs(d, start)
    if not pairs:
        return None
    base = pairs[0][0]
    ratios = _ratios(pairs, base)
    if ratios is None or any(r <= 0 for r in ratios[::2]):
        return None
    den = math.lcm(*(int(r.q) for r in ratios))
    units = [int(r * den) for r in ratios]
    periods_, offsets = units[::2], units[1::2]
    g = math.gcd(*periods_, *(o for o in offsets if o))
    lcm = math.lcm(*periods_)
    unit = sp.expand(base * sp.Rational(g, den))
    if not (unit.is_positive or unit.is_number and unit > 0):
        return None
    return unit, sp.expand(base * sp.Rational(lcm, den)), lcm // g


def _floor_pairs(d: sp.Expr, start: sp.Expr) -> list | None:
    """``(P_i, start + c_i)`` of each floor ``floor((t + c_i) / P_i)`` in ``d``; None for a floor
    of another shape."""
    pairs = []
    for atom in d.atoms(sp.floor):
        if t not in atom.free_symbols:
            continue
        arg = sp.expand(atom.args[0])
        slope = arg.coeff(t, 1)
        rest = sp.expand(arg - slope * t)
        if t in rest.free_symbols or slope == 0 or t in slope.free_symbols:
            return None
        pairs.append((sp.cancel(1 / slope), sp.expand(start + rest / slope)))
    return pairs


def _ratios(pairs: list, base: sp.Expr) -> list | None:
    """Each period and offset over ``base``, flat (period, offset, ...); None where one is not
    a rational multiple of it."""
    ratios = []
    for period, offset in pairs:
        for x in (period, offset):
            ratio = sp.cancel(x / base)
            if not ratio.is_Rational:
                return None
            ratios.append(sp.Rational(ratio))
    return ratios


def rebase_restarts(d: sp.Expr, start: sp.Expr) -> sp.Expr:
    """Write every ``restart_index(t + c, T0*m**k, m)`` as ``restart_index(t + c + S_k, T0, m) - k``.

    ``S_k = T0 (m^k - 1)/(m - 1)`` is where cycle ``k`` of the base schedule starts, so a
    restart schedule continued after its first ``k`` cycles (as an unrolled sequence writes
    it) becomes the base one.  Valid where ``t + c >= 0``, i.e. from ``start`` on.
    """
    atoms = [a for a in d.atoms(restart_index) if a.args[1].is_Integer and a.args[2].is_Integer
             and a.args[2] > 1 and not sp.expand(a.args[0] - t).free_symbols]
    replace = {}
    for mult in {a.args[2] for a in atoms}:
        group = [a for a in atoms if a.args[2] == mult]
        base = min(int(a.args[1]) for a in group)
        for a in group:
            step, period = a.args[0], int(a.args[1])
            k = round(math.log(period / base, int(mult))) if period % base == 0 else -1
            if k <= 0 or base * int(mult) ** k != period or not (start + step - t).is_nonnegative:
                continue
            offset = base * (int(mult) ** k - 1) // (int(mult) - 1)
            replace[a] = restart_index(step + offset, base, mult) - k
    return d.xreplace(replace) if replace else d


def as_floors(d: sp.Expr) -> sp.Expr:
    """``Mod(x, k)`` written ``x - k*floor(x/k)`` (one kind of step function to reason about)."""
    return d.replace(lambda x: isinstance(x, sp.Mod), lambda x: x.args[0] - x.args[1] * sp.floor(
        x.args[0] / x.args[1]))


def pinned(d: sp.Expr, start: sp.Expr, stop: sp.Expr, facts=()) -> sp.Expr:
    """Step functions that are constant on ``[start, stop)`` replaced by their value.

    ``floor`` of an increasing linear argument and ``restart_index`` are non-decreasing in
    ``t``, so equal values at both ends mean one value throughout.  With symbolic ends
    (``[k, 2k)``), ``floor(x)`` is ``m = floor(x(start))`` when that is a whole number
    and ``x(stop - 1) < m + 1`` follows from the facts.
    """
    d = as_floors(d)
    replace = {}
    for atom in d.atoms(sp.floor, sp.ceiling, restart_index):
        arg = atom.args[0]
        slope = sp.expand(arg).coeff(t, 1)
        if t not in arg.free_symbols or t in sp.expand(arg - slope * t).free_symbols:
            continue
        if arg.free_symbols == {t} and start.is_Integer and stop.is_Integer:
            if not slope.is_positive:
                continue
            first, last = atom.subs(t, start), atom.subs(t, stop - 1)
            # a huge value would become ``0.5 ** 715827879`` computed exactly: left alone
            if first.is_Integer and first == last and abs(first) <= MAX_PINNED:
                replace[atom] = first
        elif isinstance(atom, sp.floor) and (slope.is_positive or positive(slope, list(facts))):
            first = sp.floor(sp.expand(arg.subs(t, start)))
            if first.has(sp.floor) or not first.is_integer:
                continue
            if positive(first + 1 - arg.subs(t, stop - 1), list(facts)):
                replace[atom] = first
    return d.xreplace(replace) if replace else d


def nonzero_somewhere(d: sp.Expr, start: sp.Expr, stop: sp.Expr | None) -> bool:
    """Whether ``d`` (bound) is provably nonzero at one of a few steps of ``[start, stop)``.

    A cheap refutation before the costly simplifications: values come with proven
    bounds from ``exact_eval``, so a nonzero answer is certain.
    """
    if d.free_symbols != {t}:
        return False
    first = int(start)
    last = first + 1000 if stop is None else int(stop) - 1
    samples = sorted(x for x in {first, first + 1, first + 2, (first + last) // 2, last} if x <= last)
    try:
        f = ev.compile_expr(d)
    except ev.Undetermined:
        return False
    for step in samples:
        try:
            if ev.equal(f(step), ev.Fraction(0)) is False:
                return True
        except (ev.Undetermined, ZeroDivisionError, ValueError, TypeError):
            continue
    return False


def zero_on(d: sp.Expr, start: sp.Expr, stop: sp.Expr | None, facts=(), cheap: bool = False) -> bool:
    """Whether ``d`` is zero at every integer ``t`` in ``[start, stop)`` (``stop`` None: forever).

    ``cheap`` leaves out ``simplify`` (a caller with other tricks tries them first)."""
    if t not in d.free_symbols:
        return is_zero(d, cheap)
    length = None if stop is None else sp.expand(stop - start)
    if length is not None and length.is_Integer and int(length) <= MAX_SHORT:
        return all(is_zero(d.subs(t, start + k)) for k in range(int(length)))
    if is_zero(d, cheap=True):
        return True
    if start.is_Integer and (stop is None or stop.is_Integer) and nonzero_somewhere(d, start, stop):
        return False
    candidates = [d]
    if _step_atoms(d):
        candidates += _rewritten(d, start, stop, facts)
        if any(is_zero(c, cheap=True) for c in candidates[1:]):
            return True
    period = periods(d) if start.is_Integer and _step_atoms(d) else None
    residues = period is not None and period <= MAX_RESIDUES
    if residues and _by_residues(d, start, period, cheap=True):
        return True
    if cheap:
        return False
    if any(is_zero(c) for c in candidates):
        return True
    return residues and _by_residues(d, start, period, cheap=False)


def _rewritten(d: sp.Expr, start: sp.Expr, stop: sp.Expr | None, facts) -> list[sp.Expr]:
    """``d`` with its restarts rebased on ``start`` and pinned to ``[start, stop)``, and that
    generalised: the other forms ``zero_on`` tries."""
    e = rebase_restarts(d, start) if d.has(restart_index) else d
    if stop is not None:
        e = pinned(e, start, stop, facts)
    return [e, generalised(e)]


def _by_residues(d: sp.Expr, start: sp.Expr, period: int, cheap: bool) -> bool:
    """Zero on every class ``t = start + period*q + r`` (``q >= 0``), each proven alone."""
    for r in range(period):
        shifted = d.subs(t, start + period * _q + r)
        if not (is_zero(shifted, cheap=True) or is_zero(generalised(shifted), cheap=cheap)):
            return False
    return True
