"""Bound schedules compared step by step: ``Scan`` (exact values, sympy for irrational ones, a
shared budget, ``pending`` for a step neither proven equal nor different) and the stretches
it is run over (``scan_range``; a long one scanned in float64 first, ``_float_first``).
This is the last resort of every proof of bound schedules, so its caps bound every verdict.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction

import sympy as sp

from ..core import exact_eval as ev
from ..core.algebra import t
from . import float_scan
from .verdict import DIFFERENT, UNKNOWN, Counterexample, Verdict
from .zero import MAX_PINNED, is_zero

# Every time cap of the prover is CPU time of this process (``time.process_time``): a verdict
# does not depend on how busy the machine is (the atlas and the tests rely on that).
MAX_STEPS = 100_000  # exhaustive steps per verdict
MAX_TAIL_SCAN = 20_000  # steps searched for a counterexample in a tail that has no proof
MAX_ALGEBRAIC_STEPS = 64  # steps whose equality needs sympy (irrational values)
MAX_ALGEBRAIC_SECONDS = 1.5  # and the time they may take together
MAX_SCAN_SECONDS = 8.0  # step-by-step work of one verdict (exact values of irrational steps are slow)
FLOAT_FIRST = 2_000  # a stretch longer than this is scanned in float64 first
FLOAT_TAIL = 4_000_000  # steps of a tail without a proof scanned in float64


class Scan:
    """Step-by-step comparison with a shared budget; remembers which kinds of proof were used.

    A step whose equality cannot be proven does not stop the scan: it is kept as
    ``pending`` (the verdict is at best unknown) while later steps are still searched
    for a provable difference, which is then reported as not necessarily the earliest.
    """

    def __init__(self, rtol: Fraction, budget: int = MAX_STEPS, seconds: float = MAX_SCAN_SECONDS):
        self.rtol = rtol
        self.budget = budget
        self.stop_at = time.process_time() + seconds  # the whole step-by-step work of one verdict
        self.algebraic = MAX_ALGEBRAIC_STEPS
        self.deadline: float | None = None
        self.kinds: set[str] = set()
        self.pending: Verdict | None = None
        self.symbolic_only = True  # no step needed checking one by one

    def run(self, ra, rb, steps) -> Verdict | None:
        """A different verdict, or None (check ``pending`` and ``budget`` for the rest)."""
        try:
            fa, fb = ev.compile_expr(ra), ev.compile_expr(rb)
        except ev.Undetermined as exc:
            self._unknown(f"cannot evaluate exactly: {exc}")
            return None
        for step in steps:
            self.budget -= 1
            if self.budget < 0:
                self._unknown(f"more than {MAX_STEPS} steps to check one by one and no symbolic proof")
                return None
            if self.budget % 256 == 0 and time.process_time() > self.stop_at:
                self.budget = -1
                self._unknown(f"checking step by step took too long (stopped at step {step}) and "
                              "no symbolic proof")
                return None
            try:
                va, vb = fa(step), fb(step)
            except (ev.Undetermined, ZeroDivisionError, ValueError) as exc:
                self._algebraic(ra, rb, step, f"cannot evaluate step {step}: {exc}")
                continue
            same = ev.equal(va, vb)
            if same:
                self.kinds.add("exact" if ev.is_exact(va) and ev.is_exact(vb) else "algebraic")
                continue
            if self.rtol > 0:
                close = ev.within(va, vb, self.rtol)
                if close:
                    self.kinds.add("tolerance")
                elif close is False:
                    return self._different(step, va, vb)
                else:
                    self._unknown(f"at step {step} the tolerance is too close to call")
                continue
            if same is False:
                return self._different(step, va, vb)
            self._algebraic(ra, rb, step, f"at step {step} the values agree to ~45 digits but "
                                          "are not proven equal")
        return None

    def _unknown(self, reason: str) -> None:
        if self.pending is None:
            self.pending = Verdict(UNKNOWN, reason=reason)

    def _different(self, step, va, vb) -> Verdict:
        return Verdict(DIFFERENT, "exhaustive", Counterexample(
            step, ev.to_float(va), ev.to_float(vb), {}, ev.exact_text(va), ev.exact_text(vb),
            earliest=self.pending is None, difference=ev.show_difference(va, vb)))

    def _algebraic(self, ra, rb, step, reason) -> None:
        self.algebraic -= 1
        if self.deadline is None:
            self.deadline = time.process_time() + MAX_ALGEBRAIC_SECONDS
        if self.pending is None and self.algebraic >= 0 and time.process_time() < self.deadline and \
                _small_floors(ra - rb, step) and is_zero(sp.expand(ra - rb).subs(t, step)):
            self.kinds.add("algebraic")
            return
        self._unknown(reason)


def _small_floors(e: sp.Expr, step: int) -> bool:
    """Whether every floor of ``e`` at ``step`` is at most ``MAX_PINNED``: sympy computes
    ``(1/2) ** 715827876`` exactly (hours) when a larger one is substituted."""
    for atom in e.atoms(sp.floor):
        arg = sp.expand(atom.args[0])
        slope = arg.coeff(t, 1)
        rest = sp.expand(arg - slope * t)
        if not (slope.is_Rational and rest.is_Rational):
            continue
        if abs(math.floor(Fraction(int(slope.p), int(slope.q)) * step
                          + Fraction(int(rest.p), int(rest.q)))) > MAX_PINNED:
            return False
    return True


def _float_first(ra, rb, a: int, stop: int, scan: Scan) -> Verdict | None:
    """A long stretch: float64 over all of ``[a, stop)`` first (``float_scan``); a candidate
    proven different exactly is the verdict, after the steps before it were checked one by
    one as far as the budget goes (else it is reported as not necessarily the earliest)."""
    for step in float_scan.candidates(ra, rb, a, stop):
        try:
            va, vb = ev.compile_expr(ra)(step), ev.compile_expr(rb)(step)
        except (ev.Undetermined, ZeroDivisionError, ValueError):
            continue
        if ev.equal(va, vb) is not False or scan.rtol > 0 and ev.within(va, vb, scan.rtol) is not False:
            continue
        before = scan.run(ra, rb, range(a, step))
        return before if before is not None else scan._different(step, va, vb)
    return None


def scan_range(ra, rb, a: int, b: int | None, period: int | None, scan: Scan) -> Verdict | None:
    """Bound ``ra`` and ``rb`` compared step by step on ``[a, b)`` (``b`` None: one period, or
    a tail as long as the budget allows, which leaves the verdict unknown): a verdict that ends
    the comparison, or None."""
    end = b if b is not None else a + period if period is not None else a + FLOAT_TAIL
    if t in ra.free_symbols | rb.free_symbols and end - a > FLOAT_FIRST:
        verdict = _float_first(ra, rb, a, end, scan)
        if verdict is not None:
            return verdict
    complete = True
    if b is not None:
        steps = range(a, b)
    elif t not in ra.free_symbols | rb.free_symbols:
        steps = range(a, a + 1)
    elif period is not None:
        steps = range(a, a + period)
    else:
        steps, complete = range(a, a + max(min(scan.budget, MAX_TAIL_SCAN), 0)), False
    verdict = scan.run(ra, rb, steps)
    if verdict is not None:
        return verdict
    if not complete:
        scan._unknown(f"the schedules agree on steps 0..{steps.stop - 1}, but from step {a} on "
                      "their formulas could not be proven equal")
    return None
