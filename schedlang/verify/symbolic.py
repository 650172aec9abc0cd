"""The symbolic proof: ``na == nb`` at every integer step and every admissible parameter value.

The proof runs over the intervals between breakpoints, with case splits where the clauses
leave an order or a condition open (``prove``), pins the floors constant on an interval,
and cuts a difference of step functions at their common period or folds a periodic tail
onto one period (``_by_period``).  Free parameters reach the prover only here; bound
schedules use it interval by interval too (``bound._bound_range``).  A proof that gives up
records why (``FAILURE``) for the ``unknown`` verdict.
"""

from __future__ import annotations

import contextvars
import time

import sympy as sp
from sympy.core.relational import Relational

from ..core.algebra import t
from .intervals import (
    Fact,
    Undecidable,
    decide_parameters,
    nonnegative,
    normalise,
    order,
    positive,
    rank_of,
    restrict,
    thresholds,
)
from .zero import as_floors, period_grid, pinned, zero_on

# Every time cap of the prover is CPU time of this process (``time.process_time``): a verdict
# does not depend on how busy the machine is (the atlas and the tests rely on that).
MAX_CASE_SPLITS = 3
MAX_PROOF_SECONDS = 6.0  # symbolic proof with free parameters, all cases together
MAX_DEPTH = 4  # nested proofs on one interval (pinned floors, one period)
MAX_PIECES = 48  # cuts of an interval at the multiples of its floors' period
MAX_PERIOD_CUTS = 1_000  # cuts of one period of a periodic tail (beyond: walked, not folded)


def prove(na, nb, facts: list[Fact], splits: int, lo: sp.Expr = sp.S.Zero, hi: sp.Expr | None = None,
          cuts=(), depth: int = MAX_DEPTH) -> bool:
    """A symbolic proof that ``na == nb`` at every integer step of ``[lo, hi)`` (``hi`` None:
    forever) and every admissible parameter value.

    Breakpoints (with ``lo``, ``hi`` and ``cuts``) are ordered under the facts, splitting
    into cases where they do not decide; a parameter-only condition left open splits the
    same way.  On each interval floors that are constant there are pinned; what still
    has branches is proven again on that interval (``depth`` bounds the nesting), and a
    difference of step functions is cut at their common period (``_by_period``).
    """
    if time.process_time() > PROOF_DEADLINE.get():
        return failed(f"the symbolic proof took more than {MAX_PROOF_SECONDS:g} s")
    few = _few_values(na, nb, facts)
    if few is not None:
        # ``w <= 1`` for a whole ``w >= 0``: each value proven alone (a case that breaks a
        # fact is vacuous)
        symbol, values = few
        for v in values:
            bound = [Fact(sp.expand(f.expr.xreplace({symbol: v})), f.strict) for f in facts]
            if any(f.expr.is_number and (f.expr < 0 or f.strict and f.expr == 0) for f in bound):
                continue
            bound = [f for f in bound if not f.expr.is_number]
            ea, eb = (normalise(e.xreplace({symbol: v})) for e in (na, nb))
            if not prove(ea, eb, bound, splits, lo.xreplace({symbol: v}),
                         None if hi is None else hi.xreplace({symbol: v}),
                         [c.xreplace({symbol: v}) for c in cuts], depth):
                return False
        return True
    na, nb = decide_parameters(na, facts), decide_parameters(nb, facts)
    open_condition = _open_condition(na, nb)
    if open_condition is not None:
        if splits <= 0:
            return failed(f"more cases than {MAX_CASE_SPLITS} splits allow ({open_condition[0]} vs "
                          f"{open_condition[1]} left open)")
        small, big, strict = open_condition
        holds, fails = Fact(sp.expand(big - small), strict), Fact(sp.expand(small - big), not strict)
        # a case the facts contradict holds vacuously (``floor(w**1.5) < 1`` with ``w >= 1``)
        return ((_contradicted(holds, facts)
                 or prove(na, nb, facts + [holds], splits - 1, lo, hi, cuts, depth))
                and (_contradicted(fails, facts)
                     or prove(na, nb, facts + [fails], splits - 1, lo, hi, cuts, depth)))
    extra = {lo, *cuts} | ({hi} if hi is not None else set())
    try:
        points = order(thresholds(na) | thresholds(nb) | extra, facts)
    except Undecidable as u:
        if splits <= 0:
            return failed(f"the order of the breakpoints {u.x} and {u.y} does not follow from the "
                          "clauses")
        # Either y > x or x >= y; a case that contradicts the facts holds vacuously.
        before, after = sp.expand(u.y - u.x), sp.expand(u.x - u.y)
        return ((nonnegative(after, facts)
                 or prove(na, nb, facts + [Fact(before, True)], splits - 1, lo, hi, cuts, depth))
                and (positive(before, facts)
                     or prove(na, nb, facts + [Fact(after, False)], splits - 1, lo, hi, cuts, depth)))
    rank = rank_of(points, facts)
    try:
        first, last = rank(lo), (len(points) if hi is None else rank(hi))
    except Undecidable as u:
        return failed(str(u))
    for i in range(first, last):
        start = points[i]
        stop = points[i + 1] if i + 1 < len(points) else None
        try:
            ra, rb = restrict(na, i, rank), restrict(nb, i, rank)
            # an interval holds integers only when ``stop > start``: a fact for what is proven on it
            inside = facts if stop is None or (stop - start).is_number else facts + [
                Fact(sp.expand(stop - start), True)]
            if not zero_between(ra, rb, inside, splits, start, stop, depth):
                where = f"from step {start} on" if stop is None else f"on steps {start} <= t < {stop}"
                return failed(f"{where} the difference {_short(ra - rb)} was not proven zero")
        except Undecidable as u:
            return failed(str(u))
    return True


