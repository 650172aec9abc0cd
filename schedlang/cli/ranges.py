"""How far to look at a schedule when the user gives no ``--steps``: its *horizon*.

A finite schedule is looked at up to its duration (where it starts holding its end
value).  A schedule that never ends has no such end, so the horizon comes from its
shape (its breakpoints ``B``, the steps where its formula switches branch, and its
*time constants*, the step lengths its formula repeats or decays over):

* the tail after the last breakpoint is constant (``multistep``, ``piecewise``, a
  warmup into a ``constant``): ``1.25 * B``, so the last level is a quarter of the
  picture, not one point;
* the tail repeats with a period ``T`` (``cosine_restarts``, ``cyclic``, ``sin``/``cos``
  of ``t``): ``B + 4 * T``, four cycles (with a period multiplier ``m``, the first four
  cycles ``T * (1 + m + m**2 + m**3)``), the margin of a picture showing the next restart;
* the tail steps or decays over a time constant ``T`` (``step``'s ``every``, ``exp``'s
  ``n``, ``floor(t / T)``): ``B + 4.5 * T``, so a step decay shows five levels, the last
  one half as long, never a single point;
* the tail changes with no time constant (``inverse_sqrt``, ``noam``, ``rsqrt_decay``,
  a power of ``t``): ``10 * B``, a long decay after the warmup (``1000`` when ``B = 0``);
* a constant: nothing to show; the other schedules of the file decide, or 1000.

``eval``, ``plot`` and ``check`` all use this one rule (``docs/cli.md``, "Default range").
A file that declares its run (``run = N``, SPEC §14) is shown over the run instead: steps
``0 .. N``, the last one the value the run ends at (what a checkpoint at the end holds).
A step the user writes in ``--steps`` is read by ``step_number``, for ``eval`` and ``verify``.
"""

from __future__ import annotations

import math

import sympy as sp

from ..core.algebra import t
from ..core.special import restart_index
from ..errors import SchedlangError
from ..limits import MAX_STEP, LimitError, decimal

DEFAULT = 1000
EVAL_POINTS = 11  # what `schedlang eval` shows without --steps: 0, end/10, ..., end
PLOT_POINTS = 800  # about one point per pixel column


def horizon(schedule) -> int | None:
    """The last step worth showing for a bound schedule; None when it is constant forever."""
    if isinstance(schedule.duration, int):
        return schedule.duration
    expr = schedule.expr
    breakpoints = [int(b) for b in schedule.breakpoints if b.is_number and b >= 0]
    last = max(breakpoints, default=0)
    tail = expr.args[-1][0] if isinstance(expr, sp.Piecewise) else expr
    if not tail.has(t) or _constant_after(schedule, last):
        return math.ceil(1.25 * last) if last else None
    cycles = _cycles(tail)
    if cycles:
        return last + math.ceil(max(cycles))
    return 10 * last if last else DEFAULT


def _constant_after(schedule, last: int) -> bool:
    """Whether the values from the last breakpoint on look constant (a few probes)."""
    probes = [last, last + 1, last + 7, 2 * last + 13, 10 * last + 101, 100 * last + 1009]
    try:
        values = schedule.values(probes)
    except SchedlangError:  # a probe that cannot be evaluated only means "not constant"
        return False
    return all(v == values[0] for v in values)


def _cycles(expr: sp.Expr) -> list[float]:
    """The step spans the time constants of ``expr`` ask for (see the module docstring)."""
    found = []
    for node in sp.preorder_traversal(expr):
        if isinstance(node, restart_index):
            step, first, mult = node.args
            rate = _rate(step)
            if rate and first.is_number and mult.is_number:
                m = float(mult)
                found.append(float(first) * (1 + m + m * m + m ** 3) / rate)
        elif isinstance(node, sp.Mod) and node.args[1].is_number and _rate(node.args[0]):
            found.append(4 * float(node.args[1]) / _rate(node.args[0]))
        elif isinstance(node, (sp.sin, sp.cos)) and _rate(node.args[0]):
            found.append(4 * 2 * math.pi / _rate(node.args[0]))
        elif isinstance(node, (sp.floor, sp.ceiling, sp.exp)) and _rate(node.args[0]):
            found.append(4.5 / _rate(node.args[0]))
        elif isinstance(node, sp.Pow) and node.exp.has(t) and not node.base.has(t) and _rate(node.exp):
            found.append(4.5 / _rate(node.exp))
    return [c for c in found if c > 0 and math.isfinite(c)]


def _rate(arg: sp.Expr) -> float:
    """``|d arg / dt|`` when ``arg`` is linear in ``t`` with a numeric slope, else 0."""
    try:
        slope = sp.diff(arg, t)
    except (TypeError, ValueError):  # pragma: no cover - sympy refuses some derivatives
        return 0.0
    if slope.has(t) or not slope.is_number or slope == 0:
        return 0.0
    return abs(float(slope))


def program_horizon(*programs) -> int:
    """The largest horizon of ``programs``: a program with a known run (``run = N``, SPEC §14)
    is looked at up to its run's end, step ``N``; another up to the largest horizon of its bound
    schedules (``DEFAULT`` when none has one)."""
    ends = []
    for program in programs:
        if program.run_is_bound:
            ends.append(program.run)
        else:
            ends += [horizon(s) for s in program if s.is_bound]
    ends = [e for e in ends if e]
    return max(ends) if ends else DEFAULT


def _runs_end(programs) -> bool:
    """Whether every program's run is known: the default range then ends at the runs' end, with
    no step past it (what a run never trains is not shown unless ``--steps`` asks)."""
    return bool(programs) and all(p.run_is_bound for p in programs)


def eval_steps(*programs) -> range:
    """``EVAL_POINTS`` evenly spaced steps from 0 to the horizon (or just past it; never past
    the runs' end)."""
    end = program_horizon(*programs)
    stride = max(1, -(-end // (EVAL_POINTS - 1)))
    last = stride * (EVAL_POINTS - 1)
    return range(0, (min(last, end) if _runs_end(programs) else last) + 1, stride)


def plot_steps(*programs) -> range:
    """About ``PLOT_POINTS`` steps from 0 to 5% past the horizon, so the end shows (to the
    runs' end exactly, when every program has a run)."""
    end = program_horizon(*programs)
    if not _runs_end(programs):
        end += max(1, end // 20)
    stride = max(1, -(-end // PLOT_POINTS))
    return range(0, end + 1, stride)


def step_number(part: str, span) -> int | None:
    """One whole step of ``--steps`` (``1_000``, ``1e6``), from 0 to ``MAX_STEP``; None for an
    empty part.  ``eval``'s and ``verify``'s ``--steps`` read their steps with it."""
    if not part.strip():
        return None
    hint = "START:STOP:STEP are whole numbers of steps, e.g. --steps 0:1000:100"
    try:
        value = decimal(part)
    except LimitError as exc:
        raise SchedlangError(f"--steps: {exc}", span, hint=exc.hint) from None
    except ValueError:
        raise SchedlangError(f"--steps expects whole numbers, got {part.strip()!r}", span,
                             hint=hint) from None
    if value.denominator != 1 or value < 0:
        raise SchedlangError(f"--steps expects whole numbers >= 0, got {part.strip()!r}", span, hint=hint)
    if value > MAX_STEP:
        raise SchedlangError(f"--steps goes beyond the largest step {MAX_STEP} "
                             f"(2**{MAX_STEP.bit_length() - 1})", span, hint=hint)
    return int(value)
