"""What ``schedlang check`` says about the run (SPEC §14): where it ends, each schedule's value
at its last update, and a warning where it cuts a phase that is not constant.

A file's ``run = N`` trains steps ``0 .. N-1``; the value at step ``N`` is the one a
checkpoint written at the end holds.  A *phase* is a segment of a schedule as ``>>`` put it
together: from one join to the next (the last finite one to the schedule's end).  The run
*cuts* a phase when it ends strictly inside it and the phase's value there is not the one it
was heading for (its end value): the decay stopped early (a horizon set for 5e12 tokens, a
run of 4e12: allenai/OLMo#887), or a smoke run shorter than its warmup (Megatron-Bridge
PR#2857).  A phase that holds its value (``constant``) is not cut by stopping inside it, nor
is the infinite tail.  The warning is at the ``run`` statement: the run is what stops early.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import Diagnostic
from . import analysis  # its _apart and _fmt, read when called (analysis imports this module)


@dataclass
class RunReport:
    lines: list[str] = field(default_factory=list)
    warnings: list[Diagnostic] = field(default_factory=list)
    data: dict | None = None  # for --json


def describe(program) -> str | None:
    """The run's line (``check`` and ``show`` print it): its steps and what they consume."""
    length = program.run_length
    if length is None:
        return None
    if not program.run_is_bound:
        free = sorted(str(s) for s in length.amount.xreplace(program.substitutions).free_symbols)
        return f"run: {length.text} (bind {', '.join(free)} to know its length)"
    run = program.run
    return (f"run: {run:,} steps (the last update is step {run - 1:,})"
            + "".join(f", {n:,} {unit}" for unit, n in _counts(program, run).items()))


def report(program) -> RunReport:
    out = RunReport()
    line = describe(program)
    if line is None:
        return out
    out.lines.append(line)
    if not program.run_is_bound:
        out.data = {"steps": None}
        return out
    run = program.run
    counts = _counts(program, run)
    values = {}
    for schedule in program:
        if not schedule.is_bound:
            continue
        values[schedule.name] = schedule(run - 1)
        out.warnings += _cut_warnings(program, schedule, run)
    if values:
        out.lines.append(f"  at the last update (step {run - 1:,}): "
                         + ", ".join(f"{name} {analysis._fmt(v)}" for name, v in values.items()))
    out.data = {"steps": run, **counts, "last_update": {"step": run - 1, "values": values}}
    return out


def _counts(program, step: int) -> dict[str, int]:
    """Samples and tokens consumed before ``step``, those the file's batch schedule counts."""
    found = {}
    if program.run_samples is not None:
        found["samples"] = program.samples_at(step)
    if program.run_tokens is not None:
        found["tokens"] = program.tokens_at(step)
    return found


def phases(schedule) -> list[tuple[int, int | None, float | None]]:
    """The schedule's phases as ``(first step, end step or None, the value it heads for)``: one
    per segment ``>>`` joined, the last ending at the schedule's duration (None: never)."""
    bound = schedule.program.substitutions if schedule.program else {}
    joins = {}
    for mark in schedule.segment.marks:
        step, value = mark.step.xreplace(bound), mark.value.xreplace(bound)
        if mark.kind == "join" and step.is_Integer and value.is_number:
            joins.setdefault(int(step), float(value))
    starts = [0, *sorted(k for k in joins if k > 0)]
    duration = schedule.duration if isinstance(schedule.duration, int) else None
    out = []
    for first, following in zip(starts, [*starts[1:], duration]):
        if following is None:
            out.append((first, None, None))
        else:
            heading = joins.get(following)
            out.append((first, following, schedule(following) if heading is None else heading))
    return out


def _cut_warnings(program, schedule, run: int) -> list[Diagnostic]:
    for first, end, heading in phases(schedule):
        if end is None or not first < run < end:
            continue
        reached = schedule(run)
        if not analysis._apart(reached, heading):
            return []
        got = f"{run - first:,} of its {end - first:,} steps"
        unit = "tokens" if program.run_tokens is not None else "samples" if program.run_samples is not None \
            else None
        if unit is not None:
            at = program.tokens_at if unit == "tokens" else program.samples_at
            got += f" ({at(run) - at(first):,} of {at(end) - at(first):,} {unit})"
        longer = f"{end:_}" if program.run_length.unit is None else \
            f"{program.clock.count_at(end, program.run_length.unit):_}{program.run_length.unit}"
        return [Diagnostic(
            f"the run ends at step {run:,}, inside the phase of schedule '{schedule.name}' from step "
            f"{first:,} to {end:,}: it got {got}, and {schedule.name} is {analysis._fmt(reached)} there, not "
            f"the {analysis._fmt(heading)} it was heading for", program.run_length.span,
            hint=f"make the run {end:,} steps long (run = {longer}), or end the phase within the run "
                 f"(a shorter decay or warmup)", code="run-cuts-phase")]
    return []

