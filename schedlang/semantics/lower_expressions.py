"""The expression lowerer: the value of each syntax node, and the coercions that turn a
value into what its place needs.

``value`` gives a node's value by one method per node type (``_<node type>``, as a printer has
one per sympy node): numbers, time literals, names, arithmetic, conditions, ``if``, ``for`` and
``>>`` with its warmups and cooldowns.  The coercions (``schedule_value``, ``condition``, ``constant``,
``steps``, ``pairs``) raise at the node when its value is not what is expected there.  Calls
are ``lower_calls``; the clock a value counts is ``lower_clock``.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, replace
from fractions import Fraction

import sympy as sp

from ..core.algebra import Mark, Segment, combine, hold_for, pointwise, sequence, tau
from ..core.clock import UNITS
from ..core.special import geometric
from ..errors import SchedlangError, Span, suggest
from ..library import stdlib
from ..library.clock_calls import CLOCK_CALLS
from ..library.stdlib import Cooldown, Warmup
from ..limits import MAX_SEGMENTS
from ..syntax import ir
from .clock import place
from .steps import check_steps

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


@dataclass(frozen=True)
class Deferred:
    """A cooldown after a schedule whose end value is known only once ``place`` has put it on
    the batch schedule (``trunk for 10e12tok``): ``place`` calls it with that placed segment.
    Its length and clock are the cooldown's, for the checks of ``>>`` before placing."""

    build: object  # (placed segment before it) -> Segment
    duration: sp.Expr
    clock: str | None
    evaluation: str = "before"

    def __call__(self, placed: Segment) -> Segment:
        return self.build(placed)


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


@dataclass(frozen=True)
class Known:
    """A node whose value is already known (``schedlang.build`` lowers each piece once, as it
    is built): reused when the node appears again, outside ``scale()`` (which changes what its
    durations mean) and with the same parameter symbols; its durations are recorded again."""

    node: ir.Node
    value: object
    durations: tuple
    symbols: dict


def definition_cycle(defining: str | None, name: str, statements: dict, later: dict,
                     defined_at: dict) -> list[str] | None:
    """``[defining, name, ..., defining]`` when ``name`` (defined later) needs, directly or
    through other later definitions (``statements`` by name, those not yet ``defined_at``), the
    statement being lowered, ``defining``: moving it up cannot help."""
    if defining is None:
        return None
    paths, seen = [[defining, name]], {name}
    while paths:
        path = paths.pop(0)
        statement = statements.get(path[-1])
        for used in _names_used(statement) if statement is not None else ():
            if used == defining:
                return [*path, used]
            if used in later and used not in defined_at and used not in seen:
                seen.add(used)
                paths.append([*path, used])
    return None


