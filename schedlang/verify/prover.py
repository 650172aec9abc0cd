"""Are two schedules the same function of the step?  ``equivalent`` answers in three values.

* **equivalent** (truthy) only with a proof.  ``method`` says which:
  ``"symbolic"`` (an algebraic identity on every interval between breakpoints,
  for every admissible parameter value), ``"exhaustive-exact"`` (bound
  parameters: every step up to the last breakpoint compared in exact rational
  arithmetic, the tail proven equal), ``"exhaustive-interval"`` (as before,
  but some steps have irrational values: they are enclosed in mpmath intervals,
  and where the two enclosures overlap sympy proves the difference at that
  step zero) or ``"tolerance"`` (``rtol > 0``:
  proven within the tolerance at every step).
* **different** with a ``counterexample``: a step (and parameter values, when
  some were free) where the two values provably differ.  With every parameter
  bound, it is the *earliest* such step.
* **unknown** with a ``reason`` when neither could be established within the
  work caps (``MAX_STEPS`` exhaustive steps).

Soundness comes first: anything not proven is unknown, never equivalent, and a
difference is reported only when ``exact_eval`` proves it.  The pieces:
``eliminate`` (``where n > w`` as ``n = w + d``, ``d > 0``), ``intervals``
(breakpoints, their order under constraints, the branch-free formula on each
interval, comparisons not linear in ``t`` solved at their crossings), ``zero``
(proving a difference zero, floors pinned, periods), ``exact_eval`` (values with
guaranteed bounds) and ``float_scan`` (candidates on long stretches).  Here: the
proof over intervals with case splits (``_prove``), period folding
(``_by_period``), the walk of bound schedules from one floor change to the next
(``_walk``) and the counterexample search.
"""

from __future__ import annotations

import contextvars
import math
import random
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction

import sympy as sp
from sympy.core.relational import Relational

from ..core import exact_eval as ev
from ..core.algebra import bind, t
from ..core.special import as_powers, restart_index
from ..errors import SchedlangError
from ..program import Program, Schedule, compile_declared
from ..semantics.params import bind_params
from . import float_scan
from .eliminate import Elimination, eliminate
from .intervals import (
    Fact,
    Undecidable,
    decide_parameters,
    facts_from,
    nonnegative,
    normalise,
    order,
    positive,
    rank_of,
    restrict,
    thresholds,
)
from .zero import MAX_PINNED, as_floors, is_zero, period_grid, pinned, zero_on

# Every time cap below is CPU time of this process (``time.process_time``): a verdict does not
# depend on how busy the machine is (the atlas and the tests rely on that).
MAX_STEPS = 100_000  # exhaustive steps per verdict
MAX_TAIL_SCAN = 20_000  # steps searched for a counterexample in a tail that has no proof
MAX_ALGEBRAIC_STEPS = 64  # steps whose equality needs sympy (irrational values)
MAX_ALGEBRAIC_SECONDS = 1.5  # and the time they may take together
MAX_SCAN_SECONDS = 8.0  # step-by-step work of one verdict (exact values of irrational steps are slow)
MAX_CASE_SPLITS = 3
MAX_PROOF_SECONDS = 6.0  # symbolic proof with free parameters, all cases together
MAX_DEPTH = 4  # nested proofs on one interval (pinned floors, one period)
MAX_WALK_PIECES = 2_000  # pieces between floor changes walked in one interval
MAX_WALK_SECONDS = 5.0
FLOAT_FIRST = 2_000  # a stretch longer than this is scanned in float64 first
FLOAT_TAIL = 4_000_000  # steps of a tail without a proof scanned in float64
SHORT_PIECE = 8  # pieces this short are checked step by step, not proven
MAX_PIECES = 48  # cuts of an interval at the multiples of its floors' period
MAX_PERIOD_CUTS = 1_000  # cuts of one period of a periodic tail (beyond: walked, not folded)
SEARCH_CANDIDATES = 24  # parameter assignments tried when looking for a counterexample
SEARCH_STEPS = 3_000

EQUIVALENT, DIFFERENT, UNKNOWN = "equivalent", "different", "unknown"


