"""``mmengine.*``: OpenMMLab's ``param_scheduler`` types, their windows and their chaining.

mmengine's schedulers (``mmengine.optim.scheduler``, 0.10.7) are *chainable
recurrences*: each ``step()`` rewrites the optimizer's current value from the
value it finds, and only while ``begin <= global step < end`` (the window;
``s = global - begin`` is the local step).  A ``param_scheduler`` list is applied
in order at every step; outside its window a scheduler leaves the value alone,
so overlapping windows compose and the last value is held after the last
window.  Every constructor steps once (global step 0), so iteration ``i``
trains with the value after ``i`` hook steps.

Closed forms of one scheduler alone, ``v0`` the value entering its window,
``N = end - begin - 1`` its last local step (proofs: the recurrences telescope):

* ``LinearLR``: ``v0 * (a + (b - a) * s / N)`` (``a = start_factor``, ``b =
  end_factor``): the ratio ``1 + (b-a)/(N a + (s-1)(b-a))`` is
  ``(N a + s(b-a)) / (N a + (s-1)(b-a))``.  ``end_factor`` is reached at ``end - 1``.
* ``ConstantLR``: ``v0 * factor`` for ``s < N``, ``v0`` from ``s = N`` (one step
  before ``end``).  ``ExponentialLR``: ``v0 * gamma**s``.  ``StepLR``:
  ``v0 * gamma**floor(s / step_size)``.  ``MultiStepLR``: ``v0 * gamma**k``, ``k``
  the window-relative milestones ``<= s`` (repeats count twice).
* ``PolyLR``: ``e + (v0 - e) * ((N - s)/N)**power``: the factors
  ``(1 - 1/(N - k + 1))**power`` telescope; ``eta_min`` at ``end - 1``.
* ``CosineAnnealingLR``: ``e + (v0 - e) * (1 + cos(pi s / T))/2`` for ``s <= T``
  (``T = T_max or end - begin``: with the default the window ends one step before
  ``eta_min``); at ``s = T + 1`` (and every ``2T``) mmengine's additive branch
  restarts from its ``base`` (the optimizer's initial value), so for ``s > T`` it
  is ``e + (base - e) * (1 + cos(pi s / T))/2``.  ``e = eta_min`` or
  ``eta_min_ratio * base``.
* ``CosineRestartLR``: in period ``i`` (local ``u``), ``e + (base w_i - e) *
  (1 + cos(pi u / P_i))/2``: it sets ``base * w_i`` at each restart; after the last
  period it leaves the value alone.  ``OneCycleLR``: torch's one-cycle phases from
  ``eta_max / div_factor`` (it also overwrites the group's ``initial_lr``, the
  ``base`` of every scheduler built after it).

Chaining: multiplicative schedulers (Linear, Constant, Exponential, Step,
MultiStep, and Poly / Cosine with a zero floor that stay within ``T_max``)
commute, so any overlap is the product of their factors.  The others (a floor
``e != 0``, OneCycle, CosineRestart) make the chain a general affine recurrence
when another scheduler changes the value inside their window; the composite
refuses such overlaps and says why (non-overlapping hand-overs, which is what
OpenMMLab's configs do, are exact).

Units: ``by_epoch=true`` (mmengine's default) schedulers step once per epoch.
A schedule whose schedulers are all by epoch is a function of the *epoch*; with
``epoch_length`` (iterations per epoch, mmengine's ``len(train_dataloader)``)
the step ``t`` counts iterations and by-epoch schedulers change every
``epoch_length`` iterations (mmengine steps them after each epoch, after the
by-iteration ones).  ``convert_to_iter_based=true`` turns a by-epoch scheduler
into a by-iteration one exactly like mmengine (``begin``/``end`` times
``epoch_length`` truncated to ints, ``T_max``/``step_size``/``milestones``/
``periods``/``total_steps`` times ``epoch_length``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import sympy as sp

from ...core.algebra import (
    at,
    piecewise,
    tau,  # formulas are built in the real-valued step, not t
)
from ...core.special import geometric
from ..stdlib import ArgumentError, onecycle_ramps
from ._common import FLAG, OPTION, SCHEDULES, C, L, PresetSegment, Rejected, S, V, arg, frac, preset

INF = 10**9  # mmengine's INF = int(1e9), the default end of every window
HALF = sp.Rational(1, 2)
MUL, AFFINE, ABSOLUTE = "mul", "affine", "absolute"


@dataclass(frozen=True)
class Clock:
    """How a scheduler's local step ``s`` reads the schedule's step ``t``.

    ``unit`` is 1 when the scheduler steps with ``t``, ``epoch_length`` when it is by
    epoch and ``t`` counts iterations: then ``s = floor(t / unit) - begin``.
    """

    begin: sp.Expr
    unit: sp.Expr

    @property
    def s(self) -> sp.Expr:
        return (tau if self.unit == 1 else sp.floor(tau / self.unit)) - self.begin

    def time(self, k) -> sp.Expr:
        """The step ``t`` at which local step ``k`` (a whole number) is applied."""
        return (self.begin + k) * self.unit

    def before(self, k) -> sp.Basic:
        """``s < k`` for a whole ``k``, as a canonical ``t < c``."""
        return sp.Lt(tau, self.time(k))


@dataclass(frozen=True)
class Window:
    """One mmengine scheduler as the chain needs it.

    ``kind``: ``mul`` (multiplies by ``factor(clock)``, its running product from ``v0``),
    ``affine`` (``value(clock, v0, base)`` from its second step on) or ``absolute``
    (``value(clock, None, base)``: it overwrites the value).  ``last`` is the last local
    step that changes anything.
    """

    type: str
    kind: str
    begin: sp.Expr
    end: sp.Expr
    by_epoch: bool
    last: sp.Expr
    build: object                      # (clock, v0, base) -> expr; for mul: (clock) -> factor
    base: sp.Expr | None = None        # the value keyword given to this scheduler (lr=, ...)
    param: str = "lr"
    epoch_length: sp.Expr | None = None
    sets_initial: sp.Expr | None = None  # OneCycle: the group's new initial value
    infinite: bool = False


@dataclass(frozen=True)
class MMSegment(PresetSegment):
    window: Window | None = None
    windows: tuple = field(default=())


# -- the scheduler types -------------------------------------------------------------------


def _check_window(begin, end):
    for name, value in (("begin", begin), ("end", end)):
        if value.is_number and value < 0:
            raise ArgumentError(name, f"'{name}' must be a step >= 0, not {value}")
    if (end - begin).is_number and end <= begin:
        raise ArgumentError("end", f"end should be larger than begin (mmengine raises ValueError), "
                                   f"got begin={begin}, end={end}")


def _ratio(eta_min, eta_min_ratio, base, default_zero=True, name="eta_min"):
    if eta_min is not None and eta_min_ratio is not None:
        raise ArgumentError("eta_min_ratio", "give eta_min or eta_min_ratio, not both (mmengine asserts "
                                             "exactly one)")
    if eta_min is None and eta_min_ratio is None:
        if not default_zero:
            raise ArgumentError(name, "give eta_min or eta_min_ratio (mmengine asserts exactly one)")
        return sp.Integer(0)
    return eta_min if eta_min is not None else base * eta_min_ratio


def _zero(value) -> bool:
    return value.is_number and value == 0


def _linear(start_factor, end_factor, n):
    for name, value in (("start_factor", start_factor), ("end_factor", end_factor)):
        if value.is_number and not 0 <= value <= 1:
            raise ArgumentError(name, f"{name} must be between 0 and 1 (mmengine raises ValueError)")
    if _zero(start_factor) and not (n.is_number and n == 0):
        raise ArgumentError("start_factor", "start_factor=0 divides by zero at mmengine's second step "
                                            "(its ratio is over N * start_factor)",
                            hint="use a small start_factor such as 1e-3, as OpenMMLab configs do")

    def factor(clock):
        return start_factor + (end_factor - start_factor) * clock.s / sp.Max(1, n)
    return factor


def _constant(factor, n):
    if factor.is_number and not 0 <= factor <= 1:
        raise ArgumentError("factor", "factor must be between 0 and 1 (mmengine raises ValueError)")
    if _zero(factor) and not (n.is_number and n == 0):
        raise ArgumentError("factor", "factor=0 divides by zero when mmengine restores the value at "
                                      "end - 1 (it multiplies by 1 / factor)")

    def value(clock):
        return piecewise([(factor, clock.before(sp.Max(n, 1))), (1, sp.true)])
    return value


def _poly_factor(n, power):
    def value(clock):
        return ((n - clock.s) / sp.Max(1, n)) ** power
    return value


def _cos(clock, period):
    return (1 + sp.cos(sp.pi * clock.s / period)) / 2


def _multistep(milestones, gamma):
    def value(clock):
        ordered = sorted(milestones, key=lambda m: (float(m) if m.is_number else 0))
        if all(m.is_number for m in milestones):
            pairs = [(gamma**i, clock.before(m)) for i, m in enumerate(ordered)]
            return piecewise([*pairs, (gamma ** len(ordered), sp.true)])
        count = sum((piecewise([(0, clock.before(m)), (1, sp.true)]) for m in milestones), sp.Integer(0))
        return geometric(gamma, count)
    return value


def _onecycle(eta_max, total, pct_start, anneal, div_factor, final_div_factor, three_phase):
    """torch's phases (``stdlib.onecycle_ramps``) at local step ``s``; ``s <= e`` is
    ``s < floor(e) + 1``; the last phase runs on past its end."""
    initial = eta_max / div_factor
    low = initial / final_div_factor

    def value(clock, v0, base):
        ramps = onecycle_ramps(initial, eta_max, low, total, pct_start, anneal, three_phase, step=clock.s)
        pairs = [(formula, clock.before(sp.floor(end) + 1)) for formula, end in ramps[:-1]]
        return piecewise([*pairs, (ramps[-1][0], sp.true)])
    return value, initial


def _restarts(periods, weights, eta_min, eta_min_ratio):
    def value(clock, v0, base):
        e = _ratio(eta_min, eta_min_ratio, base, default_zero=False)
        pairs, start = [], sp.Integer(0)
        for period, weight in zip(periods, weights):
            u = clock.s - start
            pairs.append((e + (base * weight - e) * (1 + sp.cos(sp.pi * u / period)) / 2,
                          clock.before(start + period)))
            start += period
        return piecewise([*pairs[:-1], (pairs[-1][0], sp.true)])  # nothing runs past its last period
    return value


# Each type: (mmengine's keyword arguments in order with defaults, builder).  The builder
# gets the keywords (after convert_to_iter_based) plus n = end - begin - 1 and returns
# (kind, function, last local step, extra Window fields).


def _b_constant(kw, n):
    return MUL, _constant(kw["factor"], n), n, {}


def _b_linear(kw, n):
    return MUL, _linear(kw["start_factor"], kw["end_factor"], n), n, {}


def _b_exponential(kw, n):
    gamma = kw["gamma"]
    return MUL, (lambda clock: geometric(gamma, clock.s)), n, {}


def _b_step(kw, n):
    size, gamma = kw["step_size"], kw["gamma"]
    if size.is_number and size <= 0:
        raise ArgumentError("step_size", f"step_size must be positive, not {size}")
    return MUL, (lambda clock: geometric(gamma, sp.floor(clock.s / size))), n, {}


def _b_multistep(kw, n):
    return MUL, _multistep(kw["milestones"], kw["gamma"]), n, {}


def _b_poly(kw, n):
    e, power = kw["eta_min"], kw["power"]
    factor = _poly_factor(n, power)
    if _zero(e):
        return MUL, factor, n, {}
    return AFFINE, (lambda clock, v0, base: e + (v0 - e) * factor(clock)), n, {}


def _b_cosine(kw, n, begin, end):
    period = kw["T_max"]
    if period is None or _zero(period):
        period = end - begin
    eta_min, ratio = kw["eta_min"], kw["eta_min_ratio"]
    _ratio(eta_min, ratio, sp.Integer(1))  # both given: refused here

    def value(clock, v0, base):
        e = _ratio(eta_min, ratio, base)
        return piecewise([(e + (v0 - e) * _cos(clock, period), clock.before(period + 1)),
                          (e + (base - e) * _cos(clock, period), sp.true)])
    zero_floor = (eta_min is None and (ratio is None or _zero(ratio))) or (eta_min is not None
                                                                           and _zero(eta_min))
    if zero_floor and (n - period).is_number and n <= period:
        return MUL, (lambda clock: _cos(clock, period)), n, {}
    return AFFINE, value, n, {}


def _b_onecycle(kw, n, begin, end, param):
    if param != "lr":
        raise ArgumentError("param_name", "OneCycle only works for the learning rate (mmengine asserts "
                                          "param_name == 'lr')")
    total = kw["total_steps"]
    if total is None:
        total = end - begin
    elif total.is_number and (not total.is_integer or total <= 0):
        raise ArgumentError("total_steps", f"expected a positive whole total_steps, got {total}")
    pct = kw["pct_start"]
    if pct.is_number and not 0 <= pct <= 1:
        raise ArgumentError("pct_start", f"pct_start must be between 0 and 1, not {pct}")
    if (n - total).is_number and n >= total:
        raise ArgumentError("total_steps", f"the window has {n + 1} steps but total_steps is {total}: "
                            "mmengine extrapolates one step past total_steps and then raises ValueError",
                            hint="make end - begin at most total_steps")
    value, initial = _onecycle(kw["eta_max"], total, pct, kw["anneal_strategy"], kw["div_factor"],
                               kw["final_div_factor"], kw["three_phase"])
    return ABSOLUTE, value, n, {"sets_initial": initial}


def _b_restart(kw, n):
    periods, weights = kw["periods"], kw["restart_weights"]
    if len(periods) != len(weights):
        raise ArgumentError("restart_weights", "periods and restart_weights should have the same length "
                                               f"(mmengine asserts): {len(periods)} and {len(weights)}")
    for i, p in enumerate(periods):
        if p.is_number and p <= 0:
            raise ArgumentError("periods", f"periods must be positive, not {p}", item=i)
    _ratio(kw["eta_min"], kw["eta_min_ratio"], sp.Integer(1), default_zero=False)
    last = sp.Min(n, sum(periods, sp.Integer(0)) - 1)
    return ABSOLUTE, _restarts(periods, weights, kw["eta_min"], kw["eta_min_ratio"]), last, {}


# type stem -> (its own keywords (name, kind, default), builder, what convert_to_iter_based scales)
TYPES = {
    "Constant": ((("factor", C, sp.Rational(1, 3)),), _b_constant, ()),
    "CosineAnnealing": ((("T_max", S, None), ("eta_min", V, None), ("eta_min_ratio", C, None)),
                        _b_cosine, ("T_max",)),
    "Exponential": ((("gamma", C, None),), _b_exponential, ()),
    "Linear": ((("start_factor", C, sp.Rational(1, 3)), ("end_factor", C, 1)), _b_linear, ()),
    "MultiStep": ((("milestones", L, None), ("gamma", C, frac("0.1"))), _b_multistep, ("milestones",)),
    "Step": ((("step_size", S, None), ("gamma", C, frac("0.1"))), _b_step, ("step_size",)),
    "Poly": ((("eta_min", V, 0), ("power", C, 1)), _b_poly, ()),
    "OneCycle": ((("eta_max", V, 0), ("total_steps", S, None), ("pct_start", C, frac("0.3")),
                  ("anneal_strategy", OPTION, "cos"), ("div_factor", C, 25),
                  ("final_div_factor", C, 10_000), ("three_phase", FLAG, False)),
                 _b_onecycle, ("total_steps",)),
    "CosineRestart": ((("periods", L, None), ("restart_weights", L, [1]), ("eta_min", V, None),
                       ("eta_min_ratio", C, None)), _b_restart, ("periods",)),
}
_REQUIRED = {"gamma": {"Exponential"}, "milestones": {"MultiStep"}, "step_size": {"Step"},
             "periods": {"CosineRestart"}}
_NEEDS_WINDOW = {"CosineAnnealing", "OneCycle"}
_NEEDS_PARAM = {"OneCycle"}


def make_window(stem, kw, *, param, base, begin, end, by_epoch, convert_to_iter_based, epoch_length):
    """One scheduler's ``Window`` from its keywords (mmengine's build, then its constructor)."""
    label = kw.pop("_label")
    if convert_to_iter_based:
        if not by_epoch:
            raise ArgumentError("convert_to_iter_based", "only by_epoch=true schedulers can be converted "
                                                         "to iteration-based ones (mmengine asserts)")
        if epoch_length is None:
            raise ArgumentError("epoch_length", "convert_to_iter_based=true needs epoch_length (mmengine's "
                                                "len(train_dataloader))")
        infinite = end == INF
        begin = sp.floor(begin * epoch_length)
        end = end if infinite else sp.floor(end * epoch_length)
        for name in TYPES[stem][2]:
            value = kw[name]
            if isinstance(value, list):
                kw[name] = [v * epoch_length for v in value]
            elif value is not None:
                kw[name] = value * epoch_length
        by_epoch = False
    _check_window(begin, end)
    n = end - begin - 1
    builder = TYPES[stem][1]
    extra_args = ()
    if stem in _NEEDS_WINDOW:
        extra_args = (begin, end)
    if stem in _NEEDS_PARAM:
        extra_args = (*extra_args, param)
    kind, build, last, extra = builder(kw, n, *extra_args)
    return Window(label, kind, begin, end, by_epoch, last, build, base, param, epoch_length,
                  infinite=(end == INF), **extra)


# -- the chain -------------------------------------------------------------------------------


def _order(a, b, what) -> bool:
    """``a < b``, decided for every value of the parameters, or an error."""
    diff = sp.simplify(b - a)
    if diff.is_positive:
        return True
    if diff.is_nonpositive:
        return False
    raise ArgumentError("schedulers", f"cannot tell whether {what} for every epoch_length",
                        hint="give the numbers (e.g. epoch_length) directly")


def chain(windows: list[Window], base, epoch_length) -> tuple[sp.Expr, sp.Expr | None]:
    """The closed form of mmengine applying ``windows`` in order at every step from ``base``.

    Multiplicative windows commute: between two non-multiplicative windows the value is the
    value handed over times the product of the factors active there.  A non-multiplicative
    window may not overlap anything (its recurrence would no longer be closed form).
    """
    unit = _chain_unit(windows, epoch_length)
    bases = _initial_values(windows, base)
    clocks = [Clock(w.begin, unit if (w.by_epoch and epoch_length is not None) else sp.Integer(1))
              for w in windows]

    def span(i):
        """First and last step ``t`` at which window ``i`` changes the value."""
        w, clock = windows[i], clocks[i]
        first = clock.time(1) if w.kind == AFFINE else clock.time(0)
        return first, clock.time(w.last)

    singles = sorted((i for i, w in enumerate(windows) if w.kind != MUL),
                     key=lambda i: _sort_key(span(i)[0]))
    _refuse_overlaps(windows, singles, span)
    gaps = _mul_gaps(windows, singles, span)

    pairs, entering = [], base
    for k, i in enumerate(singles):
        w, clock = windows[i], clocks[i]
        first, last = span(i)
        pairs.append((entering * _product(windows, clocks, gaps[k]), sp.Lt(tau, first)))
        v0 = entering * _held(windows, clocks, gaps[k])
        inside = w.build(clock, v0, bases[i])
        if w.infinite:
            pairs.append((inside, sp.true))
            break
        pairs.append((inside, sp.Lt(tau, last + 1)))
        entering = at(inside, last)
    else:
        pairs.append((entering * _product(windows, clocks, gaps[-1]), sp.true))
    # a branch "t < 0" never applies (a window that starts at step 0)
    expr = piecewise([(e, c) for e, c in pairs
                      if c is sp.true or (c is not sp.false and not (c.rhs.is_number and c.rhs <= 0))])
    if any(w.infinite for w in windows):
        return expr, None
    ends = [clocks[i].time(w.end - w.begin) for i, w in enumerate(windows)]
    return expr, (ends[0] if len(ends) == 1 else sp.Max(*ends))


def _chain_unit(windows: list[Window], epoch_length):
    """Iterations per epoch for the windows counted in epochs: ``epoch_length`` where given,
    else 1 (all windows then count in one unit; mixing units without it is refused)."""
    if epoch_length is None:
        epoch_units = {w.by_epoch for w in windows}
        if len(epoch_units) > 1:
            raise ArgumentError("epoch_length", "these schedulers mix by_epoch=true and by_epoch=false: "
                                                "give epoch_length (iterations per epoch) so that both "
                                                "count in iterations")
        return sp.Integer(1)
    return epoch_length


def _initial_values(windows: list[Window], base) -> list:
    """The initial value each window is built with: ``base``, or from a OneCycle scheduler on,
    the initial lr it sets (two OneCycles on one parameter are refused)."""
    bases, initial = [], base
    for w in windows:  # OneCycle rewrites the initial value of the schedulers built after it
        if w.sets_initial is not None:
            if any(b.sets_initial is not None for b in windows if b is not w):
                raise ArgumentError("schedulers", "two OneCycle schedulers on one parameter: the second "
                                                  "overwrites the first's initial_lr")
            initial = w.sets_initial
        bases.append(initial)
    return bases


def _refuse_overlaps(windows: list[Window], singles: list[int], span) -> None:
    """Refuses a non-multiplicative window (of ``singles``) that overlaps any other window
    (``span(i)``: its first and last changing step): its recurrence would not be closed form."""
    for i in singles:
        a0, a1 = span(i)
        for j in range(len(windows)):
            b0, b1 = span(j)
            if j == i:
                continue
            apart = _order(a1, b0, f"{windows[i].type} ends before {windows[j].type} starts") or \
                _order(b1, a0, f"{windows[j].type} ends before {windows[i].type} starts")
            if not apart:
                raise ArgumentError("schedulers", f"{windows[i].type} overlaps {windows[j].type}: inside "
                                    f"its window mmengine's {windows[i].type} rewrites the value from the "
                                    "one it finds (a floor, a restart or a one-cycle), so with another "
                                    "scheduler changing it too the chain has no closed form",
                                    hint="make the windows follow each other (end of one = begin of the "
                                         "next), or give the cosine / poly eta_min=0")


def _mul_gaps(windows: list[Window], singles: list[int], span) -> list[list[int]]:
    """The multiplicative windows in each gap around the sorted ``singles``: before the
    first, between each two, after the last."""
    gaps: list[list[int]] = [[] for _ in range(len(singles) + 1)]
    for j, w in enumerate(windows):
        if w.kind != MUL:
            continue
        slot = sum(1 for i in singles if _order(span(i)[1], span(j)[0], "the windows are ordered"))
        gaps[slot].append(j)
    return gaps


def _product(windows: list[Window], clocks: list, members: list[int]):
    """The product of the factors of the multiplicative windows ``members`` at step ``t``:
    1 before each starts, its factor inside, its last value after."""
    value = sp.Integer(1)
    for j in members:
        w, clock = windows[j], clocks[j]
        factor = w.build(clock)
        if w.infinite:  # end = INF: treated as forever (no gamma ** (10**9 - 1) held value)
            value *= piecewise([(1, clock.before(0)), (factor, sp.true)])
            continue
        final = at(factor, clock.time(w.last))
        value *= piecewise([(1, clock.before(0)), (factor, clock.before(w.end - w.begin)),
                            (final, sp.true)])
    return value


def _held(windows: list[Window], clocks: list, members: list[int]):
    """The product of the last values of the multiplicative windows ``members``."""
    value = sp.Integer(1)
    for j in members:
        w, clock = windows[j], clocks[j]
        value *= at(w.build(clock), clock.time(w.last))
    return value


def _sort_key(value):
    return float(value) if value.is_number else float(value.subs({s: 1 for s in value.free_symbols}))


# -- presets -----------------------------------------------------------------------------------

_WINDOW_ARGS = (("begin", C, 0), ("end", C, INF), ("by_epoch", FLAG, True),
                ("convert_to_iter_based", FLAG, False), ("epoch_length", S, None))
_BASES = {"LR": ("lr", "lr"), "Momentum": ("momentum", "momentum"), "ParamScheduler": ("value", None),
          "WeightDecay": ("weight_decay", "weight_decay")}


def _builder(stem: str, family: str):
    base_name, fixed_param = _BASES[family]
    own = [name for name, _, _ in TYPES[stem][0]]
    label = f"{stem}{family}"

    def build(**kwargs):
        base = kwargs.pop(base_name)
        param = kwargs.pop("param_name", fixed_param)
        window_kw = {name: kwargs.pop(name) for name, _, _ in _WINDOW_ARGS}
        for name, types in _REQUIRED.items():
            if stem in types and kwargs.get(name) is None:
                raise ArgumentError(name, f"mmengine.{label} needs '{name}'")
        kw = {name: kwargs[name] for name in own}
        kw["_label"] = label
        window = make_window(stem, kw, param=param, base=base, **window_kw)
        if family == "WeightDecay":
            window = _zero_stays_zero(window)
        expr, duration = chain([window], base if base is not None else sp.Integer(1),
                               window.epoch_length if window.by_epoch else None)
        return MMSegment(expr, duration, base=base, label=label, window=window)

    build.__doc__ = (f"mmengine's ``{label}``: see the module docstring for its closed form; "
                     "``begin``/``end`` are its window, ``by_epoch`` its unit.")
    return build


def _signature(stem: str, family: str):
    base_name, fixed_param = _BASES[family]
    args = [arg(base_name, V, None)]
    if fixed_param is None:
        args.append(arg("param_name", OPTION, "lr", PARAM_NAMES))
    for name, kind, default in TYPES[stem][0]:
        choices = ("cos", "linear") if name == "anneal_strategy" else ()
        if stem in _REQUIRED.get(name, ()):
            args.append(arg(name, kind))
            continue
        args.append(arg(name, kind, default, choices))
    args += [arg(name, kind, default) for name, kind, default in _WINDOW_ARGS]
    return args


def param_scheduler(schedulers, epoch_length):
    """A ``param_scheduler`` list: mmengine applies the schedulers in order at every step."""
    windows = []
    for child in schedulers:
        window = getattr(child, "window", None)
        if window is None:
            raise ArgumentError("schedulers", "mmengine.param_scheduler takes mmengine.* schedulers "
                                              "(mmengine.LinearLR(...), ...)")
        windows.append(window)
    params = {w.param for w in windows}
    if len(params) > 1:
        raise ArgumentError("schedulers", "these schedulers act on different parameters ("
                            + ", ".join(sorted(params)) + "): write one schedule per parameter")
    bases = {w.base for w in windows if w.base is not None}
    if len(bases) > 1:
        raise ArgumentError("schedulers", "the schedulers give different initial values ("
                            + ", ".join(sorted(str(b) for b in bases)) + "); in mmengine they share "
                            "one optimizer, so give each the same one (or only the first)")
    base = bases.pop() if bases else sp.Integer(1)
    lengths = {w.epoch_length for w in windows if w.epoch_length is not None}
    if epoch_length is None and len(lengths) == 1 and any(w.by_epoch for w in windows):
        epoch_length = next(iter(lengths))
    expr, duration = chain(windows, base, epoch_length)
    return MMSegment(expr, duration, base=base, label="param_scheduler", windows=tuple(windows))


def _zero_stays_zero(window: Window) -> Window:
    """mmpretrain's ``CosineAnnealingWeightDecay`` is mmengine's ``CosineAnnealingParamScheduler``
    on ``weight_decay`` except that a group whose initial weight decay is 0 keeps 0 (its
    ``_get_value`` returns 0 there instead of moving towards ``eta_min``).  With a zero floor the
    product form already gives 0 from 0; with a floor the value is 0 when the initial value
    ``base`` is the number 0 (a symbolic initial value is taken as not 0)."""
    if window.kind != AFFINE:
        return window
    inner = window.build

    def build(clock, v0, base):
        if base.is_number and base == 0:
            return sp.Integer(0)
        return inner(clock, v0, base)
    return replace(window, build=build)


PARAM_NAMES = ("lr", "momentum", "weight_decay")
#: mmpretrain 1.2.0 registers one weight-decay scheduler (engine/schedulers/weight_decay_scheduler.py).
_FAMILIES = {"LR": tuple(TYPES), "Momentum": tuple(s for s in TYPES if s != "OneCycle"),
             "ParamScheduler": tuple(TYPES), "WeightDecay": ("CosineAnnealing",)}

PRESETS = [
    preset(f"mmengine.{stem}{family}", _builder(stem, family), *_signature(stem, family))
    for family, stems in _FAMILIES.items() for stem in stems
] + [preset("mmengine.param_scheduler", param_scheduler, arg("schedulers", SCHEDULES),
            arg("epoch_length", S, None))]

_PLATEAU = ("it lowers the value when a validation metric stops improving (its step takes the "
            "metrics), so the value is not a function of the step; use a fixed decay such as "
            "mmengine.CosineAnnealingLR or mmengine.MultiStepLR")
REJECTED = [Rejected(f"mmengine.ReduceOnPlateau{family}", f"ReduceOnPlateau{family}: {_PLATEAU}")
            for family in ("LR", "Momentum", "ParamScheduler")]
