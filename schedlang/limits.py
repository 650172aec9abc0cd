"""Every size limit of schedlang, in one place.

A schedule file, a ``-D`` value, a ``--steps`` range or an imported YAML file
can be hostile or simply mistyped (a stray ``**`` or a pasted megabyte of
numbers).  Each limit below turns such input into a located ``SchedlangError``
in bounded time and memory instead of a hang, a ``MemoryError`` or a
traceback.  The values are generous for real schedules; ``docs/language.md``
("Limits") lists them and ``tests/test_limits.py`` checks that the docs and
the code agree, so change a number here and there together.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import sys
from fractions import Fraction

from .errors import SchedlangError, Source, Span

#: Bytes of one ``.sched`` file or imported configuration.
MAX_FILE_BYTES = 256 * 1024
#: Nesting levels of one expression (parentheses, operators, calls, lists).
MAX_NESTING = 100
#: Digits of one number literal (``-D`` values and YAML numbers included).
MAX_DIGITS = 400
#: Magnitude of a literal's decimal exponent: ``1e400`` is far beyond float64 already.
MAX_EXPONENT = 400
#: Items of one list literal (``piecewise`` values, milestones) and arguments of one call.
MAX_LIST_ITEMS = 1000
#: Schedules joined by ``>>`` in one sequence.
MAX_SEGMENTS = 10_000
#: Changes of the batch in the run's batch schedule (the entries after the first of ``stages(...)``
#: or a Megatron or OLMo-core batch preset; each increment a Megatron ramp reaches is one).  The
#: check, the reference and the torch and JAX code read the stages as one table
#: (``core.clock.ClockCountBase``, ``codegen/counts.py``), but the core text and ``check``'s
#: report still spell them one per stage.
MAX_BATCH_STAGES = 1000
#: Expression nodes that expanding the calls of user functions (``def``) may produce in one file.
MAX_DEF_EXPANSION = 20_000
#: The largest duration, milestone or step: torch evaluates steps as int64, with room to add.
MAX_STEP = 2**62
#: Steps one ``schedlang eval`` / ``plot --steps`` range may hold.
MAX_EVAL_POINTS = 10_000_000
#: Nesting levels of an imported YAML document.
MAX_YAML_DEPTH = 100
#: Nesting levels of an imported JSON or TOML document (lists and tables, objects and arrays).
MAX_CONFIG_DEPTH = 100
#: Aliases (``*name``) in an imported YAML document.
MAX_YAML_ALIASES = 100
#: Values of an imported YAML document once aliases are expanded (the billion-laughs guard).
MAX_YAML_VALUES = 100_000
#: Files an OpenMMLab config may read through ``_base_`` (every level counted).
MAX_CONFIG_BASES = 32
#: Bytes of the pickle of a checkpoint ``schedlang resume`` reads (a zip checkpoint's tensors
#: are mapped, not read, and not counted), and of an HF ``trainer_state.json``.
MAX_STATE_BYTES = 16 * 1024 * 1024
#: Nesting levels of a checkpoint ``schedlang resume`` searches for the scheduler state (the
#: ``scheduler`` of ``{"model": ..., "scheduler": ...}`` is at level 1).
MAX_STATE_DEPTH = 6
#: Values of a checkpoint ``schedlang resume`` looks at while searching it (a model's
#: ``state_dict`` counts one per tensor).
MAX_STATE_VALUES = 200_000
#: Bytes of a small text file of a checkpoint folder (DeepSpeed's ``latest``, Megatron's
#: ``latest_checkpointed_iteration.txt``).
MAX_TAG_BYTES = 4096

#: Python frames the compiler may use (lowering nested ``def`` calls, sympy walking a deep
#: formula).  Python's default of 1000 is reached by 200 chained ``def``s; 3.11 runs Python
#: calls without growing the C stack, so the higher limit is safe.
RECURSION_LIMIT = 20_000

_DECIMAL = re.compile(r"[+-]?(\d[\d_]*(\.[\d_]*)?|\.\d[\d_]*)([eE][+-]?\d+)?")


@contextlib.contextmanager
def recursion_room():
    """Run the compiler with ``RECURSION_LIMIT``; a ``RecursionError`` still left is reported
    as a program too deeply nested, never as a traceback."""
    saved = sys.getrecursionlimit()
    sys.setrecursionlimit(max(saved, RECURSION_LIMIT))
    try:
        yield
    except RecursionError:
        raise SchedlangError("the program nests too deeply to compile",
                             hint="split long chains of def calls or nested expressions "
                                  "into separate let definitions") from None
    finally:
        sys.setrecursionlimit(saved)


class LimitError(ValueError):
    """A number outside the limits above: the message says which limit, the hint what to do."""

    def __init__(self, message: str, hint: str):
        super().__init__(message)
        self.hint = hint


def decimal(text: str) -> Fraction:
    """An exact decimal literal (``500``, ``1_000``, ``3e-4``, ``0.1``) within the digit limits.

    ``Fraction(text)`` alone would compute ``10 ** 999999999`` for ``1e999999999`` and
    refuse 5000 digits with Python's own message; this checks the sizes first.
    Raises ``LimitError`` for a number that is too long, ``ValueError`` for one that is
    not a decimal literal at all.
    """
    text = text.strip()
    if not _DECIMAL.fullmatch(text):
        raise ValueError(f"not a decimal number: {text!r}")
    text = text.replace("_", "")
    mantissa, _, exponent = text.lower().partition("e")
    digits = sum(c.isdigit() for c in mantissa)
    if digits > MAX_DIGITS:
        raise LimitError(f"this number has {digits} digits; schedlang reads at most {MAX_DIGITS}",
                         "write a long number with an exponent, e.g. 1.5e20")
    if exponent and (len(exponent.lstrip("+-")) > 6 or abs(int(exponent)) > MAX_EXPONENT):
        raise LimitError("this number is out of range",
                         f"schedlang numbers stay within 1e-{MAX_EXPONENT}..1e{MAX_EXPONENT}")
    return Fraction(text)


STDIN = "-"  # the file name that stands for standard input, for every command


def read_source(path, regular: bool = False) -> bytes:
    """The bytes of a user's file (a ``.sched`` file, a configuration to import, or ``-``: standard
    input), refused when larger than ``MAX_FILE_BYTES``: never more than ``MAX_FILE_BYTES + 1``
    bytes are read (a 10 GB file or ``/dev/zero`` costs 256 KiB), and a file over the limit is an
    error, never a truncated file read as if whole.

    ``regular``: only a regular file, refused otherwise before a byte is read (the language
    server, which must not wait on a FIFO nobody writes to or read a device; a command line may
    name a pipe, ``<(...)``, on purpose).

    Every command and every import format reads its input here; a file that cannot be read is a
    ``SchedlangError`` naming it.
    """
    if regular:
        return _read_regular(path)
    name = input_name(path)
    try:
        if str(path) == STDIN:
            if sys.stdin is None:  # started with `<&-`
                raise SchedlangError("cannot read <stdin>: standard input is closed",
                                     hint="give a file, or pipe the text in")
            stream = getattr(sys.stdin, "buffer", None)
            data = stream.read(MAX_FILE_BYTES + 1) if stream is not None else \
                sys.stdin.read(MAX_FILE_BYTES + 1).encode("utf-8", errors="surrogateescape")
        else:
            with open(path, "rb") as handle:
                data = handle.read(MAX_FILE_BYTES + 1)
    except IsADirectoryError:
        raise SchedlangError(f"cannot read {name}: it is a directory") from None
    except OSError as exc:
        raise SchedlangError(f"cannot read {name}: {exc.strerror or exc}") from None
    check_size(data, name)
    return data


def _read_regular(path) -> bytes:
    """``read_source`` of a regular file only: opened without waiting (``O_NONBLOCK``: opening a
    FIFO for reading would wait for a writer), its type checked on the open descriptor."""
    name = input_name(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise SchedlangError(f"cannot read {name}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise SchedlangError(f"cannot read {name}: it is not a regular file",
                             hint="give a .sched file, not a directory, a pipe or a device")
    with os.fdopen(fd, "rb") as handle:
        try:
            data = handle.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            raise SchedlangError(f"cannot read {name}: {exc.strerror or exc}") from None
    check_size(data, name)
    return data


def read_source_text(path, regular: bool = False) -> str:
    """``read_source`` as UTF-8 text (a leading byte order mark kept: the readers drop it); bytes
    that are not UTF-8 are a located error."""
    return decode(read_source(path, regular), input_name(path))


def decode(data: bytes, name: str) -> str:
    """UTF-8 ``data`` as text, or a ``SchedlangError`` at the first byte that is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        # the line is quoted whole (the byte shown as U+FFFD), so a caret on a long line has
        # text around it; the column counts characters, not bytes
        before = data[:exc.start].decode("utf-8", errors="replace")
        rest = data[exc.start:exc.start + 4096].split(b"\n", 1)[0].decode("utf-8", errors="replace")
        source = Source(before + rest, name)
        raise SchedlangError(f"{name} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})",
                             Span.at_offset(source, len(before)),
                             hint="save the file as UTF-8 text") from None


