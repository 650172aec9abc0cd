"""What ``schedlang check`` reports about each schedule: length, start, end, range.

Values come from the plain-Python reference over every step of the finite
part (sampled past ``MAX_SCAN`` steps, breakpoints always included), so the
numbers are the ones training will see.
"""

from __future__ import annotations

from dataclasses import dataclass, field

MAX_SCAN = 200_000
INFINITE_HORIZON = 10_000  # steps summarised for a schedule that never ends


@dataclass
class ScheduleSummary:
    name: str
    duration: object
    start: float | None
    end: float | None
    low: float | None
    high: float | None
    horizon: int


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


def summarise_schedule(schedule) -> ScheduleSummary:
    duration = schedule.duration
    if not schedule.is_bound:
        return ScheduleSummary(schedule.name, duration, None, None, None, None, 0)
    if isinstance(duration, int):
        horizon = duration
    else:  # past every breakpoint, so a step decay shows all its steps
        horizon = max([INFINITE_HORIZON, *(2 * int(b) for b in schedule.breakpoints)])
    values = schedule.values(scan_steps(schedule, horizon))
    end = values[-1] if isinstance(duration, int) else None
    return ScheduleSummary(schedule.name, duration, values[0], end, min(values), max(values), horizon)


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
        lines.append(f"schedule {s.name}: {length}, start {_fmt(s.start)}{end}, "
                     f"min {_fmt(s.low)}, max {_fmt(s.high)}{scope}")
    return Report(summaries, [], "\n".join(lines))


def _fmt(x: float) -> str:
    return f"{x:.6g}"
