"""Megatron-LM's training log: the text ``training_log`` prints every ``--log-interval``.

A line reads `` [time] iteration      100/  100000 | consumed samples: 3200 | ... | learning
rate: 2.999998E-04 | ...``.  It is printed after ``train_step`` ran the update and
``opt_param_scheduler.step``, so it shows the lr of the next update (``conventions``); the lr is
printed with ``:.6E``, seven significant digits, and compared at that precision.  Every other
line of the log (arguments, warnings, timers) is skipped; a line that has an iteration and a
learning rate that is not a number is an error at that line.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

from .logs import MAX_LISTED, Log
from .points import Point, Precision, bad_line, bounded_lines, text_value, whole_step

ITERATION = re.compile(r"\biteration\s+(\d+)\s*/\s*\d+\s*\|")
#: ``learning rate`` and, where ``--decoupled-lr`` is set, ``decoupled learning rate``.
VALUE = re.compile(r"(?:^|\|)\s*((?:decoupled )?learning rate):\s*([^|\s]*)\s*(?=\||$)")


class MegatronLog(Log):
    format = "megatron-log"
    step_name = "iteration"

    @classmethod
    def claims(cls, path: Path) -> bool:
        if not path.is_file():
            return False
        with open(path, encoding="utf-8", errors="replace") as handle:
            head = handle.read(1 << 20)
        return any(ITERATION.search(line) and "learning rate:" in line for line in head.splitlines())

    def _entries(self):
        with open(self.path, encoding="utf-8", errors="replace") as handle:
            for lineno, line in bounded_lines(handle, str(self.path)):
                iteration = ITERATION.search(line)
                if not iteration:
                    continue
                for match in VALUE.finditer(line, iteration.end() - 1):
                    yield lineno, line, iteration, match

    def series(self) -> list[str]:
        names = []
        for _, _, _, match in itertools.islice(self._entries(), MAX_LISTED):
            if match[1] not in names:
                names.append(match[1])
                if len(names) == 2:
                    break
        return names

    def points(self, name: str):
        for lineno, line, iteration, match in self._entries():
            if match[1] != name:
                continue
            number = text_value(match[2])
            if number is None:
                raise bad_line(str(self.path), lineno, line, f"{name}: {match[2]!r} is not a number",
                               column=match.start(2) + 1, length=len(match[2]))
            step = whole_step(iteration[1], str(self.path), lineno, line, iteration.start(1) + 1)
            yield Point(step, number[0], Precision("printed").tol(number), lineno)

    def convention(self, name: str) -> str:
        return "megatron"
