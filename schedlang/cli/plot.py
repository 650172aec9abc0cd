"""Pictures of schedules: a matplotlib file, or a compact plot in the terminal.

``schedlang plot A [B ...]`` draws one *panel* per schedule name (``lr``,
``weight_decay``, ...), each with its own value axis, so an ``lr`` of 1e-3 is not
flattened by a ``weight_decay`` of 0.1.  Each panel overlays that schedule from
every file that has it; with exactly two files, a panel ``A - B`` under it shows
their difference.  The title names the file(s).

``--log`` leaves out the steps where a value is zero or negative (a warmup from 0
starts at 0) and says so in a note, instead of refusing.

``--logged LOG`` (and ``schedlang audit FILE LOG --plot OUT``) draws one file's schedule
with what a run logged over it, each point at its update by the audit's alignment
(``overlay``: the audit's report, ``audit.check``, is the only reader), and marks the
first update where the run left the file, with both values and the cause.

A picture written as SVG is the same bytes for the same input (no date, fixed ids:
``_SVG_STABLE``), so a docs picture can be regenerated and compared.

Matplotlib is an optional extra (``schedlang[plot]``) imported only when a file
is asked for; the terminal plot needs nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import SchedlangError
from ..runtime.arrays import values
from .axis import count_at, steps_at

WIDTH = 72
HEIGHT, PANEL_HEIGHT = 16, 9  # rows of a lone panel, and of each of several
MARKS = "*o+x#@%&"
LOGGED_MARK, DEVIATION_MARK = "o", "X"  # an overlay's logged points; its first deviation


@dataclass
class Logged:
    """What a run logged, over a panel: ``points`` (update, value) and the first deviation
    as (update, logged, planned), or None when the run followed the file."""

    label: str
    points: list[tuple[float, float]]
    deviation: tuple[int, float, float] | None = None


@dataclass
class Panel:
    """One schedule name: a line per file (label, values), or the difference of two; with
    ``logged``, the run's points over it."""

    title: str
    lines: list[tuple[str, list[float]]]
    breakpoints: list[float] = field(default_factory=list)
    difference: bool = False
    logged: Logged | None = None


def panels(sources: list[tuple[str, object]], steps, names: list[str] | None = None,
           axis: str = "steps") -> list[Panel]:
    """The panels for ``sources`` (label, program) over ``steps``, ``names`` first if given;
    ``steps`` are positions on ``axis`` (``cli/axis.py``: each file is read at the steps that
    train them)."""
    if names is None:
        names = []
        for _, program in sources:
            names += [s.name for s in program if s.is_bound and s.name not in names]
        if not names:
            raise SchedlangError("no schedule in the file has all its parameters bound",
                                 hint="bind them with -D name=value")
    else:
        for name in names:
            if not any(name in program.schedules for _, program in sources):
                known = sorted({n for _, p in sources for n in p.schedules})
                raise SchedlangError(f"no schedule named '{name}' in "
                                     f"{' or '.join(label for label, _ in sources)}",
                                     hint="the files define " + ", ".join(known))
    found = []
    at = {label: steps if axis == "steps" else steps_at(program, axis, steps) for label, program in sources}
    for name in names:
        lines, breakpoints = [], set()
        for label, program in sources:
            schedule = program.schedules.get(name)
            if schedule is None:
                continue
            schedule._require_bound()
            lines.append((label, values(schedule, at[label])))
            breakpoints |= {float(b) if axis == "steps" else float(count_at(program, axis, int(b)))
                            for b in schedule.breakpoints if axis == "steps" or (b.is_Integer and b >= 0)}
        found.append(Panel(name, lines, sorted(breakpoints)))
        if len(sources) == 2 and len(lines) == 2:
            (_, a), (_, b) = lines
            found.append(Panel(f"{name}: A - B", [("A - B", [x - y for x, y in zip(a, b)])], [], True))
    return found


