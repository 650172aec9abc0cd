"""What ``schedlang check`` reports about each schedule, and what it warns about.

Values come from the plain-Python reference over every step of the finite
part (sampled past ``MAX_SCAN`` steps, breakpoints always included), so the
numbers are the ones training will see.

Warnings never fail a check (``--strict`` makes them errors):

* a *jump* where ``a >> b`` joins two segments: ``b`` starts more than a
  relative ``JUMP_RTOL`` away from where ``a`` was heading (its end value).
  Only ``>>`` boundaries are examined (lowering records them as
  ``algebra.Mark``), so the jumps a schedule means to make - ``step``,
  ``multistep``, ``piecewise``, cyclic restarts - are never reported, nor is a
  join written ``a >> jump b`` (the jump declared intended);
* a *negative value* anywhere on the scanned steps;
* a segment cut by ``for`` before it *reaches its stated end* (its last value
  is not the one its formula ends at);
* a segment after ``warmup(...) >>`` that *holds the peak* for more than
  ``FLAT_AFTER_WARMUP`` steps and then changes at every step: the warmup
  already climbed, and the decay waits (``warmup(linear, 4000) >>
  inverse_sqrt(7e-4, 4000)`` holds 7e-4 for 4000 extra steps because
  ``inverse_sqrt`` is flat for its first ``n`` steps).  A segment that is
  flat by design - ``constant``, or a ``step``/``multistep`` decay that is
  flat between its drops - is not reported.

Each warning is a ``Diagnostic``: its text, and the span of the source it is
about (the segment after ``>>``, the length after ``for``, the schedule).

Each summary also gives the *sum* of the values over the finite part (the
steps before the schedule's duration; the default range of ``ranges.horizon``
for one that never ends), shown as ``lr budget`` for ``lr``: the area under
the learning-rate curve, a quick way to compare two schedules' total step
size.  ``~`` marks a sum estimated from sampled steps.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import Diagnostic
from . import clock_report, run_report
from .ranges import DEFAULT
from .ranges import horizon as default_horizon

MAX_SCAN = 200_000
JUMP_RTOL = 1e-9
FLAT_AFTER_WARMUP = 3  # steps a segment after a warmup may hold its start value
MAX_FLAT_SCAN = 1_000_000  # steps looked at to measure such a hold


@dataclass
class ScheduleSummary:
    name: str
    duration: object
    start: float | None
    end: float | None
    low: float | None
    high: float | None
    horizon: int
    budget: float | None = None
    budget_exact: bool = True  # False when the sum was estimated from sampled steps
    warnings: list[str] = field(default_factory=list)


@dataclass
class Report:
    summaries: list[ScheduleSummary]
    warnings: list[str] = field(default_factory=list)
    text: str = ""
    time: dict | None = None  # the run's time in samples and tokens (clock_report), for --json
    run: dict | None = None  # the run's end and the values at its last update (run_report), for --json


def scan_steps(schedule, horizon: int) -> list[int]:
    if horizon <= MAX_SCAN:
        return list(range(horizon + 1))
    stride = horizon // MAX_SCAN + 1
    points = set(range(0, horizon + 1, stride)) | {horizon}
    for b in schedule.breakpoints:
        b = int(b)
        points |= {x for x in (b - 1, b, b + 1) if 0 <= x <= horizon}
    return sorted(points)


def _budget(steps: list[int], values: list[float], stop: int) -> tuple[float, bool]:
    """Sum of the values at steps ``0 .. stop-1``; a step-weighted estimate when sampled."""
    if len(steps) == stop + 1:  # every step 0..stop was scanned
        return sum(values[:stop]), True
    total = 0.0
    for (s0, v0), (s1, _) in zip(zip(steps, values), zip(steps[1:], values[1:])):
        if s0 >= stop:
            break
        total += v0 * (min(s1, stop) - s0)
    return total, False


def summarise_schedule(schedule) -> ScheduleSummary:
    duration = schedule.duration
    if not schedule.is_bound:
        return ScheduleSummary(schedule.name, duration, None, None, None, None, 0)
    if isinstance(duration, int):
        horizon = duration
    else:  # the range eval and plot show by default (ranges.py)
        horizon = default_horizon(schedule) or DEFAULT
    steps = scan_steps(schedule, horizon)
    values = schedule.values(steps)
    end = values[-1] if isinstance(duration, int) else None
    budget, exact = _budget(steps, values, horizon)
    summary = ScheduleSummary(schedule.name, duration, values[0], end, min(values), max(values),
                              horizon, budget, exact)
    summary.warnings = _warnings(schedule, steps, values)
    return summary


def _warnings(schedule, steps: list[int], values: list[float]) -> list[Diagnostic]:
    found = []
    name = schedule.name
    bound = schedule.program.substitutions if schedule.program else {}
    joins = {int(m.step.xreplace(bound)) for m in schedule.segment.marks
             if m.kind == "join" and m.step.xreplace(bound).is_Integer}
    for mark in schedule.segment.marks:
        step, value = mark.step.xreplace(bound), mark.value.xreplace(bound)
        if not (step.is_Integer and value.is_number):
            continue
        step = int(step)
        if schedule.duration is not None and isinstance(schedule.duration, int) and \
                step > schedule.duration:
            continue
        warning = _mark_warning(schedule, mark, step, float(value), bound, joins)
        if warning:
            found.append(warning)
    low = min(values)
    if low < 0:
        first = next(i for i, v in enumerate(values) if v < 0)
        found.append(Diagnostic(f"schedule '{name}' goes negative from step {steps[first]} "
                                f"({_fmt(values[first])}; lowest {_fmt(low)})", schedule.span,
                                code="negative"))
    return found


def _mark_warning(schedule, mark, step: int, expected: float, bound, joins: set[int]) -> Diagnostic | None:
    """The warning one mark (a join, a cut or a warmup's end at a known ``step`` with the known
    value ``expected``) earns, if any: kept apart from the walk over the marks so that each kind
    of mark's check reads on its own."""
    name = schedule.name
    if mark.kind == "join" and not mark.intended:
        actual = schedule(step)
        if _apart(expected, actual):
            return Diagnostic(f"schedule '{name}' jumps at step {step}: the segment before "
                              f"`>>` ends at {_fmt(expected)} but the next one starts at "
                              f"{_fmt(actual)}", mark.span,
                              "if the jump is meant, say so: write `>> jump` before this "
                              "segment", code="jump")
    elif mark.kind == "cut" and mark.reached is not None:
        reached = mark.reached.xreplace(bound)
        if reached.is_number and _apart(expected, float(reached)):
            return Diagnostic(f"schedule '{name}' never reaches its stated end: a `for` stops "
                              f"a segment at step {step} at {_fmt(float(reached))}, not at "
                              f"its end value {_fmt(expected)}", mark.span,
                              code="cut-short")
    elif mark.kind == "warmup":
        warning = _held_after_warmup(schedule, step, joins, _text(mark.span))
        if warning:
            return Diagnostic(warning[0], mark.span, warning[1], code="held-after-warmup")
    return None


