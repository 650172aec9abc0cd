"""``timm.*``: the closed-form schedulers of ``timm.scheduler`` (timm 1.0.31).

Each class keeps timm's keyword names and defaults and takes one extra keyword,
``lr``: the optimizer's learning rate (timm's ``base_values``).  It is required
because timm's ``lr_min`` and ``warmup_lr_init`` are absolute values, not
factors of it.  ``t`` is the scheduler's own count: the epoch passed to
``step(epoch)`` when ``t_in_epochs=True`` (timm's default), the update count
passed to ``step_update(num_updates)`` otherwise; ``t_in_epochs`` only picks
which of the two calls drives the scheduler, so it does not change the
values.  ``t = 0`` is the value the constructor sets (``warmup_lr_init`` when
there is a warmup, else ``lr``); ``t >= 1`` is ``_get_lr(t)``.

Every class shares timm's warmup: for ``t < warmup_t`` the value is
``warmup_lr_init + t * (lr - warmup_lr_init) / warmup_t`` (it never reaches
``lr`` inside the warmup).  After it the curve is read at ``t - warmup_t``
when ``warmup_prefix`` is true, at ``t`` itself otherwise, so a non-prefix
warmup *replaces* the start of the curve.  ``warmup_prefix`` defaults to
False for the cycle schedulers (cosine, tanh, poly) and True for the step
ones; ``TanhLRScheduler`` alone ramps a non-prefix warmup to the curve's
value at ``warmup_t`` instead of ``lr``.

Cycles (cosine, tanh, poly): cycle ``i`` starts at
``T (m**i - 1) / (m - 1)`` (``i T`` when ``m = cycle_mul = 1``), lasts
``T m**i`` steps and peaks at ``lr * cycle_decay**i``; after ``cycle_limit``
cycles the value is ``lr_min`` for ever, so these presets are finite and
hold ``lr_min``.  timm finds the cycle with a floating-point ``log`` and, for
some multipliers, misses a restart by one step (``cycle_mul=3``,
``t_initial=10``: the restart at 1210 comes at 1211); the presets restart
exactly where the cycle lengths say.  Noise (``noise_range_t``) draws from
torch's random generator, so it has no closed form and is refused; the other
noise keywords are accepted and do nothing without it, as in timm.
"""

from __future__ import annotations

import sympy as sp

from ...core.algebra import (
    at,
    branches,
    piecewise,
    shifted,
    tau,  # formulas are built in the real-valued step, not t
)
from ...core.special import geometric
from ...limits import MAX_STEP
from ..stdlib import ArgumentError, Kind
from ._common import (
    FLAG,
    OPTION,
    C,
    L,
    PresetSegment,
    Rejected,
    S,
    V,
    arg,
    frac,
    number,
    positive_steps,
    preset,
    whole,
)

HALF = sp.Rational(1, 2)
#: Cycles of changing length are written out one branch each; this many at most.
MAX_CYCLES = 256


def _seg(expr, duration, label):
    return PresetSegment(expr, duration, label=label)


def _nonnegative(value, name, what=""):
    if value.is_number and value < 0:
        raise ArgumentError(name, f"timm requires {name} >= 0{what}, got {value}")


def _refuse_noise(noise_range_t):
    if noise_range_t is not None:
        raise ArgumentError("noise_range_t", "timm's lr noise is drawn from torch's random generator "
                            "(seeded with noise_seed + t), so the noisy values have no closed form",
                            hint="drop noise_range_t; the schedule without noise is what timm adds "
                                 "noise to")


def _check_warmup(warmup_t, warmup_lr_init):
    positive_steps(warmup_t, "warmup_t", allow_zero=True)
    _nonnegative(warmup_lr_init, "warmup_lr_init")


