"""The standard library: core schedules, extra built-ins and math functions.

Each entry is a tiny pure function from checked arguments to a ``Segment``
(optax's style: small constructors, composed by ``>>``).  Its ``Signature``
says what kind each argument must be, so wrong arities, unknown keywords and
a list where a number belongs are reported at the argument, before the
function runs.  Formulas are in the docstrings; ``docs/stdlib.md`` lists them.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable
from dataclasses import dataclass

import sympy as sp

from ..core.algebra import (
    Segment,
    at,
    ordered,
    periodic,
    tau,  # formulas are built in the real-valued step, not t
)
from ..core.functions import FUNCTIONS
from ..core.special import geometric, restart_index, restart_start

REQUIRED = object()
THREE_TENTHS = sp.Rational(3, 10)
HALF = sp.Rational(1, 2)


class ArgumentError(Exception):
    """Raised by a builtin about one of its arguments (``item``: one item of a list argument;
    ``argument`` None: the call as a whole); lowering adds the span."""

    def __init__(self, argument: str | None, message: str, hint: str | None = None,
                 item: int | None = None):
        super().__init__(message)
        self.argument, self.message, self.hint, self.item = argument, message, hint, item

class Kind(enum.StrEnum):
    """What an argument of a built-in or preset must be; lowering checks and converts by it.

    One enum for the standard library, every preset and the importers and exporters
    that read a preset's signature (a value of it compares equal to its name).
    """

    VALUE = "value"          #: a number or schedule (its held formula is used)
    STEPS = "steps"          #: a period (``every``, ``up``): constant in t, a positive whole number
    DURATION = "duration"    #: a length (``n``): constant in t, whole, >= 0; 0 is a zero-length segment
    CONST = "const"          #: a number constant in t (a power, a ratio)
    VALUES = "values"        #: a list of numbers constant in t
    SCHEDULE = "schedule"    #: a schedule, finite or not
    FINITE = "finite"        #: a schedule with a finite duration (what repeat and cycle play again)
    SHAPE = "shape"          #: a bare shape name from ``Arg.choices`` (warmup's, cooldown's)
    OPTION = "option"        #: a double-quoted string from a fixed set (``Arg.choices``)
    FLAG = "flag"            #: true or false
    SCHEDULES = "schedules"  #: a non-empty list of schedules (SequentialLR, ChainedScheduler)
    PAIRS = "pairs"          #: a list of [number, number] pairs, maybe empty (optax's boundaries_and_scales)
    ANY = "any"              #: a number or a list, unconverted: an argument the preset refuses whenever it
                             #: is given, for what it does, not for its type (timm's noise_range_t)


@dataclass(frozen=True)
class Arg:
    name: str
    kind: Kind
    default: object = REQUIRED
    choices: tuple[str, ...] = ()
    #: a ``values`` list that may be empty, where the library takes ``[]`` (Composer's
    #: ``milestones=[]``: no milestone, so no decay)
    empty_ok: bool = False

    def __post_init__(self):
        object.__setattr__(self, "kind", Kind(self.kind))  # a misspelt kind fails at import

    def shown_choices(self) -> list[str]:
        """The choices as a program writes them: an option quoted, a shape a bare name."""
        return [f'"{c}"' if self.kind == Kind.OPTION else c for c in self.choices]


@dataclass(frozen=True)
class Builtin:
    name: str
    args: tuple[Arg, ...]
    build: Callable[..., object]
    variadic: bool = False  # min/max take any number (>= 2) of values
    #: A preset whose framework counts the unit its lengths are given in (Composer's ``"100tok"``
    #: reads the tokens seen): lengths in ``sp``/``tok`` put it on that clock, as for a built-in.
    clock_from_lengths: bool = False
    #: Keywords the library takes somewhere else (the Trainer's, not the scheduler's), each with
    #: how schedlang writes it (``{name}``: this builtin's): the hint when a call gives one
    #: (Composer's ``ssr``).
    elsewhere: tuple[tuple[str, str], ...] = ()

    @property
    def doc(self) -> str:
        return (self.build.__doc__ or "").strip()

    def signature(self) -> str:
        if self.variadic:
            return f"{self.name}(a, b, ...)"
        parts = [a.name if a.default is REQUIRED else f"{a.name}={show_default(a.default)}"
                 for a in self.args]
        return f"{self.name}({', '.join(parts)})"


@dataclass(frozen=True)
class TimeDefault:
    """A default written as a Composer time (``1dur``, ``1ep``): lowering converts it to
    steps with the file's ``max_duration`` / ``steps_per_epoch`` parameters, as it does
    for the same literal written in the call."""

    amount: int
    unit: str

    def __str__(self) -> str:
        return f"{self.amount}{self.unit}"


@dataclass(frozen=True)
class InheritedDefault:
    """A default the enclosing composite may give instead: a torch preset's ``lr`` is the
    ``lr=`` of the ``SequentialLR`` / ``ChainedScheduler`` it is a child of, else ``value``."""

    value: int

    def __str__(self) -> str:
        return str(self.value)


def show_default(value) -> str:
    """A default as a program writes it (``"triangular"``, ``false``, ``0.3``, ``1dur``)."""
    if isinstance(value, (TimeDefault, InheritedDefault)):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, sp.Rational) and not value.is_Integer:
        return f"{float(value):g}"
    return "none" if value is None else str(value)


@dataclass(frozen=True)
class Warmup:
    """``warmup(shape, n, start)``: a ramp whose target is the next segment's start value."""

    shape: str
    steps: sp.Expr
    start: sp.Expr
    clock: str | None = None  # its length in samples or tokens (see ``Segment.clock``)

    def ramp_to(self, target: sp.Expr) -> Segment:
        return dataclasses.replace(self._ramp_to(target), clock=self.clock)

    def _ramp_to(self, target: sp.Expr) -> Segment:
        n, start = self.steps, self.start
        if n == 0:  # zero-length (SPEC §1): nothing to ramp, `warmup(linear, 0) >> b` is `b`
            return Segment(target, n)
        if self.shape == "linear":
            expr = start + (target - start) * tau / n
        elif self.shape == "cosine":
            expr = target + (start - target) * DECAY_SHAPES["cosine"](tau / n)
        else:  # exp: geometric from start to target; both must be positive
            expr = start * geometric(target / start, tau / n)
        return Segment(expr, n)


