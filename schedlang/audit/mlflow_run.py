"""An MLflow run folder (``mlruns/<experiment>/<run>/``): ``metrics/<name>`` is one file per
metric (a name with ``/`` is a nested path), each line ``timestamp value step``, written by
MLflow's file store; read as text, no ``mlflow`` package needed."""

from __future__ import annotations

from pathlib import Path

from .logs import MAX_SERIES, Log
from .points import Point, bad_line, bounded_lines, text_value, whole_step


class MlflowRun(Log):
    format = "mlflow"

    def __init__(self, path: Path):
        super().__init__(path.parent if path.name == "metrics" else path)

    @classmethod
    def claims(cls, path: Path) -> bool:
        folder = path.parent if path.name == "metrics" else path
        return path.is_dir() and (folder / "metrics").is_dir() and (
            (folder / "meta.yaml").is_file() or any((folder / "metrics").iterdir()))

    def series(self) -> list[str]:
        metrics = self.path / "metrics"
        names = sorted(p.relative_to(metrics).as_posix() for p in metrics.rglob("*") if p.is_file())
        return names[:MAX_SERIES]

    def points(self, name: str):
        path = self.path / "metrics" / name
        if not path.is_file():
            return
        with open(path, encoding="utf-8") as handle:
            for lineno, line in bounded_lines(handle, str(path)):
                if not line.strip():
                    continue
                fields = line.split()
                if len(fields) not in (2, 3):
                    raise bad_line(str(path), lineno, line, "an MLflow metric line is 'timestamp value "
                                   "step'", hint="a truncated or hand-edited metrics file?")
                number = text_value(fields[1])
                if number is None:
                    raise bad_line(str(path), lineno, line, f"{fields[1]!r} is not a number",
                                   column=line.find(fields[1], len(fields[0])) + 1, length=len(fields[1]))
                step = whole_step(fields[2], str(path), lineno, line, line.rfind(fields[2]) + 1) \
                    if len(fields) == 3 else 0
                yield Point(step, number[0], 0.0, lineno)

    def convention(self, name: str) -> str:
        if name == "learning_rate":  # transformers' MLflowCallback logs state.global_step
            return "hf"
        return "lightning" if name.startswith("lr-") else "step"
