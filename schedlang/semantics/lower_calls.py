"""Calls: which function a call names, its arguments bound and converted, and its value.

A call is of a user ``def`` (its body lowered with the arguments in scope, never recursively),
a math function, ``scale()``, a call of the run's clock (a row of ``library/clock_calls``,
lowered by ``call_<role>``: ``on_samples`` / ``on_tokens`` in ``lower_clock``, a batch schedule or
a schedule read off one in ``lower_batch``), a built-in schedule or a preset.  A built-in's
arguments are bound by place or name (``bind_arguments``) and converted by one method per
``stdlib.Kind`` (``_<kind>_argument``); the units of its lengths decide its clock.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction

import sympy as sp

from ..core.algebra import Segment, combine, pointwise
from ..core.clock import UNITS
from ..errors import SchedlangError, Span, suggest
from ..library import stdlib
from ..library.clock_calls import CLOCK_CALLS
from ..library.stdlib import REQUIRED, Builtin, Kind
from ..limits import MAX_DEF_EXPANSION
from ..syntax import ir
from .lower_expressions import Cond, Function, ListValue, has_time_unit, list_nodes, signature_of
from .steps import refuse_call_past_steps, refuse_huge_step, zero_length_call

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


class CallLowering:
    """The part of the ``Lowerer`` (``lower.py``) that lowers calls (see ``ExpressionLowering``
    for why the ``Lowerer`` is split into parts it inherits)."""

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
        if name in CLOCK_CALLS:
            call = CLOCK_CALLS[name]
            return getattr(self, f"call_{call.role.value}")(call, node)
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
                                 hint=f"e.g. {signature_of(name)}")
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
                if kw.name in dict(builtin.elsewhere):
                    hint = dict(builtin.elsewhere)[kw.name].format(name=builtin.name)
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
            raise self.argument_error(exc, given, node) from None
        if steps_only:
            self.preset_clock(builtin, units, built.clock)
            refuse_call_past_steps(builtin.name, built, [(kwargs[n], given[n].span) for n in given],
                                   node.span)
        return built if clock is None else replace(built, clock=clock)

    @staticmethod
    def argument_error(exc: stdlib.ArgumentError, given: dict[str, ir.Node], node: ir.Call) -> SchedlangError:
        """A built-in's ``ArgumentError`` at the argument it names (the item of a list argument,
        when it names one), or at the call."""
        where = given.get(exc.argument) if exc.argument is not None else None
        if where is not None and exc.item is not None and isinstance(where, ir.List):
            where = where.items[exc.item]
        return SchedlangError(exc.message, (where or node).span, hint=exc.hint)

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
        if not isinstance(node, ir.Name) or node.id not in arg.choices:
            written = node.id if isinstance(node, ir.Name) else getattr(node, "value", None)
            ours = stdlib.FRAMEWORK_SHAPE_NAMES.get(written) if isinstance(written, str) else None
            hint = (f"'{written}' is called {ours} here" if ours in arg.choices
                    else "one of " + ", ".join(arg.choices) + " (a bare name)")
            noun = "warmup" if arg.choices == stdlib.WARMUP_SHAPES else "cooldown"
            raise SchedlangError(f"{what} must be a {noun} shape", node.span, hint=hint)
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
        if not isinstance(value, ListValue) or (not value.items and not arg.empty_ok):
            raise SchedlangError(f"{what} must be a non-empty list like [1000, 2000]", node.span)
        items = []
        for item, item_node in zip(value.items, list_nodes(node, value)):
            if arg.name in STEP_LISTS and isinstance(item, Segment) and self.length_units:
                self.length_units[-1].append((item.clock, item_node.span))
                item = replace(item, clock=None)
            item = self.constant_of(item, item_node, f"an item of {arg.name}")
            if arg.name in STEP_LISTS and self.time_scales and not has_time_unit(item_node):
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
                 for item, item_node in zip(value.items, list_nodes(node, value))]
        for segment, item_node in found:
            self.refuse_clock(segment, item_node.span, what)
        return [segment for segment, _ in found]

    def _pairs_argument(self, arg: stdlib.Arg, node: ir.Node, what: str) -> list:
        return self.pairs(node, what)

    def _any_argument(self, arg: stdlib.Arg, node: ir.Node, what: str):
        return self.value(node)

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
        bound, read = {}, set()  # read: the arguments whose values read the clock (_name)
        for param, arg in zip(fdef.params, node.args):
            bound[param] = self.value(arg)
            if self.last_read:
                read.add(param)
        for kw in node.keywords:
            if kw.name not in fdef.params:
                hint, fix = suggest(kw.name, fdef.params, _keyword_name_span(kw))
                raise SchedlangError(f"{fdef.name}() has no parameter '{kw.name}'", kw.span,
                                     hint=hint, code="unknown-argument", fix=fix)
            if kw.name in bound:
                raise SchedlangError(f"{fdef.name}() got '{kw.name}' twice", kw.span)
            bound[kw.name] = self.value(kw.value)
            if self.last_read:
                read.add(kw.name)
        missing = [p for p in fdef.params if p not in bound]
        if missing:
            raise SchedlangError(f"{fdef.name}() is missing '{missing[0]}'", node.span,
                                 hint=f"{fdef.name}({', '.join(fdef.params)})")
        self._spend_expansion(fdef, node)
        self.calling.append(fdef.name)
        self.scopes.append(bound)
        self.scope_reads.append(read)
        try:
            return self.value(fdef.body)
        finally:
            self.scopes.pop()
            self.scope_reads.pop()
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


def _node_count(node) -> int:
    """How many IR nodes ``node`` holds: the cost of expanding it once (iterative: no recursion)."""
    return sum(1 for _ in ir.walk(node))


def _keyword_name_span(kw: ir.Keyword) -> Span:
    """Where the name of ``name=value`` is written (a keyword's span covers the value too)."""
    span = kw.span
    return Span(span.source, span.line, span.column, span.line, span.column + len(kw.name))