#: The decay shapes of ``cooldown`` and of the presets' warmup-stable-decay schedules, written
#: once: ``c(q)`` falls from 1 at ``q = 0`` to 0 at ``q = 1``, and a decay from ``a`` to ``b``
#: is ``b + (a - b) * c(q)``.  Megatron's ``--lr-wsd-decay-style`` (``minus_sqrt`` is ``sqrt``,
#: ``exponential`` is ``megatron_exponential``), HF's ``warmup_stable_decay`` (``1-sqrt``),
#: torchtitan's ``decay_type`` and OLMo-core's linear tail are these formulas.
DECAY_SHAPES: dict[str, Callable[[sp.Expr], sp.Expr]] = {
    "linear": lambda q: 1 - q,
    "cosine": lambda q: HALF * (1 + periodic(sp.cos, sp.pi * q)),
    "sqrt": lambda q: 1 - sp.sqrt(q),                        # Hägele et al.'s "1-sqrt"
    "megatron_exponential": lambda q: 2 * geometric(HALF, q) - 1,
}

#: ``cooldown``'s shapes: the decay shapes, and ``exp`` (geometric, from its start to ``to``).
COOLDOWN_SHAPES = ("linear", "cosine", "sqrt", "exp", "megatron_exponential")

#: What the frameworks call a cooldown shape, for the hint of a name that is not one.
FRAMEWORK_SHAPE_NAMES = {"minus_sqrt": "sqrt", "1-sqrt": "sqrt", "one_minus_sqrt": "sqrt",
                         "exponential": "megatron_exponential", "cos": "cosine"}