def _assemble(lr, curve, duration, warmup_t, warmup_lr_init, warmup_prefix, *, target=None,
              first=None, label=""):
    """timm's warmup in front of ``curve`` (a formula of the curve's own step), the whole
    schedule as one table in the scheduler's ``t``.

    ``target``: where the warmup ramps to (``lr`` unless given).  ``first``: the value at
    ``t = 0`` when there is no warmup, where the constructor's value (``lr``) differs from
    ``_get_lr(0)``; the branch is dead whenever a warmup covers ``t = 0``.
    """
    w, start = warmup_t, warmup_lr_init
    pairs = []
    if not (w.is_number and w == 0):
        goal = lr if target is None else target
        pairs.append((start + tau * (goal - start) / w, sp.Lt(tau, w)))
    if first is not None and not w.is_positive:
        pairs.append((first, sp.Lt(tau, 1)))
    pairs += branches(shifted(curve, w) if warmup_prefix else curve)
    if duration is not None:
        duration = duration + w if warmup_prefix else sp.Max(w, duration)
        if first is not None:
            duration = sp.Max(duration, 1)
        if duration.is_number and duration == 0:
            duration = None
    return _seg(piecewise(pairs), duration, label)


def _cycles(shape, lr, lr_min, t_initial, cycle_mul, cycle_decay, cycle_limit):
    """The cycles in the curve's own step: ``(formula, end)``; ``lr_min`` from ``end`` on.

    ``shape(lr_max, u, length)`` is the value ``u`` steps into a cycle of ``length`` steps.
    """
    limit = whole(cycle_limit, "cycle_limit", minimum=0)
    mul = number(cycle_mul, "cycle_mul")
    if mul < 1:
        raise ArgumentError("cycle_mul", f"cycle_mul={mul} shrinks the cycles: timm takes the log of "
                            "a negative number (a math domain error) once t passes "
                            "t_initial / (1 - cycle_mul)", hint="use cycle_mul >= 1")
    T = t_initial
    if limit == 0:
        return lr_min, sp.Integer(0)
    if mul == 1 and limit > MAX_CYCLES:
        index = sp.floor(tau / T)
        value = shape(lr * geometric(cycle_decay, index), tau - T * index, T)
        return sp.Piecewise((value, sp.Lt(tau, T * limit)), (lr_min, True)), T * limit
    pairs, begin = [], sp.Integer(0)
    for i in range(limit):
        length = T * mul**i
        end = begin + length
        pairs.append((shape(lr * cycle_decay**i, tau - begin, length), sp.Lt(tau, end)))
        begin = end
        if begin.is_number and begin > MAX_STEP:
            break  # later cycles start past every step a schedule can reach
        if len(pairs) >= MAX_CYCLES and i < limit - 1:
            raise ArgumentError("cycle_limit", f"more than {MAX_CYCLES} cycles of changing length",
                                hint="use fewer cycles, or cycle_mul=1")
    pairs.append((lr_min, sp.true))
    return piecewise(pairs), sp.ceiling(begin)


def _common_checks(t_initial, lr_min, noise_range_t):
    _refuse_noise(noise_range_t)
    positive_steps(t_initial, "t_initial")
    _nonnegative(lr_min, "lr_min")


def _k(k_decay):
    if k_decay.is_number and k_decay <= 0:
        raise ArgumentError("k_decay", f"k_decay must be positive, got {k_decay} (timm raises "
                                       "0 ** k at the start of a cycle otherwise)")
    return k_decay


def cosine_lr_scheduler(lr, t_initial, lr_min, cycle_mul, cycle_decay, cycle_limit, warmup_t,
                        warmup_lr_init, warmup_prefix, t_in_epochs, noise_range_t, noise_pct, noise_std,
                        noise_seed, k_decay):
    """timm's CosineLRScheduler: in cycle ``i`` (``u`` steps in, ``T_i`` long)
    ``lr_min + (lr * cycle_decay**i - lr_min) * (1 + cos(pi * (u / T_i) ** k_decay)) / 2``;
    ``lr_min`` after ``cycle_limit`` cycles; timm's warmup in front."""
    _common_checks(t_initial, lr_min, noise_range_t)
    _check_warmup(warmup_t, warmup_lr_init)
    k = _k(k_decay)

    def shape(peak, u, length):
        return lr_min + HALF * (peak - lr_min) * (1 + sp.cos(sp.pi * (u / length) ** k))

    curve, end = _cycles(shape, lr, lr_min, t_initial, cycle_mul, cycle_decay, cycle_limit)
    return _assemble(lr, curve, end, warmup_t, warmup_lr_init, warmup_prefix, label="CosineLRScheduler")


