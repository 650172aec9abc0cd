"""Progress on standard error while a command works, on a terminal only.

A proof or a long scan can take seconds; silence looks like a hang.  ``progress``
shows ``label ... 3s`` (with a spinner) on standard error once the work has taken
``DELAY`` seconds, and erases it when the work is done, so finished output is never
mixed with it.  Nothing is written when standard error is not a terminal (a pipe,
a file, CI logs, ``--json`` consumers), or when ``SCHEDLANG_NO_PROGRESS`` is set.
``SCHEDLANG_PROGRESS_DELAY`` overrides the delay (the tests set it to 0).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time

DELAY = 1.0
INTERVAL = 0.2
SPINNER = "|/-\\"


class _Progress:
    def __init__(self, label: str, stream):
        self.label, self.stream = label, stream
        self.start = time.monotonic()
        self.stop = threading.Event()
        self.changed = threading.Event()  # a new label: drawn at once, not at the next tick
        self.shown = False
        self.thread = threading.Thread(target=self._run, daemon=True)

    def update(self, label: str) -> None:
        """Say what is being done now (e.g. which file)."""
        self.label = label
        self.changed.set()

    def _run(self) -> None:
        delay = _delay()
        if self.stop.wait(delay):
            return
        turn = 0
        while not self.stop.is_set():
            elapsed = time.monotonic() - self.start
            self._write(f"\r{SPINNER[turn % len(SPINNER)]} {self.label} ... {elapsed:.0f}s\033[K")
            self.shown = True
            turn += 1
            self.changed.wait(INTERVAL)
            self.changed.clear()

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed terminal: progress is not worth an error
            self.stop.set()

    def close(self) -> None:
        self.stop.set()
        self.changed.set()
        self.thread.join()
        if self.shown:
            self._write("\r\033[K")


class _Quiet:
    def update(self, label: str) -> None:
        pass


def _delay() -> float:
    try:
        return max(0.0, float(os.environ.get("SCHEDLANG_PROGRESS_DELAY", DELAY)))
    except ValueError:
        return DELAY


def enabled(stream=None) -> bool:
    stream = stream or sys.stderr
    if os.environ.get("SCHEDLANG_NO_PROGRESS"):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


@contextlib.contextmanager
def progress(label: str, stream=None):
    """``with progress("verifying a.sched = b.sched"): ...``; yields an object with ``update``."""
    stream = stream or sys.stderr
    if not enabled(stream):
        yield _Quiet()
        return
    shown = _Progress(label, stream)
    shown.thread.start()
    try:
        yield shown
    finally:
        shown.close()