@dataclass(frozen=True)
class Cooldown:
    """``cooldown(shape, n, to)``: a ramp from the end value of the segment before ``>>`` to ``to``."""

    shape: str
    steps: sp.Expr
    to: sp.Expr
    clock: str | None = None  # its length in samples or tokens (see ``Segment.clock``)

    def ramp_from(self, start: sp.Expr) -> Segment:
        return dataclasses.replace(self._ramp_from(start), clock=self.clock)

    def _ramp_from(self, start: sp.Expr) -> Segment:
        n, to = self.steps, self.to
        if n == 0:  # zero-length (SPEC §1): its value at local step n = 0 is `to`, held after
            return Segment(to, n)
        if self.shape == "exp":  # geometric from start to `to`; both must be positive
            return Segment(start * geometric(to / start, tau / n), n)
        return Segment(to + (start - to) * DECAY_SHAPES[self.shape](tau / n), n)


# -- core schedules (SPEC §3) ----------------------------------------------------------


def constant(v, n=None):
    """``v``; forever, or for ``n`` steps when ``n`` is given."""
    return Segment(v, n)


def linear(v0, v1, n):
    """``v0 + (v1 - v0) * t / n`` for ``n`` steps, then ``v1``."""
    return Segment(v0 + (v1 - v0) * tau / n, n)


def cosine(v0, v1, n):
    """``v1 + (v0 - v1) * (1 + cos(pi * t / n)) / 2`` for ``n`` steps, then ``v1``."""
    return Segment(v1 + (v0 - v1) * (1 + periodic(sp.cos, sp.pi * tau / n)) / 2, n)


def poly(v0, v1, n, power=1):
    """``(v0 - v1) * (1 - t / n) ** power + v1`` for ``n`` steps, then ``v1``."""
    return Segment((v0 - v1) * (1 - tau / n) ** power + v1, n)


def exp_decay(v0, rate, n, staircase=False):
    """``v0 * rate ** (t / n)`` forever (``floor(t / n)`` in the exponent when staircase)."""
    exponent = sp.floor(tau / n) if staircase else tau / n
    return Segment(v0 * geometric(rate, exponent))


def step(v0, gamma, every):
    """``v0 * gamma ** floor(t / every)`` forever."""
    return Segment(v0 * geometric(gamma, sp.floor(tau / every)))


def multistep(v0, gamma, milestones):
    """``v0 * gamma ** k`` where ``k`` counts the milestones ``<= t`` (repeats count twice)."""
    sorted_milestones = ordered(milestones)  # numbers, or ``[30ep, 60ep]``: a flat table
    if sorted_milestones is not None:
        branches = [(v0 * gamma**i, sp.Lt(tau, m)) for i, m in enumerate(sorted_milestones)]
        return Segment(sp.Piecewise(*branches, (v0 * gamma ** len(sorted_milestones), True)))
    count = sum((sp.Piecewise((1, sp.Ge(tau, m)), (0, True)) for m in milestones), sp.Integer(0))
    return Segment(v0 * geometric(gamma, count))


def piecewise(values, milestones):
    """``values[i]`` from milestone ``i-1`` (inclusive) to milestone ``i``; the last value forever."""
    if len(values) != len(milestones) + 1:
        raise ArgumentError("values", f"piecewise() needs one more value than milestones; got "
                            f"{len(values)} values and {len(milestones)} milestones")
    branches = [(v, sp.Lt(tau, m)) for v, m in zip(values, milestones)]
    return Segment(sp.Piecewise(*branches, (values[-1], True)))


def warmup(shape, n, start=0):
    """Ramp from ``start`` to the start value of the segment after ``>>`` over ``n`` steps."""
    return Warmup(shape, n, start)


