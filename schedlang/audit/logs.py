"""The logs ``schedlang audit`` reads, and which reader reads a given path.

A ``Log`` names its series (``series()``) and streams one of them (``points(name)``, a fresh
generator each call, so the audit can read a log twice without holding it).  Each reader is
one module; ``FORMATS`` lists them in the order ``open_log`` asks whether a path is theirs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from ..errors import SchedlangError, did_you_mean
from .points import Point

#: Distinct series names a reader collects while listing a log's series.
MAX_SERIES = 10_000
#: Entries (events, log_history entries, lines) a reader looks at to list a log's series: the
#: lr is logged from the first update, and listing must not cost a pass over a huge log.
MAX_LISTED = 100_000


class Log:
    """A log file or folder: ``format`` (a name of ``FORMATS``), ``path``, its series."""

    format = ""
    #: What the reader calls the step it reads (for the report).
    step_name = "step"

    def __init__(self, path: Path):
        self.path = path

    def series(self) -> list[str]:
        raise NotImplementedError

    def points(self, name: str) -> Iterator[Point]:
        raise NotImplementedError

    def convention(self, name: str) -> str:
        """The logger convention a value of series ``name`` is logged by (``conventions``)."""
        return "step"


#: Series names that say lr: ``lr``, ``learning_rate``, ``train/learning_rate``,
#: ``lr-AdamW/pg1``, Megatron's ``learning rate`` and ``learning-rate``.
LR_NAME = re.compile(r"(^|[/_\-. ])(lr|learning[ _-]?rate)($|[/_\-. ])", re.IGNORECASE)


def choose_series(log: Log, tag: str | None, group: int | None = None) -> str:
    """The series ``--tag`` names, else the one whose name says lr (with ``--group N``, the
    one for torch's param group N: LearningRateMonitor's ``/pg{N+1}``)."""
    if tag is not None:  # checked when it yields no point (``missing``): listing costs a pass
        return tag
    names = log.series()
    if not names:
        raise SchedlangError(f"{log.path}: no logged series in this {log.format} log",
                             hint="is it the log of a run that has logged at least one step?")
    lr = [name for name in names if LR_NAME.search(name)]
    if group is not None:
        suffix = f"/pg{group + 1}"
        grouped = [name for name in lr if name.endswith(suffix)]
        if not grouped and group == 0:
            grouped = [name for name in lr if "/pg" not in name]
        lr = grouped
    if len(lr) == 1:
        return lr[0]
    if not lr and names == ["value"] and group is None:
        return names[0]  # a step,value CSV (or one without a header): its value is the lr
    if not lr:
        raise SchedlangError(f"{log.path}: no series whose name says lr"
                             + (f" for param group {group}" if group is not None else ""),
                             hint="pick one with --tag; the log has " + _listed(names))
    raise SchedlangError(f"{log.path}: {len(lr)} series say lr: {_listed(lr)}",
                         hint=f"pick one with --tag, e.g. --tag {lr[0]}")


def _listed(names: list[str], most: int = 20) -> str:
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def missing(log: Log, tag: str) -> SchedlangError | None:
    """The error for a ``--tag`` the log does not have (None where it has it)."""
    names = log.series()
    if tag in names:
        return None
    return SchedlangError(f"{log.path}: no series '{tag}' in this log",
                          hint=did_you_mean(tag, names) or ("it has " + _listed(names) if names else
                                                            "it has no series"))