@dataclass(frozen=True)
class Counterexample:
    """A step where the two schedules provably differ (``params``: values chosen for free ones)."""

    step: int
    a: float
    b: float
    params: dict = field(default_factory=dict)
    a_exact: str | None = None
    b_exact: str | None = None
    earliest: bool = True  # False when some earlier step could be neither proven equal nor different
    difference: str | None = None  # a - b to 3 digits (floats may print the same)

    def __str__(self) -> str:
        where = ", ".join(f"{k} = {v}" for k, v in self.params.items())
        return (f"step {self.step}{f' (with {where})' if where else ''}: "
                f"{_shown(self.a, self.a_exact)} vs {_shown(self.b, self.b_exact)}"
                + (f" (a - b = {self.difference})" if self.a == self.b and self.difference else ""))


def _shown(value: float, exact: str | None) -> str:
    """A float that tells two close values apart; the exact fraction when it is short."""
    text = repr(value)
    if exact is not None and "/" in exact and len(exact) <= 24:
        text += f" (= {exact})"
    return text


@dataclass(frozen=True)
class Verdict:
    """``equivalent`` / ``different`` / ``unknown``; truthy only when equivalent."""

    status: str
    method: str | None = None
    counterexample: Counterexample | None = None
    reason: str | None = None

    def __bool__(self) -> bool:
        return self.status == EQUIVALENT

    @property
    def equivalent(self) -> bool:
        return self.status == EQUIVALENT

    @property
    def different(self) -> bool:
        return self.status == DIFFERENT

    @property
    def unknown(self) -> bool:
        return self.status == UNKNOWN

    def __str__(self) -> str:
        if self.status == EQUIVALENT:
            return f"equivalent (proven: {self.method})"
        if self.status == DIFFERENT:
            return f"different at {self.counterexample} (found: {self.method})"
        return f"unknown: {self.reason}"


# -- inputs ---------------------------------------------------------------------------------


@dataclass
class _Side:
    expr: sp.Expr
    conditions: list  # where clauses and duration positivity, in the (merged) symbols
    symbols: dict  # name -> symbol


def pick_schedule(x, params: dict | None = None, filename: str = "<string>"):
    """The ``Schedule`` meant by ``x``: itself, a program's main schedule (``lr``, or its only
    one), a ``schedlang.build`` piece, or source compiled with those of ``params`` it declares
    (``compile_declared``)."""
    built = sys.modules.get("schedlang.build.objects")  # loaded if x can be a built piece
    if built is not None and isinstance(x, built.Expr):
        x = x.schedule
    if isinstance(x, (str, bytes)):
        x = compile_declared(x, params or {}, filename)
    if isinstance(x, Program):
        x = x.main_schedule(purpose="equivalent compares one schedule of each side")
    if not isinstance(x, Schedule):
        raise SchedlangError(f"cannot compare a {type(x).__name__}; give a Schedule, a Program or "
                             "source text")
    return x


def _side(x, params: dict) -> _Side:
    x = pick_schedule(x, params)
    program = x.program
    infos = program.params if program else {}
    # ``params`` wins over values the program was compiled with (also for Schedule inputs),
    # checked against the declarations like any other binding.
    values = bind_params(infos, {n: v for n, v in params.items() if n in infos},
                         program.values if program else None)
    bound = {infos[n].symbol: v for n, v in values.items()}
    expr = as_powers(bind(x.symbolic_expr, bound) if program else x.expr)
    conditions = [c.xreplace(bound) for c in (program.constraints if program else [])]
    symbols = {name: info.symbol for name, info in infos.items()}
    return _Side(expr, conditions, symbols)


def _merge_symbols(a: _Side, b: _Side) -> None:
    """One symbol per parameter name, with the assumptions of both sides (admissible for both)."""
    for name in set(a.symbols) & set(b.symbols):
        sa, sb = a.symbols[name], b.symbols[name]
        if sa == sb:
            continue
        assumptions = {"real": True}
        for key in ("integer", "positive", "nonnegative"):
            if sa.assumptions0.get(key) or sb.assumptions0.get(key):
                assumptions[key] = True
        merged = sp.Symbol(name, **assumptions)
        for side, old in ((a, sa), (b, sb)):
            side.expr = side.expr.xreplace({old: merged})
            side.conditions = [c.xreplace({old: merged}) for c in side.conditions]
            side.symbols[name] = merged


