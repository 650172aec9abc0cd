"""Resuming on the token clock (SPEC §12): another batch or world size continues a run when
the lr as a function of the tokens consumed is unchanged from the checkpoint on.

A step-by-step comparison would call such a resume different: with a larger batch every
later step consumes more tokens, so a phase given in tokens ends at another step.  What must
hold instead is that the new run sets, at each of its steps, the lr the original schedule
gives at the tokens consumed by then.  That is a comparison of two step functions again,
once both texts are placed on the run that resumes (``Program.on_clock(resumed)``, the
placement every program gets once its parameters are bound, on another batch schedule): its
segments given in tokens keep their places on the token axis and land on the resumed run's
steps, its segments counted in steps keep their steps.  The prover then compares the two
from the checkpoint's step on.

The resumed run's batches are the new batch schedule's from the checkpoint's consumed count
on, as Megatron applies a new ``--step-batch-size-schedule`` (or ramp) to the consumed
samples it loads: the history before the checkpoint need not match the new table.  Before
the checkpoint the run keeps the original's batch schedule (``Clock.resumed``).

The counts come from the checkpoint, checked first (``checked_counts``): a count that no run
could have consumed by the checkpoint's step, or two that contradict each other, is refused
naming its key, never replaced by the plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from ..core.clock import UNITS, Clock
from ..errors import SchedlangError
from ..program import Program


@dataclass(frozen=True)
class TokenClock:
    """Both schedules placed on the resumed run's clock, and what to print."""

    program: Program  # the original
    new: Program
    clock: Clock  # the resumed run's
    unit: str  # "tok" or "sp"
    count: int  # consumed before the checkpoint's step
    counted_by: str  # where ``count`` came from
    lines: tuple[str, ...]


def on_new_clock(old: Program | None, new: Program | None, step: int, samples: int | None,
                 tokens: int | None, where: str) -> TokenClock | None:
    """The token-clock comparison's inputs, or None where the step clock decides: the new
    file declares no batch schedule, or the original declares none (it counts steps only).
    Each is placed on the resumed run as any program is once its values are bound
    (``Program.on_clock``), neither lowered again."""
    table = new.batch_schedule if new is not None else None
    if table is None or old is None or old.batch_schedule is None:
        return None
    history = old.batch_schedule
    unit = "tok" if table.seq_len is not None and history.seq_len is not None else "sp"
    if unit == "tok" and tokens is not None:
        count, counted_by = tokens, "the checkpoint"
    elif samples is not None:
        count = samples * (history.seq_len if unit == "tok" else 1)
        counted_by = "the checkpoint" + ("'s samples times the original's seq_len" if unit == "tok" else "")
    else:
        count, counted_by = history.count_at(step, unit), "the original batch schedule"
    # the new run's samples at the checkpoint (a Fraction where the tokens are not whole samples:
    # its batch is looked up by the whole ones)
    consumed = Fraction(count, table.per_sample(unit))
    try:
        clock = Clock.resumed(history, step, consumed, table.table, table.seq_len)
    except ValueError as exc:
        raise SchedlangError(f"{where} is at step {step} with {count:,} {UNITS[unit]} consumed: {exc}") \
            from None
    try:
        placed = old.on_clock(clock)
        continued = new.on_clock(clock)
    except ValueError as exc:  # a length in tokens on a resumed run that counts none
        raise SchedlangError(f"{where}: the schedules cannot be placed on the resumed run: {exc}; the "
                             "original counts tokens but the new run declares no seq_len",
                             hint="declare param seq_len in NEW (a Megatron-LM launch: --seq-length)") \
            from None
    return TokenClock(placed, continued, clock, unit, count, counted_by,
                      tuple(_time_map(clock, step, unit)))


def checked_counts(samples: int | None, tokens: int | None, step: int, seq_len: int | None,
                   keys: tuple[str, str], where: str) -> None:
    """Refuse counts no run could have consumed before ``step`` (whole numbers >= 0 already:
    ``state.py``).  Nothing is consumed before step 0; every step takes at least one token,
    and at least one sample where the samples are counted whole (no tokens recorded, or a
    whole number of samples of them); a sample holds ``seq_len`` tokens, so ``samples ==
    tokens // seq_len`` (a class given measured tokens keeps the whole samples in them), and
    without a ``seq_len`` some whole one must give both.  A count above the original's plan is
    allowed: the run may have had another batch before the checkpoint.  ``keys`` name the
    samples and tokens in the checkpoint."""
    whole = tokens is None or (seq_len is not None and tokens % seq_len == 0)
    bounds = ((samples, keys[0], "samples", step if whole else 0), (tokens, keys[1], "tokens", step))
    for count, key, what, least in bounds:
        if count is None or (count >= least and (step or not count)):
            continue
        said = (f"no run has consumed {what} before its first step" if step == 0 else
                f"each of {step:,} steps takes at least one " + what[:-1])
        raise SchedlangError(f"{where}: {key} is {count:,} at step {step:,}, but {said}",
                             hint="the checkpoint's counts were changed or damaged: restore them")
    if samples is None or tokens is None:
        return
    if seq_len is not None:
        consistent = samples == tokens // seq_len
        said = f"with seq_len {seq_len} {tokens:,} tokens are {tokens // seq_len:,} samples"
    else:
        per = tokens // samples if samples else None  # the largest whole seq_len that could fit
        consistent = samples == 0 or (per >= 1 and tokens < (samples + 1) * per)
        said = "no whole number of tokens per sample gives both"
    if not consistent:
        raise SchedlangError(f"{where}: {keys[0]} is {samples:,} but {keys[1]} is {tokens:,}: {said}",
                             hint="the checkpoint's counts contradict each other: restore them")


def _time_map(clock: Clock, step: int, unit: str) -> list[str]:
    """The new run's steps and tokens from the checkpoint on: one line per batch stage."""
    per = clock.per_sample(unit)
    lines = []
    for index, stage in enumerate(clock.stages):
        following = clock.stages[index + 1].first if index + 1 < len(clock.stages) else None
        if following is not None and following <= step:
            continue
        first = max(stage.first, step)
        lines.append(f"from step {first}: {_count_text(stage.batch * per)} {UNITS[unit]} per step, "
                     f"{_count_text(clock.count_at(first, unit))} {UNITS[unit]} before it")
    return lines


def _count_text(count) -> str:
    """A count with thousands separators (a ``Fraction`` of a sample as its exact value)."""
    if isinstance(count, Fraction) and count.denominator != 1:
        return f"{float(count):,.6g} ({count})"
    return f"{int(count):,}"