def cooldown(shape, n, to):
    """Ramp from the end value ``a`` of the segment before ``>>`` to ``to`` over ``n`` steps
    (or ``tok``/``sp``), then hold ``to``; with ``q = t / n``: ``to + (a - to) * c(q)``,
    ``c`` = ``1 - q`` (``linear``), ``(1 + cos(pi q)) / 2`` (``cosine``), ``1 - sqrt(q)``
    (``sqrt``: Megatron's ``minus_sqrt``, HF's ``1-sqrt``), ``2 * 0.5 ** q - 1``
    (``megatron_exponential``: Megatron's ``exponential``); ``exp`` is ``a * (to / a) ** q``."""
    return Cooldown(shape, n, to)


# -- more built-ins ---------------------------------------------------------------------


def inverse_sqrt(v0, n=1):
    """``v0`` for ``t < n``, then ``v0 * sqrt(n / t)`` forever (transformer-style decay)."""
    return Segment(sp.Piecewise((v0, sp.Lt(tau, n)), (v0 * sp.sqrt(n / tau), True)))


def rsqrt_decay(v0, n):
    """``v0 * sqrt(n / (t + n))`` forever: inverse-square-root decay from ``v0`` as if ``n``
    steps had already passed, so after ``warmup(linear, n)`` it decays at once.
    ``warmup(linear, 4000) >> rsqrt_decay(7e-4, 4000)`` is ``7e-4 * sqrt(4000 / T)`` at every
    global step ``T >= 4000`` (fairseq's ``inverse_sqrt``; ``inverse_sqrt`` is flat for ``n`` steps)."""
    return Segment(v0 * sp.sqrt(n / (tau + n)))


def noam(d_model, warmup, factor=1):
    """The Transformer schedule (Vaswani et al. 2017; tensor2tensor's ``noam``) with ``s = t + 1``:
    ``factor * d_model ** -0.5 * min(s * warmup ** -1.5, s ** -0.5)`` forever: linear up to
    ``factor / sqrt(d_model * warmup)`` at ``t = warmup - 1``, then ``1 / sqrt(s)`` decay."""
    s = tau + 1
    scale = factor / sp.sqrt(d_model)
    return Segment(scale * sp.Piecewise((s / warmup ** sp.Rational(3, 2), sp.Lt(tau, warmup - 1)),
                                        (1 / sp.sqrt(s), True)))


def cosine_restarts(v0, v1, period, mult=1):
    """SGDR: cosine from ``v0`` to ``v1`` over ``period`` steps, restarting forever.

    Cycle ``i`` lasts ``period * mult**i`` steps (``mult`` a whole number >= 1);
    within it ``v1 + (v0 - v1) * (1 + cos(pi * t_i / T_i)) / 2``.
    """
    mult = sp.Integer(mult) if isinstance(mult, int) else mult  # presets pass Python ints
    if not (mult.is_Integer and mult >= 1):  # torch's T_mult too; cycle lengths stay whole
        raise ArgumentError("mult", f"mult must be a whole number >= 1, not {mult}",
                            hint="use 1, 2, 3, ... (a fractional multiplier makes cycle lengths "
                                 "fractional), or write the cycles out with >>")
    if mult == 1:
        local, length = sp.Mod(tau, period), period
    else:
        index = restart_index(tau, period, mult)
        local, length = tau - restart_start(index, period, mult), period * mult**index
    return Segment(v1 + (v0 - v1) * (1 + sp.cos(sp.pi * local / length)) / 2)


def cyclic(lo, hi, up, down=None, mode="triangular", gamma=1):
    """Triangle waves between ``lo`` and ``hi`` (torch's CyclicLR): ``up`` steps up, ``down`` down.

    ``triangular2`` halves the height every cycle; ``exp_range`` scales it by ``gamma ** t``.
    """
    down = up if down is None else down
    total = up + down
    local = sp.Mod(tau, total)
    fraction = sp.Piecewise((local / up, sp.Le(local, up)), ((total - local) / down, True))
    if mode == "triangular":
        scale = 1
    elif mode == "triangular2":
        scale = geometric(sp.Rational(1, 2), sp.floor(tau / total))
    else:
        scale = geometric(gamma, tau)
    return Segment(lo + (hi - lo) * fraction * scale)


