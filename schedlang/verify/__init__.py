"""The prover: are two schedules the same function of the step? (``docs/verify.md``)

One stage per module: ``prover`` (``equivalent``: the stages run in order), ``inputs``
(the two sides as formulas), ``verdict`` (what is answered), ``eliminate`` (``where``
facts solved into fresh positive symbols), ``intervals`` (breakpoints, their order under
the clauses, comparisons solved for ``t``), ``symbolic`` (the proof over intervals, case
splits, periods), ``zero`` (proving a difference zero, floors and ``Mod``s included),
``bound`` (bound schedules, from one floor change to the next), ``scan`` (step by step),
``search`` (a counterexample for free parameters) and ``float_scan`` (a float64 first look
at long stretches, whose candidates ``core.exact_eval`` must confirm: values with guaranteed
bounds, a dispatch table of one compiler per sympy node, in ``core`` because the closed-form
check and the command line use it too).
"""

from .inputs import pick_schedule
from .prover import equivalent
from .scan import MAX_STEPS
from .verdict import Counterexample, Verdict

__all__ = ["MAX_STEPS", "Counterexample", "Verdict", "equivalent", "pick_schedule"]