# -- the decision ---------------------------------------------------------------------------


def equivalent(a, b, *, params: dict | None = None, rtol=0) -> Verdict:
    """Whether ``a`` and ``b`` give the same value at every step ``t >= 0``.

    ``a``/``b``: ``Schedule``, ``Program`` (its ``lr``, or its only schedule) or source text
    (compiled with the ``params`` it declares).  ``params`` also binds free parameters of
    ``Schedule``/``Program`` inputs.  ``rtol > 0`` accepts values within that relative
    tolerance.  Parameters left free must agree for *every* admissible value.
    """
    params = dict(params or {})
    rtol = Fraction(str(rtol)) if not isinstance(rtol, Fraction) else rtol
    if rtol < 0:
        raise SchedlangError(f"rtol must be >= 0, not {rtol}")
    sa, sb = _side(a, params), _side(b, params)
    unknown_names = set(params) - set(sa.symbols) - set(sb.symbols)
    if unknown_names:
        raise SchedlangError(f"neither schedule has a parameter '{sorted(unknown_names)[0]}'")
    _merge_symbols(sa, sb)
    conditions = [c for c in sa.conditions + sb.conditions if c is not sp.true]
    if sp.false in conditions:
        return Verdict(UNKNOWN, reason="the bound parameter values violate a `where` clause")
    free = (sa.expr.free_symbols | sb.expr.free_symbols) - {t}
    if not free:
        return _decide_bound(normalise(sa.expr), normalise(sb.expr), rtol)
    elim = eliminate(conditions, free)
    if elim.contradiction or sp.false in elim.conditions:
        return Verdict(UNKNOWN, reason="the `where` clauses admit no parameter values")
    na, nb = normalise(elim.apply(sa.expr)), normalise(elim.apply(sb.expr))
    new_free = (na.free_symbols | nb.free_symbols) - {t}
    if not new_free:
        return _decide_bound(na, nb, rtol)
    facts = facts_from(elim.conditions)
    notes: list[str] = []
    token = _FAILURE.set(notes)
    deadline = _PROOF_DEADLINE.set(time.process_time() + MAX_PROOF_SECONDS)
    try:
        if _prove(na, nb, facts, MAX_CASE_SPLITS):
            return Verdict(EQUIVALENT, "symbolic")
    except (ZeroDivisionError, TypeError, ValueError, RecursionError) as exc:
        # a case whose values make a formula undefined (``Mod(t, w)`` at ``w = 0``): no proof
        _failed(f"a case could not be evaluated ({type(exc).__name__}: {exc})")
    finally:
        _FAILURE.reset(token)
        _PROOF_DEADLINE.reset(deadline)
    # every new symbol is searched, also one the schedules lost (``n - w`` is all that
    # counts in ``constant(1, n - w)``), so the counterexample names a value for each parameter
    for value in list(elim.mapping.values()) + elim.conditions:
        new_free |= value.free_symbols - {t}
    raw = elim.apply(sa.expr), elim.apply(sb.expr)

    def admissible(values: dict) -> bool:
        """Whether both programs accept these values (compiling checks more than the clauses:
        ``linear(1, 0, n - w)`` divides by ``n - w``)."""
        try:
            _side(a, {**params, **values})
            _side(b, {**params, **values})
        except SchedlangError:
            return False
        return True

    return _search(na, nb, sorted(new_free, key=str), elim, sorted(free, key=str), rtol,
                   notes[0] if notes else None, raw, admissible)


