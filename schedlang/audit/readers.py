"""The log readers, by name, in the order ``open_log`` asks whether a path is theirs (a
Lightning ``version_N`` folder holding both ``metrics.csv`` and TensorBoard events is read
through its CSV: float64, where the events hold float32)."""

from __future__ import annotations

from pathlib import Path

from ..errors import SchedlangError, did_you_mean
from .csv_logs import CsvLog, LightningCsvLog, WandbCsvLog
from .hf_state import TrainerState
from .logs import Log
from .megatron_log import MegatronLog
from .mlflow_run import MlflowRun
from .tensorboard_events import TensorBoardLog
from .wandb_run import WandbRun

FORMATS: dict[str, type[Log]] = {reader.format: reader for reader in (
    TrainerState, MlflowRun, LightningCsvLog, WandbRun, TensorBoardLog, WandbCsvLog, CsvLog, MegatronLog)}

def open_log(path, format: str | None = None) -> Log:  # noqa: A002 - the CLI's --format
    """The ``Log`` for ``path``: ``format`` when given, else the first reader that claims it."""
    path = Path(path)
    if not path.exists():
        raise SchedlangError(f"{path}: no such file or folder", hint="the log of the run to audit")
    if format is not None:
        if format not in FORMATS:
            raise SchedlangError(f"--format {format!r}: not a log format",
                                 hint=did_you_mean(format, FORMATS)
                                 or "one of " + ", ".join(FORMATS))
        return FORMATS[format](path)
    for reader in FORMATS.values():
        if reader.claims(path):
            return reader(path)
    raise SchedlangError(f"{path}: not a log schedlang audit reads",
                         hint="an HF trainer_state.json (or its checkpoint folder), TensorBoard "
                              "events, a Lightning metrics.csv, a W&B history CSV, an MLflow run "
                              "folder, a W&B offline run folder, Megatron's training log, or a "
                              "step,value CSV; --format names one")
