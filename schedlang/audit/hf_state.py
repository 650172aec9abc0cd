"""HF Trainer's ``trainer_state.json``: its ``log_history``, read one entry at a time.

The file is ``json.dumps(asdict(state), indent=2, sort_keys=True)``; a long run's
``log_history`` (``logging_steps=1``) is millions of small objects, so the top-level object is
walked key by key and each entry of ``log_history`` decoded alone (``json.JSONDecoder
.raw_decode`` over a buffer refilled in chunks): memory is one entry, never the list.  Numbers
are Python's ``repr`` of the Trainer's floats, so they are read as float64, exactly.  A
checkpoint folder (``checkpoint-N/``) is read through its ``trainer_state.json``; an output
folder holding several, through the last one's (its history includes the earlier ones').
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

from ..errors import SchedlangError
from .logs import MAX_LISTED, MAX_SERIES, Log
from .points import MAX_LINE_BYTES, Point, bad_line, whole_step

CHUNK = 1 << 16
_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")


class TrainerState(Log):
    format = "hf-trainer-state"
    step_name = "global_step"

    def __init__(self, path: Path):
        super().__init__(_state_file(path))

    @classmethod
    def claims(cls, path: Path) -> bool:
        if path.is_dir():
            return _state_file(path, strict=False) is not None
        if path.suffix.lower() != ".json":
            return False
        with open(path, encoding="utf-8", errors="replace") as handle:
            head = handle.read(1 << 16)
        return head.lstrip().startswith("{") and ('"log_history"' in head or '"global_step"' in head)

    def _entries(self):
        with open(self.path, encoding="utf-8") as handle:
            yield from _JsonStream(handle, str(self.path)).log_history()

    def series(self) -> list[str]:
        names: dict[str, None] = {}
        for _, entry in itertools.islice(self._entries(), MAX_LISTED):
            for key, value in entry.items():
                if key not in ("step", "epoch") and isinstance(value, (str, int, float)) \
                        and not isinstance(value, bool) and key not in names and len(names) < MAX_SERIES:
                    names[key] = None
        return list(names)

    def points(self, name: str):
        for lineno, entry in self._entries():
            if name not in entry or "step" not in entry:
                continue
            raw = entry[name]
            number = (float(raw), 0.0) if isinstance(raw, (int, float)) and not isinstance(raw, bool) \
                else None
            if number is None:
                raise bad_line(str(self.path), lineno, f'"{name}": {json.dumps(raw)[:200]}',
                               f"log_history: {name} is {raw!r}, not a number")
            step = whole_step(entry["step"], str(self.path), lineno, f'"step": {entry["step"]}')
            yield Point(step, number[0], 0.0, lineno)

    def convention(self, name: str) -> str:
        return "hf"


def _state_file(path: Path, strict: bool = True) -> Path | None:
    if not path.is_dir():
        return path
    if (path / "trainer_state.json").is_file():
        return path / "trainer_state.json"
    checkpoints = sorted((p for p in path.glob("checkpoint-*") if p.name[11:].isdigit()
                          and (p / "trainer_state.json").is_file()), key=lambda p: int(p.name[11:]))
    if checkpoints:
        return checkpoints[-1] / "trainer_state.json"
    if strict:
        raise SchedlangError(f"{path}: no trainer_state.json here or in a checkpoint-N/ folder")
    return None


class _JsonStream:
    """A JSON document read from ``handle`` in chunks: just enough of a parser to walk one
    object's keys and stream one array's items (each item decoded by the json module)."""

    def __init__(self, handle, filename: str):
        self.handle, self.filename = handle, filename
        self.buffer, self.pos, self.done = "", 0, False
        #: Line breaks before ``counted`` (an offset into ``buffer``): lines are counted once.
        self.lines_before, self.counted = 0, 0

    def _more(self, size: int = CHUNK) -> bool:
        if self.done:
            return False
        chunk = self.handle.read(size)
        if not chunk:
            self.done = True
            return False
        self._line()
        self.buffer, self.pos, self.counted = self.buffer[self.pos:] + chunk, 0, 0
        return True

    def _line(self) -> int:
        if self.pos >= self.counted:
            self.lines_before += self.buffer.count("\n", self.counted, self.pos)
        else:  # an error moved back
            self.lines_before -= self.buffer.count("\n", self.pos, self.counted)
        self.counted = self.pos
        return self.lines_before + 1

    def _peek(self) -> str:
        while True:
            self.pos = _SPACE.match(self.buffer, self.pos).end()
            if self.pos < len(self.buffer):
                return self.buffer[self.pos]
            if not self._more():
                return ""

    def _error(self, message: str) -> SchedlangError:
        start = self.buffer.rfind("\n", 0, self.pos) + 1
        end = self.buffer.find("\n", self.pos)
        line = self.buffer[start:end if end >= 0 else len(self.buffer)]
        return bad_line(self.filename, self._line(), line, message, column=self.pos - start + 1,
                        length=1, hint="a truncated or hand-edited trainer_state.json?")

    def _expect(self, char: str) -> None:
        if self._peek() != char:
            found = self._peek()
            raise self._error(f"expected {char!r} here, found " + (repr(found) if found else "the end"))
        self.pos += 1

    def _value(self):
        self._peek()
        size = CHUNK
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buffer, self.pos)
            except json.JSONDecodeError as exc:
                # the value may go on past the buffer (a chunk can end inside a number): read on,
                # up to MAX_LINE_BYTES, before calling it an error
                if len(self.buffer) - self.pos > MAX_LINE_BYTES or not self._more(size):
                    self.pos = min(exc.pos, len(self.buffer))
                    raise self._error(f"not JSON: {exc.msg}") from None
                size *= 2
                continue
            if end == len(self.buffer) and not self.done and isinstance(value, (str, int, float)) \
                    and self._more():  # a number may go on in the next chunk
                continue
            line = self._line()
            self.pos = end
            return line, value

    def log_history(self):
        """``(line, entry)`` for each entry of the document's ``log_history`` (or of the
        document itself, where it is that list)."""
        first = self._peek()
        if first == "[":
            yield from self._items()
            return
        self._expect("{")
        while self._peek() != "}":
            if not self._peek():
                raise self._error("the file ends inside its object")
            _, key = self._value()
            self._expect(":")
            if key == "log_history":
                yield from self._items()
            else:
                self._value()
            if self._peek() == ",":
                self.pos += 1
        self.pos += 1

    def _items(self):
        self._expect("[")
        if self._peek() == "]":
            self.pos += 1
            return
        while True:
            line, item = self._value()
            if not isinstance(item, dict):
                raise self._error("a log_history entry is an object")
            yield line, item
            if self._peek() == ",":
                self.pos += 1
                continue
            self._expect("]")
            return

