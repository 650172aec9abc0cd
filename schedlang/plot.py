"""Pictures of schedules: a matplotlib file, or a compact plot in the terminal.

Matplotlib is an optional extra (``schedlang[plot]``) imported only when a
file is asked for; the terminal plot needs nothing.
"""

from __future__ import annotations

from pathlib import Path

from .errors import SchedlangError

WIDTH, HEIGHT = 72, 16
MARKS = "*o+x#@%&"


def plot(program, steps: range, output: str | None = None, log: bool = False) -> str:
    from .backends.torch_eval import values

    series = [(s.name, values(s, steps), s.breakpoints) for s in program if s.is_bound]
    if not series:
        raise SchedlangError("no schedule in the file has all its parameters bound",
                             hint="bind them with -D name=value")
    if log and any(v <= 0 for _, values, _ in series for v in values):
        raise SchedlangError("--log needs every value to be positive")
    if output:
        return _plot_file(series, list(steps), Path(output), log)
    return _plot_terminal(series, list(steps), log)


def _plot_file(series, steps, path: Path, log: bool) -> str:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise SchedlangError("plotting to a file needs matplotlib",
                             hint="pip install 'schedlang[plot]'") from None
    fig, axes = plt.subplots(len(series), 1, figsize=(8, 2.6 * len(series)), squeeze=False,
                             sharex=True)
    for ax, (name, values, breakpoints) in zip(axes[:, 0], series):
        ax.plot(steps, values, linewidth=1.4)
        for b in breakpoints:
            if steps and steps[0] <= float(b) <= steps[-1]:
                ax.axvline(float(b), color="grey", linestyle=":", linewidth=0.8)
        ax.set_ylabel(name)
        if log:
            ax.set_yscale("log")
        ax.grid(alpha=0.3)
    axes[-1, 0].set_xlabel("step")
    fig.tight_layout()
    try:
        fig.savefig(path, metadata={"Software": "schedlang"} if path.suffix == ".png" else None)
    except (OSError, ValueError) as exc:
        raise SchedlangError(f"cannot write {path}: {exc}") from None
    finally:
        plt.close(fig)
    return str(path)


def _plot_terminal(series, steps, log: bool) -> str:
    import math

    def scale(v):
        return math.log10(v) if log else v

    values = [scale(v) for _, vs, _ in series for v in vs]
    low, high = min(values), max(values)
    span = (high - low) or 1.0
    grid = [[" "] * WIDTH for _ in range(HEIGHT)]
    first, last = steps[0], steps[-1]
    width_steps = (last - first) or 1
    for k, (_, vs, breakpoints) in enumerate(series):
        for b in breakpoints:
            if first <= float(b) <= last:
                col = round((float(b) - first) / width_steps * (WIDTH - 1))
                for row in grid:
                    if row[col] == " ":
                        row[col] = ":"
        for step, v in zip(steps, vs):
            col = round((step - first) / width_steps * (WIDTH - 1))
            row = HEIGHT - 1 - round((scale(v) - low) / span * (HEIGHT - 1))
            grid[row][col] = MARKS[k % len(MARKS)]
    top = f"{10 ** high if log else high:.4g}"
    bottom = f"{10 ** low if log else low:.4g}"
    pad = max(len(top), len(bottom))
    lines = []
    for i, row in enumerate(grid):
        label = top if i == 0 else bottom if i == HEIGHT - 1 else ""
        lines.append(f"{label:>{pad}} |{''.join(row)}")
    lines.append(" " * pad + " +" + "-" * WIDTH)
    lines.append(" " * pad + f"  {first:<{WIDTH // 2}}{last:>{WIDTH - WIDTH // 2}}")
    legend = "   ".join(f"{MARKS[k % len(MARKS)]} {name}" for k, (name, _, _) in enumerate(series))
    lines.append(" " * pad + "  " + legend + ("   (log scale)" if log else ""))
    return "\n".join(lines)
