"""``ir.Module`` to sympy: names resolved, calls checked, ``>>`` and ``for`` given meaning.

Lowering is the one place that knows both the source spans and the sympy
forms, so every error about *what* a program says (unknown names, wrong
arguments, a warmup with nothing after it, something after an infinite
schedule) is raised here, at the culprit's span.  Checks that need the whole
expression (closed form, finiteness, bound durations) run afterwards in
``check`` on the sympy tree alone.
"""

from __future__ import annotations

import functools
import math
import operator
from dataclasses import dataclass, field, replace
from fractions import Fraction

import sympy as sp

from ..core.algebra import Mark, Segment, combine, hold_for, pointwise, sequence, tau
from ..core.clock import UNITS, Clock
from ..core.special import geometric
from ..errors import SchedlangError, Span, suggest
from ..library import stdlib
from ..library.stdlib import REQUIRED, Builtin, Kind, Warmup
from ..limits import MAX_DEF_EXPANSION, MAX_SEGMENTS, MAX_STEP
from ..syntax import ir
from .clock import BatchValue, place, resolve_single, stages_table
from .params import PARAM_TYPES, ParamInfo, param_symbol, plain_symbol, to_number
from .steps import check_steps, refuse_huge_step, zero_length_call

#: Time units (Composer style) and the parameter each one needs to become steps.
TIME_UNITS = {
    "ba": (None, "batches, i.e. optimizer steps"),
    "ep": ("steps_per_epoch", "epochs"),
    "dur": ("max_duration", "fractions of the whole run"),
    "sp": ("batch_size", "samples"),
    "tok": ("tokens_per_batch", "tokens"),
}

#: What each parameter of TIME_UNITS counts, for the hint that asks for it.
PARAM_MEANING = {"steps_per_epoch": "steps in an epoch", "max_duration": "the run's length in steps",
                 "batch_size": "samples per step", "tokens_per_batch": "tokens per step"}

#: Preset arguments that are warmup lengths: scale() leaves them alone unless scale_warmup.
WARMUP_ARGS = ("t_warmup", "warmup_steps", "num_warmup_steps")
#: List arguments that hold steps: scale() rescales their items.
STEP_LISTS = ("milestones", "boundaries")


@dataclass(frozen=True)
class TimeScale:
    """An enclosing ``scale(schedule, ratio, scale_warmup)``."""

    ratio: sp.Expr
    scale_warmup: bool
    span: Span


@dataclass(frozen=True)
class Cond:
    """A condition: a sympy boolean (``true``/``false`` literals included)."""

    value: sp.Basic


@dataclass(frozen=True)
class ListValue:
    items: tuple
    spans: tuple[Span, ...]


@dataclass(frozen=True)
class Text:
    value: str


@dataclass(frozen=True)
class Function:
    """A user ``def``: substituted at each call; never recursive."""

    node: ir.Def


@dataclass
class Lowered:
    """What lowering found in a file, still symbolic in every parameter.

    A ``Lowered`` read from source also answers for any node of its syntax tree (``value``,
    ``segment``, ``constant_of``, ``argument``): ``duration_origin`` (``durations.relocate``)
    reads the value of each expression a fractional duration came from, and the exporters read
    argument values with every check and error lowering gives.  These are the only ways in: the
    ``Lowerer`` that did the work stays private to this module.
    """

    params: dict[str, ParamInfo]
    schedules: dict[str, tuple[Segment, Span]]
    #: Every duration and period given: (steps, where, whether 0 is allowed — a length may be
    #: zero, SPEC §1; a period (``every``, ``period``) may not).
    durations: list[tuple[sp.Expr, Span, bool]] = field(default_factory=list)
    #: The run's batch schedule (``batch = ...``, SPEC §12), None when the file declares none.
    clock: Clock | None = None
    #: Parameters whose values the batch schedule or a segment's place on it was computed
    #: with: fixed when the file is compiled (a new value lowers the file again).
    fixed: dict[str, sp.Expr] = field(default_factory=dict)
    #: The syntax tree lowering read (None for a program built from sympy or traced Python).
    module: ir.Module | None = field(default=None, repr=False, compare=False)
    _lowerer: Lowerer | None = field(default=None, repr=False, compare=False)

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
          clock: Clock | None = None) -> Lowered:
    """``module`` in sympy; ``given`` holds the values ``compile(params=)`` binds, which the
    batch schedule and the places of segments on it are computed with (``Lowered.fixed``).
    ``clock`` replaces the file's own ``batch = ...``: the same text placed on another run's
    batch schedule (``schedlang resume`` on the token clock)."""
    if any(isinstance(s, ir.BatchDecl) for s in module.statements):
        known = None  # pieces built from Python were checked off the run's clock (lower_piece)
    lowerer = Lowerer(module, known, given)
    lowerer._clock = clock
    lowered = lowerer.run()
    lowered.module, lowered._lowerer = module, lowerer
    return lowered


def lower_piece(module: ir.Module, node: ir.Node, known: dict[int, Known] | None = None) -> Known:
    """The value of ``node`` among the ``param`` statements of ``module``: how ``schedlang.build``
    checks each piece of a schedule as Python builds it, with this module's every check.
    Segments on the sample or token clock are checked but not placed: the run's batch
    schedule is not known yet (``lower`` places them, lowering the whole program again)."""
    lowerer = Lowerer(module, known)
    lowerer.place_clocks = False
    for stmt in module.statements:
        if isinstance(stmt, ir.Param):
            lowerer._param(stmt)
    value = lowerer.value(node)
    return Known(node, value, tuple(lowerer.durations),
                 {name: info.symbol for name, info in lowerer.params.items()})


@dataclass(frozen=True)
class Known:
    """A node whose value is already known (``schedlang.build`` lowers each piece once, as it
    is built): reused when the node appears again, outside ``scale()`` (which changes what its
    durations mean) and with the same parameter symbols; its durations are recorded again."""

    node: ir.Node
    value: object
    durations: tuple
    symbols: dict