def tanh_lr_scheduler(lr, t_initial, lb, ub, lr_min, cycle_mul, cycle_decay, cycle_limit, warmup_t,
                      warmup_lr_init, warmup_prefix, t_in_epochs, noise_range_t, noise_pct, noise_std,
                      noise_seed):
    """timm's TanhLRScheduler: in cycle ``i`` with ``r = u / T_i``
    ``lr_min + (lr * cycle_decay**i - lr_min) * (1 - tanh(lb (1 - r) + ub r)) / 2``, written
    ``... / (1 + exp(2 (lb (1 - r) + ub r)))`` (the same number).  ``t = 0`` without a warmup
    is ``lr`` (the constructor's value; the curve starts a hair below it)."""
    _common_checks(t_initial, lr_min, noise_range_t)
    _check_warmup(warmup_t, warmup_lr_init)
    if (ub - lb).is_number and ub <= lb:
        raise ArgumentError("lb", f"timm requires lb < ub, got lb={lb}, ub={ub}")

    def shape(peak, u, length):
        r = u / length
        return lr_min + (peak - lr_min) / (1 + sp.exp(2 * (lb * (1 - r) + ub * r)))

    curve, end = _cycles(shape, lr, lr_min, t_initial, cycle_mul, cycle_decay, cycle_limit)
    target = None if warmup_prefix else at(curve, warmup_t)
    return _assemble(lr, curve, end, warmup_t, warmup_lr_init, warmup_prefix, target=target, first=lr,
                     label="TanhLRScheduler")


def poly_lr_scheduler(lr, t_initial, power, lr_min, cycle_mul, cycle_decay, cycle_limit, warmup_t,
                      warmup_lr_init, warmup_prefix, t_in_epochs, noise_range_t, noise_pct, noise_std,
                      noise_seed, k_decay):
    """timm's PolyLRScheduler: in cycle ``i``
    ``lr_min + (lr * cycle_decay**i - lr_min) * (1 - (u / T_i) ** k_decay) ** power``."""
    _common_checks(t_initial, lr_min, noise_range_t)
    _check_warmup(warmup_t, warmup_lr_init)
    k = _k(k_decay)

    def shape(peak, u, length):
        return lr_min + (peak - lr_min) * (1 - (u / length) ** k) ** power

    curve, end = _cycles(shape, lr, lr_min, t_initial, cycle_mul, cycle_decay, cycle_limit)
    return _assemble(lr, curve, end, warmup_t, warmup_lr_init, warmup_prefix, label="PolyLRScheduler")


def step_lr_scheduler(lr, decay_t, decay_rate, warmup_t, warmup_lr_init, warmup_prefix, t_in_epochs,
                      noise_range_t, noise_pct, noise_std, noise_seed):
    """timm's StepLRScheduler: ``lr * decay_rate ** floor(u / decay_t)`` (``decay_t`` may be
    fractional, e.g. 2.4 epochs); decays for ever."""
    _refuse_noise(noise_range_t)
    _check_warmup(warmup_t, warmup_lr_init)
    if decay_t.is_number and decay_t <= 0:
        raise ArgumentError("decay_t", f"decay_t must be positive, got {decay_t} (timm divides by it)")
    curve = lr * geometric(decay_rate, sp.floor(tau / decay_t))
    return _assemble(lr, curve, None, warmup_t, warmup_lr_init, warmup_prefix, label="StepLRScheduler")