def _prove(na, nb, facts: list[Fact], splits: int, lo: sp.Expr = sp.S.Zero, hi: sp.Expr | None = None,
           cuts=(), depth: int = MAX_DEPTH) -> bool:
    """A symbolic proof that ``na == nb`` at every integer step of ``[lo, hi)`` (``hi`` None:
    forever) and every admissible parameter value.

    Breakpoints (with ``lo``, ``hi`` and ``cuts``) are ordered under the facts, splitting
    into cases where they do not decide; a parameter-only condition left open splits the
    same way.  On each interval floors that are constant there are pinned; what still
    has branches is proven again on that interval (``depth`` bounds the nesting), and a
    difference of step functions is cut at their common period (``_by_period``).
    """
    if time.process_time() > _PROOF_DEADLINE.get():
        return _failed(f"the symbolic proof took more than {MAX_PROOF_SECONDS:g} s")
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
            if not _prove(ea, eb, bound, splits, lo.xreplace({symbol: v}),
                          None if hi is None else hi.xreplace({symbol: v}),
                          [c.xreplace({symbol: v}) for c in cuts], depth):
                return False
        return True
    na, nb = decide_parameters(na, facts), decide_parameters(nb, facts)
    open_condition = _open_condition(na, nb)
    if open_condition is not None:
        if splits <= 0:
            return _failed(f"more cases than {MAX_CASE_SPLITS} splits allow ({open_condition[0]} vs "
                           f"{open_condition[1]} left open)")
        small, big, strict = open_condition
        holds, fails = Fact(sp.expand(big - small), strict), Fact(sp.expand(small - big), not strict)
        # a case the facts contradict holds vacuously (``floor(w**1.5) < 1`` with ``w >= 1``)
        return ((_contradicted(holds, facts)
                 or _prove(na, nb, facts + [holds], splits - 1, lo, hi, cuts, depth))
                and (_contradicted(fails, facts)
                     or _prove(na, nb, facts + [fails], splits - 1, lo, hi, cuts, depth)))
    extra = {lo, *cuts} | ({hi} if hi is not None else set())
    try:
        points = order(thresholds(na) | thresholds(nb) | extra, facts)
    except Undecidable as u:
        if splits <= 0:
            return _failed(f"the order of the breakpoints {u.x} and {u.y} does not follow from the "
                           "clauses")
        # Either y > x or x >= y; a case that contradicts the facts holds vacuously.
        before, after = sp.expand(u.y - u.x), sp.expand(u.x - u.y)
        return ((nonnegative(after, facts)
                 or _prove(na, nb, facts + [Fact(before, True)], splits - 1, lo, hi, cuts, depth))
                and (positive(before, facts)
                     or _prove(na, nb, facts + [Fact(after, False)], splits - 1, lo, hi, cuts, depth)))
    rank = rank_of(points, facts)
    try:
        first, last = rank(lo), (len(points) if hi is None else rank(hi))
    except Undecidable as u:
        return _failed(str(u))
    for i in range(first, last):
        start = points[i]
        stop = points[i + 1] if i + 1 < len(points) else None
        try:
            ra, rb = restrict(na, i, rank), restrict(nb, i, rank)
            # an interval holds integers only when ``stop > start``: a fact for what is proven on it
            inside = facts if stop is None or (stop - start).is_number else facts + [
                Fact(sp.expand(stop - start), True)]
            if not _zero_between(ra, rb, inside, splits, start, stop, depth):
                where = f"from step {start} on" if stop is None else f"on steps {start} <= t < {stop}"
                return _failed(f"{where} the difference {_short(ra - rb)} was not proven zero")
        except Undecidable as u:
            return _failed(str(u))
    return True


#: When the symbolic proof of the current verdict gives up (case splits and nested proofs
#: multiply: a cap keeps every verdict bounded).
_PROOF_DEADLINE: contextvars.ContextVar[float] = contextvars.ContextVar("prover_deadline",
                                                                       default=float("inf"))

#: What the last failed proof could not decide (the first, deepest failure), for ``unknown``.
_FAILURE: contextvars.ContextVar[list | None] = contextvars.ContextVar("prover_failure", default=None)


def _failed(reason: str) -> bool:
    notes = _FAILURE.get()
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