class Lowerer:
    def __init__(self, module: ir.Module, known: dict[int, Known] | None = None,
                 given: dict | None = None):
        self.module = module
        self.known = known or {}
        self.given = given or {}
        self.fixed: dict[str, sp.Expr] = {}
        self.batches = [s for s in module.statements if isinstance(s, ir.BatchDecl)]
        self._clock: Clock | None = None
        self._lowering_batch = False
        self._olmo_batches = None  # (batch sizes, schedule, units) of olmo_core.batch_size_schedule
        self.place_clocks = True
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
        statements = self.module.statements
        for stmt in statements:
            if isinstance(stmt, ir.BatchDecl):
                if stmt is not self.batches[0]:
                    raise SchedlangError("the file declares `batch` twice", stmt.span,
                                         hint=f"first declared at {self.batches[0].span.location}")
                self.clock_at(stmt.span)
                continue
            self.defining = stmt.name
            if stmt.name in self.env or stmt.name in self.defined_at:
                raise SchedlangError(f"'{stmt.name}' is already defined", stmt.span,
                                     hint=f"first defined at {self.defined_at[stmt.name].location}")
            if stmt.name == "t":
                raise SchedlangError("'t' is the step and cannot be redefined", stmt.span)
            if isinstance(stmt, ir.Param):
                self._param(stmt)
            elif isinstance(stmt, ir.Let):
                self.env[stmt.name] = self.value(stmt.value)
            elif isinstance(stmt, ir.Def):
                self.env[stmt.name] = Function(stmt)
            else:
                value = self.value(stmt.value)
                segment = self.schedule_value(value, stmt.value, "a schedule")
                self.refuse_amount(segment, stmt.value.span)
                if not isinstance(stmt.value, ir.Seq):
                    segment = self.step_counted(segment, stmt.value.span)
                segment = resolve_single(segment, stmt.value.span, self.clock_at, self.fix_whole)
                self.schedules[stmt.name] = (segment, stmt.span)
                self.env[stmt.name] = segment
            self.defined_at[stmt.name] = stmt.span
        self.defining = None
        self._where_clauses()
        if not self.schedules:
            raise SchedlangError("the file defines no schedule", self.module.span,
                                 hint="add `schedule lr = ...`")
        return Lowered(self.params, self.schedules, self.durations, self._clock, self.fixed)

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

    # -- values ----------------------------------------------------------------------

    def value(self, node: ir.Node):
        hit = self._known(node)
        if hit is not None:
            self.durations.extend(hit.durations)
            return hit.value
        method = getattr(self, f"_{type(node).__name__.lower()}")
        return method(node)

    def _known(self, node: ir.Node) -> Known | None:
        if not self.known or self.time_scales or self.scopes:
            return None
        hit = self.known.get(id(node))
        if hit is None or hit.node is not node:
            return None
        for name, symbol in hit.symbols.items():
            info = self.params.get(name)
            if info is None or info.symbol != symbol:
                return None
        return hit

    def _number(self, node: ir.Number):
        return Segment(sp.Rational(node.value.numerator, node.value.denominator))

    def _duration(self, node: ir.Duration):
        _, meaning = TIME_UNITS[node.unit]
        if node.unit != "dur" and node.value.denominator != 1:
            raise SchedlangError(f"'{node.text}' is not a whole number of {meaning}", node.span,
                                 hint="only 'dur' takes fractions, e.g. 0.3dur")
        if node.unit in UNITS and self.batches:  # an amount on the sample or token clock
            if self.time_scales:
                raise SchedlangError(f"scale() rescales steps; '{node.text}' is on the {meaning} "
                                     "clock of the file's `batch`", node.span,
                                     hint="write the scaled length in tokens instead")
            return Segment(sp.Integer(node.value.numerator), clock=node.unit)
        return Segment(self.time_in_steps(node.value, node.unit, node.text, node.span))

    def time_in_steps(self, value: Fraction, unit: str, text: str, span: Span,
                      context: str = "") -> sp.Expr:
        """A Composer-style time (``500ba``, ``2ep``, ``0.3dur``) as a number of steps."""
        param, meaning = TIME_UNITS[unit]
        amount = sp.Rational(value.numerator, value.denominator)
        if param is None:
            return self.scaled(amount)
        if param not in self.params:
            raise SchedlangError(f"{context}'{text}' counts {meaning}, but the file declares no "
                                 f"'{param}' parameter", span,
                                 hint=f"add `param {param}: int` ({PARAM_MEANING[param]})"
                                      + (", or declare the run's batch (`batch = ...`, docs/tokens.md)"
                                         if unit in UNITS else ""))
        size = self.params[param].symbol
        if unit == "dur":  # against the run as scaled by every scale(), warmups included (Composer)
            return sp.floor(amount * self.scaled(size, self.time_scales))
        if unit == "ep":
            return self.scaled(sp.floor(amount * size))
        return sp.floor(self.scaled(amount) / size)

    def _string(self, node: ir.String):
        return Text(node.value)

    def _bool(self, node: ir.Bool):
        return Cond(sp.true if node.value else sp.false)

    def _list(self, node: ir.List):
        return ListValue(tuple(self.value(i) for i in node.items), tuple(i.span for i in node.items))

    def _name(self, node: ir.Name):
        if node.id == "t":
            if self.time_scales:
                raise SchedlangError("scale() rescales durations, and `t` used directly here has none",
                                     node.span, hint="give times as durations (schedule lengths, `for`, "
                                                     "500ba); stretch(schedule, factor) scales t itself")
            return Segment(tau)
        for scope in reversed(self.scopes):
            if node.id in scope:
                return scope[node.id]
        if node.id in self.env:
            found = self.env[node.id]
            if isinstance(found, Function):
                raise SchedlangError(f"'{node.id}' is a function; call it with arguments", node.span,
                                     hint=f"{node.id}({', '.join(found.node.params)})")
            return found
        if node.id in stdlib.CONSTANTS:
            return Segment(stdlib.CONSTANTS[node.id])
        if node.id in stdlib.SCHEDULES or node.id in stdlib.MATH:
            raise SchedlangError(f"'{node.id}' is a function; call it with arguments", node.span,
                                 hint=f"e.g. {_signature(node.id)}")
        raise self.unknown(node)

    def unknown(self, node: ir.Name) -> SchedlangError:
        if node.id in stdlib.DATA_DEPENDENT:
            return SchedlangError(f"a schedule cannot depend on '{node.id}'", node.span,
                                  hint=stdlib.DATA_DEPENDENT[node.id])
        if node.id in self.later:
            cycle = self._cycle(node.id)
            if cycle and node.id == self.defining:
                return SchedlangError(f"'{node.id}' is defined in terms of itself", node.span,
                                      hint="a definition cannot use its own name; write its value out")
            if cycle:
                names = [f"'{n}'" for n in cycle[:-1]]
                listed = ", ".join(names[:-1]) + " and " + names[-1]
                return SchedlangError(
                    f"{listed} are defined in terms of each other (a cycle)", node.span,
                    hint=f"{' -> '.join(cycle)}: each needs the next one first, so no order works; "
                         "write one of them without the others")
            return SchedlangError(f"'{node.id}' is used before it is defined", node.span,
                                  hint=f"it is defined at {self.later[node.id].location}; "
                                       "move that definition up")
        if "." in node.id:
            from ..library.presets import PRESETS  # lazy: presets (0.1 s), on first use

            known = [*PRESETS.keys(), *BATCH_CALLS, *BATCH_SCHEDULES]
        else:
            known = [*self.env, *stdlib.SCHEDULES, *stdlib.MATH, *stdlib.CONSTANTS, "t", *ON_CLOCK, "stages",
                     *(k for s in self.scopes for k in s)]
        hint, fix = suggest(node.id, known, node.span)
        if hint is None and "." not in node.id:
            hint = "schedules may use t, parameters, let-names and the standard library"
        return SchedlangError(f"unknown name '{node.id}'", node.span, hint=hint, code="unknown-name", fix=fix)

    def _cycle(self, name: str) -> list[str] | None:
        """``[defining, name, ..., defining]`` when ``name`` (defined later) needs, directly or
        through other later definitions, the statement being lowered: moving it up cannot help."""
        if self.defining is None:
            return None
        paths, seen = [[self.defining, name]], {name}
        while paths:
            path = paths.pop(0)
            statement = self.statements.get(path[-1])
            for used in _names_used(statement) if statement is not None else ():
                if used == self.defining:
                    return [*path, used]
                if used in self.later and used not in self.defined_at and used not in seen:
                    seen.add(used)
                    paths.append([*path, used])
        return None

    def _binop(self, node: ir.BinOp):
        left = self.schedule_value(self.value(node.left), node.left, "a number")
        right = self.schedule_value(self.value(node.right), node.right, "a number")
        clock = self.common_clock([(left, node.left), (right, node.right)])
        a, b = left.held(), right.held()
        if node.op == "/" and b == 0:
            raise SchedlangError("division by zero", node.right.span)
        if node.op == "**":
            if a == 0 and b.is_number and b.is_negative:
                raise SchedlangError("zero to a negative power", node.span)
            _refuse_huge_power(a, b, node.span)
        return Segment(pointwise(_BINARY[node.op], a, b), combine(left, right), **clock)

    def _unary(self, node: ir.Unary):
        operand = self.schedule_value(self.value(node.operand), node.operand, "a number")
        return operand if node.op == "+" else Segment(pointwise(operator.neg, operand.expr),
                                                         operand.duration, clock=operand.clock,
                                                         evaluation=operand.evaluation)

    def _compare(self, node: ir.Compare):
        ops = {"<": sp.Lt, "<=": sp.Le, ">": sp.Gt, ">=": sp.Ge, "==": sp.Eq, "!=": sp.Ne}
        segments = [self.schedule_value(self.value(o), o, "a number") for o in node.operands]
        self.common_clock(list(zip(segments, node.operands)))
        exprs = [s.held() for s in segments]
        parts = [ops[op](a, b) for op, a, b in zip(node.ops, exprs, exprs[1:])]
        return Cond(sp.And(*parts))

    def _boolop(self, node: ir.BoolOp):
        left, right = self.condition(node.left), self.condition(node.right)
        return Cond(sp.And(left, right) if node.op == "and" else sp.Or(left, right))

    def _not(self, node: ir.Not):
        return Cond(sp.Not(self.condition(node.operand)))

    def _if(self, node: ir.If):
        cond = self.condition(node.cond)
        then = self.schedule_value(self.value(node.then), node.then, "a number")
        other = self.schedule_value(self.value(node.other), node.other, "a number")
        if cond == sp.true:
            return then
        if cond == sp.false:
            return other
        clock = self.common_clock([(then, node.then), (other, node.other),
                                   (Segment(sp.Piecewise((0, cond), (1, True))), node.cond)])
        expr = sp.Piecewise((then.held(), cond), (other.held(), True))
        return Segment(expr, combine(then, other, Segment(sp.Piecewise((0, cond), (1, True)))),
                       **clock)

    def _for(self, node: ir.For):
        body = self.schedule_value(self.value(node.body), node.body, "a schedule")
        self.refuse_amount(body, node.body.span)
        self.length_units.append([])
        try:
            steps = self.steps(node.steps, zero_ok=True)
            ((unit, _),) = self.length_units[-1]
        finally:
            self.length_units.pop()
        if unit != body.clock and (body.clock is not None or body.depends_on_step):
            counts = "steps" if body.clock is None else UNITS[body.clock]
            raise SchedlangError(f"this schedule counts {counts}, so its length must too",
                                 node.steps.span, hint="give `for` a length in the schedule's own "
                                 "units, or sequence the two clocks with >>")
        held = hold_for(body, steps)
        marks = tuple(replace(m, span=node.steps.span) if m.kind == "cut" and m.span is None else m
                      for m in held.marks)
        return replace(held, marks=marks, clock=unit,
                       evaluation=body.evaluation if unit == body.clock else "before")

    def _seq(self, node: ir.Seq):
        parts = flatten_seq(node, stop=lambda n: self._known(n) is not None)
        if len(parts) > MAX_SEGMENTS:
            raise SchedlangError(f"this sequence joins {len(parts)} schedules with >>; schedlang takes "
                                 f"at most {MAX_SEGMENTS}", parts[MAX_SEGMENTS].span,
                                 hint="use a formula (step, multistep, cycle) for a repeating pattern")
        values = [(self.value(p), p) for p in parts]
        segments: list[tuple[Segment, ir.Node]] = []
        for i, (value, part) in enumerate(values):
            if isinstance(value, Warmup):
                if i + 1 == len(values):
                    raise SchedlangError("a warmup must be followed by `>>` and the schedule it "
                                         "warms up to", part.span)
                following, following_node = values[i + 1]
                target = self.schedule_value(following, following_node, "a schedule")
                value = self.warmup_segment(value, target.start_value(), part)
                # For `check`: what follows a warmup should move on from its peak at once.
                mark = Mark("warmup", value.duration, target.start_value(), span=following_node.span)
                value = replace(value, marks=(*value.marks, mark))
            segments.append((self.schedule_value(value, part, "a schedule"), part))
        result, _ = segments[0]
        for segment, part in segments[:-1]:
            if segment.duration is None:
                raise SchedlangError("nothing can follow an infinite schedule", part.span,
                                     hint="give it a length with `for N`, e.g. `(...) for 1000`")
        if len(segments) == 1:
            return result
        for segment, part in segments:
            self.refuse_amount(segment, part.span)
        segments = [(self.step_counted(s, p.span) if not _in_batches(p) else s, p) for s, p in segments]
        if self.place_clocks and any(segment.clock for segment, _ in segments):
            placed = place([(s, p.span) for s, p in segments], self.clock_at(node.span), self.fix_whole)
            segments = [(s, p) for s, (_, p) in zip(placed, segments)]
        return sequence(*(segment for segment, _ in segments), spans=[part.span for _, part in segments],
                        jumps=_jumps(node, len(parts)))

    def warmup_segment(self, warm: Warmup, target: sp.Expr, node: ir.Node) -> Segment:
        if warm.shape == "exp" and (_not_positive(warm.start) or _not_positive(target)):
            raise SchedlangError("an exp warmup needs a positive start and a positive target",
                                 node.span, hint="give start=..., e.g. warmup(exp, 500, start=1e-6)")
        return warm.ramp_to(target)

    # -- calls -----------------------------------------------------------------------

    def _call(self, node: ir.Call):
        name = node.func.id
        # Calls look up functions only: `param warmup` does not hide `warmup(...)`.
        found = self.env.get(name)
        if isinstance(found, Function):
            return self.call_user(found, node)
        # `exp(x)` is the math function; `exp(v0, rate, n)` the decay schedule.
        if name in stdlib.MATH and (name != "exp" or (len(node.args) == 1 and not node.keywords)):
            return self.call_math(node)
        if name == "scale":
            return self.call_scale(node)
        if name in BATCH_CALLS:
            return self.call_batch(node)
        if name in ON_CLOCK:
            return self.call_on_clock(node)
        if name in BATCH_SCHEDULES:
            return BATCH_SCHEDULES[name](self, node)
        if name in stdlib.SCHEDULES:
            return self.call_builtin(stdlib.SCHEDULES[name], node)
        if "." in name:
            from ..library.presets import PRESETS, Rejected  # lazy: presets (0.1 s), on first use

            preset = PRESETS.get(name)
            if isinstance(preset, Rejected):
                raise SchedlangError(f"{name} is not a closed-form schedule", node.func.span,
                                     hint=preset.reason)
            if preset is not None:
                return self.call_builtin(preset, node)
        if name in stdlib.CONSTANTS or name == "t" or name in self.env or \
                any(name in s for s in self.scopes):
            raise SchedlangError(f"'{name}' is not a function", node.func.span)
        raise self.unknown(node.func)

    def call_math(self, node: ir.Call):
        name = node.func.id
        if node.keywords:
            raise SchedlangError(f"{name}() takes no keyword arguments", node.keywords[0].span)
        arity = stdlib.MATH_ARITY[name]
        count = len(node.args)
        if (arity is None and count < 2) or (arity is not None and count != arity):
            want = "at least 2 arguments" if arity is None else f"{arity} argument" + "s" * (arity > 1)
            raise SchedlangError(f"{name}() takes {want}, got {count}", node.span,
                                 hint=f"e.g. {_signature(name)}")
        args = [self.schedule_value(self.value(a), a, "a number") for a in node.args]
        return Segment(pointwise(stdlib.MATH[name], *(a.held() for a in args)), combine(*args))

    def call_scale(self, node: ir.Call):
        """``scale(schedule, ratio, scale_warmup=false)``: Composer's scale_schedule_ratio.

        Every duration inside ``schedule`` (schedule lengths, ``for``, milestones,
        time literals) becomes ``floor(duration * ratio)``, as Composer's
        ``_convert_time`` does with ``int(value * ssr)``; ``dur`` times resolve
        against ``floor(max_duration * ratio)``, the Trainer's scaled run.
        Warmup durations (``warmup(shape, n)``, preset arguments named
        ``t_warmup`` / ``warmup_steps`` / ``num_warmup_steps``) keep their length
        unless ``scale_warmup`` is true here or on the preset.
        """
        builtin = stdlib.SCHEDULES["scale"]
        given = self.bind_arguments(builtin, node)
        for name in ("schedule", "ratio"):
            if name not in given:
                raise SchedlangError(f"scale() is missing '{name}'", node.span,
                                     hint=f"signature: {builtin.signature()}")
        spec = {a.name: a for a in builtin.args}
        ratio = self.constant(given["ratio"], "argument 'ratio' of scale()")
        if ratio.is_number and not ratio.is_positive:
            raise SchedlangError(f"the ratio of scale() must be positive, not {ratio}", given["ratio"].span)
        scale_warmup = False
        if "scale_warmup" in given:
            scale_warmup = self.argument(builtin, spec["scale_warmup"], given["scale_warmup"])
        self.time_scales.append(TimeScale(ratio, scale_warmup, node.span))
        try:
            segment = self.schedule_value(self.value(given["schedule"]), given["schedule"], "a schedule")
        finally:
            self.time_scales.pop()
        return builtin.build(schedule=segment, ratio=ratio, scale_warmup=scale_warmup)

    def active_scales(self) -> list[TimeScale]:
        """The scales that apply to the duration being lowered now (innermost last)."""
        if not self.in_warmup:
            return self.time_scales
        return [s for s in self.time_scales if s.scale_warmup or self.preset_scales_warmup]

    def scaled(self, steps: sp.Expr, scales=None) -> sp.Expr:
        for scale in reversed(self.active_scales() if scales is None else scales):
            steps = sp.floor(steps * scale.ratio)
        return steps

    def bind_arguments(self, builtin: Builtin, node: ir.Call) -> dict[str, ir.Node]:
        spec = {a.name: a for a in builtin.args}
        if len(node.args) > len(builtin.args):
            extra = node.args[len(builtin.args)]
            raise SchedlangError(f"{builtin.name}() takes at most {len(builtin.args)} arguments, "
                                 f"got {len(node.args)}", extra.span,
                                 hint=f"signature: {builtin.signature()}")
        given: dict[str, ir.Node] = {a.name: arg for a, arg in zip(builtin.args, node.args)}
        for kw in node.keywords:
            if kw.name not in spec:
                hint, fix = suggest(kw.name, spec, _keyword_name_span(kw))
                raise SchedlangError(f"{builtin.name}() has no argument '{kw.name}'", kw.span,
                                     hint=hint or f"signature: {builtin.signature()}",
                                     code="unknown-argument", fix=fix)
            if kw.name in given:
                raise SchedlangError(f"{builtin.name}() got '{kw.name}' twice", kw.span)
            given[kw.name] = kw.value
        return given

    def call_builtin(self, builtin: Builtin, node: ir.Call):
        spec = {a.name: a for a in builtin.args}
        given = self.bind_arguments(builtin, node)
        kwargs = {}
        saved = self.in_warmup, self.preset_scales_warmup
        if self.time_scales and "scale_warmup" in given and spec["scale_warmup"].kind == Kind.FLAG:
            self.preset_scales_warmup = self.argument(builtin, spec["scale_warmup"], given["scale_warmup"])
        self.length_units.append([])
        try:
            self._builtin_arguments(builtin, node, given, kwargs)
        finally:
            self.in_warmup, self.preset_scales_warmup = saved
            units = self.length_units.pop()
        steps_only = "." in builtin.name and not builtin.clock_from_lengths
        clock = None if steps_only else self.call_clock(builtin, units)
        try:
            built = zero_length_call(builtin, kwargs)
        except stdlib.ArgumentError as exc:
            node_of = given.get(exc.argument)
            raise SchedlangError(exc.message, node_of.span if node_of else node.span,
                                 hint=exc.hint) from None
        if steps_only:
            self.preset_clock(builtin, units, built.clock)
        return built if clock is None else replace(built, clock=clock)

    def _builtin_arguments(self, builtin: Builtin, node: ir.Call, given: dict, kwargs: dict) -> None:
        for arg in builtin.args:
            self.in_warmup = arg.name in WARMUP_ARGS or (builtin.name == "warmup" and arg.name == "n")
            if arg.name not in given:
                if arg.default is REQUIRED:
                    raise SchedlangError(f"{builtin.name}() is missing '{arg.name}'", node.span,
                                         hint=f"signature: {builtin.signature()}")
                kwargs[arg.name] = sp.Integer(arg.default) if type(arg.default) is int else arg.default
                continue
            kwargs[arg.name] = self.argument(builtin, arg, given[arg.name])
        self.in_warmup = False
        for arg in builtin.args:  # after the given lengths, whose unit decides the clock
            if arg.name not in given and isinstance(arg.default, stdlib.TimeDefault):
                kwargs[arg.name] = self.time_default(builtin, arg, node)

    def time_default(self, builtin: Builtin, arg: stdlib.Arg, node: ir.Call) -> sp.Expr:
        """A length left to its Composer default (``t_max=1dur``, ``decay_period=1ep``) in steps.
        It cannot join lengths given on the sample or token clock: Composer too refuses times
        of two units."""
        clock = next((unit for unit, _ in self.length_units[-1] if unit is not None), None)
        if clock is not None:
            raise SchedlangError(f"{builtin.name}() gets lengths in {UNITS[clock]}, and '{arg.name}' "
                                 f"defaults to {arg.default}, which counts steps", node.span,
                                 hint=f"give {arg.name} in {UNITS[clock]} too, e.g. "
                                      f"{arg.name}=100e9{clock}")
        context = f"{builtin.name}() defaults {arg.name} to {arg.default}: "
        steps = self.time_in_steps(Fraction(arg.default.amount), arg.default.unit, str(arg.default),
                                   node.span, context=context)
        self.durations.append((steps, node.span, arg.kind == Kind.DURATION))
        return steps

    def argument(self, builtin: Builtin, arg: stdlib.Arg, node: ir.Node):
        """``node`` converted as the argument ``arg`` of ``builtin``: one method per ``Kind``
        (``_<kind>_argument``), as a printer has one per node type."""
        convert = getattr(self, f"_{arg.kind.value}_argument")
        return convert(arg, node, f"argument '{arg.name}' of {builtin.name}()")

    def _shape_argument(self, arg: stdlib.Arg, node: ir.Node, what: str) -> str:
        if not isinstance(node, ir.Name) or node.id not in stdlib.WARMUP_SHAPES:
            raise SchedlangError(f"{what} must be a warmup shape", node.span,
                                 hint="one of " + ", ".join(stdlib.WARMUP_SHAPES) + " (a bare name)")
        return node.id

    def _option_argument(self, arg: stdlib.Arg, node: ir.Node, what: str) -> str:
        if not isinstance(node, ir.String):
            raise SchedlangError(f"{what} must be a double-quoted string", node.span,
                                 hint="one of " + ", ".join(f'"{c}"' for c in arg.choices))
        if node.value not in arg.choices:
            hint, fix = suggest(node.value, arg.choices, node.span, quote='"')
            hint = hint or "one of " + ", ".join(f'"{c}"' for c in arg.choices)
            raise SchedlangError(f'"{node.value}" is not a valid {arg.name}', node.span, hint=hint,
                                 code="invalid-option", fix=fix)
        return node.value

    def _flag_argument(self, arg: stdlib.Arg, node: ir.Node, what: str) -> bool:
        value = self.value(node)
        if not isinstance(value, Cond) or value.value not in (sp.true, sp.false):
            raise SchedlangError(f"{what} must be true or false", node.span)
        return value.value == sp.true

    def _steps_argument(self, arg: stdlib.Arg, node: ir.Node, what: str) -> sp.Expr:
        return self.steps(node)

    def _duration_argument(self, arg: stdlib.Arg, node: ir.Node, what: str) -> sp.Expr:
        return self.steps(node, zero_ok=True)

    def _const_argument(self, arg: stdlib.Arg, node: ir.Node, what: str) -> sp.Expr:
        return self.constant(node, what)

    def _values_argument(self, arg: stdlib.Arg, node: ir.Node, what: str) -> list:
        value = self.value(node)
        if not isinstance(value, ListValue) or not value.items:
            raise SchedlangError(f"{what} must be a non-empty list like [1000, 2000]", node.span)
        items = []
        for item, item_node in zip(value.items, _list_nodes(node, value)):
            if arg.name in STEP_LISTS and isinstance(item, Segment) and self.length_units:
                self.length_units[-1].append((item.clock, item_node.span))
                item = replace(item, clock=None)
            item = self.constant_of(item, item_node, f"an item of {arg.name}")
            if arg.name in STEP_LISTS and self.time_scales and not _has_time_unit(item_node):
                item = self.scaled(item)
            if arg.name in STEP_LISTS:
                refuse_huge_step(item, item_node.span, f"an item of {arg.name}")
            items.append(item)
        return items

    def _schedules_argument(self, arg: stdlib.Arg, node: ir.Node, what: str) -> list:
        value = self.value(node)
        if not isinstance(value, ListValue) or not value.items:
            raise SchedlangError(f"{what} must be a non-empty list of schedules like [a, b]", node.span)
        found = [(self.schedule_value(item, item_node, "a schedule"), item_node)
                 for item, item_node in zip(value.items, _list_nodes(node, value))]
        for segment, item_node in found:
            self.refuse_clock(segment, item_node.span, what)
        return [segment for segment, _ in found]

    def _pairs_argument(self, arg: stdlib.Arg, node: ir.Node, what: str) -> list:
        return self.pairs(node, what)

    def _schedule_argument(self, arg: stdlib.Arg, node: ir.Node, what: str) -> Segment:
        segment = self.schedule_value(self.value(node), node, "a schedule")
        self.refuse_clock(segment, node.span, what)
        return segment

    def _finite_argument(self, arg: stdlib.Arg, node: ir.Node, what: str) -> Segment:
        segment = self._schedule_argument(arg, node, what)
        if segment.duration is None:
            raise SchedlangError(f"{what} must be a finite schedule", node.span,
                                 hint="give it a length with `for N`")
        return segment

    def _value_argument(self, arg: stdlib.Arg, node: ir.Node, what: str) -> sp.Expr:
        segment = self.schedule_value(self.value(node), node, "a number")
        self.refuse_amount(segment, node.span)
        self.refuse_clock(segment, node.span, what)
        return segment.held()

    def call_user(self, function: Function, node: ir.Call):
        fdef = function.node
        if fdef.name in self.calling:
            raise SchedlangError(f"'{fdef.name}' calls itself; functions cannot be recursive",
                                 node.span, hint="write the closed form, e.g. with ** or floor")
        if len(node.args) > len(fdef.params):
            raise SchedlangError(f"{fdef.name}() takes {len(fdef.params)} arguments, got "
                                 f"{len(node.args)}", node.args[len(fdef.params)].span)
        bound = {p: self.value(a) for p, a in zip(fdef.params, node.args)}
        for kw in node.keywords:
            if kw.name not in fdef.params:
                hint, fix = suggest(kw.name, fdef.params, _keyword_name_span(kw))
                raise SchedlangError(f"{fdef.name}() has no parameter '{kw.name}'", kw.span,
                                     hint=hint, code="unknown-argument", fix=fix)
            if kw.name in bound:
                raise SchedlangError(f"{fdef.name}() got '{kw.name}' twice", kw.span)
            bound[kw.name] = self.value(kw.value)
        missing = [p for p in fdef.params if p not in bound]
        if missing:
            raise SchedlangError(f"{fdef.name}() is missing '{missing[0]}'", node.span,
                                 hint=f"{fdef.name}({', '.join(fdef.params)})")
        self._spend_expansion(fdef, node)
        self.calling.append(fdef.name)
        self.scopes.append(bound)
        try:
            return self.value(fdef.body)
        finally:
            self.scopes.pop()
            self.calling.pop()

    def _spend_expansion(self, fdef: ir.Def, node: ir.Call) -> None:
        """A def is expanded at every call: ``f(x) = g(x) + g(x)`` nested 40 deep is 2**40 bodies."""
        self.expanded += _node_count(fdef.body)
        if self.expanded > MAX_DEF_EXPANSION:
            raise SchedlangError(f"calls of user functions expand to more than {MAX_DEF_EXPANSION} "
                                 "expression nodes", node.span,
                                 hint=f"'{fdef.name}' is expanded at every call, so functions calling "
                                      "functions several times grow exponentially; compute shared "
                                      "parts once with `let`")

    # -- the sample and token clocks (SPEC §12; placing segments: semantics/clock.py) --------

    def clock_at(self, span: Span) -> Clock:
        """The run's batch schedule, lowered from ``batch = ...`` on first use."""
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
        self._lowering_batch = True
        try:
            value = self.value(decl.value)
        finally:
            self._lowering_batch = False
        if isinstance(value, BatchValue):
            table = value.table
        else:
            segment = self.schedule_value(value, decl.value, "a batch size")
            table = ((0, self.batch_size(segment.expr, decl.value.span, segment)),)
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

    def call_batch(self, node: ir.Call) -> BatchValue:
        """``stages(b0, [b1, ...], [th1, ...])`` or a framework's batch schedule preset."""
        if not self._lowering_batch:
            raise SchedlangError(f"{node.func.id}() is a batch schedule: it goes in `batch = ...`",
                                 node.span)
        return BatchValue(BATCH_CALLS[node.func.id](self, node), node.span)

    def _stages(self, node: ir.Call):
        if node.keywords or len(node.args) != 3:
            raise SchedlangError("stages() takes 3 arguments: the first batch, the later batches "
                                 "and their thresholds", node.span,
                                 hint="stages(3072, [6144, 15360], [100e9tok, 469e9tok])")
        first, batches, thresholds = node.args
        sizes = [self.batch_size(self.constant(first, "a batch size"), first.span)]
        for item in _list_items(batches, "the later batch sizes"):
            sizes.append(self.batch_size(self.constant(item, "a batch size"), item.span))
        found = []
        for item in _list_items(thresholds, "the thresholds"):
            amount = self.schedule_value(self.value(item), item, "a threshold")
            if amount.clock is None or amount.depends_on_step:
                raise SchedlangError("a threshold counts samples or tokens", item.span,
                                     hint="e.g. 100e9tok or 2_000_000sp")
            count = self.fix_whole(amount.expr, item.span, "a threshold")
            found.append((Fraction(count), amount.clock, item.span))
        return stages_table(sizes[0], sizes[1:], found, self.seq_len(node.span), node.span)

    def batch_arguments(self, signature: Builtin, node: ir.Call) -> dict:
        """The argument nodes of a batch preset call, by name, bound as any call's are
        (``bind_arguments``); a required one missing is an error at the call."""
        given = self.bind_arguments(signature, node)
        missing = next((a.name for a in signature.args if a.default is REQUIRED and a.name not in given),
                       None)
        if missing is not None:
            raise SchedlangError(f"{signature.name}() is missing '{missing}'", node.span,
                                 hint=f"signature: {signature.signature()}")
        return given

    def _megatron_step_schedule(self, node: ir.Call):
        """``megatron.step_batch_size_schedule("0:16 2.4B:320", seq_length=...)``: Megatron-LM
        main's ``--step-batch-size-schedule`` (megatron-core >= 0.18), exact to its parser;
        ``seq_length`` defaults to the file's ``seq_len`` (Megatron-LM passes its ``--seq-length``)."""
        from ..library.presets import megatron_batch  # lazy: only files with a Megatron batch

        given = self.batch_arguments(MEGATRON_STEP_SCHEDULE, node)
        text = given["schedule"]
        if not isinstance(text, ir.String):
            raise SchedlangError("the schedule is a double-quoted string of THRESHOLD:BATCH entries",
                                 text.span, hint='e.g. "0:16 2.4B:320"')
        seq_len = self.seq_len(node.span)
        if "seq_length" in given:
            length = self.fix_whole(self.constant(given["seq_length"], "seq_length"),
                                    given["seq_length"].span, "seq_length")
            if seq_len is not None and length != seq_len:
                raise SchedlangError(f"seq_length is {length} but the file's seq_len is {seq_len}",
                                     given["seq_length"].span, hint="one sample has one length: drop "
                                     "seq_length, which defaults to seq_len")
        else:
            length = seq_len
        return self._located(megatron_batch.step_batch_size_schedule, text.span, text.value, length)

    def _megatron_rampup(self, node: ir.Call):
        """``megatron.rampup_batch_size(start, increment, samples, global_batch_size=...)``:
        megatron-core <= 0.17's ``--rampup-batch-size``, its float division included
        (0.18 and later ignore the flag)."""
        from ..library.presets import megatron_batch  # lazy: only files with a Megatron batch

        given = self.batch_arguments(MEGATRON_RAMPUP, node)
        values = {name: self.fix_whole(self.constant(n, name), n.span, name) for name, n in given.items()}
        return self._located(megatron_batch.rampup_batch_size, node.span, values.pop("start"),
                              values.pop("increment"), values.pop("samples"),
                              values.pop("global_batch_size"), **values)

    @staticmethod
    def _located(function, span: Span, *args, **kwargs):
        try:
            return function(*args, **kwargs)
        except ValueError as exc:
            raise SchedlangError(str(exc), span) from None

    def _olmo_batch_schedule(self, node: ir.Call):
        """``olmo_core.batch_size_schedule(batch_sizes=[...], schedule=[...], units="tokens")``:
        OLMo-core's ``BatchSizeSchedulerCallback``, batch sizes in tokens, an increase waiting
        for a whole number of the new batches (``library/presets/olmo_core_batch.py``)."""
        from ..library.presets import olmo_core_batch  # lazy: only files with an OLMo-core batch

        units, sizes, points = self._olmo_batch_arguments(node)
        seq_len = self.seq_len(node.span)
        if seq_len is None:
            raise SchedlangError("OLMo-core's batch sizes count tokens: the file needs the tokens "
                                 "per sample", node.span, hint="declare `param seq_len: int = 4096`")
        self._olmo_batches = (sizes, points, units)
        return self._located(olmo_core_batch.batch_size_schedule, node.span, sizes, points, seq_len, units)

    def _olmo_batch_arguments(self, node: ir.Call) -> tuple[str, list[int], list[int]]:
        given = self.batch_arguments(OLMO_BATCH_SCHEDULE, node)
        spec = {a.name: a for a in OLMO_BATCH_SCHEDULE.args}
        units = self.argument(OLMO_BATCH_SCHEDULE, spec["units"], given["units"]) if "units" in given \
            else "tokens"
        lists = []
        for name, what in (("batch_sizes", "a batch size in tokens"), ("schedule", f"a point in {units}")):
            lists.append([self.fix_whole(self.constant(item, what), item.span, what)
                          for item in _list_items(given[name], f"the {name}")])
        return units, *lists

    def _olmo_lr_factor(self, node: ir.Call) -> Segment:
        """``olmo_core.batch_size_lr_factor(units=...)``: the ``sqrt(new / old)`` by which
        OLMo-core's batch-size callback multiplies the base lr at each change, from the step
        whose batch changed on; ``units`` as the scheduler's it multiplies (``"tokens"``: on the
        token clock read after the step, ``"steps"``: on the step clock)."""
        from ..library.presets import olmo_core_batch  # lazy: only files with an OLMo-core batch

        given = self.bind_arguments(OLMO_LR_FACTOR, node)
        units = self.argument(OLMO_LR_FACTOR, OLMO_LR_FACTOR.args[0], given["units"]) if "units" in given \
            else "tokens"
        if self.batches:
            self.clock_at(node.span)
        if self._olmo_batches is None:
            raise SchedlangError(f"{OLMO_LR_FACTOR.name}() follows the batch of "
                                 "olmo_core.batch_size_schedule(...), and the file's batch is not one",
                                 node.span, hint="declare `batch = olmo_core.batch_size_schedule("
                                                 "batch_sizes=[...], schedule=[...])`")
        stages = olmo_core_batch.switches(*self._olmo_batches)  # (step, tokens before, batch)
        factors = [sp.sqrt(sp.Rational(batch, stages[0][2])) for _, _, batch in stages]
        # the factor of a switch at step s holds from step s on; read after the step, update k
        # counts T_{k+1} = T_k + its batch, so from T_s + b_s tokens on
        ends = [step if units == "steps" else tokens + batch for step, tokens, batch in stages[1:]]
        pieces = [(factor, sp.Lt(tau, end)) for factor, end in zip(factors, ends)]
        expr = sp.Piecewise(*pieces, (factors[-1], True)) if pieces else factors[-1]
        return Segment(expr) if units == "steps" else Segment(expr, clock="tok", evaluation="after")

    def call_on_clock(self, node: ir.Call) -> Segment:
        """``on_tokens(s)`` / ``on_samples(s)``: ``s`` with its ``t`` and its length counting the
        tokens (samples) consumed before the step: a framework's schedule whose counter is the
        samples or tokens consumed (Megatron's ``num_steps``), placed on the run's clock."""
        name, unit = node.func.id, ON_CLOCK[node.func.id]
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
        return replace(segment, clock=unit)

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

    # -- coercions -------------------------------------------------------------------

    def schedule_value(self, value, node: ir.Node, expected: str) -> Segment:
        if isinstance(value, Segment):
            return value
        if isinstance(value, Warmup):
            raise SchedlangError("warmup(...) only makes sense right before `>>`", node.span,
                                 hint="e.g. warmup(linear, 500) >> cosine(1e-3, 1e-5, 9500)")
        raise SchedlangError(f"expected {expected}, got {_kind(value)}", node.span)

    def condition(self, node: ir.Node) -> sp.Basic:
        value = self.value(node)
        if not isinstance(value, Cond):
            raise SchedlangError(f"expected a condition, got {_kind(value)}", node.span,
                                 hint="e.g. t < 1000, or two conditions joined by and / or")
        return value.value

    def constant(self, node: ir.Node, what: str) -> sp.Expr:
        return self.constant_of(self.value(node), node, what)

    def constant_of(self, value, node: ir.Node, what: str) -> sp.Expr:
        segment = self.schedule_value(value, node, "a number")
        self.refuse_amount(segment, node.span)
        if segment.depends_on_step:
            raise SchedlangError(f"{what} cannot depend on the step t", node.span)
        return segment.expr

    def pairs(self, node: ir.Node, what: str) -> list[tuple[sp.Expr, sp.Expr]]:
        """A non-empty list of ``[a, b]`` pairs of numbers constant in t."""
        value = self.value(node)
        example = "[[1000, 0.5], [2000, 0.1]]"
        if not isinstance(value, ListValue) or not value.items:
            raise SchedlangError(f"{what} must be a non-empty list of pairs like {example}", node.span)
        found = []
        for item, item_node in zip(value.items, _list_nodes(node, value)):
            if not isinstance(item, ListValue) or len(item.items) != 2:
                raise SchedlangError(f"each item of {what} must be a pair [a, b]", item_node.span,
                                     hint=f"e.g. {example}")
            inner = _list_nodes(item_node, item)
            found.append(tuple(self.constant_of(v, n, f"an item of {what}")
                               for v, n in zip(item.items, inner)))
        return found

    def steps(self, node: ir.Node, zero_ok: bool = False) -> sp.Expr:
        """A number of steps: a length (``zero_ok``: ``0`` is a zero-length segment) or a period."""
        value = self.value(node)
        segment = self.schedule_value(value, node, "a number of steps")
        if segment.depends_on_step:
            raise SchedlangError("a duration cannot depend on the step t", node.span)
        if self.length_units:
            self.length_units[-1].append((segment.clock, node.span))
        elif segment.clock is not None:
            self.refuse_amount(segment, node.span)
        expr = segment.expr
        if self.time_scales and not _has_time_unit(node):  # time literals scale themselves
            before, expr = expr, self.scaled(expr)
            if expr.is_number and expr <= 0 < before and not zero_ok:
                raise SchedlangError(f"scale() makes this duration {expr} steps (from {before})", node.span,
                                     hint="a duration must stay at least 1 step; use a larger ratio")
        if expr.is_number:
            check_steps(expr, node.span, zero_ok)
        self.durations.append((expr, node.span, zero_ok))
        return expr