def multistep_lr_scheduler(lr, decay_t, decay_rate, warmup_t, warmup_lr_init, warmup_prefix, t_in_epochs,
                           noise_range_t, noise_pct, noise_std, noise_seed):
    """timm's MultiStepLRScheduler: ``lr * decay_rate ** k``, ``k`` the number of milestones
    ``m <= u + 1``: milestone ``m`` takes effect at ``u = m - 1``, one step before torch's
    MultiStepLR (timm keeps this on purpose).  ``t = 0`` without a warmup is ``lr``."""
    _refuse_noise(noise_range_t)
    _check_warmup(warmup_t, warmup_lr_init)
    for a, b in zip(decay_t, decay_t[1:]):
        if (b - a).is_number and b < a:
            raise ArgumentError("decay_t", "decay_t must be sorted: timm finds the milestone with "
                                           "bisect, which assumes a sorted list")
    value, pairs = lr, []
    for m in decay_t:
        pairs.append((value, sp.Lt(tau, m - 1)))
        value = value * decay_rate
    pairs.append((value, sp.true))
    last = decay_t[-1] - 1
    duration = last if not (last.is_number and last <= 0) else sp.Integer(0)
    early = any((m - 1).is_positive is not True for m in decay_t)  # _get_lr(0) already decayed
    return _assemble(lr, piecewise(pairs), duration, warmup_t, warmup_lr_init, warmup_prefix,
                     first=lr if early else None, label="MultiStepLRScheduler")


_STABLE = ("constant", "rsqrt", "power")
_DECAY = ("linear", "1-sqrt", "cosine", "power", "exp")


def wsd_lr_scheduler(lr, t_initial, decay_t, lr_min, stable_fn, stable_timescale, stable_power, decay_fn,
                     decay_power, decay_ratio, warmup_t, warmup_lr_init, t_in_epochs, noise_range_t,
                     noise_pct, noise_std, noise_seed):
    """timm's WSDLRScheduler: warmup (always a prefix), then with ``s = t - warmup_t``
    ``max(lr * stable(s), lr_min)`` until ``s = t_initial - decay_t``, then
    ``lr_min + (max(lr * stable(s), lr_min) - lr_min) * decay(f)`` with
    ``f = (s - t_initial + decay_t) / decay_t``; ``lr_min`` from ``warmup_t + t_initial`` on.

    ``stable``: ``1``, ``(1 + s / stable_timescale) ** -0.5`` (rsqrt) or ``** -stable_power``;
    ``decay``: ``1 - f``, ``1 - sqrt(f)``, ``(1 + cos(pi f)) / 2``, ``1 - f ** decay_power`` or
    ``(decay_ratio ** f - decay_ratio) / (1 - decay_ratio)``.
    """
    _common_checks(t_initial, lr_min, noise_range_t)
    _check_warmup(warmup_t, warmup_lr_init)
    positive_steps(decay_t, "decay_t")
    if (t_initial - decay_t).is_negative:
        raise ArgumentError("decay_t", f"timm requires 0 < decay_t <= t_initial, got decay_t={decay_t}, "
                                       f"t_initial={t_initial}")
    if decay_ratio.is_number and not 0 < decay_ratio < 1:
        raise ArgumentError("decay_ratio", f"timm requires 0 < decay_ratio < 1, got {decay_ratio}")
    for name, value in (("decay_power", decay_power), ("stable_power", stable_power)):
        if value.is_number and value <= 0:
            raise ArgumentError(name, f"timm requires {name} > 0, got {value}")
    s = tau
    if stable_fn == "constant":
        stable = sp.Integer(1)
    else:
        scale = warmup_t if stable_timescale is None else stable_timescale
        if scale.is_number and scale <= 0:
            raise ArgumentError("stable_timescale", f"stable_fn=\"{stable_fn}\" needs a positive "
                                "stable_timescale; it defaults to warmup_t, which is 0 here",
                                hint="give stable_timescale=... when there is no warmup")
        stable = (1 + s / scale) ** -(HALF if stable_fn == "rsqrt" else stable_power)
    held = sp.Max(lr * stable, lr_min)
    f = (s - (t_initial - decay_t)) / decay_t
    decay = {"linear": 1 - f, "1-sqrt": 1 - sp.sqrt(f), "cosine": HALF * (1 + sp.cos(sp.pi * f)),
             "power": 1 - f ** decay_power,
             "exp": (geometric(decay_ratio, f) - decay_ratio) / (1 - decay_ratio)}[decay_fn]
    curve = sp.Piecewise((held, sp.Lt(s, t_initial - decay_t + 1)),
                         (lr_min + (held - lr_min) * decay, sp.Lt(s, t_initial)), (lr_min, True))
    first = lr if (lr - lr_min).is_negative is not False else None  # constructor: lr, not max(lr, lr_min)
    return _assemble(lr, curve, t_initial, warmup_t, warmup_lr_init, True, first=first,
                     label="WSDLRScheduler")


