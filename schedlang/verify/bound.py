"""Bound schedules (every parameter has a value): the verdict, earliest difference first.

Each interval between breakpoints is proven symbolically (``symbolic.zero_between``), or
walked from one floor change to the next (``_walk``): a piece proven equal is passed at
once, any other scanned step by step (``scan``), so a difference found is the earliest.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from fractions import Fraction

import sympy as sp

from ..core import exact_eval as ev
from ..core.algebra import t
from ..core.special import restart_index
from .intervals import Undecidable, normalise, order, rank_of, restrict, thresholds
from .scan import MAX_SCAN_SECONDS, MAX_STEPS, Scan, scan_range
from .symbolic import MAX_DEPTH, zero_between
from .verdict import DIFFERENT, EQUIVALENT, UNKNOWN, Counterexample, Verdict
from .zero import as_floors, pinned, zero_on

# Every time cap of the prover is CPU time of this process (``time.process_time``): a verdict
# does not depend on how busy the machine is (the atlas and the tests rely on that).
MAX_WALK_PIECES = 2_000  # pieces between floor changes walked in one interval
MAX_WALK_SECONDS = 5.0
SHORT_PIECE = 8  # pieces this short are checked step by step, not proven


def _pure_period(e: sp.Expr) -> int | None:
    """The period of ``e`` when ``t`` occurs only as ``Mod(t + c, k)`` with integer ``k``."""
    period = 1
    mods = {}
    for m in e.atoms(sp.Mod):
        arg, k = m.args
        if not k.is_Integer or sp.expand(arg - t).free_symbols:
            return None
        period = math.lcm(period, int(k))
        mods[m] = sp.Dummy()
    return period if t not in e.xreplace(mods).free_symbols else None


def decide_bound(na, nb, rtol: Fraction, max_steps: int = MAX_STEPS,
                 seconds: float = MAX_SCAN_SECONDS) -> Verdict:
    """The verdict on two bound schedules (every parameter has a value): the earliest
    difference, or equivalent by the strongest kind of proof every interval needed."""
    scan = Scan(rtol, max_steps, seconds)
    try:
        verdict = _bound_range(na, nb, 0, None, scan, MAX_DEPTH)
    except RecursionError:
        verdict = Verdict(UNKNOWN, reason="the schedules are nested too deeply to compare")
    if verdict is not None:
        return verdict
    if scan.pending is not None:
        return scan.pending
    if scan.symbolic_only:
        return Verdict(EQUIVALENT, "symbolic")
    for kind, method in (("tolerance", "tolerance"), ("algebraic", "exhaustive-interval")):
        if kind in scan.kinds:
            return Verdict(EQUIVALENT, method)
    return Verdict(EQUIVALENT, "exhaustive-exact")


def _bound_range(na, nb, lo: int, hi: int | None, scan: Scan, depth: int) -> Verdict | None:
    """Bound schedules on ``[lo, hi)``: a verdict that ends the comparison, or None (proven,
    or left ``pending`` in ``scan``).  Each interval between breakpoints is proven
    symbolically, or walked from one floor change to the next (``_walk``)."""
    extra = {sp.Integer(lo)} | ({sp.Integer(hi)} if hi is not None else set())
    try:
        points = order(thresholds(na) | thresholds(nb) | extra, [])
    except (Undecidable, TypeError) as exc:
        return Verdict(UNKNOWN, reason=f"breakpoints not comparable: {exc}")
    if not all(p.is_Integer for p in points):
        return Verdict(UNKNOWN, reason="a breakpoint is not a whole number")
    rank = rank_of(points, [])
    last = len(points) if hi is None else rank(sp.Integer(hi))
    for i in range(rank(sp.Integer(lo)), last):
        a = int(points[i])
        b = int(points[i + 1]) if i + 1 < len(points) else None
        try:
            ra, rb = restrict(na, i, rank), restrict(nb, i, rank)
        except Undecidable as exc:
            return Verdict(UNKNOWN, reason=str(exc))
        try:
            if zero_between(ra, rb, [], 0, sp.Integer(a), None if b is None else sp.Integer(b), 2):
                continue
        except (TypeError, ValueError, RecursionError, Undecidable):
            pass
        scan.symbolic_only = False
        verdict = _walk(ra, rb, a, b, scan, depth)
        if verdict is not None:
            return verdict
    return None


def _floor_events(ea, eb):
    """``(slope, offset)`` of every floor of ``t`` (numeric, increasing), or None if some
    step function of ``t`` is not such a floor."""
    found = []
    for atom in ea.atoms(sp.floor, sp.ceiling, restart_index) | eb.atoms(sp.floor, sp.ceiling, restart_index):
        if t not in atom.free_symbols:
            continue
        if not isinstance(atom, sp.floor):
            return None
        arg = sp.expand(atom.args[0])
        slope = arg.coeff(t, 1)
        offset = sp.expand(arg - slope * t)
        if not (slope.is_Rational and slope > 0 and offset.is_Rational):
            return None
        found.append((Fraction(int(slope.p), int(slope.q)), Fraction(int(offset.p), int(offset.q))))
    return found


def _next_event(events, s: int) -> int:
    """The first step after ``s`` where one of the floors changes value."""
    best = None
    for slope, offset in events:
        m = math.floor(slope * s + offset)
        nxt = math.ceil((m + 1 - offset) / slope)
        best = nxt if best is None else min(best, nxt)
    return max(best, s + 1)


def _walk(ra, rb, a: int, b: int | None, scan: Scan, depth: int) -> Verdict | None:
    """``[a, b)`` with no symbolic proof: piece by piece between floor changes (each piece
    proven, or scanned step by step from its start, so a difference found is the earliest),
    a periodic tail for one period; anything else step by step."""
    ea, eb = as_floors(ra), as_floors(rb)
    events = _floor_events(ea, eb)
    pa, pb = _pure_period(ra), _pure_period(rb)
    period = math.lcm(pa, pb) if pa is not None and pb is not None else None
    if depth <= 0 or not events:
        return scan_range(ra, rb, a, b, period, scan)
    end = b if b is not None else (a + period if period is not None else None)
    difference = _difference_events(ea, eb, events)
    if difference is not None:
        return _walk_difference(ra, rb, ea, eb, *difference, a, end, scan, depth)
    return _walk_pieces(ra, rb, ea, eb, events, a, end, scan, depth)


def _difference_events(ea, eb, events):
    """``(a - b, the events of its floors)`` when the difference has fewer floors than the two
    sides (``floor(t/3) + floor(t/10007)`` against ``floor(t/3) + floor(t/10009)``: only the
    two distant floors are left), else None.  The difference is constant between its own
    floors' changes, so those are the only steps where the two sides can begin to differ."""
    d = _cancelled(ea, eb)
    own = _floor_events(d, sp.S.Zero)
    if not own or own is None or len(set(own)) >= len(set(events)):
        return None
    return d, own


