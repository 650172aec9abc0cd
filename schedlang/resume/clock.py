"""Resuming on the token clock (SPEC §12): another batch or world size continues a run when
the lr as a function of the tokens consumed is unchanged from the checkpoint on.

A step-by-step comparison would call such a resume different: with a larger batch every
later step consumes more tokens, so a phase given in tokens ends at another step.  What must
hold instead is that the new run sets, at each of its steps, the lr the original schedule
gives at the tokens consumed by then.  That is a comparison of two step functions again,
once the original's text is placed on the *new* run's batch schedule: its segments given
in tokens keep their places on the token axis and land on the new run's steps
(``lower(..., clock=new)``), its segments counted in steps keep their steps.  The prover
then compares that with the new schedule from the checkpoint's step on.

The new batch schedule must agree with the checkpoint up to it: at the checkpoint's step it
has consumed what the checkpoint says (its ``stages`` start with the batch the run had).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.clock import UNITS, Clock
from ..errors import SchedlangError
from ..program import Program


@dataclass(frozen=True)
class TokenClock:
    """The original schedule placed on the new run's batch schedule, and what to print."""

    program: Program
    unit: str  # "tok" or "sp"
    count: int  # consumed before the checkpoint's step
    counted_by: str  # where ``count`` came from
    lines: tuple[str, ...]


def on_new_clock(old: Program | None, new: Program | None, step: int, samples: int | None,
                 tokens: int | None, where: str) -> TokenClock | None:
    """The token-clock comparison's inputs, or None where the step clock decides: the new
    file declares no batch schedule, or the original declares none (it counts steps only)."""
    clock = new._lowered.clock if new is not None else None
    if clock is None or old is None or old._lowered.clock is None or old._lowered.module is None:
        return None
    unit = "tok" if clock.seq_len is not None and old._lowered.clock.seq_len is not None else "sp"
    recorded = tokens if unit == "tok" else samples
    if recorded is not None:
        count, counted_by = recorded, "the checkpoint"
    else:
        count, counted_by = old._lowered.clock.count_at(step, unit), "the original batch schedule"
    planned = clock.count_at(step, unit)
    if planned != count:
        first = clock.stages[0].batch
        raise SchedlangError(
            f"{where} is at step {step} with {count:,} {UNITS[unit]} consumed ({counted_by}), but "
            f"the new batch schedule has consumed {planned:,} by then",
            hint=f"declare the batch the run had up to the checkpoint, then the new one: e.g. "
                 f"batch = stages({first}, [NEW_BATCH], [{count}{unit}])")
    return TokenClock(old.on_clock(clock), unit, count, counted_by, tuple(_time_map(clock, step, unit)))


def _time_map(clock: Clock, step: int, unit: str) -> list[str]:
    """The new run's steps and tokens from the checkpoint on: one line per batch stage."""
    per = clock.per_sample(unit)
    lines = []
    for index, stage in enumerate(clock.stages):
        following = clock.stages[index + 1].first if index + 1 < len(clock.stages) else None
        if following is not None and following <= step:
            continue
        first = max(stage.first, step)
        lines.append(f"from step {first}: {stage.batch * per:,} {UNITS[unit]} per step, "
                     f"{clock.count_at(first, unit):,} {UNITS[unit]} before it")
    return lines
