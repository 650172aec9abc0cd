"""Export by proof: the framework's scheduler call that *is* the file's lr, found and proven.

A format that names one scheduler with its keywords (Megatron-LM's flags, HF TrainingArguments,
DeepSpeed's ``scheduler`` block, Composer's ``scheduler:``) can write any schedule one of its
presets equals, however the file spells it: ``warmup(linear, 2000) >> cosine(3e-4, 3e-5, 98000)``
is ``megatron.OptimizerParamScheduler(max_lr=3e-4, min_lr=3e-5, lr_warmup_steps=2000,
lr_decay_steps=100000, lr_decay_style="cosine")``.  So a writer whose file is not one call of its
presets asks ``proven_call`` for one, and this module

1. reads the schedule's shape off the file itself (``Shape``: its breakpoints, the values there,
   so the start, peak, warmup length, stable end, decay end and floor);
2. builds, for each preset the writer can write (the library's signature table, ``PRESETS``),
   the call whose arguments are those features, by the argument's name (``ROLES``: one table for
   every library), trying each choice of a shape option (``lr_decay_style``, ``warmup_type``, ...);
3. ranks the candidates by how close they come at the shape's steps and proves them equal to the
   file with the prover ``schedlang verify`` uses (``verify.equivalent``), closest first.

The first candidate proven equal is the answer (the prover is sound: "proven" means equal at every
step).  When none is, the export is refused at the schedule, naming the closest candidate (the one
that agrees longest) and the first step where it differs, with both values.  Nothing here is a
list of accepted spellings: a file is exported when, and because, a preset is proven equal to it.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import sympy as sp

from ...core.algebra import t
from ...core.special import as_power, folded, logb
from ...errors import SchedlangError
from ...library.presets import PRESETS, Rejected, namespace
from ...library.stdlib import REQUIRED, Kind
from ...program import Schedule, compile_parsed
from ...semantics.lower import lower
from .numbers import as_sympy, decimal_text, writable
from .statements import module, schedule_stmt

#: The most candidates proven (closest first) before the search gives up: the ranking puts a
#: preset that fits first, so this bounds the time a file that fits none costs.
MAX_PROOFS = 8


@dataclass(frozen=True)
class Shape:
    """What a warmup-then-decay or step-decay schedule is made of, read off the schedule (exact
    numbers)."""

    init: sp.Expr  # the value at step 0
    peak: sp.Expr  # the largest value at the shape's steps
    warmup: int  # the warmup's length (from where its ramp is 0 to the first step at the peak)
    stable_end: int  # the last step at the peak, counted as ``warmup`` is (a WSD decays after it)
    end: int | None  # the last breakpoint: the floor is held from here on
    floor: sp.Expr  # the value at ``end`` (the last value)
    steps: tuple[int, ...]  # the steps the candidates are ranked at
    drops: tuple[int, ...] = ()  # the steps where the value falls from a held level (milestones)
    period: int | None = None  # the steps between drops, where the formula repeats them
    gamma: sp.Expr | None = None  # the factor of the first drop
    base: tuple[sp.Expr, int] | None = None  # (g, n) of a smooth exponential, ``g ** (t / n)``
    growth: sp.Expr | None = None  # the value's relative rise over one period (or step) from step 0
    decay_rate: sp.Expr | None = None  # after the end, ``floor / (1 + r * d)``: r (DeepSpeed OneCycle's)
    levels: tuple[sp.Expr, ...] = ()  # the values held from step 0 and from each drop (a piecewise's)

    def ratio(self, value: sp.Expr) -> sp.Expr | None:
        return value / self.peak if self.peak != 0 else None


def _gap(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a - b


#: A preset argument's name -> its value from the shape; None: the argument is left at its
#: default.  One table for every library: the presets name the same things the same few ways.
ROLES: dict[str, Callable[[Shape], object]] = {
    **dict.fromkeys(("lr", "max_lr", "warmup_max_lr", "learning_rate", "cycle_max_lr"), lambda s: s.peak),
    **dict.fromkeys(("min_lr", "lr_end", "decay_min_lr", "lr_min"), lambda s: s.floor),
    **dict.fromkeys(("init_lr", "warmup_min_lr", "cycle_min_lr"), lambda s: s.init),
    **dict.fromkeys(("alpha_f", "min_lr_rate", "min_lr_ratio", "cos_min_ratio", "min_lr_factor"),
                    lambda s: s.ratio(s.floor)),
    **dict.fromkeys(("warmup_min_ratio", "warmup_lr_rate"), lambda s: s.ratio(s.init)),
    **dict.fromkeys(("lr_warmup_steps", "num_warmup_steps", "warmup_num_steps", "t_warmup", "warmup_steps",
                     "cycle_first_step_size"), lambda s: s.warmup),
    **dict.fromkeys(("lr_decay_steps", "num_training_steps", "total_num_steps", "t_max", "training_steps"),
                    lambda s: s.end),
    **dict.fromkeys(("wsd_decay_steps", "num_decay_steps", "decay_steps", "cycle_second_step_size"),
                    lambda s: _gap(s.end, s.stable_end)),
    "num_stable_steps": lambda s: _gap(s.stable_end, s.warmup),
    "milestones": lambda s: s.drops or None,
    **dict.fromkeys(("step_size", "t_0"), lambda s: s.period),
    "gamma": lambda s: s.gamma if s.gamma is not None else s.base and s.base[0],
    "decay_period": lambda s: s.base and s.base[1],
    "lr_range_test_min_lr": lambda s: s.init,
    "lr_range_test_step_size": lambda s: s.period or 1,
    "lr_range_test_step_rate": lambda s: s.growth,
    "decay_lr_rate": lambda s: s.decay_rate,
    "decay_step_size": lambda s: 1 if s.decay_rate else None,
    # Cerebras's names (cstorch's): a decay from its start to its floor at its end, a cosine's
    # period, the factor of an exponential over its period, a piecewise constant's levels
    "initial_learning_rate": lambda s: s.init,
    **dict.fromkeys(("end_learning_rate", "eta_min"), lambda s: s.floor),
    "total_iters": lambda s: s.end if s.end is not None else s.period or s.base and s.base[1],
    "T_max": lambda s: s.end if s.end is not None else s.period,
    "decay_rate": lambda s: s.base and s.base[0],
    "coefficient": lambda s: s.base[0] if s.base and s.base[1] == 1 else None,
    "learning_rates": lambda s: s.levels if s.drops else None,
    "base_lr": lambda s: s.init,
    "step_size_up": lambda s: s.warmup,
}
#: The ``ROLES`` arguments that are lengths in steps: what a file on the sample or token clock
#: writes in samples or tokens (``on_axis``), with the arguments the preset's kinds call lengths.
LENGTHS = frozenset(("lr_warmup_steps", "num_warmup_steps", "warmup_num_steps", "t_warmup", "warmup_steps",
                     "cycle_first_step_size", "lr_decay_steps", "num_training_steps", "total_num_steps",
                     "t_max", "training_steps", "wsd_decay_steps", "num_decay_steps", "decay_steps",
                     "cycle_second_step_size", "num_stable_steps", "milestones", "step_size", "t_0",
                     "warmup", "decay", "total_steps", "decay_period", "lr_range_test_step_size",
                     "decay_step_size", "period_lengths", "total_iters", "T_max", "step_size_up"))
#: The option and flag arguments that choose the curve (each of their choices is a candidate):
#: DeepSpeed's ``LRRangeTest`` rises smoothly, or by a stair every ``lr_range_test_step_size``.
SHAPE_OPTIONS = ("lr_decay_style", "lr_wsd_decay_style", "warmup_type", "decay_type",
                 "lr_range_test_staircase", "staircase", "mode")


@dataclass(frozen=True)
class Candidate:
    call: str  # the preset call, as .sched text
    distance: float  # the sum of the relative differences at the shape's steps
    exact: bool = True  # every number in it is written exactly as a float's text (``writable``)


def proven_call(schedule, library: str, writes: tuple[str, ...], run: int | None, span,
                counter: str = "step") -> str:
    """The text of a call of one of ``writes`` (presets of ``library``) proven equal
    to ``schedule`` (its parameters bound) at every step, or at every step of the run where the
    file declares one (``run``: SPEC §14, an HF cosine run of N steps is not the curve after N);
    refused at ``span`` when none is.  ``counter``: what the schedule's t counts, as the refusal
    names its first differing one (``"sample"`` for a file read at one sample a step)."""
    from ...verify import equivalent  # lazy: numpy (verify.float_scan)

    free = sorted(str(s) for s in schedule.expr.free_symbols - {t})
    if free:
        raise SchedlangError(f"parameter '{free[0]}' has no value", span,
                             hint=f"bind it with -D {free[0]}=... (the export writes numbers)")
    shapes = shapes_of(schedule, run)
    names = tuple(n for n in writes if not isinstance(PRESETS[n], Rejected))
    ranked = candidates(schedule, shapes, names)
    if not ranked:
        raise SchedlangError(f"no {library} scheduler has the shape of this lr schedule", span,
                             hint=f"write it as one {library}.* call, or export it to cerebras-yaml "
                                  "(which writes any chain)")
    tried = []
    for candidate in ranked[:MAX_PROOFS]:
        try:
            other = _compiled(candidate.call)
        except SchedlangError:  # refused by a check the ranking skips (``_values``)
            continue
        verdict = equivalent(schedule, other, stop=run)
        if verdict:
            return candidate.call
        tried.append((candidate, verdict))
    raise _refusal(library, tried, span, shapes[0].end if run is None else None, counter)


def shapes_of(schedule, run: int | None) -> list[Shape]:
    """The schedule's ``Shape`` on each clock a framework's formula may count (``CLOCKS``: the
    file read at step ``t - c``, so that a framework whose update t runs its formula at ``t + 1``,
    as OLMo-core does, is called with its own warmup, total and start), and two readings of its
    end where the ramp starts late.  The first is the file's own clock: its steps rank them."""
    breaks = [int(math.ceil(b)) for b in schedule.breakpoints if b >= 0]
    shapes: list[Shape] = []
    for c in CLOCKS:
        try:
            read = _read(schedule.expr.subs(t, t - c) if c else schedule.expr,
                         [b + c for b in breaks], None if run is None else run + c)
        except (TypeError, ValueError, ZeroDivisionError):  # not finite where the file has no step
            continue
        first = shapes[0].steps if shapes else read[0].steps
        shapes += [r for r in (dataclasses.replace(r, steps=first) for r in read) if r not in shapes]
    if not shapes:
        return _read(schedule.expr, breaks, run)
    # a framework may count its warmup on one clock and its total on another (DeepSpeed's
    # linear ramp reaches its peak a step after the file's, its log ramp at the file's step)
    mixed = [dataclasses.replace(a, end=b.end, floor=b.floor) for a in shapes for b in shapes]
    return shapes + [m for i, m in enumerate(mixed) if m not in shapes and m not in mixed[:i]]