def _cancelled(ea, eb) -> sp.Expr:
    """``ea - eb`` with the terms the two sums share taken out one for one (sympy's own
    subtraction writes ``-(1/2)**x`` as ``-1/2**x`` and so keeps ``(1/2)**x - 1/2**x``)."""
    ta, tb = Counter(sp.Add.make_args(sp.expand(ea))), Counter(sp.Add.make_args(sp.expand(eb)))
    common = ta & tb
    ra, rb = list((ta - common).elements()), list((tb - common).elements())
    if len(ra) == 1 and len(rb) == 1:
        ra[0], rb[0] = _without_common_factors(ra[0], rb[0])
    return sp.Add(*ra) - sp.Add(*rb)


def _without_common_factors(a: sp.Expr, b: sp.Expr) -> tuple[sp.Expr, sp.Expr]:
    """``a = c f`` and ``b = c g`` with ``c`` never zero (a power of a positive number: ``0.5 **
    floor(t / 3)``): ``(f, g)``, which are equal exactly where ``a`` and ``b`` are."""
    fa = Counter(sp.Mul.make_args(sp.expand_power_exp(a)))
    fb = Counter(sp.Mul.make_args(sp.expand_power_exp(b)))
    common = Counter({f: n for f, n in (fa & fb).items() if _never_zero(f)})
    if not common:
        return a, b
    return sp.Mul(*(fa - common).elements()), sp.Mul(*(fb - common).elements())


def _never_zero(factor: sp.Expr) -> bool:
    """A nonzero number, or a power of a positive number (zero at no step)."""
    if factor.is_number:
        return bool(factor.is_nonzero)
    return isinstance(factor, sp.Pow) and factor.base.is_number and bool(factor.base.is_positive) \
        and factor.exp.is_real is not False