MAX_POWER_BITS = 4096


#: The arithmetic operators of the language.
_BINARY = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
           "**": geometric}


def _refuse_huge_power(base: sp.Expr, exponent: sp.Expr, span: Span) -> None:
    """Exact arithmetic would build a number with millions of digits (e.g. ``9 ** 9 ** 9``)."""
    if base.is_number and exponent.is_number and base not in (0, 1, -1):
        try:
            size = abs(float(exponent)) * abs(math.log2(abs(float(base))))
        except (OverflowError, ValueError, TypeError):
            size = math.inf
        if size > MAX_POWER_BITS:
            raise SchedlangError("this power is too large to compute exactly", span,
                                 hint="the result is far outside the range of a float64")


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


def _has_time_unit(node) -> bool:
    """Whether an argument is written with time literals (``500ba``), which scale themselves."""
    if isinstance(node, ir.Duration):
        return True
    if isinstance(node, ir.Node):
        return any(_has_time_unit(getattr(node, f)) for f in node.__dataclass_fields__ if f != "span")
    if isinstance(node, tuple):
        return any(_has_time_unit(n) for n in node)
    return False


def _names_used(node) -> list[str]:
    """The names a statement's text mentions (its expressions, a def's body), in order."""
    found, stack = [], [node]
    while stack:
        item = stack.pop()
        if isinstance(item, ir.Name):
            found.append(item.id)
        elif isinstance(item, ir.Node):
            stack.extend(reversed([getattr(item, f) for f in item.__dataclass_fields__ if f != "span"]))
        elif isinstance(item, tuple):
            stack.extend(reversed(item))
    return found


