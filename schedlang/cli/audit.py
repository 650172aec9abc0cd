"""``schedlang audit FILE LOG``: the report of ``audit.check.audit`` as text or ``--json``.

The audit stage loads when the command runs, not when the parser is built: ``check`` loads
no log reader."""

from __future__ import annotations

import math
import sys

from ..errors import SchedlangError
from . import json_output
from .progress import progress


def arguments(sub) -> None:
    """``audit``'s own arguments (``-D`` and ``--json`` are the shared ones)."""
    sub.add_argument("file", help="the .sched file the run should have followed")
    sub.add_argument("log", help="what the trainer logged: an HF trainer_state.json or checkpoint "
                                 "folder, TensorBoard events, a Lightning metrics.csv, a W&B "
                                 "history CSV or offline run, an MLflow run folder, Megatron's log, "
                                 "a step,value CSV")
    sub.add_argument("--schedule", default=None, metavar="NAME",
                     help="the file's schedule to compare (default: lr, or the only one)")
    series_arguments(sub)
    sub.add_argument("--format", default=None, metavar="FORMAT",
                     help="the log's reader, where guessing is not wanted (docs/audit.md lists them)")
    sub.add_argument("--plot", default=None, metavar="OUT",
                     help="also draw the logged points over the file's schedule, the first deviation "
                          "marked (PNG, SVG, PDF; as schedlang plot FILE --logged LOG -o OUT)")


def series_arguments(sub) -> None:
    """Which logged series, and how it is aligned: ``audit``'s and ``plot --logged``'s."""
    sub.add_argument("--tag", default=None, metavar="NAME",
                     help="the logged series (default: the one whose name says lr)")
    sub.add_argument("--group", type=_group, default=None, metavar="N",
                     help="torch's 0-based param group (LearningRateMonitor's lr-.../pgN+1)")
    sub.add_argument("--convention", default=None, metavar="NAME",
                     help="which update a logged value belongs to, where the logger's own is not the "
                          "one (e.g. hf-before-4.51 for transformers < 4.51; docs/audit.md lists them)")


def _plot_span(args):
    command_line = getattr(args, "command_line", None)
    return command_line.value_span("--plot", args.plot) if command_line and args.plot else None


def _group(text: str) -> int:
    if not text.isdigit():
        raise ValueError(text)  # argparse: "invalid _group value" -> exit 2
    return int(text)


_group.__name__ = "param group"


def audited(program, log: str, args, schedule: str | None, keep: int = 0):
    """``audit.check.audit`` of ``program`` against ``log`` with the command's series options,
    progress on a terminal; a crash is a located internal error, never exit 0 or 1."""
    from ..audit.check import audit  # lazy: the log readers (check loads none)

    label = f"auditing {log}"
    try:
        with progress(label) as shown:
            return audit(program, log, schedule=schedule, tag=args.tag, group=args.group,
                         convention=args.convention, format=getattr(args, "format", None), keep=keep,
                         on_progress=lambda count: shown.update(f"{label}: {count:,} points"))
    except SchedlangError:
        raise
    except Exception as exc:  # noqa: BLE001 - a crash must not exit 0 or 1
        raise SchedlangError(f"internal error while auditing {log}: {type(exc).__name__}: "
                             f"{str(exc)[:300]}", hint="this is a bug in schedlang: please report it") \
            from None


def picture(program, file_label: str, report, output: str | None, steps=None, log: bool = False):
    """The overlay of ``report`` (``plot.plot_overlay``) over ``steps`` (default: the file's plot
    range, to the last logged update): (the file written or the terminal picture, notes)."""
    from .plot import overlay_steps, plot_overlay  # lazy: the picture loads only when one is drawn
    from .ranges import plot_steps  # lazy: as the picture

    if steps is None:
        steps = overlay_steps(program, report, plot_steps(program))
    return plot_overlay(program, file_label, report, steps, output, log)


def run_command(args, params: dict) -> int:
    """Exit 0 when the run followed the file, 1 when it left it, 2 for bad input (raised)."""
    from ..program import load  # lazy: commands.py imports this module to build argparse
    from .output_file import check_output  # lazy: as load
    from .plot import OVERLAY_POINTS  # lazy: as load

    check_output(args.plot, [args.file, args.log], _plot_span(args))
    program = load(args.file, params)
    report = audited(program, args.log, args, args.schedule, OVERLAY_POINTS if args.plot else 0)
    if args.plot:
        written, notes = picture(program, args.file, report, args.plot)
        for note in notes:
            print(note, file=sys.stderr)
        print(f"wrote {written}", file=sys.stderr)
    if args.json:
        json_output.emit({"schema": json_output.schema("audit"), **report.to_json()})
    else:
        for line in text_lines(report):
            print(line)
    return 0 if report.followed else 1


def text_lines(report) -> list[str]:
    """The text report of an ``audit.check.AuditReport``."""
    lines = [f"file:       {report.file} (schedule {report.schedule})",
             f"log:        {report.log} ({report.format}; series {report.series})",
             f"convention: {report.convention.name}: {report.convention.what}",
             f"compared:   {report.matched} logged point(s); largest relative difference "
             f"{_shown(report.max_diff)}"]
    lines += [f"note:       {note}" for note in report.notes]
    first = report.first_deviation
    if first is None:
        lines.append("followed the file at every logged update")
        return lines
    where = f"logged at step {first.logged_step}" + (f", line {first.line}" if first.line else "")
    lines.append(f"left the file at update {first.step} ({where}): logged {_shown(first.logged)}, "
                 f"planned {first.planned!r}; {report.deviations} point(s) differ")
    cause = report.cause
    if cause is None:
        lines.append("cause:      none of these fits every logged point: stepped k times per "
                     "update, one update early or late, restarted, never stepped, another horizon, "
                     "scaled by a factor, another param group's schedule")
        return lines
    lines.append(f"cause:      {cause.text()}")
    lines.append(f"fix:        {cause.fix()}")
    lines += [f"also fits:  {other}" for other in cause.also]
    return lines


def _shown(value: float) -> str:
    return repr(value) if math.isfinite(value) else str(value)
