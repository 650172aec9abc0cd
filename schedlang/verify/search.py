"""Free parameters with no proof: admissible values tried in search of a step where the two
schedules differ (a counterexample names a value for each parameter).  Finding none is
``unknown``, never ``equivalent``: a search proves nothing."""

from __future__ import annotations

import random
import time

import sympy as sp

from .bound import decide_bound
from .eliminate import Elimination
from .intervals import normalise
from .verdict import DIFFERENT, UNKNOWN, Counterexample, Verdict

# Every time cap of the prover is CPU time of this process (``time.process_time``): a verdict
# does not depend on how busy the machine is (the atlas and the tests rely on that).
SEARCH_CANDIDATES = 24  # parameter assignments tried when looking for a counterexample
SEARCH_STEPS = 3_000

#: Integer values tried for a free parameter: small ones, the boundaries 0/1 (the clauses'
#: boundaries are 0/1 of the symbols ``eliminate`` introduces) and numbers with many
#: divisors, so a difference that shows only when 6 or 12 divides a length is met.
INT_VALUES = (1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 13, 16, 24, 30, 60, 100, 120, 360, 1000)
REAL_VALUES = (1, sp.Rational(1, 2), 3, sp.Rational(1, 10), 2, sp.Rational(3, 2), 10, sp.Rational(1, 1000))
SEARCH_SECONDS = 3.0
QUICK_COMBOS = 4  # the quick search before a costly normal form: the first combinations only
QUICK_SECONDS = 0.5


def _candidates(symbol: sp.Symbol, constants: list[int]) -> list[sp.Expr]:
    """Values for one parameter: the fixed pools plus the constants of the two schedules and
    their neighbours (a threshold at 30 000 is met by a parameter of 30 000 or 29 999)."""
    if symbol.is_integer:
        values = [0] if not symbol.is_positive else []
        values += list(INT_VALUES)
        for c in constants:
            values += [c - 1, c, c + 1, 2 * c]
        values = [v for v in dict.fromkeys(values) if v >= (1 if symbol.is_positive else 0)
                  or not symbol.is_nonnegative and v >= -1]
    else:
        values = list(REAL_VALUES)
        if not symbol.is_nonnegative:
            values += [-1, 0]
        values += [c for c in constants if c > 0]
    return [sp.Integer(v) if isinstance(v, int) else v for v in dict.fromkeys(values)]


def _constants(*exprs) -> list[int]:
    found = set()
    for e in exprs:
        for n in e.atoms(sp.Integer):
            if 2 < abs(int(n)) <= 10**7:
                found.add(abs(int(n)))
    return sorted(found)[:6]


def _combos(pools, rng):
    """Every parameter small first (one index for all), then the rest at random."""
    longest = max(len(p) for p in pools)
    for i in range(longest):
        yield tuple(pool[min(i, len(pool) - 1)] for pool in pools)
    for _ in range(4 * SEARCH_CANDIDATES):
        yield tuple(rng.choice(pool) for pool in pools)


def _bound_verdict(na, nb, binding, raw, rtol, deadline) -> Verdict | None:
    """The two schedules compared with the parameters bound to ``binding``; None where those
    values make a formula undefined or the comparison fails."""
    try:
        # values that make a formula undefined anywhere (``linear(1, 0, n - w)`` at
        # ``n = w``) are not ones the program accepts
        if raw is not None and any(e.xreplace(binding).has(sp.nan, sp.zoo, sp.oo) for e in raw):
            return None
        ba, bb = normalise(na.xreplace(binding)), normalise(nb.xreplace(binding))
        if ba.has(sp.nan, sp.zoo, sp.oo) or bb.has(sp.nan, sp.zoo, sp.oo):
            return None
        return decide_bound(ba, bb, rtol, SEARCH_STEPS, max(deadline - time.process_time(), 0.2))
    except (TypeError, ValueError, ZeroDivisionError, RecursionError):
        return None


def search_difference(na, nb, free, elim: Elimination, originals, rtol, why: str | None = None,
                      raw=None, admissible=None, first: int | None = None) -> Verdict:
    """No proof: try admissible parameter values in search of a step where they differ.

    ``first``: only the first ``first`` combinations (every parameter small, the ones the
    full search tries first, in its order), within ``QUICK_SECONDS``: the quick search the
    prover runs before a costly normal form (``prover.equivalent``)."""
    constants = _constants(na, nb)
    pools = [_candidates(s, constants) for s in free]
    rng = random.Random(0)
    tried = set()
    deadline = time.process_time() + (SEARCH_SECONDS if first is None else QUICK_SECONDS)
    count = 0
    for combo in _combos(pools, rng):
        if combo in tried:
            continue
        tried.add(combo)
        if first is not None and len(tried) > first:
            break
        if count >= 3 * SEARCH_CANDIDATES or time.process_time() > deadline:
            break
        binding = dict(zip(free, combo))
        if not all(sp.simplify(c.xreplace(binding)) == sp.true for c in elim.conditions):
            continue
        count += 1
        verdict = _bound_verdict(na, nb, binding, raw, rtol, deadline)
        if verdict is not None and verdict.different:
            ce = verdict.counterexample
            shown = elim.values(binding, originals)
            if admissible is not None and not admissible(shown):
                continue
            return Verdict(DIFFERENT, "search", Counterexample(ce.step, ce.a, ce.b, shown,
                                                              ce.a_exact, ce.b_exact, ce.earliest,
                                                              ce.difference))
    because = f" ({why})" if why else ""
    return Verdict(UNKNOWN, reason=f"no symbolic proof for every parameter value{because}, and no "
                                   f"counterexample among the {count} admissible values tried; "
                                   "bind the parameters (params=... / -D) for an exhaustive check")