class ExpressionLowering:
    """The part of the ``Lowerer`` (``lower.py``) that gives expressions their values.

    The ``Lowerer`` is one object whose state (the names in scope, the durations found, the
    enclosing ``scale()``s, the run's clock) every part of lowering reads and writes, so its
    methods are split by concern into classes it inherits, one module each; a part calls the
    others' methods on ``self`` (``call_*`` from ``lower_calls``, the clock checks from
    ``lower_clock``), and every attribute it uses is set in ``Lowerer.__init__``.
    """

    # -- values ----------------------------------------------------------------------

    def value(self, node: ir.Node):
        if self.frames:  # a statement of a file with a batch schedule: recorded (lower_clock)
            return self.recorded_value(node)
        return self.node_value(node)

    def node_value(self, node: ir.Node):
        """``node``'s value, computed: ``_known`` or its ``_<node type>`` method."""
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
        for scope, read in zip(reversed(self.scopes), reversed(self.scope_reads)):
            if node.id in scope:
                if node.id in read:  # an argument whose value read the clock (recorded_value)
                    self.mark_read()
                return scope[node.id]
        if node.id in self.env:
            return self._defined(node)
        if node.id in stdlib.CONSTANTS:
            return Segment(stdlib.CONSTANTS[node.id])
        if node.id in stdlib.SCHEDULES or node.id in stdlib.MATH:
            raise SchedlangError(f"'{node.id}' is a function; call it with arguments", node.span,
                                 hint=f"e.g. {signature_of(node.id)}")
        raise self.unknown(node)

    def _defined(self, node: ir.Name):
        """The value of a name the file defined before (a ``param``, ``let`` or ``schedule``);
        a schedule read by name is placed where it is read."""
        found = self.env[node.id]
        if isinstance(found, Function):
            raise SchedlangError(f"'{node.id}' is a function; call it with arguments", node.span,
                                 hint=f"{node.id}({', '.join(found.node.params)})")
        if node.id in self.read_names:  # a let or schedule whose value read the clock
            self.mark_read()
        return self.placed_value(found)

    def unknown(self, node: ir.Name) -> SchedlangError:
        if node.id in stdlib.DATA_DEPENDENT:
            return SchedlangError(f"a schedule cannot depend on '{node.id}'", node.span,
                                  hint=stdlib.DATA_DEPENDENT[node.id])
        if node.id in self.later:
            cycle = definition_cycle(self.defining, node.id, self.statements, self.later,
                                     self.defined_at)
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

            known = [*PRESETS.keys(), *(n for n in CLOCK_CALLS if "." in n)]
        else:
            known = [*self.env, *stdlib.SCHEDULES, *stdlib.MATH, *stdlib.CONSTANTS, "t",
                     *(n for n in CLOCK_CALLS if "." not in n), *(k for s in self.scopes for k in s)]
        hint, fix = suggest(node.id, known, node.span)
        if hint is None and "." not in node.id:
            hint = "schedules may use t, parameters, let-names and the standard library"
        return SchedlangError(f"unknown name '{node.id}'", node.span, hint=hint, code="unknown-name", fix=fix)

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
        if body.clock is None and unit is not None and body.depends_on_step:
            # a schedule counted in steps cut where the run's count reaches a length in tokens
            # (samples): a trunk branched at a token count, `trunk for 10e12tok >> cooldown(...)`
            marks = tuple(m for m in body.marks if m.kind != "cut")
            return Segment(body.held(), steps, marks, clock=unit, evaluation="steps")
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
            if isinstance(value, Cooldown):
                segments.append(self._seq_cooldown(value, segments[-1] if segments else None, part))
                continue
            if isinstance(value, Warmup):
                value = self._seq_warmup(value, values[i + 1] if i + 1 < len(values) else None, part)
            segments.append((self.schedule_value(value, part, "a schedule"), part))
        for segment, part in segments[:-1]:
            if segment.duration is None:
                raise SchedlangError("nothing can follow an infinite schedule", part.span,
                                     hint="give it a length with `for N`, e.g. `(...) for 1000`")
        if len(segments) == 1:
            return segments[0][0]
        # a join into a cooldown is continuous on the cooldown's clock by construction; on the
        # token clock its first step reads the curve at the tokens consumed before that step,
        # a little past its start (a sqrt falls steeply there): no jump for `check` to report
        cooldowns = {i for i, (value, _) in enumerate(values) if isinstance(value, Cooldown)}
        return self._joined(node, segments, _jumps(node, len(parts)) | cooldowns)

    def _seq_cooldown(self, value: Cooldown, before: tuple[Segment, ir.Node] | None,
                      part: ir.Node) -> tuple[Segment, ir.Node]:
        """A cooldown in a sequence, from the end of the part ``before`` it: built now, or, after a
        part whose end value is known only once it is placed, then (``deferred_cooldown``)."""
        if before is not None and self.place_clocks and (
                isinstance(before[0], Deferred) or before[0].evaluation == "steps"):
            # its end value is known once it is placed: the cooldown is built then
            build = self.deferred_cooldown(value, before[1], part)
            return Deferred(build, value.steps, value.clock), part
        value = self.cooldown_segment(value, before, part)
        return self.schedule_value(value, part, "a schedule"), part

    def _seq_warmup(self, value: Warmup, following: tuple[object, ir.Node] | None, part: ir.Node) -> Segment:
        """A warmup in a sequence, ramping to the start of the part ``following`` it (which is no
        cooldown), marked for ``check``."""
        if following is None:
            raise SchedlangError("a warmup must be followed by `>>` and the schedule it "
                                 "warms up to", part.span)
        following, following_node = following
        if isinstance(following, Cooldown):
            raise SchedlangError("a warmup ramps to the start of the schedule after it, and "
                                 "a cooldown has none: it starts from the end of the one "
                                 "before it", following_node.span,
                                 hint="put a schedule between them, e.g. warmup(linear, 100) "
                                      ">> constant(1e-3, 900) >> cooldown(sqrt, 200, 1e-5)")
        target = self.schedule_value(following, following_node, "a schedule")
        value = self.warmup_segment(value, target.start_value(), part)
        # For `check`: what follows a warmup should move on from its peak at once.
        mark = Mark("warmup", value.duration, target.start_value(), span=following_node.span)
        return replace(value, marks=(*value.marks, mark))

    def _joined(self, node: ir.Seq, segments: list[tuple[Segment, ir.Node]], jumps) -> Segment:
        """The parts of ``a >> b >> ...`` joined, each counted in steps (but a part of a batch
        schedule); parts on the sample or token clock are placed later (``join_placed``)."""
        for segment, part in segments:
            if isinstance(segment, Segment):
                self.refuse_amount(segment, part.span)
        segments = [(self.step_counted(s, p.span) if isinstance(s, Segment) and not _in_batches(p) else s, p)
                    for s, p in segments]
        if self.place_clocks and any(segment.clock for segment, _ in segments):
            return self.place_later(node, "join_placed", node, tuple(segments), jumps)
        return sequence(*(segment for segment, _ in segments), spans=[part.span for _, part in segments],
                        jumps=jumps)

    def join_placed(self, node: ir.Seq, segments: tuple[tuple[Segment, ir.Node], ...], jumps) -> Segment:
        """``a >> b >> ...`` with its parts on the sample or token clock placed on the batch
        schedule (``semantics/clock.place``), with this lowering's values."""
        placed = place([(s, p.span) for s, p in segments], self.clock_at(node.span), self.fix_whole,
                       self.measured)
        return sequence(*placed, spans=[part.span for _, part in segments], jumps=jumps)

    def deferred_cooldown(self, cool: Cooldown, before_node: ir.Node, node: ir.Node):
        """A cooldown after a schedule counted in steps and cut at a token (sample) count: the
        value it starts from is the one that schedule has at the step where the cut falls,
        known when ``place`` has put it on the batch schedule, which then calls this."""
        return lambda placed: self.cooldown_segment(cool, (placed, before_node), node)

    def cooldown_segment(self, cool: Cooldown, before: tuple[Segment, ir.Node] | None,
                         node: ir.Node) -> Segment:
        """``cooldown(...)`` from the value the segment before it holds at its end: the mirror of
        a warmup, continuous by construction."""
        if before is None:
            raise SchedlangError("a cooldown starts from the value the schedule before it ends "
                                 "with, and nothing comes before this one", node.span,
                                 hint="put it after `>>`, e.g. constant(1e-3, 9000) >> "
                                      "cooldown(sqrt, 1000, 1e-5)")
        segment, before_node = before
        if segment.duration is None:
            raise SchedlangError("a cooldown starts from the end of the schedule before it, and "
                                 "this one never ends", before_node.span,
                                 hint="give it a length with `for`, e.g. `trunk for 9000 >> "
                                      "cooldown(sqrt, 1000, 1e-5)`")
        start = segment.end_value()
        if cool.shape == "exp" and (_not_positive(start) or _not_positive(cool.to)):
            raise SchedlangError("an exp cooldown needs a positive start and a positive target",
                                 node.span, hint="use linear, cosine or sqrt to reach 0")
        return cool.ramp_from(start)

    def warmup_segment(self, warm: Warmup, target: sp.Expr, node: ir.Node) -> Segment:
        if warm.shape == "exp" and (_not_positive(warm.start) or _not_positive(target)):
            raise SchedlangError("an exp warmup needs a positive start and a positive target",
                                 node.span, hint="give start=..., e.g. warmup(exp, 500, start=1e-6)")
        return warm.ramp_to(target)

    # -- coercions -------------------------------------------------------------------

    def schedule_value(self, value, node: ir.Node, expected: str) -> Segment:
        if isinstance(value, Segment):
            return value
        if isinstance(value, Warmup):
            raise SchedlangError("warmup(...) only makes sense right before `>>`", node.span,
                                 hint="e.g. warmup(linear, 500) >> cosine(1e-3, 1e-5, 9500)")
        if isinstance(value, Cooldown):
            raise SchedlangError("cooldown(...) only makes sense right after `>>`", node.span,
                                 hint="e.g. constant(1e-3, 9000) >> cooldown(sqrt, 1000, 1e-5)")
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
        """A list of ``[a, b]`` pairs of numbers constant in t; ``[]`` is optax's ``{}``."""
        value = self.value(node)
        example = "[[1000, 0.5], [2000, 0.1]]"
        if not isinstance(value, ListValue):
            raise SchedlangError(f"{what} must be a list of pairs like {example}", node.span)
        found = []
        for item, item_node in zip(value.items, list_nodes(node, value)):
            if not isinstance(item, ListValue) or len(item.items) != 2:
                raise SchedlangError(f"each item of {what} must be a pair [a, b]", item_node.span,
                                     hint=f"e.g. {example}")
            inner = list_nodes(item_node, item)
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
        if self.time_scales and not has_time_unit(node):  # time literals scale themselves
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


