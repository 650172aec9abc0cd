"""The prover: are two schedules the same function of the step? (``docs/verify.md``)

One stage per module: ``prover`` (inputs, orchestration, verdicts), ``eliminate``
(``where`` facts solved into fresh positive symbols), ``intervals`` (breakpoints, their
order under the clauses, comparisons solved for ``t``), ``zero`` (proving a difference
zero, floors and ``Mod``s included), ``exact_eval`` (values with guaranteed bounds: a
dispatch table of one compiler per sympy node) and ``float_scan`` (a float64 first look
at long stretches, whose candidates ``exact_eval`` must confirm).
"""

from .prover import MAX_STEPS, Counterexample, Verdict, equivalent, pick_schedule

__all__ = ["MAX_STEPS", "Counterexample", "Verdict", "equivalent", "pick_schedule"]
