"""Standard output that may be closed, full or a broken pipe, and the one guard every command
runs under.

Exit statuses 0 and 1 are verdicts (``verify``, ``resume``, ``fmt --check``), so nothing that
went wrong may end with them: an unexpected exception (``MemoryError`` included) is exit 2 with
one line on standard error and no traceback; output that could not be written (stdout closed
with ``>&-``, on ``/dev/full``) is exit 2 with one line; a reader that went away (``| head``)
ends quietly with 141, the status of a process killed by SIGPIPE, as other tools end there.
"""

from __future__ import annotations

import errno
import os
import sys

EXIT_ERROR = 2
EXIT_BROKEN_PIPE = 128 + 13  # 128 + SIGPIPE: what a shell reports for `yes | head`
EXIT_INTERRUPTED = 128 + 2  # 128 + SIGINT


class OutputError(Exception):
    """Standard output could not be written (closed, full, a broken pipe): the command's result
    is lost, so it cannot end with a verdict."""

    def __init__(self, cause: OSError):
        super().__init__(cause.strerror or str(cause))
        self.cause = cause

    @property
    def broken_pipe(self) -> bool:
        return isinstance(self.cause, BrokenPipeError) or self.cause.errno == errno.EPIPE


class _ClosedStream:
    """Stands for a standard stream the process was started without (``>&-``: Python sets
    ``sys.stdout`` to None, and ``print`` would then drop the output without a word)."""

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, os.strerror(errno.EBADF))

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


class _DiscardStream(_ClosedStream):
    """A closed standard error: diagnostics have nowhere to go, and that is not an error."""

    def write(self, text: str) -> int:
        return len(text)


class _Output:
    """``sys.stdout`` for the length of a command: every write or flush that fails is an
    ``OutputError``, so the guard tells a lost output from any other ``OSError``."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError as exc:
            raise OutputError(exc) from None

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as exc:
            raise OutputError(exc) from None

    def __getattr__(self, name):
        return getattr(self._stream, name)


def guarded(run, argv: list[str], json_errors: bool, emit_json) -> int:
    """``run(argv)`` with standard output watched: its exit status, or 2 / 141 as the module says.
    ``emit_json(message)`` writes an error document when ``--json`` was given."""
    saved = sys.stdout, sys.stderr
    raw = sys.stdout if sys.stdout is not None else _ClosedStream()
    sys.stdout = _Output(raw)
    if sys.stderr is None:
        sys.stderr = _DiscardStream()
    try:
        try:
            code = run(argv)
        except SystemExit:  # argparse's --help, --version and usage errors end this way, as before
            sys.stdout.flush()  # but only once their text is out
            raise
        sys.stdout.flush()
        return code
    except (OutputError, BrokenPipeError) as exc:
        error = exc if isinstance(exc, OutputError) else OutputError(exc)
        _silence(raw)
        if error.broken_pipe:
            return EXIT_BROKEN_PIPE
        _say(f"schedlang: error: cannot write to standard output: {error}")
        return EXIT_ERROR
    except KeyboardInterrupt:
        _say("schedlang: interrupted")
        return EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - the one place every unexpected failure ends
        _say(f"schedlang: internal error: {_one_line(exc)} (please report it, with the command "
             "that caused it)")
        if json_errors:
            try:
                emit_json(f"internal error: {_one_line(exc)}")
                sys.stdout.flush()
            except (OutputError, OSError):
                _silence(raw)
        return EXIT_ERROR
    finally:
        sys.stdout, sys.stderr = saved


def _one_line(exc: BaseException) -> str:
    """The exception's type and first line, at most 200 characters (a ``MemoryError`` has none)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    text = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return text if len(text) <= 200 else text[:197] + "..."


def _say(line: str) -> None:
    """One line on standard error; nothing if that too cannot be written."""
    try:
        print(line, file=sys.stderr)
    except (OSError, ValueError):
        pass


def _silence(stream) -> None:
    """After a failed write, what is still buffered for ``stream`` would fail again when Python
    flushes it at exit (a traceback-like "Exception ignored" and status 120): point its file
    descriptor at the null device, and drop what it holds."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)
    except OSError:
        pass