def onecycle(peak, n, pct_start=THREE_TENTHS, div_factor=25, final_div_factor=10_000,
             anneal="cos", three_phase=False):
    """One cycle (torch's OneCycleLR) over ``n`` steps: ``peak/div`` up to ``peak``, then down.

    Phase ends are ``pct_start*n - 1`` (and ``2*pct_start*n - 2`` with three phases) and
    ``n - 1``; each phase interpolates by cosine (``anneal="cos"``) or linearly.  After
    ``n - 1`` it holds ``peak / (div_factor * final_div_factor)``.
    """
    initial = peak / div_factor
    expr = onecycle_phases(initial, peak, initial / final_div_factor, n, pct_start, anneal, three_phase)
    return Segment(expr, n)


def onecycle_ramps(initial, peak, low, n, pct_start, anneal: str, three_phase: bool, step=tau) -> list:
    """torch's one-cycle phases as ``(formula in step, last step of the phase)`` pairs.

    Phase ends are ``pct_start*n - 1`` (``2*pct_start*n - 2``) and ``n - 1``; each phase
    interpolates ``a -> b`` by cosine (``b + (a - b)/2 (1 + cos(pi p))``) or linearly.
    Shared by the stdlib, torch, Cerebras and mmengine one-cycles, which differ only in
    what comes after the last phase.
    """
    end0 = pct_start * n - 1
    if three_phase:
        phases = [(0, end0, initial, peak), (end0, 2 * pct_start * n - 2, peak, initial),
                  (2 * pct_start * n - 2, n - 1, initial, low)]
    else:
        phases = [(0, end0, initial, peak), (end0, n - 1, peak, low)]

    def ramp(begin, end, a, b):
        pct = (step - begin) / (end - begin)
        if anneal == "cos":
            return b + (a - b) / 2 * (1 + sp.cos(sp.pi * pct))
        return (b - a) * pct + a

    return [(ramp(*phase), phase[1]) for phase in phases]


def onecycle_phases(initial, peak, low, n, pct_start, anneal: str, three_phase: bool) -> sp.Expr:
    """The phases of ``onecycle_ramps``, then ``low`` after the last phase end."""
    ramps = onecycle_ramps(initial, peak, low, n, pct_start, anneal, three_phase)
    return sp.Piecewise(*((value, sp.Le(tau, end)) for value, end in ramps), (low, True))


def repeat(schedule: Segment, times=None):
    """Play a finite schedule ``times`` times (forever without ``times``); then hold its end."""
    d = schedule.duration
    if d == 0:
        raise ArgumentError("schedule", "a zero-length schedule has no steps to repeat",
                            hint="give it a length of at least 1 step")
    once = at(schedule.expr, sp.Mod(tau, d))
    if times is None:
        return Segment(once)
    return Segment(sp.Piecewise((once, sp.Lt(tau, d * times)), (schedule.end_value(), True)), d * times)


def cycle(schedule: Segment):
    """Repeat a finite schedule forever (``repeat`` without a count)."""
    return repeat(schedule)


def stretch(schedule: Segment, factor):
    """Run a schedule ``factor`` times slower: ``s(t / factor)``; durations scale by ``factor``."""
    duration = None if schedule.duration is None else schedule.duration * factor
    return Segment(at(schedule.expr, tau / factor), duration)


def scale(schedule: Segment, ratio, scale_warmup=False):
    """Composer's ``scale_schedule_ratio``: every duration inside becomes ``floor(d * ratio)``.

    Lengths, ``for``, milestones and time literals (``500ba``, ``2ep``) are scaled as
    Composer's ``int(value * ssr)``; ``dur`` counts against ``floor(max_duration * ratio)``.
    Warmup lengths (``warmup(shape, n)``, ``t_warmup=``) keep theirs unless
    ``scale_warmup=true``.  ``t`` written directly inside is refused (it has no duration).
    """
    return schedule  # lowering rescales the durations while it builds ``schedule``


# -- math functions (SPEC §2) -----------------------------------------------------------


