"""What ``schedlang check`` reports about each schedule, and what it warns about.

Values come from the plain-Python reference over every step of the finite
part (sampled past ``MAX_SCAN`` steps, breakpoints always included), so the
numbers are the ones training will see.

Warnings never fail a check (``--strict`` makes them errors):

* a *jump* where ``a >> b`` joins two segments: ``b`` starts more than a
  relative ``JUMP_RTOL`` away from where ``a`` was heading (its end value).
  Only ``>>`` boundaries are examined (lowering records them as
  ``schedule_algebra.Mark``), so the jumps a schedule means to make - ``step``,
  ``multistep``, ``piecewise``, cyclic restarts - are never reported;
* a *negative value* anywhere on the scanned steps;
* a segment cut by ``for`` before it *reaches its stated end* (its last value
  is not the one its formula ends at).

Each summary also gives the *lr budget*: the sum of the values over the
finite part (the steps before the schedule's duration; the scanned horizon
for one that never ends).
"""

from __future__ import annotations

from dataclasses import dataclass, field

MAX_SCAN = 200_000
INFINITE_HORIZON = 10_000  # steps summarised for a schedule that never ends
JUMP_RTOL = 1e-9


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
    else:  # past every breakpoint, so a step decay shows all its steps
        horizon = max([INFINITE_HORIZON, *(2 * int(b) for b in schedule.breakpoints)])
    steps = scan_steps(schedule, horizon)
    values = schedule.values(steps)
    end = values[-1] if isinstance(duration, int) else None
    budget, exact = _budget(steps, values, horizon)
    summary = ScheduleSummary(schedule.name, duration, values[0], end, min(values), max(values),
                              horizon, budget, exact)
    summary.warnings = _warnings(schedule, steps, values)
    return summary


def _warnings(schedule, steps: list[int], values: list[float]) -> list[str]:
    found = []
    name = schedule.name
    bound = schedule.program.substitutions if schedule.program else {}
    for mark in schedule.segment.marks:
        step, value = mark.step.xreplace(bound), mark.value.xreplace(bound)
        if not (step.is_Integer and value.is_number):
            continue
        step = int(step)
        if schedule.duration is not None and isinstance(schedule.duration, int) and \
                step > schedule.duration:
            continue
        expected = float(value)
        if mark.kind == "join":
            actual = schedule(step)
            if _apart(expected, actual):
                found.append(f"schedule '{name}' jumps at step {step}: the segment before `>>` ends "
                             f"at {_fmt(expected)} but the next one starts at {_fmt(actual)}")
        elif mark.kind == "cut" and mark.reached is not None:
            reached = mark.reached.xreplace(bound)
            if reached.is_number and _apart(expected, float(reached)):
                found.append(f"schedule '{name}' never reaches its stated end: a `for` stops a "
                             f"segment at step {step} at {_fmt(float(reached))}, not at its end "
                             f"value {_fmt(expected)}")
    low = min(values)
    if low < 0:
        first = next(i for i, v in enumerate(values) if v < 0)
        found.append(f"schedule '{name}' goes negative from step {steps[first]} "
                     f"({_fmt(values[first])}; lowest {_fmt(low)})")
    return found


def _apart(a: float, b: float) -> bool:
    return abs(a - b) > JUMP_RTOL * max(abs(a), abs(b))


def summarise(program) -> Report:
    summaries = [summarise_schedule(s) for s in program]
    lines = []
    for name, info in program.params.items():
        value = program.values.get(name)
        shown = "unbound" if value is None else _fmt(float(value)) if not value.is_Integer else str(value)
        lines.append(f"param {name}: {info.type} = {shown}")
    for s in summaries:
        if s.start is None:
            free = ", ".join(sorted(str(x) for x in program[s.name].expr.free_symbols if str(x) != "t"))
            lines.append(f"schedule {s.name}: symbolic (bind {free} to evaluate)")
            continue
        length = "forever" if s.duration is None else f"{s.duration} steps" if isinstance(
            s.duration, int) else str(s.duration)
        scope = "" if isinstance(s.duration, int) else f" (over steps 0..{s.horizon})"
        end = "" if s.end is None else f", end {_fmt(s.end)}"
        budget = f", lr budget {'' if s.budget_exact else '~'}{_fmt(s.budget)}"
        lines.append(f"schedule {s.name}: {length}, start {_fmt(s.start)}{end}, "
                     f"min {_fmt(s.low)}, max {_fmt(s.high)}{budget}{scope}")
    warnings = [w for s in summaries for w in s.warnings]
    return Report(summaries, warnings, "\n".join(lines))


def _fmt(x: float) -> str:
    return f"{x:.6g}"