def _zero_between(ra, rb, facts, splits, start, stop, depth) -> bool:
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
        if (thresholds(na) | thresholds(nb)) and _prove(
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
        return _prove(normalise(fa), normalise(fb), facts, splits, sp.Integer(0), period, cuts, depth)
    count = sp.expand((stop - start) / unit)
    if not count.is_Integer or not 1 < int(count) <= MAX_PIECES:
        return False
    cuts = [start + j * unit for j in range(int(count))]
    return _prove(normalise(as_floors(ra)), normalise(as_floors(rb)), facts, splits, start, stop, cuts,
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


# -- bound schedules: intervals, exhaustive steps, the tail ---------------------------------


class _Scan:
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


def _decide_bound(na, nb, rtol: Fraction, max_steps: int = MAX_STEPS,
                  seconds: float = MAX_SCAN_SECONDS) -> Verdict:
    scan = _Scan(rtol, max_steps, seconds)
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


def _bound_range(na, nb, lo: int, hi: int | None, scan: _Scan, depth: int) -> Verdict | None:
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
            if _zero_between(ra, rb, [], 0, sp.Integer(a), None if b is None else sp.Integer(b), 2):
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


def _walk(ra, rb, a: int, b: int | None, scan: _Scan, depth: int) -> Verdict | None:
    """``[a, b)`` with no symbolic proof: piece by piece between floor changes (each piece
    proven, or scanned step by step from its start, so a difference found is the earliest),
    a periodic tail for one period; anything else step by step."""
    ea, eb = as_floors(ra), as_floors(rb)
    events = _floor_events(ea, eb)
    pa, pb = _pure_period(ra), _pure_period(rb)
    period = math.lcm(pa, pb) if pa is not None and pb is not None else None
    if depth <= 0 or not events:
        return _scan_range(ra, rb, a, b, period, scan)
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


def _walk_difference(ra, rb, ea, eb, d, d_events, a: int, end: int | None, scan: _Scan,
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


def _differ_at(ra, rb, step: int, scan: _Scan) -> Verdict | None:
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


def _walk_pieces(ra, rb, ea, eb, events, a: int, end: int | None, scan: _Scan,
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


def _float_first(ra, rb, a: int, stop: int, scan: _Scan) -> Verdict | None:
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


def _scan_range(ra, rb, a: int, b: int | None, period: int | None, scan: _Scan) -> Verdict | None:
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


# -- free parameters: look for a counterexample --------------------------------------------


#: Integer values tried for a free parameter: small ones, the boundaries 0/1 (the clauses'
#: boundaries are 0/1 of the symbols ``eliminate`` introduces) and numbers with many
#: divisors, so a difference that shows only when 6 or 12 divides a length is met.
INT_VALUES = (1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 13, 16, 24, 30, 60, 100, 120, 360, 1000)
REAL_VALUES = (1, sp.Rational(1, 2), 3, sp.Rational(1, 10), 2, sp.Rational(3, 2), 10, sp.Rational(1, 1000))
SEARCH_SECONDS = 3.0


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


def _search(na, nb, free, elim: Elimination, originals, rtol, why: str | None = None,
            raw=None, admissible=None) -> Verdict:
    """No proof: try admissible parameter values in search of a step where they differ."""
    constants = _constants(na, nb)
    pools = [_candidates(s, constants) for s in free]
    rng = random.Random(0)
    tried = set()
    deadline = time.process_time() + SEARCH_SECONDS
    count = 0
    for combo in _combos(pools, rng):
        if combo in tried:
            continue
        tried.add(combo)
        if count >= 3 * SEARCH_CANDIDATES or time.process_time() > deadline:
            break
        binding = dict(zip(free, combo))
        if not all(sp.simplify(c.xreplace(binding)) == sp.true for c in elim.conditions):
            continue
        count += 1
        try:
            # values that make a formula undefined anywhere (``linear(1, 0, n - w)`` at
            # ``n = w``) are not ones the program accepts
            if raw is not None and any(e.xreplace(binding).has(sp.nan, sp.zoo, sp.oo) for e in raw):
                continue
            ba, bb = normalise(na.xreplace(binding)), normalise(nb.xreplace(binding))
            if ba.has(sp.nan, sp.zoo, sp.oo) or bb.has(sp.nan, sp.zoo, sp.oo):
                continue
            verdict = _decide_bound(ba, bb, rtol, SEARCH_STEPS,
                                    max(deadline - time.process_time(), 0.2))
        except (TypeError, ValueError, ZeroDivisionError, RecursionError):
            continue
        if verdict.different:
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
