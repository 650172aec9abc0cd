"""Code lenses: what an editor offers above each ``schedule`` (plot it, summarise it, verify it
against another file), and the commands they run, as plain data.

A lens is only a title and the command it runs; the work happens when it is clicked, so an
editor that redraws lenses on every keystroke pays nothing for them.  ``plot`` draws the
schedule as the playground does (``plot.panels`` by ``plot_svg``); ``summary`` is what a hover
on the schedule's name says (``hover.schedule_summary``), as plain text; ``verify`` is
``schedlang verify``'s proof.  The proof can run long and a thread cannot be stopped, so
``Proofs`` runs it in a child process that is killed when it exceeds its budget or is
cancelled, a few at a time: the server calls that, tests may call ``verify``.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from dataclasses import dataclass

from ...errors import SchedlangError, Span
from ..plot import panels
from ..plot_svg import svg
from ..ranges import plot_steps
from . import hover, symbols
from .document import Document

PLOT, SUMMARY, VERIFY = "schedlang.plot", "schedlang.summary", "schedlang.verify"
COMMANDS = (PLOT, SUMMARY, VERIFY)
TITLES = {PLOT: "Plot", SUMMARY: "Summary", VERIFY: "Verify against…"}
VERIFY_BUDGET = 60.0  # seconds a proof may take before its process is killed


@dataclass(frozen=True)
class Lens:
    """One lens: shown over ``span`` (the schedule's name), running ``command`` on ``name``."""

    span: Span
    title: str
    command: str
    name: str


def lenses(doc: Document) -> list[Lens]:
    """Plot, Summary and Verify over every named ``schedule`` of a file that parses."""
    return [Lens(d.name_span, TITLES[command], command, d.name)
            for d in symbols.definitions(doc) if d.kind == "schedule" and d.name_span is not None
            for command in COMMANDS]


def _schedule(doc: Document, name: str):
    """The compiled schedule ``name`` of ``doc``; the compile error, or a missing name, raised."""
    if doc.error is not None:
        raise doc.error
    program = doc.program
    if name not in program.schedules:
        raise SchedlangError(f"no schedule named '{name}'",
                             hint="the file defines " + (", ".join(program.schedules) or "no schedule"))
    return program


def summary(doc: Document, name: str) -> str:
    """``name``'s duration, start, end, lowest and highest values and a sparkline, as text."""
    _schedule(doc, name)
    return f"{name}: " + hover.schedule_summary(doc, name, markdown=False)


def plot(doc: Document, name: str, label: str = "") -> str:
    """``name`` drawn over its default plot range, as an SVG document (text)."""
    program = _schedule(doc, name)
    steps = list(plot_steps(program))
    heading = f"{name} ({label})" if label else name
    return svg(panels([(label or name, program)], steps, [name]), steps, heading)


def verify(text: str, name: str, other: str, filename: str = "A", other_filename: str = "B") -> dict:
    """Whether schedule ``name`` of ``text`` equals the schedule of the same name in ``other``
    (or its main one, ``lr`` or its only schedule, when it has none of that name):
    ``{"verdict": "equivalent" | "different" | "unknown" | "error", "message": ...}``."""
    from ...program import compile as compile_program  # lazy: only in the verify child process
    from ...verify import equivalent  # lazy: numpy (verify.float_scan), only in the child process

    try:
        a = compile_program(text, {}, filename)
        b = compile_program(other, {}, other_filename)
        if name not in a.schedules:
            raise SchedlangError(f"no schedule named '{name}' in {filename}")
        other_name = name if name in b.schedules else b.main_schedule(
            purpose="verify compares one schedule of each side").name
        verdict = equivalent(a[name], b[other_name])
    except SchedlangError as exc:
        return {"verdict": "error", "message": str(exc)}
    kind = "equivalent" if verdict.equivalent else "unknown" if verdict.unknown else "different"
    return {"verdict": kind, "message": f"{filename}:{name} vs {other_filename}:{other_name}: {verdict}"}


MAX_PROOFS = 2    # proofs running at once: each is a process busy on a core
MAX_WAITING = 4   # proofs waiting for one of those to finish; any more are refused


class Proofs:
    """The proofs one server runs, each ``verify`` in a child process (this module run with
    ``-m``, JSON in and out): at most ``MAX_PROOFS`` at once and ``MAX_WAITING`` queued, any
    more refused (verdict "busy"), so twelve Verify lenses clicked cannot take every core and
    thread the hovers need; one past its budget, or cancelled, is killed; ``kill`` ends every
    child (the server exiting leaves none behind)."""

    def __init__(self):
        self.running: set = set()
        self.waiting = 0
        self._slots: asyncio.Semaphore | None = None

    async def verify(self, text: str, name: str, other, filename: str = "A", other_filename: str = "B",
                     budget: float = VERIFY_BUDGET) -> dict:
        """``verify``'s answer, or verdict "timeout" past ``budget`` seconds, or "busy".  ``other``
        is the other file's text, or a function giving an awaitable of it (a file read), awaited
        only once this proof holds its slot: slots go first come, first served, so proofs start
        in the order they were asked for whatever order their files are read in."""
        if self._slots is None:
            self._slots = asyncio.Semaphore(MAX_PROOFS)
        if self._slots.locked() and self.waiting >= MAX_WAITING:
            return {"verdict": "busy", "message": f"{MAX_PROOFS} proofs are running and {MAX_WAITING} "
                                                  "waiting: try again when one has finished"}
        self.waiting += 1
        try:
            await self._slots.acquire()
        finally:
            self.waiting -= 1
        try:
            if callable(other):
                other = await other()
            return await self._run(json.dumps([text, name, other, filename, other_filename]), budget)
        finally:
            self._slots.release()

    async def _run(self, request: str, budget: float) -> dict:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", __name__, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE)
        self.running.add(process)
        try:
            out, err = await asyncio.wait_for(process.communicate(request.encode("utf-8")), budget)
        except TimeoutError:
            return {"verdict": "timeout",
                    "message": f"the proof took longer than {budget:g} s and was stopped"}
        finally:
            if process.returncode is None:
                process.kill()
                await asyncio.shield(process.wait())
            self.running.discard(process)
        try:
            answer = json.loads(out)
        except ValueError:
            tail = err.decode("utf-8", "replace").strip().splitlines()[-1:] or [
                f"exit status {process.returncode}"]
            return {"verdict": "error", "message": f"the proof failed: {tail[0]}"}
        return answer if isinstance(answer, dict) else {"verdict": "error", "message": "the proof failed"}

    def kill(self) -> None:
        for process in list(self.running):
            if process.returncode is None:
                try:
                    process.kill()
                except ProcessLookupError:
                    pass


def _main() -> int:
    """The child of ``Proofs.verify``: the request (a JSON list) on stdin, the answer on stdout."""
    text, name, other, filename, other_filename = json.loads(sys.stdin.read())
    json.dump(verify(text, name, other, filename, other_filename), sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(_main())