#: Logged points an overlay keeps (``audit(keep=...)``): enough to see every step of a short
#: run, bounded on a long one.
OVERLAY_POINTS = 2000


def overlay_steps(program, report, default: range) -> range:
    """The default range of an overlay: the file's, stretched to the last logged update (a run
    built for a longer horizon goes on past the file's end)."""
    last = max((update for update, _ in report.points), default=0)
    if last < default.stop:
        return default
    stride = max(1, -(-last // max(len(default) - 1, 1)))
    return range(0, last + stride + 1, stride)


def overlay(program, file_label: str, report, steps) -> tuple[Panel, str]:
    """The panel of ``report``'s schedule over ``steps`` with its logged points and first
    deviation, and the picture's heading (what the audit found, in words)."""
    schedule = program.schedules[report.schedule]
    schedule._require_bound()
    logged = Logged(f"logged: {report.series} ({report.convention.name} convention)",
                    [(float(u), v) for u, v in report.points])
    first = report.first_deviation
    heading = f"{file_label} vs {report.log}"
    if first is None:
        heading += f"\nfollowed the file at every logged update ({report.matched} points)"
    else:
        logged.deviation = (first.step, first.logged, first.planned)
        cause = report.cause.text() if report.cause else "none of the causes fits every logged point"
        heading += (f"\nleft the file at update {first.step}: logged {first.logged:.6g}, planned "
                    f"{first.planned:.6g}\ncause: {cause}")
    breakpoints = sorted(float(b) for b in schedule.breakpoints if b.is_Integer and b >= 0)
    return Panel(report.schedule, [(f"planned: {file_label}", values(schedule, steps))], breakpoints,
                 logged=logged), heading


def plot_overlay(program, file_label: str, report, steps, output: str | None = None,
                 log: bool = False) -> tuple[str, list[str]]:
    """``overlay`` drawn to ``output`` (or the terminal): (the file written or the picture,
    notes for standard error)."""
    steps = list(steps)
    panel, heading = overlay(program, file_label, report, steps)
    notes = []
    if log:
        for name, label, count, total, first in for_log([panel]):
            notes.append(f"note: --log leaves out {count} of {total} steps where {name} of {label} "
                         f"is <= 0 (the first at step {steps[first]})")
        dropped = [p for p in panel.logged.points if not p[1] > 0]
        if dropped:
            panel.logged.points = [p for p in panel.logged.points if p[1] > 0]
            notes.append(f"note: --log leaves out {len(dropped)} logged point(s) <= 0")
    if output:
        return _plot_file([panel], steps, Path(output), log, heading), notes
    return _plot_terminal([panel], steps, log, heading), notes


def title(labels: list[str]) -> str:
    if len(labels) == 2:
        return f"A: {labels[0]}   B: {labels[1]}"
    return "   ".join(labels)


def for_log(panel_list: list[Panel]) -> list[str]:
    """Blank out (NaN) values a log axis cannot show; one note per line that had some."""
    notes = []
    for panel in panel_list:
        if panel.difference:
            continue
        for label, vs in panel.lines:
            bad = [i for i, v in enumerate(vs) if not v > 0]
            if bad:
                for i in bad:
                    vs[i] = math.nan
                notes.append((panel.title, label, len(bad), len(vs), bad[0]))
    return notes


def plot(sources, steps, output: str | None = None, log: bool = False, names=None,
         axis: str = "steps") -> tuple[str, list[str]]:
    """Draw ``sources`` (label, program) over ``steps`` (positions on ``axis``): (the file
    written or the terminal picture, notes for standard error)."""
    steps = list(steps)
    panel_list = panels(sources, steps, names, axis)
    notes = []
    if log:
        for name, label, count, total, first in for_log(panel_list):
            what, unit = ("steps", "step") if axis == "steps" else ("points", axis[:-1])
            notes.append(f"note: --log leaves out {count} of {total} {what} where {name} of {label} is "
                         f"<= 0 (the first at {unit} {steps[first]})")
    heading = title([label for label, _ in sources])
    if output:
        return _plot_file(panel_list, steps, Path(output), log, heading, axis), notes
    return _plot_terminal(panel_list, steps, log, heading, axis), notes


def _plot_file(panel_list, steps, path: Path, log: bool, heading: str, axis: str = "steps") -> str:
    try:
        import matplotlib  # lazy: matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # lazy: matplotlib
    except ImportError:
        raise SchedlangError("plotting to a file needs matplotlib",
                             hint="pip install 'schedlang[plot]'") from None
    heights = [1.4 if p.difference else 2.6 for p in panel_list]
    fig, axes = plt.subplots(len(panel_list), 1, figsize=(8, sum(heights) + 0.6), squeeze=False,
                             sharex=True, gridspec_kw={"height_ratios": heights})
    for ax, panel in zip(axes[:, 0], panel_list):
        for k, (label, vs) in enumerate(panel.lines):
            style = {"color": "black", "linewidth": 1.0} if panel.difference else {"linewidth": 1.4}
            ax.plot(steps, vs, label=label, linestyle="-" if k == 0 else "--", **style)
        for b in panel.breakpoints:
            if steps and steps[0] <= b <= steps[-1]:
                ax.axvline(b, color="grey", linestyle=":", linewidth=0.8)
        if panel.logged is not None:
            _draw_logged(ax, panel.logged)
        ax.set_ylabel(panel.title)
        if log and not panel.difference and any(v > 0 for _, vs in panel.lines for v in vs):
            ax.set_yscale("log")
        if len(panel.lines) > 1 or panel.logged is not None:
            ax.legend(fontsize="small")
        ax.grid(alpha=0.3)
    axes[-1, 0].set_xlabel("step" if axis == "steps" else f"{axis} consumed")
    fig.suptitle(heading, fontsize="medium")
    fig.tight_layout()
    svg = path.suffix.lower() == ".svg"
    try:
        with matplotlib.rc_context(_SVG_STABLE if svg else {}):
            fig.savefig(path, metadata=_SVG_METADATA if svg else
                        {"Software": "schedlang"} if path.suffix == ".png" else None)
    except (OSError, ValueError) as exc:
        raise SchedlangError(f"cannot write {path}: {exc}") from None
    finally:
        plt.close(fig)
    return str(path)


#: An SVG's bytes depend only on what is drawn: ids from a fixed salt, not random; no date.
_SVG_STABLE = {"svg.hashsalt": "schedlang"}
_SVG_METADATA = {"Date": None, "Creator": "schedlang"}


def _draw_logged(ax, logged: Logged) -> None:
    """The logged points over the planned line, and the first deviation: a red ring at it and
    a dotted line at its update, both values in the legend."""
    xs = [x for x, _ in logged.points]
    ax.plot(xs, [v for _, v in logged.points], linestyle="none", marker="o", markersize=3.2,
            markerfacecolor="none", color="#ff7f0e", label=logged.label)
    if logged.deviation is not None:
        step, value, planned = logged.deviation
        shown = value if math.isfinite(value) else planned
        ax.axvline(step, color="#d62728", linestyle=":", linewidth=1.0)
        ax.plot([step], [shown], linestyle="none", marker="o", markersize=9, markerfacecolor="none",
                markeredgewidth=1.6, color="#d62728",
                label=f"first deviation, update {step}: logged {value:.6g}, planned {planned:.6g}")


def _plot_terminal(panel_list, steps, log: bool, heading: str, axis: str = "steps") -> str:
    height = HEIGHT if len(panel_list) == 1 else PANEL_HEIGHT
    out = [heading if axis == "steps" else f"{heading}   (x: {axis} consumed)"]
    for panel in panel_list:
        out.append("")
        out += _terminal_panel(panel, steps, log and not panel.difference, height)
    return "\n".join(out)


def _terminal_panel(panel: Panel, steps, log: bool, height: int) -> list[str]:
    def scale(v):
        return math.log10(v) if log else v

    shown = [scale(v) for _, vs in panel.lines for v in vs if not math.isnan(v)]
    if panel.logged is not None:
        shown += [scale(v) for _, v in panel.logged.points if math.isfinite(v) and (v > 0 or not log)]
    if not shown:
        return [f"{panel.title}: nothing to show on a log scale (no value is > 0)"]
    low, high = min(shown), max(shown)
    span = (high - low) or 1.0
    grid = _grid(panel, steps, scale, low, span, height, log)
    first, last = steps[0], steps[-1]
    labels = _value_labels(low, high, height, log)
    pad = max(len(v) for v in labels.values())
    lines = [f"{panel.title}" + ("   (log scale)" if log else "")]
    for i, row in enumerate(grid):
        lines.append(f"{labels.get(i, ''):>{pad}} |{''.join(row)}")
    lines.append(" " * pad + " +" + "-" * WIDTH)
    lines.append(" " * pad + f"  {first:<{WIDTH // 2}}{last:>{WIDTH - WIDTH // 2}}")
    if len(panel.lines) > 1 or panel.difference or panel.logged is not None:
        legend = "   ".join(f"{MARKS[k % len(MARKS)]} {name}" for k, (name, _) in enumerate(panel.lines))
        if panel.logged is not None:
            legend += f"   {LOGGED_MARK} {panel.logged.label}"
            if panel.logged.deviation is not None:
                legend += f"   {DEVIATION_MARK} first deviation (update {panel.logged.deviation[0]})"
        lines.append(" " * pad + "  " + legend)
    return lines


def _grid(panel: Panel, steps, scale, low: float, span: float, height: int,
          log: bool = False) -> list[list[str]]:
    """The panel's plot area, ``height`` rows of ``WIDTH`` characters: its breakpoints as
    ``:`` columns and each line's points (after ``scale``) in that line's mark, the later
    lines drawn over the earlier; an overlay's logged points over them, its first deviation
    last (on a log scale, only values > 0)."""
    grid = [[" "] * WIDTH for _ in range(height)]
    first, last = steps[0], steps[-1]
    width_steps = (last - first) or 1

    def column(step):
        return round((step - first) / width_steps * (WIDTH - 1))

    for b in panel.breakpoints:
        if first <= b <= last:
            _mark_column(grid, column(b))

    def put(step, v, mark):
        if first <= step <= last and math.isfinite(v) and (v > 0 or not log):
            grid[height - 1 - round((scale(v) - low) / span * (height - 1))][column(step)] = mark

    for k, (_, vs) in enumerate(panel.lines):
        for step, v in zip(steps, vs):
            put(step, v, MARKS[k % len(MARKS)])
    if panel.logged is not None:
        _put_logged(panel.logged, put)
    return grid


def _mark_column(grid: list[list[str]], column: int) -> None:
    """A breakpoint's ``:`` column, under whatever is drawn there."""
    for row in grid:
        if row[column] == " ":
            row[column] = ":"


def _put_logged(logged, put) -> None:
    """An overlay's logged points, then its first deviation over them."""
    for step, v in logged.points:
        put(step, v, LOGGED_MARK)
    if logged.deviation is not None:
        step, value, planned = logged.deviation
        put(step, value if math.isfinite(value) else planned, DEVIATION_MARK)


def _value_labels(low: float, high: float, height: int, log: bool) -> dict[int, str]:
    """The y-axis labels by row: the top and bottom values, and the middle one on a panel
    tall enough for three (values in the scale's terms: powers of ten back on a log scale)."""
    def label(x):
        return f"{10 ** x if log else x:.4g}"

    labels = {0: label(high), height - 1: label(low)}
    if height > 4:
        middle = (height - 1) // 2
        labels[middle] = label(low + (high - low) * (height - 1 - middle) / (height - 1))
    return labels
