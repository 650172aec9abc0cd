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
guaranteed bounds) and ``float_scan`` (candidates on long stretches).  The
prover's own stages: ``inputs`` (the two sides as formulas), ``symbolic`` (the
proof over intervals with case splits, period folding), ``bound`` (bound
schedules walked from one floor change to the next), ``scan`` (step by step),
``search`` (the counterexample search with free parameters) and ``verdict``
(what is answered).  Here: ``equivalent``, which runs them.
"""

from __future__ import annotations

import time
from fractions import Fraction

import sympy as sp

from ..core.algebra import before, piecewise, t
from ..errors import SchedlangError
from .bound import decide_bound
from .eliminate import eliminate
from .inputs import identical, merge_symbols, prepared, read_side
from .intervals import facts_from, normalise
from .search import QUICK_COMBOS, search_difference
from .symbolic import FAILURE, MAX_CASE_SPLITS, MAX_PROOF_SECONDS, PROOF_DEADLINE, failed, prove
from .verdict import EQUIVALENT, UNKNOWN, Verdict


def equivalent(a, b, *, params: dict | None = None, rtol=0, start: int = 0,
               stop: int | None = None) -> Verdict:
    """Whether ``a`` and ``b`` give the same value at every step ``t >= 0``.

    ``a``/``b``: ``Schedule``, ``Program`` (its ``lr``, or its only schedule) or source text
    (compiled with the ``params`` it declares).  ``params`` also binds free parameters of
    ``Schedule``/``Program`` inputs.  ``rtol > 0`` accepts values within that relative
    tolerance.  Parameters left free must agree for *every* admissible value.  ``start`` and
    ``stop`` compare only the steps ``start <= t < stop`` (a run's steps, SPEC §14): both
    sides are set to 0 elsewhere, so what they do outside cannot tell them apart.
    """
    params = dict(params or {})
    rtol = _tolerance(rtol)
    sa, sb = _sides(a, b, params)
    conditions = [c for c in sa.conditions + sb.conditions if c is not sp.true]
    if sp.false in conditions:
        return Verdict(UNKNOWN, reason="the bound parameter values violate a `where` clause")
    # the same formula on both sides is equal at every step: no rule need read it (a 96-stage
    # token clock's export read back is written per stage and normalised in seconds otherwise)
    same = identical(sa.expr, sb.expr)
    if not same:
        sa.expr, sb.expr = (_within(prepared(s.expr), start, stop) for s in (sa, sb))
    free = (sa.expr.free_symbols | sb.expr.free_symbols) - {t}
    if not free:
        return Verdict(EQUIVALENT, "symbolic") if same else \
            decide_bound(normalise(sa.expr), normalise(sb.expr), rtol)
    elim = eliminate(conditions, free)
    if elim.contradiction or sp.false in elim.conditions:
        return Verdict(UNKNOWN, reason="the `where` clauses admit no parameter values")
    if same:
        return Verdict(EQUIVALENT, "symbolic")
    raw = elim.apply(sa.expr), elim.apply(sb.expr)

    def admissible(values: dict) -> bool:
        """Whether both programs accept these values (compiling checks more than the clauses:
        ``linear(1, 0, n - w)`` divides by ``n - w``)."""
        try:
            read_side(a, {**params, **values})
            read_side(b, {**params, **values})
        except SchedlangError:
            return False
        return True

    def searched(na, nb, new_free, why=None, first=None) -> Verdict:
        # every new symbol is searched, also one the schedules lost (``n - w`` is all that
        # counts in ``constant(1, n - w)``), so the counterexample names a value for each parameter
        for value in list(elim.mapping.values()) + elim.conditions:
            new_free |= value.free_symbols - {t}
        return search_difference(na, nb, sorted(new_free, key=str), elim, sorted(free, key=str), rtol, why,
                                 raw, admissible, first)

    if any(_costly_form(e) for e in raw):
        # a min/max of parameters (DeepSpeed's ``max(2, warmup_num_steps)``) becomes a Piecewise
        # whose conditions hold Piecewises: seconds of sympy for the normal form and the proof.
        # The search's first few values, cheap once bound, go first: a difference they find is
        # proven at a step (``decide_bound``) and is the one the full search would report.
        quick = searched(*raw, (raw[0].free_symbols | raw[1].free_symbols) - {t}, first=QUICK_COMBOS)
        if quick.different:
            return quick
    na, nb = normalise(raw[0]), normalise(raw[1])
    new_free = (na.free_symbols | nb.free_symbols) - {t}
    if not new_free:
        return decide_bound(na, nb, rtol)
    proven, why = _symbolic_proof(na, nb, elim.conditions)
    if proven:
        return Verdict(EQUIVALENT, "symbolic")
    return searched(na, nb, new_free, why)


def _tolerance(rtol) -> Fraction:
    """``rtol`` as a Fraction, refused below 0."""
    rtol = Fraction(str(rtol)) if not isinstance(rtol, Fraction) else rtol
    if rtol < 0:
        raise SchedlangError(f"rtol must be >= 0, not {rtol}")
    return rtol


def _sides(a, b, params: dict):
    """Both inputs read with ``params`` bound, their symbols merged; a parameter that neither
    declares is refused."""
    sa, sb = read_side(a, params, expand=False), read_side(b, params, expand=False)
    unknown_names = set(params) - set(sa.symbols) - set(sb.symbols)
    if unknown_names:
        raise SchedlangError(f"neither schedule has a parameter '{sorted(unknown_names)[0]}'")
    merge_symbols(sa, sb)
    return sa, sb


def _symbolic_proof(na: sp.Expr, nb: sp.Expr, conditions) -> tuple[bool, str | None]:
    """Whether ``prove`` proves the normal forms ``na`` and ``nb`` equal under the facts of the
    clauses ``conditions``, within ``MAX_PROOF_SECONDS``; where not, the first reason it noted."""
    facts = facts_from(conditions)
    notes: list[str] = []
    token = FAILURE.set(notes)
    deadline = PROOF_DEADLINE.set(time.process_time() + MAX_PROOF_SECONDS)
    try:
        if prove(na, nb, facts, MAX_CASE_SPLITS):
            return True, None
    except (ZeroDivisionError, TypeError, ValueError, RecursionError) as exc:
        # a case whose values make a formula undefined (``Mod(t, w)`` at ``w = 0``): no proof
        failed(f"a case could not be evaluated ({type(exc).__name__}: {exc})")
    finally:
        FAILURE.reset(token)
        PROOF_DEADLINE.reset(deadline)
    return False, notes[0] if notes else None


def _costly_form(expr: sp.Expr) -> bool:
    """Whether ``expr`` holds a min, max or abs of parameters alone (not of the step), which
    ``normalise`` rewrites as a Piecewise with conditions on the parameters, nested in the
    conditions of the branches that use it (a min of the step becomes thresholds, cheaply)."""
    return any(m.free_symbols and t not in m.free_symbols for m in expr.atoms(sp.Min, sp.Max, sp.Abs))


def _within(expr: sp.Expr, start: int, stop: int | None) -> sp.Expr:
    """``expr`` at the steps ``start <= t < stop``, 0 at every other step."""
    pairs = [(sp.Integer(0), before(t, start))] if start > 0 else []
    if stop is not None:
        pairs += [(expr, before(t, stop)), (sp.Integer(0), sp.true)]
    elif pairs:
        pairs.append((expr, sp.true))
    return piecewise(pairs) if pairs else expr
