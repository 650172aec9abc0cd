"""What ``schedlang verify`` compares (SPEC §14): which schedule of each side, on which steps,
on which clock.

A file that declares its run (``run = N``) is compared on the run's steps ``0 .. N-1``: a
difference only after the run's end is no difference of the run (an HF cosine of 10,000
steps imported as a periodic curve differs from the same run written out at step 10,001,
after training stopped).  Such a difference is still reported, as one after the run, and the
verdict is "equivalent" (exit 0).  When both sides declare runs of other lengths there is no
one range to compare: verify stops (exit 2) unless ``--steps`` gives it.  A run whose length
a parameter leaves unknown does not limit the comparison.

``--axis tokens`` (or ``samples``) compares the two as functions of the tokens consumed: A's
text is placed on B's batch schedule (``Program.on_clock``: its lengths in tokens keep their
places on the token axis, its lengths in steps their steps, as ``resume`` places a run on
another batch size) and compared with B at B's steps.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import SchedlangError
from ..program import compile_declared
from .ranges import step_number

#: What ``--axis`` may say, and the clock unit each counts on.
AXIS_UNITS = {"steps": None, "samples": "sp", "tokens": "tok"}


@dataclass(frozen=True)
class Window:
    """The steps compared: ``start <= t < stop`` (``stop`` None: every step from ``start``)."""

    start: int = 0
    stop: int | None = None
    #: ``"run"`` when the range is the runs' steps, ``"steps"`` when ``--steps`` gave it.
    origin: str | None = None
    note: str = ""  # why this range, for the output ("A's run; B declares none")

    @property
    def text(self) -> str:
        if self.stop is None:
            return f"from step {self.start:,}" if self.start else "at every step"
        steps = f"steps {self.start:,}..{self.stop - 1:,}"
        return f"within the run ({steps}{self.note})" if self.origin == "run" else f"on {steps}"


def load_sides(sources: list[tuple[str, str]], params: dict, axis: str) -> list:
    """Each side's ``Program`` (with the ``-D`` values it declares), the second one as given, the
    first placed on the second's batch schedule when ``axis`` counts samples or tokens."""
    programs = [compile_declared(source, params, filename) for source, filename in sources]
    unit = AXIS_UNITS[axis]
    if unit is None:
        return programs
    for label, program in zip("AB", programs):
        clock = program.batch_schedule
        if clock is None:
            raise SchedlangError(f"--axis {axis}: {label} declares no batch schedule, so it has no "
                                 f"{axis} to compare on", hint="declare the run's batch (`batch = ...`, "
                                 "docs/tokens.md), or compare steps (the default)")
        if unit == "tok" and clock.seq_len is None:
            raise SchedlangError(f"--axis tokens: {label} does not say how many tokens a sample holds",
                                 hint="declare `param seq_len: int = 4096`, or use --axis samples")
    return [programs[0].on_clock(programs[1].batch_schedule), programs[1]]


def pick(program, name: str | None):
    """``--schedule NAME`` of a side, else its ``lr`` (or its only schedule)."""
    if name is not None:
        return program[name]
    return program.main_schedule(purpose="verify compares one schedule of each side (--schedule NAME)")


def window(programs, steps: tuple[int, int | None] | None) -> Window:
    """The steps to compare: ``--steps``, else the runs' steps, else every step."""
    if steps is not None:
        return Window(steps[0], steps[1], "steps")
    runs = [p.run if p.run_is_bound else None for p in programs]
    if None not in runs and runs[0] != runs[1]:
        counted = all(p.run_length.unit is not None for p in programs)  # e.g. 4e12tok at two batch sizes
        raise SchedlangError(f"the runs differ: A trains {runs[0]:,} steps and B {runs[1]:,}, so there "
                             "is no one run to compare", hint=f"give the steps to compare, e.g. --steps "
                             f"0:{min(runs)} (the shorter run)" + (", or compare them as functions of the "
                             "tokens consumed (--axis tokens)" if counted else ""))
    declared = [(label, r) for label, r in zip("AB", runs) if r is not None]
    if not declared:
        return Window()
    label, run = declared[0]
    note = "" if len(declared) == 2 else f"; {label}'s run, {'B' if label == 'A' else 'A'} declares none"
    return Window(0, run, "run", note)


def parse_range(text: str | None, span_of) -> tuple[int, int | None] | None:
    """``--steps [START:]STOP``: the steps ``START <= t < STOP`` (STOP may be left out)."""
    if text is None:
        return None
    parts = text.split(":")
    if len(parts) > 2:
        raise SchedlangError(f"verify --steps expects START:STOP, got {text!r}", span_of(0, len(text)),
                             hint="e.g. --steps 0:10000 (the steps 0..9999)")
    if len(parts) == 1:
        parts = ["0", *parts]
    numbers, offset = [], 0
    for part in parts:
        numbers.append(step_number(part, span_of(offset, max(len(part), 1))))
        offset += len(part) + 1
    start, stop = numbers[0] or 0, numbers[1]
    if stop is not None and stop <= start:
        raise SchedlangError(f"--steps {text} holds no step", span_of(0, len(text)),
                             hint="STOP is after START: --steps 0:10000 compares steps 0..9999")
    return start, stop


def prove(a, b, rtol, span: Window):
    """The verdict on ``span``'s steps, and a ``Counterexample`` proven after the run's end
    (None when there is none, or none was looked for)."""
    from ..verify import equivalent  # lazy: numpy (verify.float_scan)
    from ..verify.verdict import EQUIVALENT, Verdict  # lazy: verify/ loads the prover, check never does

    if span.stop is None and span.start == 0:
        return equivalent(a, b, rtol=rtol), None
    full = None
    if span.origin == "run":  # one proof over every step usually decides the run's steps too
        full = equivalent(a, b, rtol=rtol)
        if full.equivalent:
            return full, None
        ce = full.counterexample
        if full.different and ce.earliest and not ce.params:
            if ce.step < span.stop:
                return full, None
            return Verdict(EQUIVALENT, full.method), ce  # every step before it proven equal
    inside = equivalent(a, b, rtol=rtol, start=span.start, stop=span.stop)
    after = None
    if full is not None and full.different and full.counterexample.step >= span.stop:
        after = full.counterexample
    return inside, after