#: The clocks tried: the file's own, and the framework's formula at ``t + 1`` or ``t - 1`` (the
#: shape read of the file at ``t - 1``, or ``t + 1``).  A ramp that is 0 a step off is read as its
#: framework counts it anyway (``_zero``); these are for shapes that show no such ramp.
CLOCKS = (0, 1, -1)


def _read(expr: sp.Expr, breaks: list[int], run: int | None) -> list[Shape]:
    """The shape of the formula ``expr`` (breakpoints ``breaks``) from its values at step 0 and
    around each breakpoint: the warmup ends at the first step at the largest value (its length
    counted from where the ramp is 0, so a framework that begins its ramp a step late, or a step
    early, is read as it counts), the peak is the ramp's own value there (a decay that starts at
    once never shows it), the decay ends at the last breakpoint, whose value is the floor; the
    value's drops (``_drops``) give its milestones, period and factor."""
    breaks = [b for b in breaks if b >= 0]
    end = breaks[-1] if breaks else run
    period = _period(expr)
    steps = _probe_steps(breaks, end, run, period)
    exact = {s: _value(expr, s) for s in steps}
    highest = max(float(v) for v in exact.values())
    top = next(s for s in steps if float(exact[s]) == highest)
    if end is not None and end <= top:
        end = run  # no breakpoint ends the decay: a periodic or endless one ends with the run
    if end is not None and end - 1 in exact and exact[end - 1] == exact[end]:
        end -= 1  # the floor is reached a step before the branch that holds it begins
    peak, lag = exact[top], 0
    if top > 0:
        ramp = piece_at(expr, top - 1)
        if ramp.subs(t, top).is_Rational and float(ramp.subs(t, top)) >= float(peak):
            peak = ramp.subs(t, top)
        lag = _zero(ramp)
    at_peak = [s for s in steps if top <= s and exact[s] == peak and (end is None or s <= end)] or [top]
    floor = exact[end] if end is not None else exact[steps[-1]]
    drops = _drops(expr, breaks, exact)
    gamma = None
    if drops and drops[0] - 1 in exact and exact[drops[0] - 1] != 0:
        gamma = exact[drops[0]] / exact[drops[0] - 1]
    ranked = tuple(s for s in steps if run is None or s < run)  # a run's steps are all that counts
    after = _value(expr, end + 1) if end is not None else None
    shape = Shape(exact[0], peak, top - lag, at_peak[-1] - lag, end, floor, ranked,
                  tuple(drops), period, gamma, _base(expr), _growth(expr, period, exact[0]),
                  floor / after - 1 if after not in (None, 0, floor) and floor.is_Rational else None,
                  (exact[0], *(exact.get(d, _value(expr, d)) for d in drops)))
    if lag != 0 and end is not None:  # a late ramp's framework may count its total from the ramp too
        return [shape, dataclasses.replace(shape, end=end - lag)]
    if period is not None and end is None:  # a cosine restarted each period never shows its floor:
        # its midpoint is halfway to it (Composer's CosineAnnealingWarmRestartsScheduler's alpha_f)
        return [shape, dataclasses.replace(shape, floor=2 * _value(expr, sp.Rational(period, 2)) - peak)]
    return [shape]