#: name -> builder, and how many arguments (None: two or more); the rows are ``functions.FUNCTIONS``.
MATH = {f.name: f.build for f in FUNCTIONS}
MATH_ARITY = {f.name: f.arity for f in FUNCTIONS}
CONSTANTS = {"pi": sp.pi, "e": sp.E}


def _b(name, build, *args, **kw) -> Builtin:
    return Builtin(name, tuple(args), build, **kw)


V, S, D = Kind.VALUE, Kind.STEPS, Kind.DURATION
WARMUP_SHAPES = ("linear", "cosine", "exp")
#: The kinds that are a number of steps (what time literals like ``100ba`` may give).
STEP_KINDS = (S, D)
SCHEDULES = {b.name: b for b in [
    _b("constant", constant, Arg("v", V), Arg("n", D, None)),
    _b("linear", linear, Arg("v0", V), Arg("v1", V), Arg("n", D)),
    _b("cosine", cosine, Arg("v0", V), Arg("v1", V), Arg("n", D)),
    _b("poly", poly, Arg("v0", V), Arg("v1", V), Arg("n", D), Arg("power", Kind.CONST, 1)),
    _b("exp", exp_decay, Arg("v0", V), Arg("rate", V), Arg("n", S), Arg("staircase", Kind.FLAG, False)),
    _b("step", step, Arg("v0", V), Arg("gamma", V), Arg("every", S)),
    _b("multistep", multistep, Arg("v0", V), Arg("gamma", V), Arg("milestones", Kind.VALUES)),
    _b("piecewise", piecewise, Arg("values", Kind.VALUES), Arg("milestones", Kind.VALUES)),
    _b("warmup", warmup, Arg("shape", Kind.SHAPE, choices=WARMUP_SHAPES), Arg("n", D), Arg("start", V, 0)),
    _b("cooldown", cooldown, Arg("shape", Kind.SHAPE, choices=COOLDOWN_SHAPES), Arg("n", D),
       Arg("to", Kind.CONST)),
    _b("inverse_sqrt", inverse_sqrt, Arg("v0", V), Arg("n", S, 1)),
    _b("cosine_restarts", cosine_restarts, Arg("v0", V), Arg("v1", V), Arg("period", S),
       Arg("mult", Kind.CONST, 1)),
    _b("cyclic", cyclic, Arg("lo", V), Arg("hi", V), Arg("up", S), Arg("down", S, None),
       Arg("mode", Kind.OPTION, "triangular", ("triangular", "triangular2", "exp_range")),
       Arg("gamma", V, 1)),
    _b("onecycle", onecycle, Arg("peak", V), Arg("n", D), Arg("pct_start", Kind.CONST, sp.Rational(3, 10)),
       Arg("div_factor", Kind.CONST, 25), Arg("final_div_factor", Kind.CONST, 10_000),
       Arg("anneal", Kind.OPTION, "cos", ("cos", "linear")), Arg("three_phase", Kind.FLAG, False)),
    _b("repeat", repeat, Arg("schedule", Kind.FINITE), Arg("times", S, None)),
    _b("cycle", cycle, Arg("schedule", Kind.FINITE)),
    _b("stretch", stretch, Arg("schedule", Kind.SCHEDULE), Arg("factor", Kind.CONST)),
    _b("scale", scale, Arg("schedule", Kind.SCHEDULE), Arg("ratio", Kind.CONST),
       Arg("scale_warmup", Kind.FLAG, False)),
    _b("rsqrt_decay", rsqrt_decay, Arg("v0", V), Arg("n", S)),
    _b("noam", noam, Arg("d_model", Kind.CONST), Arg("warmup", S), Arg("factor", Kind.CONST, 1)),
]}

#: Names a schedule can never depend on, with the reason shown to the user.
DATA_DEPENDENT = {
    name: "a schedule is a closed-form function of the step; it cannot depend on values "
          "known only while training runs"
    for name in ("loss", "lr", "metric", "metrics", "val_loss", "grad", "grad_norm", "accuracy",
                 "epoch_loss", "prev", "previous", "last_lr", "value", "plateau")
}