def _text(span) -> str:
    """The source a span covers (its first line's part, for a span over several lines)."""
    if span is None:
        return ""
    line = span.source.line(span.line)
    return line[span.column - 1:span.end_column - 1] if span.end_line == span.line else line[span.column - 1:]


def _held_after_warmup(schedule, end: int, joins: set[int], segment: str) -> tuple[str, str] | None:
    """(message, hint) when the segment after a warmup ending at ``end`` holds its start value
    for more than ``FLAT_AFTER_WARMUP`` steps and then changes at every step."""
    if end == 0:
        return None
    stop = end + MAX_FLAT_SCAN
    if isinstance(schedule.duration, int):
        stop = min(stop, schedule.duration)
    probe = schedule.values(range(end, min(end + FLAT_AFTER_WARMUP + 1, stop + 1)))
    if len(probe) <= FLAT_AFTER_WARMUP or any(v != probe[0] for v in probe):
        return None
    held, chunk = end, 4096
    while held < stop:  # the first step whose value differs from the start value
        block = schedule.values(range(held, min(held + chunk, stop + 1)))
        moved = next((i for i, v in enumerate(block) if v != probe[0]), None)
        if moved is not None:
            held += moved
            break
        held += len(block)
        chunk = min(chunk * 2, 1 << 16)
    else:
        return None
    if held >= stop or any(end < j <= held for j in joins):
        return None  # flat up to the next segment: a constant by design
    after = schedule.values([held, held + 1, held + 2])
    if after[0] == after[1] or after[1] == after[2]:
        return None  # a step decay: flat between its drops by design
    message = (f"schedule '{schedule.name}' holds {_fmt(probe[0])} for {held - end} steps after its "
               f"warmup ends at step {end}: the segment after the warmup is flat at its start")
    hint = ("inverse_sqrt(v0, n) is flat for its first n steps; after a warmup of n steps write "
            "rsqrt_decay(v0, n), which decays at once (or noam(d_model, n) for the whole "
            "Transformer schedule)")
    if not segment.startswith("inverse_sqrt"):
        hint = "start the segment after the warmup where it should begin to change"
    return message, hint


def _apart(a: float, b: float) -> bool:
    return abs(a - b) > JUMP_RTOL * max(abs(a), abs(b))


def summarise(program) -> Report:
    summaries = [summarise_schedule(s) for s in program]
    lines = []
    for name, info in program.params.items():
        value = program.values.get(name)
        shown = "unbound" if value is None else _fmt(float(value)) if not value.is_Integer else str(value)
        per_group = ""
        if info.per_group:
            per_group = f" (a scheduler class takes each param group's '{name}' entry)"
        lines.append(f"param {name}: {info.type} = {shown}{per_group}")
    for s in summaries:
        if s.start is None:
            free = ", ".join(sorted(str(x) for x in program[s.name].expr.free_symbols if str(x) != "t"))
            lines.append(f"schedule {s.name}: symbolic (bind {free} to evaluate)")
            continue
        length = "forever" if s.duration is None else f"{s.duration} steps" if isinstance(
            s.duration, int) else str(s.duration)
        scope = "" if isinstance(s.duration, int) else f" (over steps 0..{s.horizon})"
        end = "" if s.end is None else f", end {_fmt(s.end)}"
        label = "lr budget" if s.name == "lr" else "sum"  # the sum of the values over the steps
        budget = f", {label} {'' if s.budget_exact else '~'}{_fmt(s.budget)}"
        lines.append(f"schedule {s.name}: {length}, start {_fmt(s.start)}{end}, "
                     f"min {_fmt(s.low)}, max {_fmt(s.high)}{budget}{scope}")
    time = clock_report.report(program)
    lines += time.lines
    run = run_report.report(program)
    lines += run.lines
    warnings = [w for s in summaries for w in s.warnings] + time.warnings + run.warnings
    return Report(summaries, warnings, "\n".join(lines), time.data, run.data)


def _fmt(x: float) -> str:
    return f"{x:.6g}"


