"""The sample and token clocks (SPEC §12) while lowering: the run's batch schedule, the values
it is computed with, and which clock each value counts.

``clock_at`` lowers ``batch = ...`` on first use; ``fix_whole`` binds the parameters it names,
which are fixed when the file is compiled (``Lowered.fixed``).  The value of a ``schedule``
with parts on those clocks is left ``Unplaced`` by the walk of the file (``place_later``):
it is placed on the batch schedule once the parameters are bound (``Lowered.placed``), so a
new value of ``seq_len`` or a batch places the file again without lowering it again.  A value
that reads the clock inside a statement (a placed chain inside an expression, a ``let`` or a
``def``; OLMo-core's lr factor) is noted by the walk, which records every other value it
computes (``recorded_value``): placing computes again only those that read the clock, from
the recorded ones.
``common_clock``, ``call_clock`` and ``preset_clock`` keep each value on one clock;
``on_samples`` / ``on_tokens`` (the rows of role ``on_clock`` in ``library/clock_calls``) put a
schedule counted in steps on the run's clock.
Placing segments on the batch schedule is ``semantics/clock.py``; the calls whose value is a
batch schedule are ``lower_batch``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import sympy as sp

from ..core.algebra import Mark, Segment
from ..core.clock import UNITS, Clock
from ..errors import SchedlangError, Span
from ..library.clock_calls import ClockCall
from ..library.stdlib import Builtin
from ..limits import MAX_BATCH_STAGES, MAX_STEP
from ..syntax import ir
from .clock import BatchValue, resolve_single
from .params import to_number


@dataclass
class Frame:
    """One node's value being lowered in a ``let`` or ``schedule`` statement (``recorded_value``):
    ``key`` is its path from the statement (the index of each ``value`` call among its parent's,
    so a ``def`` body called twice has two), ``read`` whether its value read the bound values
    or the batch schedule (then it is computed again when the file is placed)."""

    key: tuple
    children: int = 0
    read: bool = False


@dataclass(frozen=True)
class Unplaced:
    """The value of a ``schedule`` statement whose parts count samples or tokens, before it is
    placed on the batch schedule: the ``Lowerer``'s method that places it (``join_placed``,
    ``resolve``) and its arguments, all lowered already.  Placing reads the bound values and
    the clock only (``placed_value``)."""

    method: str
    args: tuple


class ClockLowering:
    """The part of the ``Lowerer`` (``lower.py``) that knows the sample and token clocks (see
    ``ExpressionLowering`` for why the ``Lowerer`` is split into parts it inherits)."""

    def recorded_value(self, node: ir.Node):
        """``node``'s value in a statement of a file with a batch schedule, recorded by the walk
        with whether it read the bound values or the clock.  Placing the file again
        (``replaying``) computes again only the values that read them: any other comes from the
        walk's record, so a placed chain inside an expression, a ``let`` or a ``def`` is placed
        again where it is read, its parts not lowered again."""
        parent = self.frames[-1]
        key = (parent.key, parent.children)
        parent.children += 1
        if self.replaying:
            hit = self.record.get(key)
            if hit is not None and hit[0] is node:
                self.last_read = False
                return hit[1]
        frame = Frame(key)
        self.frames.append(frame)
        try:
            value = self.node_value(node)
        finally:
            self.frames.pop()
        if frame.read:
            parent.read = True
        elif not self.replaying:
            self.record[key] = (node, value)
        self.last_read = frame.read
        return value

    def mark_read(self) -> None:
        """The value being lowered reads the bound values or the batch schedule: it is computed
        again where the file is placed with others (``recorded_value``).  Outside a statement's
        value (while the walk lowers a ``param`` or ``run``) the file is lowered again then."""
        if self._lowering_batch:
            return  # the batch schedule itself, built again wherever the file is placed
        if self.frames:
            self.frames[-1].read = True
        elif self.walking:
            self.read_outside = True

    def place_later(self, node: ir.Node, method: str, *args):
        """``method(*args)``, a value placed on the batch schedule, or, where ``node`` is the
        whole value of the ``schedule`` statement being lowered (``deferring``), the same left
        ``Unplaced``: placed once the parameters are bound, with their values."""
        if node is not self.deferring:
            return getattr(self, method)(*args)
        if not self.batches and self._clock is None:
            self.clock_at(node.span)  # raises: the file declares no batch schedule
        return Unplaced(method, args)

    def placed_value(self, value):
        """``value`` placed on the batch schedule with this lowering's values if it is
        ``Unplaced``; any other value as it is."""
        if isinstance(value, Unplaced):
            return getattr(self, value.method)(*value.args)
        return value

    def resolve(self, segment: Segment, span: Span) -> Segment:
        """A whole schedule on the sample or token clock placed from step 0 (``resolve_single``)."""
        return resolve_single(segment, span, self.clock_at, self.fix_whole, self.measured)

    def clock_at(self, span: Span) -> Clock:
        """The run's batch schedule, lowered from ``batch = ...`` on first use."""
        self.mark_read()
        if self._clock is not None:
            return self._clock
        if not self.batches:
            raise SchedlangError("a length in samples or tokens needs the file's batch schedule",
                                 span, hint="declare it, e.g. `batch = 512` or "
                                 "`batch = stages(512, [1024], [10e9tok])`")
        if self._lowering_batch:
            raise SchedlangError("the batch schedule cannot depend on a length in samples or "
                                 "tokens", span)
        decl = self.batches[0]
        # built wherever the file is placed, so not among the values of the statement reading it
        self._lowering_batch, frames, self.frames = True, self.frames, []
        try:
            value = self.value(decl.value)
        finally:
            self._lowering_batch, self.frames = False, frames
        if isinstance(value, BatchValue):
            table = value.table
        else:
            segment = self.schedule_value(value, decl.value, "a batch size")
            table = ((0, self.batch_size(segment.expr, decl.value.span, segment)),)
        if len(table) - 1 > MAX_BATCH_STAGES:  # each stage a branch of every length on the token clock
            raise SchedlangError(f"this batch schedule changes the batch {len(table) - 1} times; schedlang "
                                 f"follows at most {MAX_BATCH_STAGES} changes", decl.value.span,
                                 hint="a batch schedule changes the batch a few dozen times: check "
                                      "the thresholds")
        seq_len = self.seq_len(decl.value.span)
        largest = max(batch for _, batch in table) * (seq_len or 1)
        if largest > MAX_STEP:  # every target counts samples and tokens in int64
            unit = "tokens" if seq_len else "samples"
            raise SchedlangError(f"a step of {largest} {unit} is more than 2**{MAX_STEP.bit_length() - 1}",
                                 decl.value.span, hint="torch and JAX count samples and tokens in int64; "
                                                       "no batch is this large")
        self._clock = Clock(table, seq_len)
        return self._clock

    def seq_len(self, span: Span) -> int | None:
        """The tokens per sample (``param seq_len``), fixed; None when the file declares none."""
        if "seq_len" not in self.params:
            return None
        value = self.fix_whole(self.params["seq_len"].symbol, self.params["seq_len"].span,
                               "the tokens per sample")
        if value < 1:
            raise SchedlangError(f"seq_len is {value}; a sample holds at least one token",
                                 self.params["seq_len"].span)
        return value

    def batch_size(self, expr: sp.Expr, span: Span, segment: Segment | None = None) -> int:
        if segment is not None and (segment.depends_on_step or segment.clock is not None):
            raise SchedlangError("a batch size is a number of samples, not a schedule", span,
                                 hint="a batch that changes is stages(b0, [b1, ...], [th1, ...])")
        value = self.fix_whole(expr, span, "a batch size")
        if value < 1:
            raise SchedlangError(f"a batch size is at least 1 sample, not {value}", span)
        return value

    def fix_whole(self, expr: sp.Expr, span: Span | None, what: str) -> int:
        """``expr`` as a whole number, with the values bound to the parameters it names: the
        batch schedule and places on it are fixed when the file is compiled."""
        substitutions = {}
        for symbol in expr.free_symbols:
            name = next((n for n, i in self.params.items() if i.symbol == symbol), None)
            if name is None:
                raise SchedlangError(f"{what} must be a number, not {expr}", span)
            substitutions[symbol] = self.fixed_value(name, span, what)
        value = sp.nsimplify(expr.xreplace(substitutions)) if substitutions else expr
        if not (value.is_number and value.is_integer and value >= 0):
            raise SchedlangError(f"{what} must be a whole number >= 0, not {value}", span)
        return int(value)

    def fixed_value(self, name: str, span: Span | None, what: str) -> sp.Expr:
        self.mark_read()
        if name in self.fixed:
            return self.fixed[name]
        info = self.params[name]
        if name in self.given:
            value = to_number(self.given[name], f"parameter '{name}'")
        elif info.default is not None:
            value = info.default.xreplace({s: self.fixed_value(n, span, what)
                                           for n, i in self.params.items()
                                           for s in [i.symbol] if s in info.default.free_symbols})
        else:
            raise SchedlangError(f"{what} uses parameter '{name}', which has no value", span,
                                 hint=f"the batch schedule and the places of segments on it are "
                                      f"fixed when the file is compiled: give '{name}' a default "
                                      f"or a value (-D {name}=...)")
        self.fixed[name] = value
        return value

    def call_on_clock(self, call: ClockCall, node: ir.Call) -> Segment:
        """``on_tokens(s)`` / ``on_samples(s)``: ``s``, a schedule counted in steps, on the clock
        of ``call.unit`` (the row's function says what that means)."""
        name, unit = call.name, call.unit
        if node.keywords or len(node.args) != 1:
            raise SchedlangError(f"{name}() takes one schedule", node.span,
                                 hint=f"e.g. {name}(linear(1e-3, 0, 10e9{unit}))")
        if not self.batches:
            raise SchedlangError(f"{name}() places a schedule on the {UNITS[unit]} clock of the "
                                 "file's batch schedule, and the file declares none", node.span,
                                 hint="declare it, e.g. `batch = 512`")
        segment = self.schedule_value(self.value(node.args[0]), node.args[0], "a schedule")
        if segment.clock is not None:
            raise SchedlangError(f"this schedule already counts {UNITS[segment.clock]}",
                                 node.args[0].span, hint=f"drop {name}()")
        self.refuse_amount(segment, node.args[0].span)
        return call.build(segment)

    def common_clock(self, operands: list[tuple[Segment, ir.Node]]) -> dict:
        """The clock (and its evaluation point) of a value computed from ``operands``, as
        ``Segment`` fields: numbers are neutral; a schedule or amount on the sample or token
        clock cannot meet one on another clock, or one read at another point."""
        clocks = {s.clock for s, _ in operands if s.clock is not None}
        if not clocks:
            return {}
        stepping = [n for s, n in operands if s.clock is None and (s.depends_on_step or s.finite)]
        if len(clocks) > 1 or stepping:
            culprit = stepping[0] if stepping else next(n for s, n in operands if s.clock is not None)
            raise SchedlangError("this mixes the step clock with the sample or token clock", culprit.span,
                                 hint="a schedule counts steps or tokens (samples) throughout; "
                                      "join schedules on different clocks with >>")
        points = {s.evaluation for s, _ in operands if s.clock is not None and s.depends_on_step}
        if len(points) > 1 and "steps" in points:
            culprit = next(n for s, n in operands if s.clock is not None and s.evaluation == "steps")
            raise SchedlangError("this combines a schedule counted in steps (cut at a count of "
                                 "samples or tokens by `for`) with one counted in samples or "
                                 "tokens", culprit.span, hint="join them with >> instead")
        if len(points) > 1:
            culprit = next(n for s, n in operands if s.clock is not None and s.evaluation == "after")
            raise SchedlangError("this combines a schedule that reads the token count after its "
                                 "step (OLMo-core's) with one that reads it before", culprit.span,
                                 hint="join them with >> instead")
        return {"clock": clocks.pop(), "evaluation": points.pop() if points else "before"}

    def call_clock(self, builtin: Builtin, units: list[tuple[str | None, Span]]) -> str | None:
        """The clock of a call from the units of the lengths it was given."""
        found = {unit for unit, _ in units}
        if found <= {None}:
            return None
        if len(found) > 1:
            counts = {None: "steps", **UNITS}
            first = units[0][0]
            other = next(span for unit, span in units if unit != first)
            raise SchedlangError(f"{builtin.name}() gets lengths in {counts[first]} and in "
                                 f"{counts[next(u for u, _ in units if u != first)]}", other,
                                 hint="give every length of one schedule in the same unit")
        return found.pop()

    def preset_clock(self, builtin: Builtin, units: list[tuple[str | None, Span]], own: str | None) -> None:
        """A preset counts what its framework counts: steps, or the clock it chose itself
        (``olmo_core.*(units="tokens")``); lengths written in another unit are refused."""
        wrong = [span for unit, span in units if unit is not None and unit != own]
        if not wrong:
            return
        counts = "steps" if own is None else UNITS[own]
        raise SchedlangError(f"{builtin.name}() counts {counts}, as its framework does", wrong[0],
                             hint=f"give its lengths in {counts}, or write the schedule with the "
                                  "built-ins (cosine, linear, ...), which take lengths in "
                                  "samples or tokens")

    def step_counted(self, segment: Segment, span: Span) -> Segment:
        """In a file with a batch schedule, a ``steps`` mark on a finite segment counted in steps
        that changes with the step: ``check`` says how many tokens it lasts (the #2609 trap)."""
        if not self.batches or segment.clock is not None or not segment.finite or \
                not segment.depends_on_step or any(m.kind == "steps" for m in segment.marks):
            return segment
        mark = Mark("steps", sp.Integer(0), segment.duration, span=span)
        return replace(segment, marks=(*segment.marks, mark))

    def refuse_amount(self, segment: Segment, span: Span) -> None:
        """An amount of samples or tokens (``10e9tok``) is a length, not a value."""
        if segment.clock is not None and not segment.depends_on_step and not segment.finite:
            raise SchedlangError(f"an amount of {UNITS[segment.clock]} is a length, not a value",
                                 span, hint="use it where a length goes, e.g. "
                                 "constant(1e-3, 10e9tok)")

    def refuse_clock(self, segment: Segment, span: Span, what: str) -> None:
        if segment.clock is not None:
            raise SchedlangError(f"{what} must count steps; this counts {UNITS[segment.clock]}",
                                 span, hint="only >> and `for` place schedules on the sample or "
                                 "token clock")
