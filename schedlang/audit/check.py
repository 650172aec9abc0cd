"""``audit(file, log)``: did the run do what the file says? (SPEC §15, ``docs/audit.md``)

One pass over the log puts each logged value at its update (``conventions``), compares it with
the file's schedule there (``compare``), counts, and keeps the first deviation and a bounded
sample; only when the run left the file does a second pass fit the causes (``causes``).  Memory
is the sample, whatever the log's length.
"""

from __future__ import annotations

import collections
import math
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import SchedlangError
from ..program import Program, Schedule, load
from . import causes
from .compare import RTOL, difference
from .conventions import Convention, find_convention
from .logs import choose_series, missing
from .points import Point
from .readers import open_log

#: Points kept for screening causes: the first ones, those after the first deviation, the last.
SAMPLE_HEAD, SAMPLE_AFTER, SAMPLE_TAIL = 4096, 4096, 256
#: Points between two calls of ``on_progress``.
PROGRESS_EVERY = 1 << 16


class Thinned:
    """Every ``stride``-th of a stream of (update, value), at most ``2 * most`` of them: when
    full, every other is dropped and the stride doubles; the last point seen is kept too (a
    picture reaches the log's end).  What a picture of the log draws (``schedlang plot
    --logged``): evenly spread over the whole log, bounded, deterministic."""

    def __init__(self, most: int):
        self.most, self.stride, self.seen, self.kept = max(1, most), 1, 0, []
        self.last: tuple[int, float] | None = None

    def points(self) -> tuple[tuple[int, float], ...]:
        tail = [self.last] if self.last is not None and (self.seen - 1) % self.stride else []
        return tuple(self.kept + tail)

    def add(self, update: int, value: float) -> None:
        self.last = (update, value)
        if self.seen % self.stride == 0:
            self.kept.append((update, value))
            if len(self.kept) >= 2 * self.most:
                self.kept = self.kept[::2]
                self.stride *= 2
        self.seen += 1


@dataclass(frozen=True)
class Deviation:
    """The first update where the run left the file: ``step`` (the update), the logger's own
    ``logged_step``, the ``line`` of the log (0 where it has none), both values."""

    step: int
    logged_step: int
    line: int
    logged: float
    planned: float

    def to_json(self) -> dict:
        return {"step": self.step, "logged": _json_number(self.logged), "planned": self.planned,
                "logged_step": self.logged_step, "line": self.line or None}


@dataclass(frozen=True)
class AuditReport:
    """What ``schedlang audit`` reports (SPEC §15): ``matched`` (points aligned and compared),
    ``max_diff`` (their largest relative difference), ``first_deviation`` and ``cause``."""

    file: str
    log: str
    format: str
    series: str
    schedule: str
    convention: Convention
    matched: int
    deviations: int
    max_diff: float
    first_deviation: Deviation | None
    cause: causes.Cause | None
    skipped: int = 0
    notes: tuple[str, ...] = field(default=())
    #: (update, logged value) spread over the log, for a picture (``audit(keep=N)``; not in JSON).
    points: tuple[tuple[int, float], ...] = field(default=(), repr=False)

    @property
    def followed(self) -> bool:
        return self.first_deviation is None

    def to_json(self) -> dict:
        return {"file": self.file, "log": self.log, "format": self.format, "series": self.series,
                "schedule": self.schedule, "convention": self.convention.name,
                "followed": self.followed, "matched": self.matched, "deviations": self.deviations,
                "max_diff": _json_number(self.max_diff),
                "first_deviation": self.first_deviation.to_json() if self.first_deviation else None,
                "cause": (self.cause.to_json() if self.cause else {"kind": "none"})
                if self.first_deviation else None,
                "skipped": self.skipped, "notes": list(self.notes)}


