"""``ir.Module`` to sympy: names resolved, calls checked, ``>>`` and ``for`` given meaning.

Lowering is the one place that knows both the source spans and the sympy
forms, so every error about *what* a program says (unknown names, wrong
arguments, a warmup with nothing after it, something after an infinite
schedule) is raised here, at the culprit's span.  Checks that need the whole
expression (closed form, finiteness, bound durations) run afterwards in
``check`` on the sympy tree alone.

This module is the entry (``lower``, ``lower_piece``, ``Lowered``) and the file's statements.
The ``Lowerer`` that does the work inherits its methods from one part per concern:
``lower_expressions`` (each node's value, the coercions), ``lower_calls`` (calls and their
arguments), ``lower_clock`` (the sample and token clocks) and ``lower_batch`` (the batch
schedule calls).
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass, field
from fractions import Fraction

import sympy as sp

from ..core.algebra import Segment
from ..core.clock import Clock
from ..errors import SchedlangError, Span
from ..library import stdlib
from ..library.clock_calls import CLOCK_CALLS
from ..library.stdlib import Builtin
from ..syntax import ir
from .lower_batch import BatchCallLowering
from .lower_calls import CallLowering, TimeScale
from .lower_clock import ClockLowering, Frame, Unplaced
from .lower_expressions import ExpressionLowering, Function, Known
from .params import PARAM_TYPES, ParamInfo, param_symbol, plain_symbol
from .run import RunLength


@dataclass
class Lowered:
    """What lowering found in a file, still symbolic in every parameter.

    A ``Lowered`` read from source also answers for any node of its syntax tree (``value``,
    ``segment``, ``constant_of``, ``argument``): ``duration_origin`` (``durations.relocate``)
    reads the value of each expression a fractional duration came from, and the exporters read
    argument values with every check and error lowering gives.  These are the only ways in: the
    ``Lowerer`` that did the work stays private to this module (and the parts it inherits).
    """

    params: dict[str, ParamInfo]
    schedules: dict[str, tuple[Segment, Span]]
    #: Every duration and period given: (steps, where, whether 0 is allowed — a length may be
    #: zero, SPEC §1; a period (``every``, ``period``) may not).
    durations: list[tuple[sp.Expr, Span, bool]] = field(default_factory=list)
    #: The run's batch schedule (``batch = ...``, SPEC §12), None when the file declares none.
    clock: Clock | None = None
    #: Parameters whose values the batch schedule or a segment's place on it was computed
    #: with: fixed when the file is compiled (a new value places the file again, ``placed``).
    fixed: dict[str, sp.Expr] = field(default_factory=dict)
    #: The run's length (``run = ...``, SPEC §14) as written, None when the file declares none.
    run: RunLength | None = None
    #: The syntax tree lowering read (None for a program built from sympy or traced Python).
    module: ir.Module | None = field(default=None, repr=False, compare=False)
    _lowerer: Lowerer | None = field(default=None, repr=False, compare=False)
    #: The walk of the file every placement of it starts from (``placed``).
    _walker: Lowerer | None = field(default=None, repr=False, compare=False)

    def placed(self, given: dict, clock: Clock | None = None, measured: list | None = None) -> Lowered:
        """The same file placed on the batch schedule with ``given`` (bound values, SPEC §12):
        the batch schedule built with them and every ``schedule`` with parts on the sample or
        token clock placed on it, without lowering the file again.  ``clock`` replaces the
        file's own batch schedule (another run's, ``Program.on_clock``); ``measured``: the
        measured form (``semantics.clock.place``).  Where the walk itself read the values or the
        clock (a schedule on the clock inside an expression, a ``let`` or a ``def``, placed where
        it is read; OLMo-core's lr factor), only the values that read them are computed again
        (``ClockLowering.recorded_value``): the walk's calls are not lowered again."""
        if self._walker is None:
            return self
        return self._walker.placed(given, clock, measured)

    def value(self, node: ir.Node):
        """The value of ``node``, an expression of ``module`` outside any ``def`` body, as lowering
        gives it: a ``Segment`` (a number or a schedule), a ``stdlib.Warmup``, a list or a condition.

        Names resolve to the file's parameters, ``let``s and schedules; an error (an unknown name,
        a bad argument) is the ``SchedlangError`` lowering raises, at the node's span.
        """
        return self._reader().value(node)

    def segment(self, node: ir.Node, expected: str = "a schedule") -> Segment:
        """``node``'s value as a ``Segment``; anything else is an error at ``node`` saying it
        expected ``expected`` (``"a number"``, ``"a schedule"``)."""
        reader = self._reader()
        return reader.schedule_value(reader.value(node), node, expected)

    def constant_of(self, value, node: ir.Node, what: str) -> sp.Expr:
        """``value`` (read from ``node``, e.g. an item of a list ``value`` gave) as a number constant
        in the step; ``what`` names it in the error when it is not one or depends on ``t``."""
        return self._reader().constant_of(value, node, what)

    def argument(self, builtin: Builtin, arg: stdlib.Arg, node: ir.Node):
        """The value of ``node`` given for ``arg`` of ``builtin``, checked and converted as a call
        of ``builtin`` converts it (a ``FLAG`` is a ``bool``, an ``OPTION`` its string, a
        ``DURATION`` a number of steps)."""
        return self._reader().argument(builtin, arg, node)

    def _reader(self) -> Lowerer:
        if self._lowerer is None:
            raise ValueError("this program was not lowered from source, so it has no syntax tree to read")
        return self._lowerer


def lower(module: ir.Module, known: dict[int, Known] | None = None, given: dict | None = None,
          clock: Clock | None = None, measured: list | None = None) -> Lowered:
    """``module`` in sympy; ``given`` holds the values ``compile(params=)`` binds, which the
    batch schedule and the places of segments on it are computed with (``Lowered.fixed``).
    ``clock`` replaces the file's own ``batch = ...``: the same text placed on another run's
    batch schedule (``schedlang resume`` on the token clock).  ``measured`` (a list): the
    measured form, segments on the sample or token clock reading the counts a class is given
    (``semantics.clock.place``; the counts where they end are added to the list)."""
    if any(isinstance(s, ir.BatchDecl) for s in module.statements):
        known = None  # pieces built from Python were checked off the run's clock (lower_piece)
    lowerer = Lowerer(module, known, given)
    lowerer._clock = lowerer.clock_given = clock
    lowerer.measured = measured
    return lowerer.run()


def lower_piece(module: ir.Module, node: ir.Node, known: dict[int, Known] | None = None) -> Known:
    """The value of ``node`` among the ``param`` statements of ``module``: how ``schedlang.build``
    checks each piece of a schedule as Python builds it, with this module's every check.
    Segments on the sample or token clock are checked but not placed: the run's batch
    schedule is not known yet (``lower`` places them, lowering the whole program again)."""
    lowerer = Lowerer(module, known)
    lowerer.place_clocks = False
    for stmt in module.statements:
        if isinstance(stmt, ir.Param):
            _refuse_clock_name(stmt)
            lowerer._param(stmt)
    value = lowerer.value(node)
    return Known(node, value, tuple(lowerer.durations),
                 {name: info.symbol for name, info in lowerer.params.items()})


class Lowerer(ExpressionLowering, CallLowering, ClockLowering, BatchCallLowering):
    """One file's lowering: the state every part reads, set here, and the file's statements;
    the rest of its methods are inherited from the parts (see ``ExpressionLowering``)."""

    def __init__(self, module: ir.Module, known: dict[int, Known] | None = None,
                 given: dict | None = None):
        self.module = module
        self.known = known or {}
        self.given = given or {}
        self.fixed: dict[str, sp.Expr] = {}
        self.batches = [s for s in module.statements if isinstance(s, ir.BatchDecl)]
        self.run_length: RunLength | None = None
        self._clock: Clock | None = None
        self.clock_given: Clock | None = None  # lower(clock=...): another run's batch schedule
        # the walk's record of each value and whether it read the bound values or the clock
        # (ClockLowering.recorded_value), which placing the file again computes anew
        self.frames: list[Frame] = []
        self.record: dict[tuple, tuple[ir.Node, object]] = {}
        self.replaying = False
        self.walking = False
        self.last_read = False  # whether the last value recorded read them
        self.read_statements: list[int] = []  # the lets and schedules whose values read them
        self.read_names: set[str] = set()  # their names
        self.read_outside = False  # read by a `param` or `run`: placing lowers the file again
        self.scope_reads: list[set[str]] = []  # per scope, the arguments whose values read them
        self.deferring: ir.Node | None = None  # the value of the `schedule` being walked
        self.run_span: Span | None = None  # the value of `run = ...` in tokens (its check)
        self._lowering_batch = False
        self._olmo_batches = None  # (batch sizes, schedule, units) of olmo_core.batch_size_schedule
        self.place_clocks = True
        self.measured: list | None = None  # lower(measured=...): the measured form
        # per call being lowered: the clock unit (None: steps) of each length given
        self.length_units: list[list[tuple[str | None, Span]]] = []
        # every name the file defines, to tell "used before defined" from "unknown"
        self.later = {s.name: s.span for s in module.statements if hasattr(s, "name")}
        self.statements = {s.name: s for s in module.statements if hasattr(s, "name")}
        self.defining: str | None = None  # the statement being lowered, to name a cycle of lets
        self.env: dict[str, object] = {}
        self.defined_at: dict[str, Span] = {}
        self.params: dict[str, ParamInfo] = {}
        self.schedules: dict[str, tuple[Segment, Span]] = {}
        self.durations: list[tuple[sp.Expr, Span, bool]] = []
        self.calling: list[str] = []  # user functions being expanded, to refuse recursion
        self.expanded = 0  # IR nodes that calls of user functions expanded to (MAX_DEF_EXPANSION)
        self.scopes: list[dict[str, object]] = []
        # scale(...) in effect, outermost first; whether a warmup duration is being lowered
        self.time_scales: list[TimeScale] = []
        self.in_warmup = False
        self.preset_scales_warmup = False

    # -- statements ------------------------------------------------------------------

    def run(self) -> Lowered:
        """The walk of the file, once: every statement lowered, symbolic in the parameters; the
        batch schedule and the ``schedule``s on the sample or token clock are then placed with
        this lowering's values (``place_on``), and again with others by ``Lowered.placed``."""
        self.walking = True
        try:
            self.walk()
        finally:
            self.walking = False
        return self.place_on(self.given, self.clock_given, self.measured, again=False)

    def walk(self) -> None:
        for index, stmt in enumerate(self.module.statements):
            if isinstance(stmt, ir.BatchDecl):
                self._batch_decl(stmt)
            elif isinstance(stmt, ir.RunDecl):
                self._run(stmt)
            else:
                self._definition(stmt, index)
        self.defining = None
        self._where_clauses()
        if not self.schedules:
            raise SchedlangError("the file defines no schedule", self.module.span,
                                 hint="add `schedule lr = ...`")

    def _batch_decl(self, stmt: ir.BatchDecl) -> None:
        """``batch = ...``, declared once: built when the file is placed (``place_on``), with the
        bound values."""
        if stmt is not self.batches[0]:
            raise SchedlangError("the file declares `batch` twice", stmt.span,
                                 hint=f"first declared at {self.batches[0].span.location}")

    def _definition(self, stmt: ir.Param | ir.Let | ir.Def | ir.ScheduleDecl, index: int) -> None:
        """A statement that defines a name (``param``, ``let``, ``def``, ``schedule``), which no
        statement before it defines and which is not ``t`` or a clock's unit; ``index`` is its
        place in the file (``replay`` computes it again by it)."""
        self.defining = stmt.name
        if stmt.name in self.env or stmt.name in self.defined_at:
            raise SchedlangError(f"'{stmt.name}' is already defined", stmt.span,
                                 hint=f"first defined at {self.defined_at[stmt.name].location}")
        if stmt.name == "t":
            raise SchedlangError("'t' is the step and cannot be redefined", stmt.span)
        _refuse_clock_name(stmt)
        if isinstance(stmt, ir.Param):
            self._param(stmt)
        elif isinstance(stmt, ir.Def):
            self.env[stmt.name] = Function(stmt)
        else:
            self._statement(stmt, index)
        self.defined_at[stmt.name] = stmt.span

    def _statement(self, stmt: ir.Let | ir.ScheduleDecl, index: int) -> None:
        """A ``let``'s or a ``schedule``'s value, in a file with a batch schedule under a
        ``Frame`` of its own: one whose value read the bound values or the clock (a placed chain
        inside an expression, a ``let`` or a ``def``; OLMo-core's lr factor) is noted, and
        computed again from the walk's record where the file is placed (``replay``)."""
        frame = Frame((index,))
        if self.batches:
            self.frames.append(frame)
        try:
            if isinstance(stmt, ir.Let):
                self.env[stmt.name] = self.value(stmt.value)
            else:
                value = self._schedule(stmt)
                self.schedules[stmt.name] = (value, stmt.span)
                self.env[stmt.name] = value
        finally:
            if self.batches:
                self.frames.pop()
        if frame.read and not self.replaying:
            self.read_statements.append(index)
            self.read_names.add(stmt.name)

    def _schedule(self, stmt: ir.ScheduleDecl):
        """A ``schedule``'s value: a segment, or ``Unplaced`` where its parts count samples or
        tokens (placed once the parameters are bound)."""
        self.deferring = stmt.value  # a chain on the clock is placed after binding
        try:
            value = self.value(stmt.value)
        finally:
            self.deferring = None
        if isinstance(value, Unplaced):
            return value
        segment = self.schedule_value(value, stmt.value, "a schedule")
        self.refuse_amount(segment, stmt.value.span)
        if not isinstance(stmt.value, ir.Seq):
            segment = self.step_counted(segment, stmt.value.span)
        if segment.clock is None:
            return segment
        self.deferring = stmt.value
        try:
            return self.place_later(stmt.value, "resolve", segment, stmt.value.span)
        finally:
            self.deferring = None

    # -- placing on the batch schedule (SPEC §12) -------------------------------------

    def placed(self, given: dict, clock: Clock | None, measured: list | None) -> Lowered:
        """``Lowered.placed``: this walk placed with ``given`` (on ``clock``, in the measured form
        where ``measured`` is a list); the file is lowered again only where the walk read the
        bound values outside a ``let`` or ``schedule`` (``read_outside``: in a ``param``'s
        default, the ``run`` or a ``where``, which read no clock in any file that compiles)."""
        if self.read_outside:
            return lower(self.module, given=given, clock=clock, measured=measured)
        return self.place_on(given, clock, measured, again=True)

    def place_on(self, given: dict | None, clock: Clock | None, measured: list | None,
                 again: bool) -> Lowered:
        """The walk's result placed with ``given`` by a copy of this ``Lowerer`` (which then
        answers ``Lowered.value`` with those values): the batch schedule built (or ``clock``),
        the statements whose values read it computed again (``again``; not for the walk's own
        values, which ``run`` places), then every ``Unplaced`` schedule placed on it."""
        placer = copy.copy(self)
        placer.given = given or {}
        placer.measured = measured
        placer.durations = list(self.durations)
        placer.length_units, placer.frames, placer.scopes, placer.scope_reads = [], [], [], []
        placer.calling, placer.time_scales, placer.expanded = [], [], 0
        if again:  # built anew with these values (or the clock given)
            placer.fixed, placer._clock, placer._olmo_batches = {}, clock, None
            placer.env, placer.schedules = dict(self.env), dict(self.schedules)
        else:  # the walk's own values and clock (lower(clock=...) set it)
            placer.fixed = dict(self.fixed)
        return placer.place_statements(self, again)

    def place_statements(self, walker: Lowerer, again: bool) -> Lowered:
        if self.batches:
            self.clock_at(self.batches[0].span)  # its errors before any placement's
        if self.run_span is not None and self.clock_at(self.run_span).seq_len is None:
            raise SchedlangError("a run counted in tokens needs the tokens per sample", self.run_span,
                                 hint="declare `param seq_len: int = 4096`, or give the run in sp or steps")
        if again:
            self.replay()
        schedules = {name: (self.placed_value(value), span) for name, (value, span) in self.schedules.items()}
        return Lowered(self.params, schedules, self.durations, self._clock, self.fixed, self.run_length,
                       self.module, self, walker)

    def replay(self) -> None:
        """The statements whose values read the bound values or the clock, computed again with
        this placement's, in the file's order: each value that read none is the walk's
        (``recorded_value``), so only what depends on the placement is computed.  Their lengths
        are the walk's already (``durations``)."""
        durations = self.durations
        self.replaying, self.durations = True, []
        try:
            for index in self.read_statements:
                stmt = self.module.statements[index]
                self.defining = stmt.name
                self._statement(stmt, index)
        finally:
            self.replaying, self.durations, self.defining = False, durations, None

    def _run(self, stmt: ir.RunDecl) -> None:
        """``run = N``: a number of steps, or an amount on the run's clock (``4e12tok``)."""
        if self.run_length is not None:
            raise SchedlangError("the file declares `run` twice", stmt.span,
                                 hint=f"first declared at {self.run_length.span.location}")
        segment = self.schedule_value(self.value(stmt.value), stmt.value, "a length")
        if segment.depends_on_step or segment.finite:
            raise SchedlangError("the run's length is a number of steps (or of tokens or samples), "
                                 "not a schedule", stmt.value.span,
                                 hint="e.g. run = 10_000, run = total, or run = 4e12tok")
        if segment.clock == "tok":  # its tokens per sample are checked once the file is placed
            if not self.batches and self._clock is None:
                self.clock_at(stmt.value.span)  # raises: the file declares no batch schedule
            self.run_span = stmt.value.span
        self.run_length = RunLength(segment.expr, segment.clock, stmt.span)

    def _where_clauses(self) -> None:
        """Lower every ``where`` in plain symbols (see ``ParamInfo``); they may name any parameter."""
        saved, known = dict(self.env), self.known
        self.env.update({name: Segment(plain_symbol(name, info.type)) for name, info in self.params.items()})
        self.known = {}  # known values are in the parameters' own symbols
        try:
            for stmt in self.module.statements:
                if isinstance(stmt, ir.Param) and stmt.where is not None:
                    self.params[stmt.name].where = self.condition(stmt.where)
        finally:
            self.env, self.known = saved, known

    def _param(self, stmt: ir.Param) -> None:
        if stmt.type not in PARAM_TYPES:
            raise SchedlangError(f"unknown parameter type '{stmt.type}'", stmt.type_span,
                                 hint="use int (whole numbers, e.g. steps), float, or group (a float each "
                                      "param group may override)")
        positive = stmt.where is not None and _says_positive(stmt.where, stmt.name, self._nonnegative)
        symbol = param_symbol(stmt.name, stmt.type, positive)
        default = None
        if stmt.default is not None:
            default = self.constant(stmt.default, "a parameter default")
        self.env[stmt.name] = Segment(symbol)
        # The `where` clause may name parameters declared further down: see run().
        self.params[stmt.name] = ParamInfo(stmt.name, stmt.type, symbol, default, None, stmt.span)

    @functools.cached_property
    def _nonnegative(self) -> frozenset[str]:
        """Parameters known to be >= 0 whatever their values: every int (SPEC: ints are >= 0)
        and every float whose own `where` says it is positive."""
        params = [s for s in self.module.statements if isinstance(s, ir.Param)]
        return frozenset(s.name for s in params if s.type == "int" or (
            s.where is not None and _says_positive(s.where, s.name, frozenset())))


def _refuse_clock_name(stmt: ir.Node) -> None:
    """A name the run's clock calls (``on_samples``, ``stages``; ``library/clock_calls``) is
    not a program's: a ``def`` of it would hide the call, a ``param`` of it reads as one."""
    if stmt.name in CLOCK_CALLS:
        what = type(stmt).__name__.removesuffix("Decl").lower()
        raise SchedlangError(f"'{stmt.name}' is the language's {stmt.name}(...), a call of the run's "
                             f"clock, and cannot name a {what}", stmt.span,
                             hint=f"name it otherwise, e.g. '{stmt.name}_'")


def _says_positive(node: ir.Node, name: str, nonnegative: frozenset[str]) -> bool:
    """Whether a `where` clause states ``name > 0`` (or ``0 < name``), directly or in an `and`,
    or ``name > other`` for a parameter ``other`` in ``nonnegative`` (``total > warm`` with an
    int ``warm``: the clause is enforced on every value, so ``total`` is positive)."""
    if isinstance(node, ir.BoolOp) and node.op == "and":
        return _says_positive(node.left, name, nonnegative) or _says_positive(node.right, name, nonnegative)
    if isinstance(node, ir.Compare) and len(node.ops) == 1:
        left, right = node.operands
        if node.ops[0] == "<":
            left, right = right, left
        elif node.ops[0] != ">":
            return False
        if isinstance(left, ir.Name) and left.id == name:
            if isinstance(right, ir.Number):
                return right.value >= Fraction(0)
            return isinstance(right, ir.Name) and right.id != name and right.id in nonnegative
    return False