def _node_count(node) -> int:
    """How many IR nodes ``node`` holds: the cost of expanding it once (iterative: no recursion)."""
    return sum(1 for _ in ir.walk(node))


def _not_positive(value: sp.Expr) -> bool:
    """Whether ``value`` is known to be 0 or negative.  Undecided symbolic values pass: the
    start of ``constant(0.1, 2 * total) >> linear(1.5, ...)`` is a ``Piecewise`` whose second
    branch (``3/2 - 11*total/50``) only ``total = 0`` reaches; once the parameters are bound,
    the finiteness check refuses an exp warmup to a value that is not positive."""
    if isinstance(value, sp.Piecewise):
        return any(_not_positive(v) for v, _ in value.args)
    return value.is_positive is False


def _list_items(node: ir.Node, what: str) -> tuple:
    if not isinstance(node, ir.List):
        raise SchedlangError(f"{what} must be a list like [6144, 15360]", node.span)
    return node.items


#: The signatures of the Megatron batch presets (``bind_arguments`` reads them; their values are
#: converted by ``_megatron_step_schedule`` / ``_megatron_rampup``, not by ``argument``).
#: (``build`` is the method that lowers the call: its docstring is the call's documentation.)
MEGATRON_STEP_SCHEDULE = Builtin("megatron.step_batch_size_schedule", (
    stdlib.Arg("schedule", Kind.OPTION), stdlib.Arg("seq_length", Kind.CONST, None)),
    build=Lowerer._megatron_step_schedule)
