"""The Python API: ``compile``/``load`` give a ``Program`` of ``Schedule`` objects.

A program stays symbolic in its parameters (so a scheduler class can take
them as constructor arguments) and also knows their bound values (defaults,
overridden by ``params=``), which is what ``Schedule.expr``, ``__call__`` and
the checks use.
"""

from __future__ import annotations

import functools
from pathlib import Path

import sympy as sp

from .codegen import python as python_codegen
from .codegen.base import (
    ModuleSpec,
    ParamSpec,
    ScheduleSpec,
    main_schedule_name,
    no_schedule,
    number_literal,
    number_value,
    unique_names,
)
from .core.algebra import Segment, bind, breakpoints, finish, flatten, t
from .core.clock import Clock
from .errors import SchedlangError, Span, did_you_mean
from .limits import MAX_STEP, read_source, recursion_room
from .runtime.composer import ComposerScheduler
from .runtime.reference import first_overflow_step, load_reference
from .semantics import check
from .semantics.clock import COUNTS
from .semantics.durations import relocate
from .semantics.lower import Lowered, lower
from .semantics.params import ParamInfo, bind_params, plain_symbol, to_number
from .semantics.run import RunLength
from .semantics.run import steps as run_steps
from .semantics.steps import check_steps, check_within_steps
from .syntax.parser import parse


def compile(source: str | bytes, params: dict | None = None, filename: str = "<string>") -> Program:  # noqa: A001
    """Parse, lower and check a schedule program; ``params`` bind declared parameters."""
    with recursion_room():
        return compile_parsed(parse(source, filename), params)


def compile_parsed(module, params: dict | None = None) -> Program:
    """``compile`` of a module already parsed (``syntax.parser.parse``): the editor parses each
    version of a buffer once, for its outline and its compile alike."""
    with recursion_room():
        return Program(lower(module, given=params), params or {})


def compile_declared(source: str | bytes, params: dict, filename: str = "<string>") -> Program:
    """``compile`` with those of ``params`` the source declares (one set of ``-D`` values can
    serve several files with different parameters); ``Program.params`` says which it declares."""
    with recursion_room():
        lowered = lower(parse(source, filename), given=params)
        return Program(lowered, {k: v for k, v in params.items() if k in lowered.params})


def load(path: str | Path, params: dict | None = None) -> Program:
    """``compile`` the file at ``path``."""
    return compile(read_source(path), params, filename=str(path))