def _probe_steps(breaks: list[int], end: int | None, run: int | None, period: int | None) -> list[int]:
    """The steps ``_read`` evaluates the formula at: 0 and 1, the run's last, around each
    breakpoint and period, the end's neighbours and each piece's midpoint."""
    steps = {0, 1} | ({run - 1, run} if run else set())
    for b in breaks:
        steps |= {b - 1, b, b + 1, b + 2}
    if period is not None:
        steps |= {k * period + d for k in range(1, 4) for d in (-1, 0)}
    if end is None and period is None:  # no breakpoint: a curve that never ends, told apart further on
        steps |= {2, 3, 10, 100, 1000}
    if end is not None:
        steps |= {end, end + 1, 2 * end}
        steps |= {(a + b) // 2 for a, b in itertools.pairwise(sorted({0, *breaks, end}))}
    return sorted(s for s in steps if s >= 0)


def _base(expr: sp.Expr) -> tuple[sp.Expr, int] | None:
    """``(g, n)`` of a value ``c * g ** (t / n)`` (``exp(t * log(g) / n)``), n a whole number."""
    found = set()
    for node in expr.atoms(sp.exp):
        arg = node.args[0]
        poly = sp.Poly(arg, t) if arg.is_polynomial(t) else None
        if poly is None or poly.degree() != 1 or poly.all_coeffs()[1] != 0:
            return None
        k, rest = poly.all_coeffs()[0].as_coeff_Mul()
        if not isinstance(rest, (sp.log, logb)) or k == 0 or not (1 / abs(k)).is_Integer:
            return None
        found.add((rest.args[0] ** (1 if k > 0 else -1), int(1 / abs(k))))
    return found.pop() if len(found) == 1 else None


def _growth(expr: sp.Expr, period: int | None, first: sp.Expr) -> sp.Expr | None:
    """The relative rise from step 0 to the end of its first period (or to step 1)."""
    if first == 0:
        return None
    rise = _value(expr, period or 1) / first - 1
    return rise if rise.is_Rational and rise > 0 else None


def _period(expr: sp.Expr) -> int | None:
    """The period of a value that changes every N steps (``floor(t / N)``, ``Mod(t, N)``), when
    one N is read off its formula."""
    periods = set()
    for node in expr.atoms(sp.floor, sp.Mod):
        arg = node.args[0]
        if isinstance(node, sp.Mod):
            periods.add(node.args[1] if arg == t else None)
            continue
        poly = sp.Poly(arg, t) if arg.is_polynomial(t) else None
        if poly is None or poly.degree() != 1:
            periods.add(None)
            continue
        periods.add(1 / poly.all_coeffs()[0])
    if len(periods) != 1:
        return None
    period = periods.pop()
    return int(period) if period is not None and period.is_Integer and period > 0 else None


def _drops(expr: sp.Expr, breaks: list[int], exact: dict) -> list[int]:
    """The steps where the value jumps from a level held the step before (a multistep's
    milestones, a step decay's multiples of its period)."""
    period = _period(expr)
    if period is not None:
        return [k * period for k in range(1, 4)]
    found = []
    for b in breaks:
        if b < 2:
            continue
        before, held, at = (exact.get(s, _value(expr, s)) for s in (b - 2, b - 1, b))
        if before == held and at != held and piece_at(expr, b - 1).is_constant():
            found.append(b)
    return found


def _zero(ramp: sp.Expr) -> int:
    """Where a linear warmup ramp is 0, when that is a whole step near 0 (DeepSpeed's ramp starts
    at step 1, torchtitan's ``(t + 1) / W`` at step -1): the step the framework counts it from."""
    poly = sp.Poly(ramp, t) if ramp.is_polynomial(t) else None
    if poly is None or poly.degree() != 1:
        return 0
    a, b = poly.all_coeffs()
    zero = -b / a
    return int(zero) if zero.is_Integer and abs(zero) <= 2 else 0


def piece_at(expr: sp.Expr, step: int) -> sp.Expr:
    """The branch of a piecewise formula that holds at ``step`` (the formula itself elsewhere):
    the formula of the piece from ``step`` to the next breakpoint (a chain's piece, as
    ``cerebras_export`` cuts one)."""
    while isinstance(expr, sp.Piecewise):
        expr = next((e for e, c in expr.args if bool(c.subs(t, step))), expr.args[-1][0])
    return expr


def candidates(schedule, shapes: list[Shape], names: tuple[str, ...]) -> list[Candidate]:
    """Each preset of ``names`` called with each shape's values (each choice of its shape options),
    each call with the keywords that change nothing left out, closest first; calls that do not
    compile, and repeats of a closer one's values, left out."""
    steps = shapes[0].steps
    want = [float(_value(schedule, s)) for s in steps]
    found, seen = [], set()
    for name in names:
        for shape in shapes:
            for call in _calls(PRESETS[name], shape):
                for variant in _variants(name, call, steps):
                    got = _values(variant, steps)
                    if got is None or (name, got) in seen:  # another preset's equal values stay: the
                        continue  # steps may not tell them apart (a rise that never ends)
                    seen.add((name, got))
                    shortest = _shortest(name, variant, got, steps)
                    found.append(Candidate(shortest, sum(_relative(a, b) for a, b in zip(want, got)),
                                           _exact(name, shortest)))
    found.sort(key=lambda c: c.distance)
    # those equal at the steps first, those the writer writes exactly first of them (a float's
    # text, not the float64 of 1111/1110000: ``PresetCall._rounded``), then the closest of each
    # preset before the next of any: a refusal's proofs see every preset that comes near, not one
    # preset's near copies
    rank = {}
    order = {id(c): (c.distance > 0, not c.exact,
                     rank.setdefault(c.call.split("(")[0], itertools.count()).__next__())
             for c in found}
    return sorted(found, key=lambda c: order[id(c)])


def _variants(name: str, call: str, steps):
    """``call``, or where the preset refuses it (two keywords that say the same thing, as HF's
    ``min_lr`` and ``min_lr_rate``), the call without each optional keyword in turn."""
    if _values(call, steps) is not None:
        yield call
        return
    words = _keywords(name, call)
    for arg in PRESETS[name].args:
        if arg.name in words and arg.default is not REQUIRED:
            yield _call_text(name, {k: v for k, v in words.items() if k != arg.name})


@functools.lru_cache(maxsize=512)
def _values(call: str, steps: tuple[int, ...]) -> tuple[float, ...] | None:
    """The call's values at ``steps``, to rank it: lowered, without the checks of a compile
    (a third of its time), which the call proven (``_compiled``) goes through; None where it does
    not lower or is not finite there."""
    try:
        segment, span = lower(_file_of(call)).schedules["lr"]
        expr = Schedule("lr", segment, None, span).expr
        values = tuple(float(_value(expr, s)) for s in steps)
    except (SchedlangError, ArithmeticError, TypeError, ValueError):
        return None
    return values if all(math.isfinite(v) for v in values) else None


def _shortest(name: str, call: str, got: tuple, steps) -> str:
    """``call`` without each optional keyword whose absence changes no value at ``steps``
    (the prover then proves the shorter call: what is written is what was proven)."""
    words = _keywords(name, call)
    optional = {a.name for a in PRESETS[name].args if a.default is not REQUIRED}
    for key in list(words):
        if key not in optional:
            continue
        fewer = {k: v for k, v in words.items() if k != key}
        if _values(_call_text(name, fewer), steps) == got:
            words = fewer
    return _call_text(name, words)


def _calls(preset, shape: Shape):
    """The calls of ``preset`` with the shape's values: one per combination of shape options;
    none when a required argument has no role or its value cannot be written."""
    given, options = {}, []
    for arg in preset.args:
        choices = _choices(arg) if arg.name in SHAPE_OPTIONS else ()
        if choices:
            options.append((arg.name, choices))
            continue
        role = ROLES.get(arg.name)
        value = role(shape) if role is not None else None
        if isinstance(value, tuple):  # a list, without ", " (``_keywords`` splits at it)
            text = "[" + ",".join(_number_text(v) for v in value) + "]" if arg.kind is Kind.VALUES else None
        else:
            text = _number_text(value) if value is not None else None
        if text is not None and arg.kind in (Kind.VALUE, Kind.VALUES, Kind.STEPS, Kind.DURATION,
                                             Kind.CONST):
            given[arg.name] = text
        elif arg.default is REQUIRED:
            return
    for choice in itertools.product(*(c for _, c in options)):
        yield _call_text(preset.name, {**given, **dict(zip((n for n, _ in options), choice))})


def _choices(arg) -> tuple[str, ...]:
    """A shape option's choices as .sched text: an option's strings, a flag's ``false`` and
    ``true``."""
    if arg.kind is Kind.FLAG:
        return ("false", "true")
    return tuple(f'"{v}"' for v in arg.choices or ())


def _exact(name: str, call: str) -> bool:
    """Whether every number of ``call`` (as ``_number_text`` wrote them) is a float's text."""
    for text in _keywords(name, call).values():
        for item in text.strip("[]").split(","):
            if item.startswith("("):  # (p / q): no decimal at all
                return False
            if item and not item.startswith('"') and item not in ("true", "false") \
                    and not writable(Fraction(item)):
                return False
    return True


def _call_text(name: str, words: dict[str, str]) -> str:
    return f"{name}({', '.join(f'{k}={v}' for k, v in words.items())})"


def _keywords(name: str, call: str) -> dict[str, str]:
    """The keywords of a call ``_call_text`` wrote (its values hold no ``, `` or ``=``)."""
    inner = call[len(name) + 1:-1]
    return dict(part.split("=", 1) for part in inner.split(", ")) if inner else {}


def on_axis(call: str, per: int, suffix: str = "", **options: str) -> str:
    """``call`` (a ``proven_call`` answer, its lengths in steps) with each length times ``per``
    (the samples or tokens of a step at a constant batch) and ``suffix`` (``sp``, ``tok``), and
    the keywords ``options`` (``units='"tokens"'``) set: the same schedule on that clock."""
    name = call.split("(", 1)[0]
    kinds = {a.name: a.kind for a in PRESETS[name].args}
    words = _keywords(name, call)
    for key, text in words.items():
        if key in LENGTHS or kinds.get(key) in (Kind.STEPS, Kind.DURATION):
            items = [f"{_number_text(Fraction(item) * per)}{suffix}" for item in text.strip("[]").split(",")]
            words[key] = f"[{','.join(items)}]" if text.startswith("[") else items[0]
    return _call_text(name, {**words, **options})


def every(library: str) -> tuple[str, ...]:
    """Every preset of ``library`` (its library's signature table), for a writer that writes any."""
    return tuple(n for n, p in namespace(library).items() if not isinstance(p, Rejected))


def _refusal(library: str, tried, span, end: int | None, counter: str = "step") -> SchedlangError:
    """The refusal: the candidate that agrees longest, and its first differing step (or sample,
    ``counter``) (and, for a file without ``run`` whose closest candidate differs only after the
    decay's ``end``, that a run ending by then would be written)."""
    different = [(c, v) for c, v in tried if v.different]
    if not different:
        candidate, verdict = tried[0]
        return SchedlangError(f"no {library} scheduler is proven equal to this lr schedule: the closest, "
                              f"{candidate.call}, is undecided ({verdict.reason})", span,
                              hint=f"write the lr as one {library}.* call")
    candidate, verdict = max(different, key=lambda cv: cv[1].counterexample.step)
    ce = verdict.counterexample
    first = "first differs" if ce.earliest else "differs"
    hint = (f"write the lr as one {library}.* call, or export it to cerebras-yaml (which writes any "
            "chain)")
    unit = "sp" if counter == "sample" else ""
    if end is not None and ce.earliest and ce.step > end:
        hint = (f"the two agree at every {counter} before {ce.step}: if the run ends by then, declare it "
                f"(`run = N{unit}`, N <= {ce.step}) and only its {counter}s are compared; or {hint}")
    return SchedlangError(f"no {library} scheduler equals this lr schedule: the closest, {candidate.call}, "
                          f"{first} at {counter} {ce.step} ({ce.a!r} here vs {ce.b!r} there)", span,
                          hint=hint)


def _file_of(call: str):
    """The file ``schedule lr = CALL`` as a tree (``statements``): what a candidate is read as."""
    return module(schedule_stmt("lr", call))


def _compiled(call: str):
    return compile_parsed(_file_of(call))["lr"]


def _value(formula, step: int) -> sp.Expr:
    """The exact value at ``step`` of a schedule or a formula in ``t`` (a power of the step's
    decay that became a small whole one, ``0.5 ** floor(t / 100)``, as the number it is)."""
    value = getattr(formula, "expr", formula).subs(t, step)
    return value.replace(lambda e: as_power(e) is not None, folded) if value.has(logb) else value


def _number_text(value) -> str | None:
    """A shape value as a literal of the language, or None when it is no exact rational."""
    if isinstance(value, int):
        return str(value)
    value = as_sympy(value)
    if not value.is_Rational:
        return None
    return decimal_text(Fraction(int(value.p), int(value.q)))


def _relative(a: float, b: float) -> float:
    if a == b:
        return 0.0
    return abs(a - b) / max(abs(a), abs(b))