def check_size(text: str | bytes, name: str) -> None:
    """Refuse input larger than ``MAX_FILE_BYTES`` (counted in UTF-8 bytes), located at its start:
    the one check every reader (files, standard input, text given to the API) makes."""
    size = len(text) if isinstance(text, bytes) else len(text.encode("utf-8", errors="surrogatepass"))
    if size > MAX_FILE_BYTES:
        head = text[:200].decode("utf-8", errors="replace") if isinstance(text, bytes) else text[:200]
        raise SchedlangError(f"the file is larger than {MAX_FILE_BYTES} bytes, the most schedlang reads",
                             Span.at_offset(Source(head, name), 0),
                             hint="a schedule or its configuration is a few kilobytes: check that this "
                                  "is the right file")


def input_name(path) -> str:
    """The name diagnostics give an input: ``<stdin>`` for ``-``, else the path as given, with any
    byte that is not UTF-8 (``os.fsdecode``'s surrogates) shown as ``\\xNN`` so that the name can
    be printed and written into JSON."""
    text = str(path)
    if text == STDIN:
        return "<stdin>"
    return printable_name(text)


def printable_name(text: str) -> str:
    """``text`` with lone surrogates (undecodable bytes of a file name) as ``\\xNN`` / ``\\uNNNN``."""
    if not any("\ud800" <= c <= "\udfff" for c in text):
        return text
    return "".join((f"\\x{ord(c) - 0xDC00:02x}" if 0xDC80 <= ord(c) <= 0xDCFF else f"\\u{ord(c):04x}")
                   if "\ud800" <= c <= "\udfff" else c for c in text)


def documented() -> dict[str, int]:
    """Each limit's name and value, for the docs test."""
    return {name: value for name, value in globals().items()
            if name.startswith("MAX_") and isinstance(value, int)}
