"""TensorBoard event files, and log folders of them, read with TensorBoard's own reader.

``tensorboard.backend.event_processing.event_file_loader.LegacyEventFileLoader`` streams one
event at a time (TensorBoard's ``EventAccumulator`` would keep a reservoir *sample* of each tag,
not every point, and hold it in memory; ``EventFileLoader``'s read-time migration of each event
to the tensor form costs more than the reading). A v1 ``simple_value`` and a v2 scalar tensor
are both read; a float32 scalar (what torch's ``SummaryWriter`` and Lightning's
``TensorBoardLogger`` write) is compared within a float32 ulp. A folder's event files are read
in name order (their names start with the time they were opened); a run in a subfolder prefixes
its tags (``version_0/lr-AdamW``). The ``tensorboard`` package is the ``audit`` extra and loads
only here, only when read.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import SchedlangError
from .logs import MAX_LISTED, MAX_SERIES, Log
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

    def _scalars(self, limit: int | None = None):
        """``(series name, step, value, tol)`` of every scalar in the log, in file order (the
        first ``limit`` events only, where given)."""
        loader_class, tensor_util = _tensorboard()
        events = 0
        for prefix, path in self._files():
            try:
                for event in loader_class(str(path)).Load():
                    events += 1
                    if limit is not None and events > limit:
                        return
                    if not event.HasField("summary"):
                        continue
                    for value in event.summary.value:
                        scalar = _scalar(value, tensor_util)
                        if scalar is not None:
                            yield prefix + value.tag, event.step, *scalar
            except SchedlangError:
                raise
            except Exception as exc:  # noqa: BLE001 - a corrupt file is bad input, not a crash
                raise SchedlangError(f"{path}: TensorBoard could not read this event file "
                                     f"({type(exc).__name__}: {str(exc)[:200]})",
                                     hint="is it a TensorBoard event file?") from None

    def series(self) -> list[str]:
        names: dict[str, None] = {}
        for name, *_ in self._scalars(MAX_LISTED):
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


#: TensorFlow's DataType numbers of the scalar types (``types.proto``) and their float slack.
_FLOAT32, _FLOAT64 = 1, 2


def _scalar(value, tensor_util) -> tuple[float, float] | None:
    """A summary value as (number, tol), or None where it is not a scalar: a v1
    ``simple_value`` (float32: torch's and Lightning's writers), or a v2 scalar tensor."""
    kind = value.WhichOneof("value")
    if kind == "simple_value":
        return value.simple_value, float32_tol(value.simple_value)
    if kind != "tensor":
        return None
    tensor = value.tensor
    if tensor.dtype == _FLOAT32 and len(tensor.float_val) == 1 and not tensor.tensor_shape.dim:
        return tensor.float_val[0], float32_tol(tensor.float_val[0])
    if tensor.dtype == _FLOAT64 and len(tensor.double_val) == 1 and not tensor.tensor_shape.dim:
        return tensor.double_val[0], 0.0
    array = tensor_util.make_ndarray(tensor)
    if array.size != 1 or array.dtype.kind not in "fiu":
        return None
    number = float(array.reshape(()))
    return number, float32_tol(number) if array.dtype.itemsize <= 4 else 0.0


def _tensorboard():
    try:
        from tensorboard.backend.event_processing.event_file_loader import (  # lazy: tensorboard
            LegacyEventFileLoader,
        )
        from tensorboard.util import tensor_util  # lazy: tensorboard (its numpy and protobuf)
    except ImportError:
        raise SchedlangError("reading TensorBoard events needs the tensorboard package",
                             hint='pip install "schedlang[audit]"') from None
    return LegacyEventFileLoader, tensor_util