def has_time_unit(node) -> bool:
    """Whether an argument is written with time literals (``500ba``), which scale themselves."""
    if isinstance(node, ir.Duration):
        return True
    if isinstance(node, ir.Node):
        return any(has_time_unit(getattr(node, f)) for f in node.__dataclass_fields__ if f != "span")
    if isinstance(node, tuple):
        return any(has_time_unit(n) for n in node)
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


def _not_positive(value: sp.Expr) -> bool:
    """Whether ``value`` is known to be 0 or negative.  Undecided symbolic values pass: the
    start of ``constant(0.1, 2 * total) >> linear(1.5, ...)`` is a ``Piecewise`` whose second
    branch (``3/2 - 11*total/50``) only ``total = 0`` reaches; once the parameters are bound,
    the finiteness check refuses an exp warmup to a value that is not positive."""
    if isinstance(value, sp.Piecewise):
        return any(_not_positive(v) for v, _ in value.args)
    return value.is_positive is False


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


def list_nodes(node: ir.Node, value: ListValue):
    """The node of each item of ``value`` (read from ``node``), for errors at the item: the
    items of a written list, or ``node`` itself for a list that came from a name."""
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
    if isinstance(value, Cooldown):
        return "a cooldown"
    return "a number"


def signature_of(name: str) -> str:
    """How a call of the built-in schedule or math function ``name`` is written, for a hint."""
    if name in stdlib.SCHEDULES:
        return stdlib.SCHEDULES[name].signature()
    arity = stdlib.MATH_ARITY.get(name)
    if arity is None:
        return f"{name}(a, b)"
    return f"{name}({', '.join('xyz'[:arity])})"