def _walk_difference(ra, rb, ea, eb, d, d_events, a: int, end: int | None, scan: Scan,
                     depth: int) -> Verdict | None:
    """``[a, end)`` a piece of the difference ``d`` at a time: a piece where ``d`` is proven zero
    is passed at once, whatever the two sides' other floors do there (each floor's changes are
    an arithmetic progression, the next one found by integer arithmetic in ``_next_event``);
    the first other piece is walked with every floor (``_walk_pieces``), so the difference
    found is still the earliest."""
    all_events = _floor_events(ea, eb)
    s, pieces = a, 0
    deadline = time.process_time() + MAX_WALK_SECONDS
    while end is None or s < end:
        if pieces >= MAX_WALK_PIECES or scan.budget <= 0 or time.process_time() > min(deadline, scan.stop_at):
            scan._unknown(f"the schedules agree on steps {a}..{s - 1}; from step {s} on their "
                          f"formulas could not be proven equal ({pieces} pieces of their difference "
                          "checked)")
            return None
        e = _next_event(d_events, s)
        if end is not None:
            e = min(e, end)
        pieces += 1
        piece = pinned(d, sp.Integer(s), sp.Integer(e))
        if not any(t in f.free_symbols for f in piece.atoms(sp.floor)) and \
                zero_on(piece, sp.Integer(s), sp.Integer(e), cheap=True):
            s = e
            continue
        if t not in piece.free_symbols and piece.is_number and piece.is_zero is False:
            # the difference (common terms and never-zero factors set aside) is a nonzero
            # constant here: the sides differ at every step of the piece, first at ``s``
            verdict = _differ_at(ra, rb, s, scan)
            if verdict is not None:
                return verdict
        verdict = _walk_pieces(ra, rb, ea, eb, all_events, s, e, scan, depth)
        if verdict is not None or scan.pending is not None:
            return verdict
        s = e
    return None


def _differ_at(ra, rb, step: int, scan: Scan) -> Verdict | None:
    """The verdict "different at ``step``", already proven, with both values (enclosures where
    they are too small or large to write: ``0.5 ** 715827876``); None if they cannot be had."""
    try:
        va, vb = ev.compile_expr(ra)(step), ev.compile_expr(rb)(step)
    except (ev.Undetermined, ZeroDivisionError, ValueError, OverflowError):
        return None
    if ev.is_exact(va) and ev.is_exact(vb):
        return scan._different(step, va, vb)
    # enclosures of values beyond any float (2 ** -715827876): proven apart by the structure,
    # not by the enclosures, so no difference is printed from them
    return Verdict(DIFFERENT, "exhaustive", Counterexample(
        step, ev.to_float(va), ev.to_float(vb), {}, None, None, earliest=scan.pending is None))


def _walk_pieces(ra, rb, ea, eb, events, a: int, end: int | None, scan: Scan,
                 depth: int) -> Verdict | None:
    """``[a, end)`` piece by piece between the changes of every floor (see ``_walk``)."""
    s, pieces = a, 0
    deadline = time.process_time() + MAX_WALK_SECONDS
    while end is None or s < end:
        if pieces >= MAX_WALK_PIECES or scan.budget <= 0 or time.process_time() > min(deadline, scan.stop_at):
            scan._unknown(f"the schedules agree on steps {a}..{s - 1}; from step {a} on their "
                          f"formulas could not be proven equal ({pieces} pieces between floor "
                          "changes checked)")
            return None
        e = _next_event(events, s)
        if end is not None:
            e = min(e, end)
        if e - s <= SHORT_PIECE:
            # a few steps (or floors too large to write into a formula): step by step
            verdict = scan.run(ra, rb, range(s, e))
            if verdict is not None:
                return verdict
            s, pieces = e, pieces + 1
            continue
        fa, fb = pinned(ea, sp.Integer(s), sp.Integer(e)), pinned(eb, sp.Integer(s), sp.Integer(e))
        if any(t in f.free_symbols for f in fa.atoms(sp.floor) | fb.atoms(sp.floor)):
            verdict = scan.run(ra, rb, range(s, e))
        else:
            verdict = _bound_range(normalise(fa), normalise(fb), s, e, scan, depth - 1)
        if verdict is not None:
            return verdict
        s, pieces = e, pieces + 1
    return None
