"""One logged value, where it came from and how precisely it was written.

Every reader yields ``Point``s, one at a time (a log of millions of points is never a list):
the logger's own step, the value, the tolerance the log's precision allows (half a unit in the
last printed digit of a number written as text; one float32 ulp for TensorBoard's float32
scalars), and the line it is on, for the report.  What a malformed entry is, and where, is
said here too: ``bad_line`` locates it at ``file:line:col`` without holding the file.
"""

from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass
from typing import NamedTuple

from ..errors import SchedlangError, Source, Span
from ..limits import MAX_STEP

#: The longest line (or JSON value) a log reader reads at once: a line past it is refused,
#: located, so a file without line breaks is never read whole.
MAX_LINE_BYTES = 1 << 20


class Point(NamedTuple):
    """``step`` as the logger counted it, ``value`` as logged, ``tol`` the absolute slack the
    log's precision allows at it, ``line`` (1-based; 0 where a file has no lines)."""

    step: int
    value: float
    tol: float
    line: int


@dataclass(frozen=True)
class LineSource(Source):
    """One line of a large log file standing for the whole file in a ``Span``: only the line
    an error is about is kept (``Source.line`` would split the whole text)."""

    first_line: int = 1

    def line(self, lineno: int) -> str:
        return self.text if lineno == self.first_line else ""


def bad_line(filename: str, lineno: int, text: str, message: str, *, column: int = 1,
             length: int | None = None, hint: str | None = None) -> SchedlangError:
    """A ``SchedlangError`` at ``filename:lineno:column`` with the line and a caret."""
    text = text.rstrip("\r\n")
    source = LineSource(text[:4096], filename, lineno)
    width = max(1, length if length is not None else len(text) - column + 1)
    return SchedlangError(message, Span(source, lineno, column, lineno, column + width), hint=hint)


_NUMBER = re.compile(r"\s*[+-]?(?P<int>\d*)(?:\.(?P<frac>\d*))?(?:[eE](?P<exp>[+-]?\d{1,4}))?\s*")
_SPECIAL = {"nan": math.nan, "+nan": math.nan, "-nan": math.nan, "inf": math.inf, "+inf": math.inf,
            "-inf": -math.inf, "infinity": math.inf, "+infinity": math.inf, "-infinity": -math.inf}


def text_value(text: str) -> tuple[float, float, int] | None:
    """A number written as text -> (value, half a unit in its last printed digit, how many
    significant digits it has); ``None`` when it is not a number.  ``nan``/``inf`` are values
    (a deviation, never an error)."""
    special = _SPECIAL.get(text.strip().lower())
    if special is not None:
        return special, 0.0, 0
    match = _NUMBER.fullmatch(text)
    if not match or not (match["int"] or match["frac"]) or len(text) > 400:
        return None
    value = float(text)
    exponent = int(match["exp"] or 0) - len(match["frac"] or "")
    digits = len(((match["int"] or "") + (match["frac"] or "")).lstrip("0"))
    try:
        half = 0.5 * 10.0 ** exponent if exponent > -330 else 0.0
    except OverflowError:  # 1e999: the value is inf, a deviation whatever the slack
        half = math.inf
    return value, half, digits


#: Significant digits from which a log's numbers are taken to be Python's ``repr`` of a float64
#: (shortest round trip: its last digit is no rounding of the writer's).
REPR_DIGITS = 15


class Precision:
    """How precisely a series was printed: ``"float64"`` (a writer that prints ``repr``: HF's
    JSON, Lightning's and MLflow's files: the value is the float itself), ``"printed"`` (half a
    unit in the last printed digit: Megatron's ``:.6E``), or ``"auto"`` for a CSV of unknown
    origin: ``float64`` when one of its first values has ``REPR_DIGITS`` significant digits,
    else ``printed``."""

    def __init__(self, mode: str, head=()):
        if mode == "auto":
            mode = "float64" if any(digits >= REPR_DIGITS for digits in head) else "printed"
        self.mode = mode

    def parse(self, text: str) -> tuple[float, float] | None:
        """``text`` as (value, tol); ``None`` when it is not a number.  The float64 path is
        ``float`` alone (a million rows a second matter)."""
        if self.mode != "printed":
            try:
                value = float(text)
            except ValueError:
                return None
            if math.isfinite(value) or text.strip().lower() in _SPECIAL:
                return value, 0.0
            return value, 0.0
        number = text_value(text)
        return None if number is None else (number[0], self.tol(number))

    def tol(self, number: tuple[float, float, int]) -> float:
        """A zero is exact even when printed (no one logs an lr with one decimal)."""
        return number[1] if self.mode == "printed" and number[2] else 0.0


def float32_tol(value: float) -> float:
    """One float32 ulp at ``value``: the slack of a float64 lr stored as TensorBoard's float32."""
    try:
        single = struct.pack("<f", abs(value))
    except OverflowError:  # beyond float32: TensorBoard could not have stored it
        return 0.0
    bits = struct.unpack("<I", single)[0]
    if bits >= 0x7F7FFFFF:  # the largest float32, inf or nan: no next one
        return 0.0
    here, after = struct.unpack("<f", single)[0], struct.unpack("<f", struct.pack("<I", bits + 1))[0]
    return after - here


def whole_step(text, filename: str, lineno: int, line: str, column: int = 1) -> int:
    """A step as logged (``100``, ``100.0``): a whole number from 0 to ``MAX_STEP``."""
    try:
        number = float(text) if isinstance(text, str) else text
    except ValueError:
        number = None
    if (isinstance(number, bool) or not isinstance(number, (int, float)) or not math.isfinite(number)
            or number != int(number) or not 0 <= number <= MAX_STEP):
        raise bad_line(filename, lineno, line, f"a step is a whole number from 0 to 2**62, not {text!r}",
                       column=column, length=len(str(text)))
    return int(number)


def bounded_lines(handle, filename: str):
    """``(lineno, line)`` of a text file, each line read with ``MAX_LINE_BYTES`` as its limit."""
    lineno = 0
    while True:
        line = handle.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        lineno += 1
        if len(line) > MAX_LINE_BYTES:
            raise bad_line(filename, lineno, line[:200], f"line {lineno} is longer than "
                           f"{MAX_LINE_BYTES} characters: not a log this reader knows",
                           hint="is this the log file the trainer wrote?")
        yield lineno, line