MEGATRON_RAMPUP = Builtin("megatron.rampup_batch_size", (
    *(stdlib.Arg(name, Kind.CONST) for name in ("start", "increment", "samples", "global_batch_size")),
    *(stdlib.Arg(name, Kind.CONST, None) for name in ("micro_batch_size", "data_parallel_size"))),
    build=Lowerer._megatron_rampup)

#: OLMo-core's batch-size callback: its batch schedule and the lr factor it applies.
OLMO_BATCH_SCHEDULE = Builtin("olmo_core.batch_size_schedule", (
    stdlib.Arg("batch_sizes", Kind.VALUES), stdlib.Arg("schedule", Kind.VALUES),
    stdlib.Arg("units", Kind.OPTION, "tokens", ("tokens", "steps"))), build=Lowerer._olmo_batch_schedule)
OLMO_LR_FACTOR = Builtin("olmo_core.batch_size_lr_factor", (
    stdlib.Arg("units", Kind.OPTION, "tokens", ("tokens", "steps")),), build=Lowerer._olmo_lr_factor)

#: Calls that put a schedule counted in steps on the sample or token clock, as written.
ON_CLOCK = {"on_samples": "sp", "on_tokens": "tok"}

#: The signatures of the calls lowering knows by name (the batch presets, ``on_samples`` /
#: ``on_tokens``): what the builder and the editor offer for them.
CALL_SIGNATURES = {b.name: b for b in (MEGATRON_STEP_SCHEDULE, MEGATRON_RAMPUP, OLMO_BATCH_SCHEDULE,
                                       OLMO_LR_FACTOR)}
