"""Why a run left its file: the catalogue of SPEC §15, each cause fitted to the whole log.

A cause is a hypothesis that predicts every logged value from the file: stepped ``k`` times per
update (``logged[u] == planned[k u + j]``, ``j`` 0, ``k - 1`` or ``k``: where the loop read the
lr among the ``k`` steps), one update early or late (``planned[u ± 1]``),
restarted at update ``s`` (``planned[u]`` before ``s``, ``planned[u - s]`` from it on; at ``s``
itself either, as a log of the next update's lr was printed before the rebuild), never
stepped (``planned[0]``), built for another horizon (the file with another value of an ``int``
parameter, found by bisection at the first deviation, then by multiples), another param
group's schedule of the same file (``lr__tag``), and last, having a free real parameter, scaled
by a factor (``c planned[u]``, ``c`` read at the first deviation).  A hypothesis is claimed
only when it matches every logged point within the log's precision: it is screened at the
first deviation, then on a sample the audit kept, then all survivors are checked together in
one more pass over the log.  Where several fit (a linear decay run twice as fast is also one
built for half the horizon), the first in catalogue order is the cause and the others are
listed with it.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

from ..errors import SchedlangError
from ..limits import MAX_STEP
from .compare import RTOL, matches
from .points import Point

#: The largest ``k`` tried for "stepped k times per update" (Accelerate steps ``num_processes``
#: times: 1024 GPUs at most) and as the multiple of a horizon.
MAX_K = 1024
#: Restart steps tried between the last matching point and the first deviation.
MAX_RESTARTS = 1 << 20
#: Hypotheses verified over the whole log, at most.
MAX_VERIFIED = 8
#: int parameters whose names say they are a length are tried first for "another horizon".
LENGTH_NAME = re.compile(r"total|steps|iters|horizon|max|duration|decay|length|epochs", re.IGNORECASE)


@dataclass(frozen=True)
class Cause:
    """``kind`` is one of ``KINDS``; the fields that apply to it are set."""

    kind: str
    k: int | None = None
    step: int | None = None
    total: int | None = None
    param: str | None = None
    factor: float | None = None
    schedule: str | None = None
    #: For "stepped": where in its ``k`` steps an update read the lr (``planned[k u + phase]``).
    phase: int | None = None
    also: tuple[str, ...] = field(default=(), compare=False)

    def text(self) -> str:
        return {
            "stepped": lambda: f"the scheduler stepped {self.k} times per update" + (
                f" (update u used the file's lr at {self.k}u + {self.phase})" if self.phase else ""),
            "early": lambda: "one update early: the lr logged for update u is the file's at u + 1",
            "late": lambda: "one update late: the lr logged for update u is the file's at u - 1",
            "restarted": lambda: f"restarted at update {self.step}: from there on the lr is the "
                                 f"file's from step 0 again",
            "never-stepped": lambda: "never stepped: the lr stays the file's value at step 0",
            "horizon": lambda: f"built for another horizon: {self.param} = {self.total} fits the "
                               "whole log",
            "scaled": lambda: f"scaled by a factor: the lr is {self.factor!r} x the file's",
            "group": lambda: f"another param group's series: the log follows schedule '{self.schedule}'",
        }[self.kind]()

    def fix(self) -> str:
        return {
            "stepped": lambda: "step the scheduler once per optimizer update: under gradient "
                               "accumulation, only when the optimizer steps; with Accelerate "
                               "(a prepared scheduler steps num_processes times), prepare it with "
                               "step_scheduler_with_optimizer=False or build it for "
                               f"{self.k} x the steps",
            "early": lambda: "call scheduler.step() after optimizer.step(), not before; or the log "
                             "follows another convention (--convention)",
            "late": lambda: "the scheduler steps one update late; or the log follows another "
                            "convention (--convention hf-before-4.51 for transformers < 4.51)",
            "restarted": lambda: "the resume rebuilt the scheduler without its state: load "
                                 "scheduler.state_dict() from the checkpoint (schedlang resume "
                                 "checks one)",
            "never-stepped": lambda: "call scheduler.step() once per update (on the scheduler "
                                     "attached to the optimizer that trains)",
            "horizon": lambda: f"build the scheduler for {self.param} as the file says; e.g. "
                               "divide num_training_steps by gradient_accumulation_steps",
            "scaled": lambda: "the run's peak lr is not the file's: check the optimizer's lr and "
                              "any scaling by batch size or world size",
            "group": lambda: f"the series is the param group that '{self.schedule}' drives: pick "
                             "another with --group or --tag, or set that group's schedule",
        }[self.kind]()

    def to_json(self) -> dict:
        doc = {"kind": self.kind}
        for key in ("k", "phase", "step", "total", "param", "factor", "schedule"):
            if getattr(self, key) is not None:
                doc[key] = getattr(self, key)
        doc["text"], doc["fix"], doc["also"] = self.text(), self.fix(), list(self.also)
        return doc


KINDS = ("stepped", "early", "late", "restarted", "never-stepped", "horizon", "group", "scaled")


class Hypothesis(NamedTuple):
    cause: Cause
    predict: Callable[[int], float]
    #: Relative slack beyond the point's own (a factor read from a rounded value).
    slack: float = 0.0


Aligned = tuple[int, Point]  # (update, the point logged for it)


def fits(hypothesis: Hypothesis, update: int, point: Point) -> bool:
    """Whether the point is what the hypothesis predicts (a prediction may be a tuple of values
    where the log may show either: the update a scheduler was rebuilt at)."""
    try:
        predicted = hypothesis.predict(update)
    except (SchedlangError, OverflowError, ValueError, ZeroDivisionError):
        return False
    return any(matches(point.value, value, point.tol + hypothesis.slack * abs(value))
               for value in (predicted if isinstance(predicted, tuple) else (predicted,)))


def diagnose(stream: Callable[[], Iterable[Aligned]], sample: list[Aligned], first: Aligned,
             last_match: int | None, schedule, program) -> Cause | None:
    """The first cause of the catalogue that fits every point ``stream()`` yields, with the
    others that fit too in ``also``; ``None`` when none does."""
    survivors: list[Hypothesis] = []
    for hypothesis in _hypotheses(first, last_match, schedule, program):
        if fits(hypothesis, *first) and all(fits(hypothesis, u, p) for u, p in sample):
            if hypothesis.cause not in [h.cause for h in survivors]:
                survivors.append(hypothesis)
            if len(survivors) == MAX_VERIFIED:
                break
    if not survivors:
        return None
    alive = list(survivors)
    for update, point in stream():
        alive = [h for h in alive if fits(h, update, point)]
        if not alive:
            return None
    also = tuple(h.cause.text() for h in alive[1:])
    cause = alive[0].cause
    return dataclasses.replace(cause, also=also)


def _hypotheses(first: Aligned, last_match: int | None, schedule, program) -> Iterator[Hypothesis]:
    planned = schedule
    u0, p0 = first
    for k in range(2, MAX_K + 1):
        # the lr read before the update's k steps, at its last micro-batch, or after them
        for phase in (0, k - 1, k):
            if k * u0 + phase <= MAX_STEP:
                yield Hypothesis(Cause("stepped", k=k, phase=phase),
                                 lambda u, k=k, j=phase: planned(k * u + j))
    yield Hypothesis(Cause("early"), lambda u: planned(u + 1))
    yield Hypothesis(Cause("late"), lambda u: planned(max(u - 1, 0)))
    # s from the last point that matched (a log of the next update's lr, Megatron's, shows the old
    # scheduler's value at the update it was rebuilt for) to the first deviation
    low = 1 if last_match is None else last_match
    for s in range(max(low, 1, u0 - MAX_RESTARTS), u0 + 1):
        if _close(planned, u0 - s, p0):  # screened here: the window can be wide
            yield Hypothesis(Cause("restarted", step=s), lambda u, s=s: planned(u) if u < s else (
                (planned(0), planned(s)) if u == s else planned(u - s)))
    yield Hypothesis(Cause("never-stepped"), lambda u: planned(0))
    yield from _horizons(first, schedule, program)
    if program is not None:
        key = schedule.name.split("__")[0]
        for other in program:
            if other.name != schedule.name and other.name.split("__")[0] == key:
                yield Hypothesis(Cause("group", schedule=other.name), other)
    base = planned(u0)
    if base and math.isfinite(p0.value) and p0.value:
        factor = _short(p0.value / base, lambda c: matches(p0.value, c * base, p0.tol))
        yield Hypothesis(Cause("scaled", factor=factor), lambda u: factor * planned(u),
                         slack=p0.tol / abs(p0.value) + RTOL)


def _close(planned, step: int, point: Point) -> bool:
    try:
        return matches(point.value, planned(step), point.tol)
    except (SchedlangError, OverflowError, ValueError):
        return False


def _short(value: float, ok: Callable[[float], bool]) -> float:
    """``value`` with the fewest significant digits that still fits (2.0, not 1.9999999997)."""
    for digits in range(1, 18):
        rounded = float(f"{value:.{digits}g}")
        if ok(rounded):
            return rounded
    return value


def _horizons(first: Aligned, schedule, program) -> Iterator[Hypothesis]:
    """The file with another value of one ``int`` parameter: found by bisection on the value at
    the first deviation (a schedule's value at a step is monotone in its horizon), and among
    the multiples and fractions ``k x`` of the file's value."""
    if program is None:
        return
    used = {s.name for s in getattr(schedule.symbolic_expr, "free_symbols", ())}
    names = [name for name, info in program.params.items()
             if info.type == "int" and not info.per_group and name in used and name in program.values]
    names.sort(key=lambda name: not LENGTH_NAME.search(name))
    u0, p0 = first
    for name in names:
        current = int(program.values[name])
        seen = {current}
        for total in _bisect(name, current, first, schedule, program):
            if total not in seen:
                seen.add(total)
                other = _rebound(program, schedule, name, total)
                if other is not None and _close(other, u0, p0):
                    yield Hypothesis(Cause("horizon", total=total, param=name), other)
        for k in range(2, 65):
            for total in (current * k, current // k if current % k == 0 else None):
                if total and total not in seen:
                    seen.add(total)
                    other = _rebound(program, schedule, name, total)
                    if other is not None and _close(other, u0, p0):
                        yield Hypothesis(Cause("horizon", total=total, param=name), other)


def _rebound(program, schedule, name: str, value: int):
    try:
        other = program.rebind({name: value})[schedule.name]
        other(0)
        return other
    except (SchedlangError, OverflowError, ValueError, ZeroDivisionError):
        return None


def _bisect(name: str, current: int, first: Aligned, schedule, program) -> list[int]:
    """Values of ``name`` around the one where the file's value at the first deviation crosses
    the logged one; [] where it does not cross between ``current / MAX_K`` and ``current * MAX_K``."""
    u0, p0 = first
    if not math.isfinite(p0.value):
        return []

    def gap(value: int):
        other = _rebound(program, schedule, name, value)
        try:
            return None if other is None else other(u0) - p0.value
        except (SchedlangError, OverflowError, ValueError):
            return None

    results = []
    for lo, hi in ((max(1, current // MAX_K), current), (current, min(current * MAX_K, MAX_STEP))):
        g_lo, g_hi = gap(lo), gap(hi)
        while g_lo is None and lo < hi:  # a where clause refuses small values: move up
            lo = lo + max(1, (hi - lo) // 16)
            g_lo = gap(lo)
        if g_lo is None or g_hi is None or (g_lo > 0) == (g_hi > 0) or g_lo == 0 == g_hi:
            continue
        lo, hi = _narrowed(gap, lo, hi, g_lo)
        results += [lo, hi, lo - 1, hi + 1]
    return [value for value in results if value >= 1]


def _narrowed(gap, lo: int, hi: int, g_lo: float) -> tuple[int, int]:
    """``lo < hi`` around the sign change of ``gap`` (``g_lo`` its value at ``lo``), bisected to
    neighbours, or as far as ``gap`` has a value (80 halvings at most)."""
    for _ in range(80):
        if hi - lo <= 1:
            break
        mid = (lo + hi) // 2
        g_mid = gap(mid)
        if g_mid is None:
            break
        if (g_mid > 0) == (g_lo > 0):
            lo, g_lo = mid, g_mid
        else:
            hi = mid
    return lo, hi
