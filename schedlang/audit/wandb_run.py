"""W&B offline run folders (``wandb/offline-run-*/run-*.wandb``), read with W&B's own reader.

A ``.wandb`` file is W&B's transaction log: leveldb-log framed protobuf ``Record``s
(``wandb.proto.wandb_internal_pb2``); a ``history`` record is one ``wandb.log`` call, its items
``key`` (or ``nested_key``) and ``value_json``.  W&B's Python ``DataStore``
(``wandb.sdk.internal.datastore``) scans it one record at a time, no server involved; wandb
0.30 removed that reader from the package (its Go core reads the file now), so this reader needs
``wandb < 0.30`` (``pip install "schedlang[audit-wandb]"``) and says so where it is missing.
Values are float64 printed as the shortest round trip: compared exactly.  The step is the
trainer's own where the record has one (``train/global_step``, ``trainer/global_step``), else
``_step`` (which counts ``wandb.log`` calls), as for a W&B CSV export (``csv_logs``).
"""

from __future__ import annotations

import importlib
import json
import math
from pathlib import Path

from ..errors import SchedlangError
from ..limits import MAX_STEP
from .csv_logs import STEP_COLUMNS
from .logs import MAX_LISTED, MAX_SERIES, Log
from .points import Point

SUFFIX = ".wandb"
#: Items of a history record that are W&B's bookkeeping, not series.
BOOKKEEPING = ("_timestamp", "_runtime", "_step")


class WandbRun(Log):
    format = "wandb-offline"

    @classmethod
    def claims(cls, path: Path) -> bool:
        if path.is_file():
            return path.suffix == SUFFIX
        return path.is_dir() and bool(_run_files(path))

    def _file(self) -> Path:
        if self.path.is_file():
            return self.path
        files = _run_files(self.path)
        if len(files) != 1:
            shown = ", ".join(str(f.relative_to(self.path)) for f in files[:10])
            raise SchedlangError(f"{self.path}: {len(files)} W&B runs in this folder: {shown}"
                                 if files else f"{self.path}: no W&B run file (run-*.wandb) in this folder",
                                 hint="give one run's folder (wandb/offline-run-...) or its .wandb file")
        return files[0]

    def _history(self, limit: int | None = None):
        """``(record number, _step, {name: value_json})`` of each history record, in file order
        (of the first ``limit`` records only, where given)."""
        datastore, records = _wandb()
        path = self._file()
        store = datastore.DataStore()
        try:
            store.open_for_scan(str(path))
        except PermissionError:
            raise SchedlangError(f"{path}: W&B's reader opens a run file for reading and writing, and "
                                 "this one cannot be written", hint="audit a writable copy of it") from None
        except Exception as exc:  # noqa: BLE001 - not a .wandb file: bad input, not a crash
            raise _unreadable(path, exc) from None
        number = 0
        try:
            while True:
                try:
                    data = store.scan_data()
                    if data is None:
                        return
                    record = records.Record()
                    record.ParseFromString(data)
                except Exception as exc:  # noqa: BLE001 - a corrupt or truncated record
                    raise _unreadable(path, exc, number + 1) from None
                number += 1
                if limit is not None and number > limit:
                    return
                if record.WhichOneof("record_type") != "history":
                    continue
                items = {item.key or ".".join(item.nested_key): item.value_json
                         for item in record.history.item}
                yield number, record.history.step.num, items
        finally:
            store.close()

    def series(self) -> list[str]:
        names: dict[str, None] = {}
        for _, _, items in self._history(MAX_LISTED):
            for name in items:
                if (name not in names and name not in BOOKKEEPING and name not in STEP_COLUMNS
                        and len(names) < MAX_SERIES):
                    names[name] = None
        return list(names)

    def points(self, name: str):
        for number, logged_step, items in self._history():
            text = items.get(name)
            if text is None:
                continue
            value = _number(text)
            if value is None:
                raise SchedlangError(f"{self._file()}: history record {number}: {name} is "
                                     f"{text[:80]!r}, not a number", hint="is --tag the lr series?")
            step = logged_step
            for column in STEP_COLUMNS[:2]:  # the trainer's own counter, where it logged one
                if column in items:
                    own = _number(items[column])
                    if own is None or not math.isfinite(own) or own != int(own):
                        raise SchedlangError(f"{self._file()}: history record {number}: {column} is "
                                             f"{items[column][:80]!r}, not a whole number")
                    step = int(own)
                    break
            if not 0 <= step <= MAX_STEP:
                raise SchedlangError(f"{self._file()}: history record {number}: step {step} is not "
                                     "from 0 to 2**62")
            yield Point(step, value, 0.0, 0)

    def convention(self, name: str) -> str:
        if name.startswith("train/") and any(  # transformers' WandbCallback: train/global_step too
                STEP_COLUMNS[0] in items for _, _, items in self._history(MAX_LISTED)):
            return "hf"
        if name.startswith("lr-"):  # Lightning's LearningRateMonitor
            return "lightning"
        return "step"


def _run_files(folder: Path) -> list[Path]:
    """The run files of a run folder (``run-*.wandb`` in it), else of the run folders in it
    (a ``wandb/`` folder: ``offline-run-*/``, ``run-*/``; not the ``latest-run`` link)."""
    here = sorted(p for p in folder.glob("run-*" + SUFFIX) if p.is_file())
    if here:
        return here
    return sorted(p for run in folder.glob("*run-*") if run.is_dir() and not run.is_symlink()
                  for p in run.glob("run-*" + SUFFIX) if p.is_file())


def _number(text: str) -> float | None:
    """A history value (JSON: W&B writes ``NaN``, ``Infinity``) as a float; None for others."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _unreadable(path: Path, exc: Exception, record: int | None = None) -> SchedlangError:
    where = f" at record {record}" if record is not None else ""
    return SchedlangError(f"{path}: W&B could not read this run file{where} ({type(exc).__name__}: "
                          f"{str(exc)[:200]})", hint="is it a .wandb file an offline run wrote, whole?")


def _wandb():
    try:
        from wandb.proto import wandb_internal_pb2  # lazy: wandb (seconds; its protobuf schema)
    except ImportError:
        raise SchedlangError("reading a W&B offline run needs the wandb package",
                             hint='pip install "schedlang[audit-wandb]"; or export the run\'s '
                                  "history as CSV (the run page's Export CSV) and audit that") from None
    try:  # lazy: wandb < 0.30 ships this reader (import_module: what sys.modules says, not an attribute)
        datastore = importlib.import_module("wandb.sdk.internal.datastore")
    except ImportError:
        import wandb  # lazy: only to name its version

        raise SchedlangError(f"wandb {wandb.__version__} has no reader of .wandb files (wandb 0.30 "
                             "removed wandb.sdk.internal.datastore; its Go core reads them now)",
                             hint='pip install "wandb<0.30" (schedlang[audit-wandb]); or export the '
                                  "run's history as CSV and audit that") from None
    return datastore, wandb_internal_pb2