CALL_SIGNATURES.update({name: Builtin(name, (stdlib.Arg("schedule", Kind.SCHEDULE),),
                                      build=Lowerer.call_on_clock) for name in ON_CLOCK})

#: Calls whose value is a batch schedule (``batch = ...`` only).
BATCH_CALLS = {"stages": Lowerer._stages,
               "megatron.step_batch_size_schedule": Lowerer._megatron_step_schedule,
               "megatron.rampup_batch_size": Lowerer._megatron_rampup,
               "olmo_core.batch_size_schedule": Lowerer._olmo_batch_schedule}

#: Calls whose value is a schedule read off the file's batch schedule.
BATCH_SCHEDULES = {"olmo_core.batch_size_lr_factor": Lowerer._olmo_lr_factor}


def flatten_seq(node: ir.Node, stop=None) -> list[ir.Node]:
    """The segments of ``a >> b >> c``; ``stop(n)`` keeps a ``Seq`` whose value is known whole."""
    parts = []
    while isinstance(node, ir.Seq) and not (stop is not None and stop(node)):
        parts.append(node.then)
        node = node.first
    parts.append(node)
    return parts[::-1]


def _in_batches(node: ir.Node) -> bool:
    """Whether a segment's length is written in ``ba`` (``warmup(linear, 2000ba)``, ``x for
    2000ba``): counted in optimizer steps on purpose, so ``check`` does not say it meets a
    batch ramp."""
    if isinstance(node, ir.For):
        lengths = [node.steps]
    elif isinstance(node, ir.Call):
        lengths = [*node.args, *(k.value for k in node.keywords)]
    else:
        return False
    return any(isinstance(n, ir.Duration) and n.unit == "ba" for n in lengths)


def _jumps(node: ir.Node, count: int) -> frozenset[int]:
    """The indices, among the ``count`` segments ``flatten_seq`` gave, written ``>> jump``."""
    found = set()
    for index in range(count - 1, 0, -1):
        if node.jump:
            found.add(index)
        node = node.first
    return frozenset(found)


def _list_nodes(node: ir.Node, value: ListValue):
    return node.items if isinstance(node, ir.List) else [node] * len(value.items)


def _kind(value) -> str:
    if isinstance(value, ListValue):
        return "a list"
    if isinstance(value, Text):
        return "a string"
    if isinstance(value, Cond):
        return "a condition"
    if isinstance(value, Warmup):
        return "a warmup"
    return "a number"


def _signature(name: str) -> str:
    if name in stdlib.SCHEDULES:
        return stdlib.SCHEDULES[name].signature()
    arity = stdlib.MATH_ARITY.get(name)
    if arity is None:
        return f"{name}(a, b)"
    return f"{name}({', '.join('xyz'[:arity])})"


def _keyword_name_span(kw: ir.Keyword) -> Span:
    """Where the name of ``name=value`` is written (a keyword's span covers the value too)."""
    span = kw.span
    return Span(span.source, span.line, span.column, span.line, span.column + len(kw.name))