class Program:
    """The schedules of one file, their parameters and the values bound to them."""

    def __init__(self, lowered: Lowered, given: dict):
        self.params: dict[str, ParamInfo] = lowered.params
        self._lowered = lowered
        self.values: dict[str, sp.Expr] = self._bind(given)
        if any(self.values.get(name) != value for name, value in lowered.fixed.items()):
            # the batch schedule, or a place on it, was computed with other values: placed
            # again with these, the file not lowered again (Lowered.placed)
            lowered = self._lowered = lowered.placed(self.values)
        self.schedules: dict[str, Schedule] = {
            name: Schedule(name, segment, self, span)
            for name, (segment, span) in lowered.schedules.items()
        }
        try:
            self._check()
        except SchedlangError as exc:
            raise relocate(exc, lowered, self.substitutions) from None

    # -- binding ---------------------------------------------------------------------

    def _bind(self, given: dict) -> dict[str, sp.Expr]:
        for name in given:
            if name not in self.params:
                raise SchedlangError(f"the file has no parameter '{name}'",
                                     hint=did_you_mean(name, self.params) or
                                     ("it declares " + ", ".join(self.params) if self.params
                                      else "it declares no parameters"))
        return bind_params(self.params, given)

    @property
    def substitutions(self) -> dict[sp.Symbol, sp.Expr]:
        return {self.params[n].symbol: v for n, v in self.values.items()}

    @property
    def fixed(self) -> dict[str, sp.Expr]:
        """Parameters the batch schedule, or a segment's place on it, was computed with: fixed
        when the file is compiled (not a scheduler constructor's keyword; SPEC §12); ``rebind``
        with other values places the file again, without lowering it again."""
        return self._lowered.fixed

    @property
    def from_source(self) -> bool:
        """Whether it was compiled from a file's text (not ``Schedule.from_sympy``), so it can be
        placed again (``on_clock``, ``measured_forms``; a program built otherwise has no batch
        schedule)."""
        return self._lowered.module is not None

    @property
    def durations(self) -> list[tuple[sp.Expr, Span | None, bool]]:
        """Every length the file writes: ``(steps, span, zero_ok)``, in the parameters."""
        return self._lowered.durations

    def value_of(self, node):
        """The value lowering gives a node of the file's tree (``semantics.lower.Lowered.value``),
        its errors at the node."""
        return self._lowered.value(node)

    # -- the run's time in samples and tokens (SPEC §12) --------------------------------

    @property
    def batch_schedule(self) -> Clock | None:
        """The batch schedule the file declares (``batch = ...``) or was placed on
        (``on_clock``); None without one (``clock`` then reads ``param batch_size``)."""
        return self._lowered.clock

    @property
    def clock(self) -> Clock:
        """The batch schedule and tokens per sample: the file's ``batch = ...``, else a
        constant ``param batch_size`` (and ``param seq_len`` for tokens)."""
        if self._lowered.clock is not None:
            return self._lowered.clock
        size = self.values.get("batch_size")
        if size is None:
            raise SchedlangError("the file has no batch schedule",
                                 hint="declare `batch = ...` (or a `param batch_size: int` with "
                                      "a value) for samples and tokens")
        seq_len = self.values.get("seq_len")
        return Clock(((0, int(size)),), None if seq_len is None else int(seq_len))

    def batch_at(self, step: int) -> int:
        """Samples in step ``step``."""
        return self.clock.batch_at(_whole(step, "a step"))

    def samples_at(self, step: int) -> int:
        """Samples consumed before step ``step`` (``S_k``)."""
        return self.clock.samples_at(_whole(step, "a step"))

    def tokens_at(self, step: int) -> int:
        """Tokens consumed before step ``step`` (``T_k``)."""
        return self.clock.tokens_at(_whole(step, "a step"))

    def step_at(self, *, tokens: int | None = None, samples: int | None = None) -> int:
        """The first step whose consumed-before count is at least ``tokens`` (or ``samples``)."""
        if (tokens is None) == (samples is None):
            raise SchedlangError("step_at takes tokens= or samples=, one of them")
        if tokens is not None:
            return self.clock.step_at_tokens(_whole(tokens, "tokens"))
        return self.clock.step_at_samples(_whole(samples, "samples"))

    # -- the run's length (SPEC §14) ------------------------------------------------

    @property
    def run(self) -> int | None:
        """The steps the run trains (``run = ...``): an exact int, None when the file declares
        no run.  A run in ``tok``/``sp`` trains the steps whose consumed-before count is below it."""
        if self._lowered.run is None:
            return None
        return run_steps(self._lowered.run, self.substitutions, self._run_clock)

    @property
    def run_tokens(self) -> int | None:
        """Tokens consumed by the run's end (``T_run``); None without a run or a token clock."""
        clock = self._run_clock
        if self.run is None or clock is None or clock.seq_len is None:
            return None
        return clock.tokens_at(self.run)

    @property
    def run_samples(self) -> int | None:
        """Samples consumed by the run's end (``S_run``); None without a run or a batch schedule."""
        clock = self._run_clock
        if self.run is None or clock is None:
            return None
        return clock.samples_at(self.run)

    @property
    def run_length(self) -> RunLength | None:
        """The run's length as the file writes it (its amount, unit and span); None: no run."""
        return self._lowered.run

    @property
    def run_is_bound(self) -> bool:
        """Whether the run's length is known: declared, every parameter it names bound."""
        run = self._lowered.run
        return run is not None and not (run.amount.xreplace(self.substitutions).free_symbols)

    @property
    def _run_clock(self) -> Clock | None:
        """The batch schedule, None when the file has none (``clock`` raises then)."""
        try:
            return self.clock
        except SchedlangError:
            return None

    @property
    def group_params(self) -> dict[str, ParamInfo]:
        """The ``group`` parameters: what only a torch scheduler class can give per group."""
        return {name: info for name, info in self.params.items() if info.per_group}

    @property
    def unbound(self) -> list[str]:
        return [n for n in self.params if n not in self.values]

    @property
    def constraints(self) -> list[sp.Basic]:
        """Declared ``where`` clauses and the positivity of every duration, in the symbols."""
        # A clause may name other parameters (``where n >= w``): every plain symbol in it is
        # the parameter's own symbol, not a stray one that shares only the name.
        symbols = {plain_symbol(n, info.type): info.symbol for n, info in self.params.items()}
        found = [info.where.xreplace(symbols) for info in self.params.values() if info.where is not None]
        found += [sp.Ge(d, 0) if zero_ok else sp.Gt(d, 0)
                  for d, _, zero_ok in self._lowered.durations if d.free_symbols]
        return found

    # -- checks ----------------------------------------------------------------------

    def _check(self) -> None:
        if self.run_is_bound:
            self.run  # noqa: B018 - a run of no step, or past the largest step, is refused here
        symbols = [info.symbol for info in self.params.values()]
        for schedule in self.schedules.values():
            check.check_closed_form(schedule.symbolic_expr, symbols, schedule.span)
        substitutions = self.substitutions
        for duration, span, zero_ok in self._lowered.durations:
            bound = duration.xreplace(substitutions)
            if bound.is_number:
                check_steps(bound, span, zero_ok)
        # Float64 overflow is checked on the steps the run uses (SPEC §4, "on its domain"): with
        # `run = N` that is steps 0 .. N (N: the value its last scheduler step sets, which a
        # checkpoint written at the end holds); without a run, every step up to MAX_STEP.
        run = self.run if self.run_is_bound else None
        last = MAX_STEP if run is None else min(run, MAX_STEP)
        for schedule in self.schedules.values():
            if schedule.is_bound:
                check_within_steps(schedule.name, schedule.duration, schedule.breakpoints, schedule.span)
                check.check_closed_form(schedule.expr, symbols, schedule.span)
                step = check.first_nonfinite_step(schedule.expr)
                if step is not None:
                    raise SchedlangError(f"schedule '{schedule.name}' is not finite at step {step}",
                                         schedule.span,
                                         hint="a division by zero, or sqrt/log of a negative "
                                              "number or zero, at that step")
                step = first_overflow_step(schedule._function, schedule.breakpoints, last)
                if step is not None:
                    within = f" (the run ends at step {run})" if run is not None else ""
                    raise SchedlangError(f"schedule '{schedule.name}' overflows float64 from step "
                                         f"{step} on{within} (it or a part of its formula exceeds "
                                         "1.8e308)", schedule.span,
                                         hint="bound it, e.g. min(..., 1.0), or give it a length "
                                              "with `for N` so it holds a finite end value" +
                                              ("" if run is not None else ", or declare the run's "
                                               "length (`run = N`) if it ends before that step"))

    # -- access ----------------------------------------------------------------------

    def __getitem__(self, name: str) -> Schedule:
        try:
            return self.schedules[name]
        except KeyError:
            raise no_schedule(name, self.schedules) from None

    def on_clock(self, clock: Clock) -> Program:
        """The same text placed on another run's batch schedule (``clock``): its lengths in
        tokens or samples keep their places on that axis and land on that run's steps, its
        lengths in steps keep their steps; ``run = N tok`` is counted on it too.  How
        ``resume`` and ``verify --axis tokens`` compare runs of other batch sizes (SPEC §12)."""
        if self._lowered.module is None:
            raise SchedlangError("this program was not compiled from source, so it cannot be placed "
                                 "on another batch schedule")
        return Program(self._lowered.placed(self.values, clock=clock), self.values)

    def rebind(self, params: dict) -> Program:
        """The same program with ``params`` over the values it was compiled with, checked like
        ``compile(params=...)`` (a value that breaks a ``where`` clause or makes a schedule
        non-finite is refused the same way)."""
        return Program(self._lowered, {**self.values, **params})

    def main_schedule(self, name: str | None = None, purpose: str = "") -> Schedule:
        """The schedule meant when one is needed: ``name``, else ``lr``, else the only one.

        ``purpose`` says why one is needed, for the error when the file has several and none
        is named ``lr`` (the rule is ``codegen.base.main_schedule_name``, which the Cerebras
        class reads too).
        """
        return self.schedules[main_schedule_name(self.schedules, name, purpose)]

    def __iter__(self):
        return iter(self.schedules.values())

    def __len__(self) -> int:
        return len(self.schedules)

    def module_spec(self, source_name: str | None = None, bind_all: bool = False,
                    with_values: bool = True, *, measured: bool = False) -> ModuleSpec:
        """The checked input of every code generator (``codegen.base.ModuleSpec``, all codegen
        reads): schedules symbolic in the parameters, built once per set of options.

        Bound values become the parameters' defaults; ``bind_all`` substitutes them instead;
        ``with_values=False`` leaves every parameter a required keyword (the in-process
        reference: its text then depends on the file alone, not on the values bound);
        ``measured`` adds the measured forms (``measured_forms``; the torch class reads them),
        which place the file again where it has a batch schedule.
        """
        key = (source_name or self.filename, bind_all, with_values, measured)
        spec = self._module_specs.get(key)
        if spec is None:
            spec = self._module_specs[key] = self._module_spec(*key)
        return spec

    @functools.cached_property
    def _module_specs(self) -> dict[tuple, ModuleSpec]:
        return {}

    def _module_spec(self, source_name: str, bind_all: bool, with_values: bool, measured: bool) -> ModuleSpec:
        py_names = self.py_names
        params = []
        if not bind_all:
            for name, info in self.params.items():
                if name in self.fixed:
                    continue
                value = self.values.get(name)
                params.append(ParamSpec(name, py_names[name], info.symbol,
                                        None if value is None or not with_values else number_literal(value),
                                        group=info.per_group, kind="int" if info.type == "int" else "float",
                                        where=info.where, span=info.span))
        forms, ends = self.measured_forms(bind_all) if measured else ({}, ())
        schedules = []
        for schedule in self.schedules.values():
            expr = schedule.expr if bind_all else schedule.symbolic_expr
            schedules.append(ScheduleSpec(schedule.name, py_names[schedule.name], expr,
                                          schedule.segment.duration, forms.get(schedule.name)))
        clock = self.batch_schedule
        stages = () if clock is None else tuple((s.first, s.samples, s.batch) for s in clock.stages)
        return ModuleSpec(tuple(schedules), tuple(params), source_name, stages,
                          None if clock is None else clock.seq_len, () if clock is None else clock.table,
                          measured, ends)

    def measured_forms(self, bind_all: bool = False) -> tuple[dict[str, sp.Expr], tuple]:
        """Each schedule's *measured form*, where it has one, and the counts where its parts on
        the sample or token clock end: what a scheduler class given measured counts
        (``step(samples=n)``, a restored state whose counts left the plan) evaluates.  A
        segment on those clocks is a function of the count consumed (SPEC §12): in this
        form it reads ``semantics.clock.COUNTS`` (``_samples``, ``_tokens``) instead of the
        plan's count at the step; segments counted in steps still read the step.  The ends
        are ``(unit, count)``, rounded up to whole counts, sorted.  Schedules without a part
        on those clocks have none (their value does not depend on the counts)."""
        if self._lowered.clock is None or self._lowered.module is None:
            return {}, ()
        ends: list = []
        lowered = self._lowered.placed(self.values, measured=ends)
        counts = set(COUNTS.values())
        out = {}
        for name, (segment, _) in lowered.schedules.items():
            held = segment.held()
            if self.fixed:
                held = flatten(bind(held, {self.params[n].symbol: v for n, v in self.fixed.items()}))
            held = finish(held)
            if bind_all:
                held = flatten(bind(held, self.substitutions))
            if held.free_symbols & counts:
                out[name] = held
        whole = sorted({(unit, -(-end.numerator // end.denominator)) for unit, end in ends})
        return out, tuple(whole)

    @functools.cached_property
    def py_names(self) -> dict[str, str]:
        """The identifier of every parameter and schedule in generated code (one-to-one)."""
        return unique_names([*self.params, *self.schedules])

    @property
    def filename(self) -> str:
        first = next(iter(self.schedules.values()))
        return first.span.source.filename if first.span else "<python>"

    def python_source(self, source_name: str | None = None) -> str:
        return python_codegen.generate(self.module_spec(source_name)).source

    def scheduler_class(self, name: str = "Scheduler", target: str = "torch", **options):
        """A ``torch.optim.lr_scheduler.LRScheduler`` subclass setting every schedule of the file."""
        from .runtime.scheduler import scheduler_class  # lazy: the class targets' printers (check needs none)

        return scheduler_class(self, name, target=target, **options)

    @functools.cached_property
    def _reference(self):
        # The very module `schedlang compile --target python` writes, so the in-process
        # reference and the standalone file agree to the last bit.
        # Values are passed by ``Schedule._function``, not baked in as defaults: every rebind
        # (a parameter search, a scheduler constructor) reuses one module per file.
        return load_reference(self.module_spec(with_values=False))


def _whole(value, what: str) -> int:
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise SchedlangError(f"{what} is a whole number >= 0, not {value!r}")
    value = value.__index__()
    if value < 0:
        raise SchedlangError(f"{what} is a whole number >= 0, not {value}")
    return value


class Schedule:
    """One named schedule: its symbolic form, its bound form and fast evaluation."""

    def __init__(self, name: str, segment: Segment, program: Program | None, span: Span | None):
        self.name = name
        self.segment = segment
        self.program = program
        self.span = span

    def __repr__(self) -> str:
        return f"<Schedule {self.name}: {self.expr}>"

    def __rshift__(self, other):
        raise TypeError("a compiled Schedule is finished: compose schedules in the language "
                        "(`a >> b` in the text) or in Python with schedlang.build "
                        "(`from schedlang import build as sb; sb.cosine(...) >> sb.constant(...)`, "
                        "docs/python.md)")

    __rrshift__ = __rshift__

    @classmethod
    def from_sympy(cls, expr, duration=None, *, name: str = "lr", params: dict | None = None) -> Schedule:
        """A schedule from a sympy expression in the step, held to the same checks as a file.

        Any symbol named ``t`` is the step; every other free symbol must be named in
        ``params`` (name -> value, or None to leave it symbolic).  ``duration`` is a whole
        number of steps (the value holds ``f(duration)`` afterwards) or None for forever.
        """
        if not isinstance(expr, sp.Basic):
            expr = to_number(expr, "the expression")
        expr = expr.xreplace({s: t for s in expr.free_symbols if s.name == "t"})
        params = dict(params or {})
        infos = {}
        for symbol in sorted(expr.free_symbols - {t}, key=lambda s: s.name):
            if symbol.name not in params:
                raise SchedlangError(f"the expression depends on '{symbol.name}', which is neither "
                                     "the step t nor a parameter",
                                     hint=f"pass params={{'{symbol.name}': value}}")
            kind = "int" if symbol.is_integer else "float"
            infos[symbol.name] = ParamInfo(symbol.name, kind, symbol, None, None, None)
        if duration is not None:
            duration = to_number(duration, "duration") if not isinstance(duration, sp.Basic) else duration
        unknown = set(params) - set(infos)
        if unknown:
            raise SchedlangError(f"the expression has no parameter '{sorted(unknown)[0]}'")
        given = {k: v for k, v in params.items() if v is not None}
        durations = [] if duration is None else [(duration, None, True)]
        return Program(Lowered(infos, {name: (Segment(expr, duration), None)}, durations), given)[name]

    @functools.cached_property
    def expr(self) -> sp.Expr:
        """The value as a sympy expression in ``schedlang.t``, bound parameters substituted."""
        held = self.symbolic_expr
        # Bound values can decide bounds the symbols could not: one flat table again.
        return flatten(bind(held, self.program.substitutions)) if self.program else held

    @functools.cached_property
    def symbolic_expr(self) -> sp.Expr:
        """The value at every step, in ``schedlang.t``, with every parameter left a symbol but
        those fixed by the run's batch schedule (``Program.fixed``)."""
        held = self.segment.held()
        fixed = self.program.fixed if self.program else {}
        if fixed:
            held = flatten(bind(held, {self.program.params[n].symbol: v for n, v in fixed.items()}))
        return finish(held)

    @functools.cached_property
    def duration(self):
        """Whole steps (int), a sympy expression of unbound parameters, or None for infinity."""
        d = self.segment.duration
        if d is None:
            return None
        if self.program:
            d = d.xreplace(self.program.substitutions)
        return int(d) if d.is_Integer else d

    @property
    def is_bound(self) -> bool:
        return not (self.expr.free_symbols - {t})

    def _require_bound(self):
        missing = sorted(str(s) for s in self.expr.free_symbols - {t})
        if missing:
            raise SchedlangError(
                f"schedule '{self.name}' needs a value for parameter '{missing[0]}'",
                self.program.params[missing[0]].span if self.program and missing[0] in
                self.program.params else self.span,
                hint=f"pass params={{'{missing[0]}': ...}} or -D {missing[0]}=...")

    @functools.cached_property
    def _function(self):
        self._require_bound()
        function = self.program._reference.SCHEDULES[self.name]
        py_names = self.program.py_names
        values = {py_names[name]: number_value(value) for name, value in self.program.values.items()
                  if name not in self.program.fixed}
        # A required parameter this schedule does not use may stay unbound.
        values.update({py_names[name]: None for name in self.program.unbound})
        return functools.partial(function, **values) if values else function

    def __call__(self, step) -> float:
        """The value at ``step`` (a whole number >= 0), from the plain-Python reference."""
        if isinstance(step, bool) or not isinstance(step, int):
            if isinstance(step, float) and step.is_integer():
                step = int(step)
            elif hasattr(step, "__index__"):
                step = step.__index__()
            else:
                raise SchedlangError(f"a step is a whole number >= 0, not {step!r}")
        if step < 0:
            raise SchedlangError(f"a step is a whole number >= 0, not {step}")
        return self._evaluate(self._function, step)

    def _evaluate(self, function, step: int) -> float:
        try:
            return float(function(step))
        except (OverflowError, ZeroDivisionError, ValueError) as exc:
            raise SchedlangError(f"schedule '{self.name}' has no float64 value at step {step} "
                                 f"({exc})", self.span,
                                 hint="the value overflows, or the formula breaks at that step") from None

    def values(self, steps) -> list[float]:
        function = self._function
        return [self._evaluate(function, int(s)) for s in steps]

    def torch(self, steps, dtype=None):
        """Values at a tensor of steps, from branch-free torch code (same shape and device)."""
        from .runtime import arrays  # lazy: the array targets' printers, 18 ms (check needs none)

        return arrays.evaluate(self, steps, "torch", dtype=dtype)

    def jax(self, steps, dtype=None):
        """Values at an integer array of steps, from branch-free ``jnp.where`` code under ``jax.jit``
        (float32, or float64 with ``jax_enable_x64``); see docs/jax.md."""
        from .runtime import arrays  # lazy: the array targets' printers, 18 ms (check needs none)

        return arrays.evaluate(self, steps, "jax", dtype=dtype)

    def composer_scheduler(self, unit="ba", lr: float = 1.0):
        """A native Composer scheduler: ``alpha(state, ssr=1.0) = self(state.timestamp.<unit>) / lr``.

        ``unit`` is ``"ba"`` (batches), ``"ep"``, ``"sp"``, ``"tok"`` or ``"iter"``; ``lr``
        the optimizer's initial lr, which Composer multiplies by alpha (see
        schedlang/runtime/composer.py and docs/guides.md).
        """
        return ComposerScheduler(self, unit=unit, lr=lr)

    @property
    def breakpoints(self) -> list:
        """The steps where the formula changes branch, as far as they are known."""
        return breakpoints(self.expr)