LR = arg("lr", V)
NOISE = (arg("noise_range_t", Kind.ANY, None), arg("noise_pct", C, frac("0.67")), arg("noise_std", C, 1),
         arg("noise_seed", C, 42))


def _warmup(prefix: bool):
    return (arg("warmup_t", C, 0), arg("warmup_lr_init", V, 0), arg("warmup_prefix", FLAG, prefix))


CYCLES = (arg("cycle_mul", C, 1), arg("cycle_decay", C, 1), arg("cycle_limit", C, 1))
T_IN_EPOCHS = arg("t_in_epochs", FLAG, True)

PRESETS = [
    preset("timm.CosineLRScheduler", cosine_lr_scheduler, LR, arg("t_initial", S), arg("lr_min", V, 0),
           *CYCLES, *_warmup(False), T_IN_EPOCHS, *NOISE, arg("k_decay", C, 1)),
    preset("timm.TanhLRScheduler", tanh_lr_scheduler, LR, arg("t_initial", S), arg("lb", C, -7),
           arg("ub", C, 3), arg("lr_min", V, 0), *CYCLES, *_warmup(False), T_IN_EPOCHS, *NOISE),
    preset("timm.StepLRScheduler", step_lr_scheduler, LR, arg("decay_t", C), arg("decay_rate", C, 1),
           *_warmup(True), T_IN_EPOCHS, *NOISE),
    preset("timm.MultiStepLRScheduler", multistep_lr_scheduler, LR, arg("decay_t", L),
           arg("decay_rate", C, 1), *_warmup(True), T_IN_EPOCHS, *NOISE),
    preset("timm.PolyLRScheduler", poly_lr_scheduler, LR, arg("t_initial", S), arg("power", C, HALF),
           arg("lr_min", V, 0), *CYCLES, *_warmup(False), T_IN_EPOCHS, *NOISE, arg("k_decay", C, 1)),
    preset("timm.WSDLRScheduler", wsd_lr_scheduler, LR, arg("t_initial", S), arg("decay_t", C),
           arg("lr_min", V, 0), arg("stable_fn", OPTION, "constant", _STABLE),
           arg("stable_timescale", C, None), arg("stable_power", C, HALF),
           arg("decay_fn", OPTION, "1-sqrt", _DECAY), arg("decay_power", C, HALF),
           arg("decay_ratio", C, frac("0.1")), arg("warmup_t", C, 0), arg("warmup_lr_init", V, 0),
           T_IN_EPOCHS, *NOISE),
]

REJECTED = [
    Rejected("timm.PlateauLRScheduler",
             "PlateauLRScheduler wraps torch's ReduceLROnPlateau: it lowers the lr when an evaluation "
             "metric stops improving, so its value depends on training, not on the epoch alone (it is "
             "also deprecated in timm 1.0.31); use a fixed decay such as timm.StepLRScheduler or "
             "timm.CosineLRScheduler"),
]
