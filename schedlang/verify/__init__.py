"""The prover: are two schedules the same function of the step? (``docs/verify.md``)

One stage per module: ``prover`` (inputs, orchestration, verdicts), ``intervals``
(breakpoints and their order under the parameters' constraints), ``zero`` (proving a
difference zero, floors and ``Mod``s included) and ``exact_eval`` (values with
guaranteed bounds: a dispatch table of one compiler per sympy node).
"""

from .prover import MAX_STEPS, Counterexample, Verdict, equivalent, pick_schedule

__all__ = ["MAX_STEPS", "Counterexample", "Verdict", "equivalent", "pick_schedule"]
