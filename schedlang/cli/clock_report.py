"""What ``schedlang check`` says about the run's time in samples and tokens (SPEC §12).

For a file with ``batch = ...``: each batch stage (its first step, its batch in samples and
tokens, what was consumed before it), where every segment of each schedule starts in steps
and tokens, the run's total steps and tokens; and a warning where a length counted in steps
meets a batch ramp: such a warmup or decay lasts another number of tokens than the same
run at the final batch (Megatron-Bridge #2609: a warmup twice as long, a WSD decay that
stops halfway).  The fix is a length in ``tok``, which keeps its place on the token axis; a
length written in ``ba`` (``warmup(linear, 2000ba)``) counts steps on purpose and is not
reported (``lower`` gives it no ``steps`` mark).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import Diagnostic


@dataclass
class ClockReport:
    lines: list[str] = field(default_factory=list)
    warnings: list[Diagnostic] = field(default_factory=list)
    data: dict | None = None  # for --json


def _count(n: int) -> str:
    """A count as digits with separators (``89_999_998_976``) and a short form."""
    short = next((f"{n / 10**e:.4g}{s}" for e, s in ((12, "T"), (9, "B"), (6, "M"))
                  if n >= 10**e), None)
    return f"{n:,}" + (f" ({short})" if short else "")


def report(program) -> ClockReport:
    clock = program.batch_schedule
    out = ClockReport()
    if clock is None:
        return out
    tokens = clock.seq_len is not None
    unit = "tokens" if tokens else "samples"
    out.lines.append("batch: " + ("constant" if clock.constant else f"{len(clock.stages)} stages")
                     + (f", {clock.seq_len} tokens per sample" if tokens else ""))
    stages = []
    for stage in clock.stages:
        before = clock.count_at(stage.first, "tok" if tokens else "sp")
        per_step = stage.batch * (clock.seq_len or 1)
        out.lines.append(f"  from step {stage.first}: {stage.batch} samples"
                         + (f" ({per_step:,} tokens)" if tokens else "")
                         + f" per step, {_count(before)} {unit} before it")
        stages.append({"first_step": stage.first, "batch": stage.batch,
                       "samples_before": stage.samples,
                       "tokens_before": before if tokens else None})
    schedules = {}
    for schedule in program:
        if not schedule.is_bound:
            continue
        starts = sorted({int(m.step.xreplace(program.substitutions)) for m in schedule.segment.marks
                         if m.kind == "join" and m.step.xreplace(program.substitutions).is_Integer})
        def count(k: int) -> int:
            return clock.count_at(k, "tok" if tokens else "sp")

        if starts:
            shown = ", ".join(f"{k} ({_count(count(k))} {unit})" for k in starts)
            out.lines.append(f"schedule {schedule.name}: segments start at steps 0, {shown}")
        entry = {"segment_starts": [{"step": k, unit: count(k)} for k in [0, *starts]]}
        if isinstance(schedule.duration, int):
            total = count(schedule.duration)
            out.lines.append(f"schedule {schedule.name}: {schedule.duration} steps, "
                             f"{_count(total)} {unit}")
            entry["total"] = {"steps": schedule.duration, unit: total}
        schedules[schedule.name] = entry
        out.warnings += _ramp_warnings(schedule, clock, tokens)
    out.data = {"seq_len": clock.seq_len, "stages": stages, "schedules": schedules}
    return out


def _ramp_warnings(schedule, clock, tokens: bool) -> list[Diagnostic]:
    """A length in steps that runs at a batch other than the final one (see the docstring)."""
    if clock.constant:
        return []
    found = []
    unit, per = ("tok", "tokens") if tokens else ("sp", "samples")
    final = clock.stages[-1].batch * clock.per_sample(unit)
    for mark in schedule.segment.marks:
        if mark.kind != "steps":
            continue
        first = mark.step.xreplace(schedule.program.substitutions)
        length = mark.value.xreplace(schedule.program.substitutions)
        if not (first.is_Integer and length.is_Integer) or length == 0:
            continue
        first, length = int(first), int(length)
        lasts = clock.count_at(first + length, unit) - clock.count_at(first, unit)
        planned = length * final
        if lasts != planned:
            found.append(Diagnostic(
                f"schedule '{schedule.name}': a length of {length} steps from step {first} meets the "
                f"batch ramp: it lasts {_count(lasts)} {per}, {_count(abs(planned - lasts))} "
                f"{'fewer' if lasts < planned else 'more'} than {length} steps at the final batch",
                mark.span, hint=f"give the length in {unit} to keep it on the {per} axis "
                                f"(e.g. {_count_literal(planned, unit)}), or write it in ba "
                                f"({length}ba) if steps are meant",
                code="batch-ramp"))
    return found


def _count_literal(n: int, unit: str) -> str:
    """``n`` as a literal that reads back exactly: ``125_829_120_000tok``."""
    return f"{n:_}{unit}"
