"""Segments whose length is in samples or tokens, placed on the run's batch schedule (SPEC §12).

A segment written ``cosine(2.2e-4, 2.2e-5, 4.3e12tok)`` is built like any other, with ``t``
counting tokens and its duration in tokens (``Segment.clock == "tok"``).  Placing it in a
``>>`` chain gives it a position on the token axis: it starts where the segment before it
ends (a step segment ending at step ``k`` ends at ``T_k``) and ends its length further on.
Update ``k`` then uses the formula at local ``t = T_k - start`` (``T_k`` consumed *before*
``k``, Megatron's convention), and the segment covers the steps whose ``T_k`` is below its
end: a length that is not a whole number of batches ends at the first step reaching it.

A schedule counted in steps may be given a length in tokens or samples (``trunk for
10e12tok``, ``Segment.evaluation == "steps"``): it keeps its own step formula and ends at
the first step whose consumed-before count reaches its length (a branch point in tokens,
SPEC §14); a ``cooldown`` after it starts from its value at that step.

A segment may read the clock *after* its step instead (``Segment.evaluation == "after"``,
OLMo-core's presets: the trainer counts the batch it is about to train before it asks for
the lr): update ``k`` then uses the formula at ``T_{k+1} - start``.  It covers the same
steps (those whose ``T_k`` is below its end, the steps a trainer stopping at the first
``T_k`` reaching its end runs), so the last of them may read the formula past its length,
as the framework does; after it the segment holds its value at its length.  ``on_clock``
is the one place that reads the attribute: ``T_{k+1}`` is ``T_k``'s stage formula at
``k + 1`` (the step's own batch added), still linear with whole coefficients.

The placed segment is an ordinary step formula, the segment's formula at ``T(k) - start``:
``T`` is the clock's count (``core.clock.ClockCountBase``), one lookup in the batch stages
that every segment on the clock shares, so a ramp of many stages costs one formula, not one
branch per stage.  The plain-Python reference finds the stage by bisection, the checks and the
exact evaluator read ``T`` at whole steps exactly, the array targets by ``searchsorted`` in
the same table (``codegen/counts.py``), and the core text, which has no lookup, gets one
branch per stage the segment meets (``expand_counts``).  A
segment that meets one stage only (a constant batch) reads ``T`` as that stage's linear
formula directly.  Positions are numbers: the batch schedule and every length before a segment
on the token clock are fixed when the file is compiled (``Lowered.fixed``).  Placing comes after
the parameters are bound: the walk of a file leaves each ``schedule`` on these clocks
``Unplaced`` (``lower_clock``) and ``Lowered.placed`` places it, so other values (``rebind``),
another run's batch schedule (``Program.on_clock``) or the measured form place the same walk;
a value inside a statement that read the clock while walking is computed again from the
walk's record of the values it was computed from (``lower_clock.recorded_value``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction

import sympy as sp

from ..core.algebra import Segment, at, hold_for, tau
from ..core.clock import SATURATION, UNITS, Clock
from ..errors import Span


@dataclass(frozen=True)
class BatchValue:
    """The value of ``stages(...)`` or a batch preset: a table of (sample threshold, batch)."""

    table: tuple[tuple[int, int], ...]
    span: Span | None = None


#: The counts a scheduler class measures (``step(samples=n)``, ``step(tokens=n)``): in a
#: schedule's *measured form* a segment on the sample or token clock reads them, not the
#: plan's count at the step (``lower(..., measured=...)``; ``Program.measured_exprs``).
COUNTS = {"sp": sp.Symbol("_samples", integer=True, nonnegative=True),
          "tok": sp.Symbol("_tokens", integer=True, nonnegative=True)}


def place(parts: list[tuple[Segment, Span]], clock: Clock, fix,
          measured: list | None = None) -> list[Segment]:
    """The segments of ``a >> b >> ...`` with every one on the sample or token clock placed
    on ``clock``; ``fix(expr, span, what)`` gives a length as a whole number (the file's
    bound values substituted) or raises.

    ``measured`` (a list): the measured form instead, each such segment's formula read at
    its clock's count (``COUNTS``); the count where each ends, ``(unit, count)``, is added
    to the list (a class given measured counts places them between its steps by them)."""
    steps_done = 0  # the global step where the next part starts
    position = Fraction(0)  # samples consumed when it starts (a fraction after a token end)
    out = []
    for index, (segment, span) in enumerate(parts):
        last = index == len(parts) - 1
        if callable(segment):  # a cooldown that starts from the placed segment before it
            segment = segment(out[-1])
        if segment.clock is None:
            out.append(segment)
            if not last:
                steps_done += fix(segment.duration, span, "the length of a segment before one "
                                  "on the token clock")
                position = Fraction(clock.samples_at(steps_done))
            continue
        unit = segment.clock
        start = position * clock.per_sample(unit)
        length = None if segment.duration is None else fix(
            segment.duration, span, f"a length in {UNITS[unit]}")
        end = None if length is None else clock.step_at(start + length, unit)
        out.append(on_clock(segment, clock, start, steps_done, end, measured is not None))
        if measured is not None and length is not None:
            measured.append((unit, start + length))
        if end is not None:
            steps_done, position = end, (start + length) / clock.per_sample(unit)
    return out


def on_clock(segment: Segment, clock: Clock, start: Fraction, first: int, end: int | None,
             measured: bool = False) -> Segment:
    """``segment`` (formula and length in its clock's units) as a step segment starting at
    global step ``first``, where its clock reads ``start``; it ends at step ``end``.
    ``measured``: its formula reads the count ``COUNTS[unit]`` instead of the plan's."""
    unit = segment.clock
    offset = sp.Rational(start.numerator, start.denominator)
    if segment.evaluation == "steps":
        return _cut_at_count(segment, first, end)
    if end is not None and end == first:  # shorter than what the step before it consumed
        value = segment.end_value()
        return Segment(value, sp.Integer(0), (), value)
    after = segment.evaluation == "after"
    count = _one_stage(clock, unit, first, end, after) or clock.count_function(unit)
    step = tau + first  # the global step of local step tau
    if measured:  # the count measured before the step (and, read after, its planned batch)
        reading = COUNTS[unit] + (sp.expand(count(step + 1) - count(step)) if after else 0)
    else:  # the count with this step's own batch when read after it
        reading = sp.expand(count(step + 1 if after else step))
    local = at(segment.expr, reading - offset)
    marks = []
    for mark in segment.marks:
        if mark.step.is_number:
            step = clock.step_at(Fraction(str(mark.step)) + start, unit) - first
            marks.append(replace(mark, step=sp.Integer(step)))
    if end is None:
        return Segment(local, None, tuple(marks))
    return Segment(local, sp.Integer(end - first), tuple(marks), segment.end_value())


def _one_stage(clock: Clock, unit: str, first: int, end: int | None, after: bool):
    """The count as a linear function of the global step when every step the segment reads it
    at (``first .. end - 1``, one further when read after the step) lies in one batch stage
    (a constant batch, say): a formula of the step, no lookup.  Past the step where the count
    would exceed ``SATURATION`` it holds (``ClockCountBase``); None for several stages."""
    stage = clock.stage_of_step(first)
    last = None if end is None else end - 1 + after
    if (last is None and stage is not clock.stages[-1]) or \
            (last is not None and clock.stage_of_step(last) is not stage):
        return None
    per = clock.per_sample(unit)
    limit = None if end is not None else \
        max((SATURATION // per - stage.samples) // stage.batch + stage.first, stage.first)

    def count(step):
        held = step if limit is None else sp.Min(step, int(limit))
        return per * (stage.samples + stage.batch * (held - stage.first))
    return count


def _cut_at_count(segment: Segment, first: int, end: int | None) -> Segment:
    """A schedule counted in steps whose length is a count of tokens or samples (``trunk for
    10e12tok``, ``Segment.evaluation == "steps"``): its formula keeps its own steps from
    ``first`` and it ends at step ``end``, the first whose count before it reaches the length;
    it holds its value there.  Its marks count steps already; a ``for`` that cuts a decay
    short says so at ``end``."""
    if end is None:
        return Segment(segment.expr, None, segment.marks)
    steps = sp.Integer(end - first)
    marks = tuple(m for m in segment.marks if (steps - m.step).is_nonnegative)
    return hold_for(Segment(segment.expr, None, marks), steps)


def resolve_single(segment: Segment, span: Span, clock_of, fix, measured: list | None = None) -> Segment:
    """A whole schedule on the sample or token clock, starting at step 0."""
    if segment.clock is None:
        return segment
    return place([(segment, span)], clock_of(span), fix, measured)[0]
