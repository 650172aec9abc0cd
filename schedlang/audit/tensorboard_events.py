"""TensorBoard event files, and log folders of them, read with TensorBoard's own reader.

``tensorboard.backend.event_processing.event_file_loader.EventFileLoader`` streams one event
at a time (TensorBoard's ``EventAccumulator`` would keep a reservoir *sample* of each tag, not
every point, and hold it in memory).  Its read-time migration turns old-style
``simple_value`` scalars into tensors, so one path reads both; a float32 scalar (what torch's
``SummaryWriter`` and Lightning's ``TensorBoardLogger`` write) is compared within a float32
ulp.  A folder's event files are read in name order (their names start with the time they
were opened); a run in a subfolder prefixes its tags (``version_0/lr-AdamW``).  The
``tensorboard`` package is the ``audit`` extra and loads only here, only when read.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import SchedlangError
from .logs import MAX_SERIES, Log
from .points import Point, float32_tol

PATTERN = "*tfevents*"


class TensorBoardLog(Log):
    format = "tensorboard"

    @classmethod
    def claims(cls, path: Path) -> bool:
        if path.is_file():
            return "tfevents" in path.name
        return path.is_dir() and next(path.rglob(PATTERN), None) is not None

    def _files(self) -> list[tuple[str, Path]]:
        if self.path.is_file():
            return [("", self.path)]
        files = sorted((p for p in self.path.rglob(PATTERN) if p.is_file()),
                       key=lambda p: (p.parent.as_posix(), p.name))
        runs = {p.parent for p in files}
        return [("" if len(runs) == 1 else p.parent.relative_to(self.path).as_posix() + "/", p)
                for p in files]

    def _scalars(self):
        """``(series name, step, value, tol)`` of every scalar in the log, in file order."""
        loader_class, tensor_util = _tensorboard()
        for prefix, path in self._files():
            try:
                for event in loader_class(str(path)).Load():
                    if not event.HasField("summary"):
                        continue
                    for value in event.summary.value:
                        if not value.HasField("tensor"):
                            continue
                        array = tensor_util.make_ndarray(value.tensor)
                        if array.size != 1 or array.dtype.kind not in "fiu":
                            continue
                        number = float(array.reshape(()))
                        tol = float32_tol(number) if array.dtype.itemsize <= 4 else 0.0
                        yield prefix + value.tag, event.step, number, tol
            except SchedlangError:
                raise
            except Exception as exc:  # noqa: BLE001 - a corrupt file is bad input, not a crash
                raise SchedlangError(f"{path}: TensorBoard could not read this event file "
                                     f"({type(exc).__name__}: {str(exc)[:200]})",
                                     hint="is it a TensorBoard event file?") from None

    def series(self) -> list[str]:
        names: dict[str, None] = {}
        for name, *_ in self._scalars():
            if name not in names and len(names) < MAX_SERIES:
                names[name] = None
        return list(names)

    def points(self, name: str):
        for tag, step, value, tol in self._scalars():
            if tag == name:
                if step < 0:
                    raise SchedlangError(f"{self.path}: {name} logged at step {step}, before step 0")
                yield Point(step, value, tol, 0)

    def convention(self, name: str) -> str:
        if name.endswith("train/learning_rate"):  # transformers' TensorBoardCallback
            return "hf"
        if "lr-" in name:  # Lightning's LearningRateMonitor
            return "lightning"
        if name.rsplit("/", 1)[-1] == "learning-rate":  # Megatron's --tensorboard-dir
            return "megatron"
        return "step"


def _tensorboard():
    try:
        from tensorboard.backend.event_processing.event_file_loader import (  # lazy: tensorboard
            EventFileLoader,
        )
        from tensorboard.util import tensor_util  # lazy: tensorboard (its numpy and protobuf)
    except ImportError:
        raise SchedlangError("reading TensorBoard events needs the tensorboard package",
                             hint='pip install "schedlang[audit]"') from None
    return EventFileLoader, tensor_util