#: When the symbolic proof of the current verdict gives up (case splits and nested proofs
#: multiply: a cap keeps every verdict bounded).
PROOF_DEADLINE: contextvars.ContextVar[float] = contextvars.ContextVar("prover_deadline",
                                                                      default=float("inf"))

#: What the last failed proof could not decide (the first, deepest failure), for ``unknown``.
FAILURE: contextvars.ContextVar[list | None] = contextvars.ContextVar("prover_failure", default=None)


def failed(reason: str) -> bool:
    """False, the proof given up, with ``reason`` kept in ``FAILURE`` where it is the first."""
    notes = FAILURE.get()
    if notes is not None and not notes:
        notes.append(reason)
    return False


def _short(e: sp.Expr, width: int = 100) -> str:
    text = str(e)
    return text if len(text) <= width else text[: width - 3] + "..."


MAX_FEW = 4  # a whole parameter confined to this many values is proven value by value


def _contradicted(fact: Fact, facts: list[Fact]) -> bool:
    """Whether the facts prove ``fact`` false (``g > 0`` against ``-g >= 0``)."""
    return nonnegative(-fact.expr, facts) if fact.strict else positive(-fact.expr, facts)


def _few_values(na, nb, facts: list[Fact]):
    """``(symbol, values)`` for a whole-number parameter the facts confine to a few values."""
    for symbol in sorted((na.free_symbols | nb.free_symbols) - {t}, key=str):
        if not symbol.is_integer:
            continue
        low = 1 if symbol.is_positive else 0 if symbol.is_nonnegative else None
        high = None
        for f in facts:
            rest = sp.expand(f.expr - symbol)  # symbol + rest > 0 (>= 0): symbol > -rest (>=)
            if rest.is_Rational:
                bound = sp.floor(-rest) + 1 if f.strict else sp.ceiling(-rest)
                low = bound if low is None else max(low, bound)
            rest = sp.expand(f.expr + symbol)  # rest - symbol > 0 (>= 0): symbol < rest (<=)
            if rest.is_Rational:
                bound = sp.ceiling(rest) - 1 if f.strict else sp.floor(rest)
                high = bound if high is None else min(high, bound)
        if low is not None and high is not None and int(high) - int(low) < MAX_FEW:
            return symbol, [sp.Integer(v) for v in range(int(low), int(high) + 1)]
    return None


def _open_condition(na, nb):
    """A comparison of parameters alone (no ``t``) that the facts left open: (small, big, strict)."""
    for rel in sorted((na.atoms(Relational) | nb.atoms(Relational)), key=sp.default_sort_key):
        if t in rel.free_symbols or not rel.free_symbols or not isinstance(
                rel, (sp.StrictLessThan, sp.LessThan, sp.StrictGreaterThan, sp.GreaterThan)):
            continue
        if isinstance(rel, (sp.StrictLessThan, sp.LessThan)):
            return rel.lhs, rel.rhs, isinstance(rel, sp.StrictLessThan)
        return rel.rhs, rel.lhs, isinstance(rel, sp.StrictGreaterThan)
    return None


def _has_open_branch(e: sp.Expr) -> bool:
    return any(t in rel.free_symbols for rel in e.atoms(Relational))


