"""CSV logs: a plain ``step,value`` file, Lightning ``CSVLogger``'s ``metrics.csv`` and a W&B
run's history exported as CSV.

All three are one table with a step column; they differ in which column is the step and in
the convention their lr columns follow.  Read row by row (``csv`` over bounded lines); a cell
left empty is a row where that series was not logged (Lightning and W&B write every key as a
column).  Values keep the precision they were printed with (``points.text_value``).
"""

from __future__ import annotations

import csv
from pathlib import Path

from ..limits import MAX_STEP
from .logs import MAX_SERIES, Log
from .points import Point, Precision, bad_line, bounded_lines, text_value, whole_step

#: Step columns, most specific first: HF's and Lightning's own counters before W&B's ``_step``
#: (which counts ``wandb.log`` calls, not updates).
STEP_COLUMNS = ("train/global_step", "trainer/global_step", "global_step", "step", "iteration",
                "_step", "Step")
#: Columns that are never a series.
NOT_SERIES = {"epoch", "_runtime", "_timestamp", "timestamp", "Wall time", "wall_time", "time"}


class CsvLog(Log):
    """A ``step,value`` CSV: a header naming a step column (or none: the first column is the
    step, the second the value)."""

    format = "csv"
    #: A CSV of unknown origin: ``repr`` digits or printed ones, told from its first values.
    precision = "auto"

    @classmethod
    def claims(cls, path: Path) -> bool:
        return path.is_file() and path.suffix.lower() in (".csv", ".tsv", ".txt") \
            and cls._header_of(path) is not None and cls._kind(cls._header_of(path)) == cls.format

    @staticmethod
    def _header_of(path: Path):
        with open(path, encoding="utf-8", errors="replace", newline="") as handle:
            first = handle.readline(65536)
        if not first.strip():
            return None
        return next(csv.reader([first]), None)

    @staticmethod
    def _kind(header) -> str:
        names = [name.strip() for name in header]
        if "_step" in names:
            return "wandb-csv"
        if "step" in names and ("epoch" in names or any(n.startswith("lr-") for n in names)):
            return "lightning-csv"
        return "csv"

    def _rows(self):
        """``(lineno, line, cells)`` of the data rows, after the header (``self.header``)."""
        with open(self.path, encoding="utf-8", newline="") as handle:
            lines = bounded_lines(handle, str(self.path))
            self.header = None
            for lineno, line in lines:
                if not line.strip():
                    continue
                cells = line.rstrip("\r\n").split(",") if '"' not in line else next(csv.reader([line]))
                if self.header is None:
                    if all(text_value(cell) is not None for cell in cells):  # no header
                        self.header = ["step", "value"] if len(cells) == 2 else \
                            ["step", *(f"value{i}" for i in range(1, len(cells)))]
                        self.headless = True
                    else:
                        self.header, self.headless = [c.strip() for c in cells], False
                        continue
                if len(cells) != len(self.header):
                    raise bad_line(str(self.path), lineno, line, f"{len(cells)} cells where the header "
                                   f"has {len(self.header)}", hint="a truncated or hand-edited row?")
                yield lineno, line, cells

    def _step_index(self) -> int:
        for name in STEP_COLUMNS:
            if name in self.header:
                return self.header.index(name)
        return 0

    def series(self) -> list[str]:
        rows = self._rows()
        try:
            next(rows)
        except StopIteration:
            pass
        finally:
            rows.close()
        if self.header is None:
            return []
        step = self._step_index()
        return [name for i, name in enumerate(self.header)
                if i != step and name not in NOT_SERIES and name not in STEP_COLUMNS][:MAX_SERIES]

    def _digits(self, name: str, most: int = 4096):
        """The significant digits of the first ``most`` values of column ``name``."""
        rows = self._rows()
        try:
            for index, (_, _, cells) in enumerate(rows):
                if index == most:
                    return
                if name not in self.header:
                    return
                number = text_value(cells[self.header.index(name)])
                if number is not None:
                    yield number[2]
        finally:
            rows.close()

    def points(self, name: str):
        precision = Precision(self.precision, list(self._digits(name)) if self.precision == "auto" else ())
        rows = self._rows()
        step_index = column = None
        for lineno, line, cells in rows:
            if column is None:
                if name not in self.header:
                    return
                step_index, column = self._step_index(), self.header.index(name)
            cell = cells[column]
            if not cell or cell.isspace():
                continue
            number = precision.parse(cell)
            if number is None:
                raise bad_line(str(self.path), lineno, line, f"{name}: {cell.strip()!r} is not a number",
                               column=_column_of(line, column), length=len(cell))
            step_cell = cells[step_index]
            try:
                step = int(step_cell)
            except ValueError:
                step = -1
            if not 0 <= step <= MAX_STEP:
                if not step_cell.strip():
                    continue
                step = whole_step(step_cell.strip(), str(self.path), lineno, line,
                                  _column_of(line, step_index))
            yield Point(step, number[0], number[1], lineno)

    def convention(self, name: str) -> str:
        return "step"


class LightningCsvLog(CsvLog):
    """Lightning ``CSVLogger``'s ``metrics.csv`` (or the ``version_N`` folder holding it):
    ``LearningRateMonitor`` writes ``lr-<Optimizer>`` or ``lr-<Optimizer>/pg<N>`` columns."""

    format = "lightning-csv"
    precision = "float64"  # csv.DictWriter writes str(float): repr

    def __init__(self, path: Path):
        super().__init__(path / "metrics.csv" if path.is_dir() else path)

    @classmethod
    def claims(cls, path: Path) -> bool:
        if path.is_dir():
            return (path / "metrics.csv").is_file()
        return super().claims(path)

    def convention(self, name: str) -> str:
        return "lightning" if name.startswith("lr-") else "step"


class WandbCsvLog(CsvLog):
    """A W&B run's history exported as CSV (the run page's "Export CSV", or
    ``run.history().to_csv``): ``_step`` counts ``wandb.log`` calls, so the trainer's own step
    column is used where there is one (``train/global_step``, ``trainer/global_step``)."""

    format = "wandb-csv"
    precision = "float64"  # W&B keeps float64 and exports them in full

    def convention(self, name: str) -> str:
        if name.startswith("train/") and "train/global_step" in (self.header or []):
            return "hf"
        if name.startswith("lr-"):
            return "lightning"
        return "step"


def _column_of(line: str, index: int) -> int:
    """The 1-based column where cell ``index`` of a CSV line starts (quotes aside)."""
    column = 1
    for _ in range(index):
        comma = line.find(",", column - 1)
        if comma < 0:
            return column
        column = comma + 2
    return column
