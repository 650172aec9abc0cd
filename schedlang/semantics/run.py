"""The run's length (SPEC §14): ``run = N`` in steps, or in ``tok``/``sp`` on the run's clock.

A schedule is a plan; the run is what a trainer does with it, and it may stop before the
plan ends (a horizon set for 5e12 tokens, a run of 4e12).  Lowering keeps the length as
written (``RunLength``: an amount, symbolic in the parameters it names, and its unit);
``steps`` turns it into the number of steps the run trains once the parameters are bound.
A length on the sample or token clock follows section 12's rule: the run trains the steps
whose consumed-before count is below ``N``, so it has ``step_at(N)`` steps (a length that is
not a whole number of batches ends at the first step reaching it).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ..core.clock import UNITS, Clock
from ..errors import SchedlangError, Span
from .steps import refuse_huge_step


@dataclass(frozen=True)
class RunLength:
    """``run = amount`` as written: ``unit`` None (steps) or ``"sp"``/``"tok"`` (counted on the
    run's batch schedule); ``amount`` may name parameters (``run = total``)."""

    amount: sp.Expr
    unit: str | None
    span: Span | None

    @property
    def text(self) -> str:
        """The length as ``check`` shows it when it is still symbolic."""
        return str(self.amount) + ("" if self.unit is None else self.unit)


def steps(run: RunLength, substitutions: dict, clock: Clock | None) -> int:
    """The number of steps the run trains, with the parameters bound by ``substitutions``.

    ``clock`` is the run's batch schedule (needed for a length in samples or tokens)."""
    amount = run.amount.xreplace(substitutions) if substitutions else run.amount
    free = sorted(str(s) for s in amount.free_symbols)
    if free:
        raise SchedlangError(f"the run's length uses parameter '{free[0]}', which has no value", run.span,
                             hint=f"give '{free[0]}' a default or a value (-D {free[0]}=...)")
    what = "steps" if run.unit is None else UNITS[run.unit]
    if not (amount.is_number and amount.is_finite and amount.is_integer):
        raise SchedlangError(f"the run's length must be a whole number of {what}, not {amount}", run.span,
                             hint="e.g. run = 10_000 (steps) or run = 4e12tok")
    amount = int(amount)
    if amount < 1:
        raise SchedlangError(f"a run of {amount} {what} trains no step", run.span,
                             hint="the run's length is at least one step")
    if run.unit is None:
        refuse_huge_step(sp.Integer(amount), run.span, "the run's length")
        return amount
    if clock is None:  # pragma: no cover - lowering refuses a clock length without `batch`
        raise SchedlangError(f"a run counted in {what} needs the file's batch schedule", run.span)
    count = steps_on(clock, amount, run.unit)
    refuse_huge_step(sp.Integer(count), run.span, "the run's length")
    return count


def steps_on(clock: Clock, amount: int, unit: str) -> int:
    """Steps a run of ``amount`` samples or tokens trains: those whose consumed-before count is
    below ``amount`` (section 12's rule), i.e. the first step whose count reaches it."""
    return clock.step_at(amount, unit)