def _chunks(points, size: int = PROGRESS_EVERY // 16):
    """``points`` in lists of ``size``: the schedule is evaluated a chunk at a time."""
    chunk = []
    for point in points:
        chunk.append(point)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


class _Tally:
    """What ``audit``'s one pass keeps: the counts, the worst difference, the first deviation and
    the last match before it, a bounded sample (head, after the first deviation, tail) for
    ``causes.diagnose`` and, with ``keep``, the thinned points for the picture."""

    def __init__(self, keep: int):
        self.head: list = []
        self.after: list = []
        self.tail = collections.deque(maxlen=SAMPLE_TAIL)
        self.count = self.deviations = self.skipped = self.backwards = 0
        self.worst = 0.0
        self.first: tuple[int, Point] | None = None
        self.last_match: int | None = None  # the last matching update before the first deviation
        self.previous = -1
        self.thin = Thinned(keep) if keep else None

    def from_update_zero(self, updates: list, chunk: list) -> tuple[list, list]:
        """The points of ``chunk`` at an update >= 0, with their updates; the others counted."""
        if updates[0] < 0 or min(updates) < 0:
            kept = [(u, p) for u, p in zip(updates, chunk) if u >= 0]
            self.skipped += len(chunk) - len(kept)
            updates, chunk = [u for u, _ in kept], [p for _, p in kept]
        return updates, chunk

    def compare(self, updates: list, chunk: list, values) -> None:
        """Each logged point against the schedule's value at its update."""
        for update, point, value in zip(updates, chunk, values):
            self.count += 1
            if self.thin is not None:
                self.thin.add(update, point.value)
            if update < self.previous:
                self.backwards += 1
            self.previous = update
            gap = abs(point.value - value)
            if gap <= point.tol or gap <= RTOL * abs(value):  # matches(), inlined: a hot loop
                self._matched(update, point, value, gap)
            else:
                self._deviated(update, point, value)

    def _matched(self, update: int, point: Point, value: float, gap: float) -> None:
        first = self.first
        if (first is None or update < first[0]) and (self.last_match is None or update > self.last_match):
            self.last_match = update
        if gap:
            self.worst = max(self.worst, difference(point.value, value))
        if len(self.head) < SAMPLE_HEAD:
            self.head.append((update, point))
        elif first is not None and len(self.after) < SAMPLE_AFTER:
            self.after.append((update, point))
        else:
            self.tail.append((update, point))

    def _deviated(self, update: int, point: Point, value: float) -> None:
        self.worst = max(self.worst, difference(point.value, value))
        self.deviations += 1
        if self.first is None or update < self.first[0]:
            self.first = (update, point)
        if len(self.after) < SAMPLE_AFTER:
            self.after.append((update, point))

    def sample(self) -> list:
        return self.head + self.after + list(self.tail)


def _no_point(opened, log, series: str, tag: str | None, skipped: int, used) -> SchedlangError:
    """The error for a series with no logged point at an update >= 0."""
    if tag is not None and not skipped:
        error = missing(opened, tag)
        if error is not None:
            return error
    return SchedlangError(f"{log}: series '{series}' has no logged point"
                          + (f" at an update >= 0 ({skipped} before it, by the {used.name} "
                             "convention)" if skipped else ""),
                          hint="is this the log of a run that trained at least one step?")


def _notes(tally: _Tally, used) -> tuple[str, ...]:
    """What the report says of the log beside the comparison: steps going back, points left out."""
    notes = []
    if tally.backwards:
        notes.append(f"the log's steps go back {tally.backwards} time(s) (a resumed run logging again?): "
                     "each point is compared at its own step")
    if tally.skipped:
        notes.append(f"{tally.skipped} point(s) before update 0 by the {used.name} convention were left out")
    return tuple(notes)


def _json_number(value: float):
    return value if math.isfinite(value) else repr(value)  # JSON has no nan/inf: "nan", "inf"


def audit(file, log, *, schedule: str | None = None, tag: str | None = None, group: int | None = None,
          params: dict | None = None, convention: str | None = None,
          format: str | None = None, on_progress=None, keep: int = 0) -> AuditReport:  # noqa: A002
    """Compare the run logged in ``log`` with ``file``'s schedule (``schedule``, else ``lr``,
    else the only one).  ``file`` is a path or a ``Program``; ``params`` binds its parameters
    (like ``-D``); ``convention`` names the logger convention where the reader's own is not
    the one (``conventions.CONVENTIONS``), ``format`` the reader where guessing is not wanted
    (``readers.FORMATS``).  ``on_progress(points_read)`` is called now and then on a long log.
    ``keep=N`` keeps about ``N`` to ``2N`` of the aligned points, evenly spread, in ``points``
    (for ``schedlang plot --logged``)."""
    program = file if isinstance(file, Program) else load(file, params)
    planned: Schedule = program.main_schedule(schedule, "audit compares one schedule")
    opened = open_log(Path(log), format)
    series = choose_series(opened, tag, group)
    used = find_convention(convention or opened.convention(series))

    def aligned():
        for point in opened.points(series):
            update = point.step + used.offset
            if update >= 0:
                yield update, point

    tally = _Tally(keep)
    for chunk in _chunks(opened.points(series)):
        updates, chunk = tally.from_update_zero([point.step + used.offset for point in chunk], chunk)
        if not chunk:
            continue
        tally.compare(updates, chunk, planned.values(updates))
        if on_progress is not None:
            on_progress(tally.count)
    if tally.count == 0:
        raise _no_point(opened, log, series, tag, tally.skipped, used)
    first, last_match = tally.first, tally.last_match
    cause = deviation = None
    if first is not None:
        update, point = first
        deviation = Deviation(update, point.step, point.line, point.value, planned(update))
        if last_match is not None and last_match >= update:  # steps went back: no window known
            last_match = None
        cause = causes.diagnose(aligned, tally.sample(), first, last_match, planned, program)
    points = tally.thin.points() if tally.thin else ()
    return AuditReport(str(file if not isinstance(file, Program) else file.filename), str(log),
                       opened.format, series, planned.name, used, tally.count, tally.deviations,
                       tally.worst, deviation, cause, tally.skipped, _notes(tally, used), points)