def zero_between(ra, rb, facts, splits, start, stop, depth) -> bool:
    """``ra == rb`` (branches decided by the thresholds) on the integers of ``[start, stop)``."""
    if zero_on(ra - rb, start, stop, facts, cheap=True):
        return True
    if depth <= 0:
        return zero_on(ra - rb, start, stop, facts)
    whole = ra - rb
    if stop is not None:
        ra, rb = pinned(ra, start, stop, facts), pinned(rb, start, stop, facts)
    if _has_open_branch(ra) or _has_open_branch(rb):
        # a branch on a floor or a Mod (``Mod(t, 2 * T) < T``): pinned floors may have made it
        # a threshold, or the period grid below will.  A whole ``d >= 0`` that the facts make
        # ``> 0`` (the interval ``[0, d)`` is not empty) is read as positive, so a slope
        # ``-1 / d`` has a sign (``max(0, (n - t) / max(1, n - w))`` with ``n >= w``)
        swap = _strengthened(facts)
        na, nb = normalise(ra.xreplace(swap)), normalise(rb.xreplace(swap))
        if (thresholds(na) | thresholds(nb)) and prove(
               na, nb, [Fact(f.expr.xreplace(swap), f.strict) for f in facts], splits,
               start.xreplace(swap), None if stop is None else stop.xreplace(swap), depth=depth - 1):
            return True
    return _by_period(ra, rb, facts, splits, start, stop, depth - 1) or zero_on(whole, start, stop, facts)


def _strengthened(facts: list[Fact]) -> dict:
    """Each whole ``d >= 0`` for which a fact says ``d > 0``, to a positive symbol of the same
    name (the same values in this case)."""
    swap = {}
    for f in facts:
        c, d = f.expr.as_coeff_Add()  # d + c > 0 (>= 0) with c <= 0 gives d > 0 (c < 0 if not strict)
        if (d.is_Symbol and d.is_integer and d.is_nonnegative and not d.is_positive
                and (c < 0 or c == 0 and f.strict)):
            swap[d] = sp.Dummy(d.name, integer=True, positive=True)
    return swap


def _by_period(ra, rb, facts, splits, start, stop, depth) -> bool:
    """Cut ``[start, stop)`` where the floors change, or fold a periodic tail onto one period.

    With every floor ``floor((t + c_i) / P_i)``, ``P_i`` and ``start + c_i`` whole multiples of
    one unit ``B`` (``k``, ``2 * T``, ``1000001``), the floors change only at ``start + j B``.
    A finite interval is cut there.  A tail ``[start, oo)`` is written ``t = start + L q + r``
    (``L`` the common period, ``q >= 0`` a fresh whole number, ``r`` in ``[0, L)``): each
    floor becomes ``floor((r + delta_i) / P_i) + (L / P_i) q``, so one period, cut at its
    multiples of ``B``, covers every ``q`` at once.
    """
    grid = period_grid(as_floors(ra - rb), start)
    if grid is None:
        return False
    unit, period, cuts_per_period = grid
    if not unit.is_integer:  # cuts between whole steps (``floor(2 * t / 5)``): not this way
        return False
    if stop is None:
        if cuts_per_period > MAX_PERIOD_CUTS:
            # floors of distant periods (10007 and 10009): a common period of 10**8 steps cut
            # at every multiple of each would be 10**8 intervals; ``_walk`` follows their
            # changes instead, the first few of which decide
            return False
        q = sp.Symbol("q_", integer=True, nonnegative=True)
        fa, fb = (_fold(as_floors(e), start, period, q) for e in (ra, rb))
        cuts = [j * unit for j in range(cuts_per_period)]
        return prove(normalise(fa), normalise(fb), facts, splits, sp.Integer(0), period, cuts, depth)
    count = sp.expand((stop - start) / unit)
    if not count.is_Integer or not 1 < int(count) <= MAX_PIECES:
        return False
    cuts = [start + j * unit for j in range(int(count))]
    return prove(normalise(as_floors(ra)), normalise(as_floors(rb)), facts, splits, start, stop, cuts,
                 depth)


def _fold(e: sp.Expr, start: sp.Expr, period: sp.Expr, q: sp.Symbol) -> sp.Expr:
    """``e`` at ``t = start + period * q + r``, written in ``r`` (as ``t``): see ``_by_period``."""
    r = sp.Dummy("r", integer=True, nonnegative=True)
    floors = {}
    for atom in e.atoms(sp.floor):
        if t in atom.free_symbols:
            arg = sp.expand(atom.args[0])
            slope = arg.coeff(t, 1)
            shifted = sp.expand(arg.subs(t, start + r))
            floors[atom] = sp.floor(shifted) + sp.expand(slope * period) * q
    placeholder = {atom: sp.Dummy() for atom in floors}
    body = e.xreplace(placeholder).xreplace({t: start + period * q + r})
    body = body.xreplace({placeholder[a]: value for a, value in floors.items()})
    return body.xreplace({r: t})
