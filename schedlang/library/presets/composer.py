"""``composer.*``: the schedulers of ``composer.optim.scheduler`` (mosaicml 0.32), and
llm-foundry's ``InverseSquareRootWithWarmupScheduler`` (a Composer scheduler too).

Composer schedulers return a multiplier ``alpha(t)`` of the optimizer's lr;
the preset is ``lr * alpha(t)`` (``lr`` default 1: the multiplier itself).
``t`` is the batch count the scheduler is called with; a Composer Trainer
applies the value one batch late (it steps the scheduler before advancing
the timestamp), which is the Trainer's business, not the schedule's (SPEC §3).

Times: Composer writes them as strings (``"10ba"``, ``"2ep"``, ``"0.5dur"``);
schedlang writes the same literals without quotes (``10ba``, ``2ep``,
``0.5dur``) or plain step counts.  ``ep`` needs a ``param steps_per_epoch``
(Composer's ``dataloader_len``) and ``dur`` a ``param max_duration`` (the run
length in steps), declared in the file; they become ``floor(amount * param)``
steps, which is Composer's ``int()`` conversion.  The defaults ``t_max="1dur"``
and ``decay_period="1ep"`` need those parameters too.

Samples and tokens: in a file with a batch schedule, lengths in ``sp``/``tok`` put the preset
on that clock (Composer reads ``timestamp.sample`` / ``.token`` for such times).

The scale-schedule ratio is the ``scale`` built-in around a preset, which reads the preset's
``scale_warmup`` (``semantics/lower_calls.py``); alone, a preset runs at ratio 1, where
``scale_warmup`` changes nothing.  Not modelled: the Trainer's ``t_max >= max_duration`` check.
A zero-length warmup (``"0ba"``, which Composer only warns about) is no warmup.  A warmup
longer than ``t_max`` ramps to its end as Composer's does, then holds the post-warmup start.
"""

from __future__ import annotations

from dataclasses import replace

import sympy as sp

from ...core.algebra import Segment, sequence, tau  # formulas are built in the real-valued step, not t
from ...core.special import geometric
from ...limits import MAX_SEGMENTS, MAX_STEP
from ..stdlib import ArgumentError, TimeDefault, cosine_restarts, multistep
from ._common import FLAG, C, D, L, PresetSegment, S, V, arg, frac, number, preset

HALF = sp.Rational(1, 2)
LR = arg("lr", V, 1)
DUR = TimeDefault(1, "dur")
T_MAX = arg("t_max", S, DUR)
SCALE_WARMUP = arg("scale_warmup", FLAG, False)
TENTH = frac("0.1")


def _seg(lr, alpha, duration=None, label=""):
    return PresetSegment(lr * alpha, duration, label=label)


def _cosine(alpha_f, tau):
    """Composer's ``_cosine_anneal(tau, min_y=alpha_f)`` for ``tau`` in [0, 1]."""
    return alpha_f + (1 - alpha_f) * (1 + sp.cos(tau * sp.pi)) / 2


def step_scheduler(step_size, gamma, lr):
    """``gamma ** floor(t / step_size)``."""
    return _seg(lr, geometric(gamma, sp.floor(tau / step_size)), label="StepScheduler")


def multistep_scheduler(milestones, gamma, lr):
    """``gamma ** (number of milestones <= t)``."""
    return _seg(lr, multistep(1, gamma, milestones).expr, label="MultiStepScheduler")


def constant_scheduler(alpha, t_max, lr):
    """``alpha`` for ``t < t_max``, then **1.0** (Composer jumps back to the full lr)."""
    return _seg(lr, sp.Piecewise((alpha, sp.Lt(tau, t_max)), (1, True)), t_max, "ConstantScheduler")


def linear_scheduler(alpha_i, alpha_f, t_max, lr):
    """``alpha_i + (alpha_f - alpha_i) * t / t_max``, then ``alpha_f``."""
    return _seg(lr, alpha_i + (alpha_f - alpha_i) * tau / t_max, t_max, "LinearScheduler")


def exponential_scheduler(gamma, decay_period, lr):
    """``gamma ** (t / decay_period)``, forever."""
    return _seg(lr, geometric(gamma, tau / decay_period), label="ExponentialScheduler")


def cosine_annealing_scheduler(t_max, alpha_f, lr):
    """``alpha_f + (1 - alpha_f) * (1 + cos(pi * t / t_max)) / 2``, then ``alpha_f``."""
    return _seg(lr, _cosine(alpha_f, tau / t_max), t_max, "CosineAnnealingScheduler")


def cosine_annealing_warm_restarts_scheduler(t_0, t_mult, alpha_f, lr):
    """Cosine from 1 to ``alpha_f`` in intervals of ``t_0``, ``int(t_mult * t_0)``, ..., forever.

    A whole ``t_mult`` is SGDR's closed form (``cosine_restarts``).  A fractional one is
    Composer's own rule, ``next = int(t_mult * interval)`` at each restart (in floating point,
    as Composer computes it), unrolled into one cosine per interval up to the largest step
    (``limits.MAX_STEP``); once ``int(t_mult * L) == L`` the interval stops growing and the
    rest is periodic.  That needs ``t_0`` to be a number.  ``t_mult < 1`` shrinks the interval
    to 0, where Composer raises, so it is refused.
    """
    mult = number(t_mult, "t_mult")
    if mult < 1:
        raise ArgumentError("t_mult", f"t_mult must be >= 1, not {mult}",
                            hint="Composer's intervals shrink to 0 with t_mult < 1 and it raises "
                                 "'Interval between restarts ... has decayed to 0'")
    if mult.is_integer:
        return _seg(lr, cosine_restarts(1, alpha_f, t_0, int(mult)).expr,
                    label="CosineAnnealingWarmRestartsScheduler")
    if not (isinstance(t_0, sp.Basic) and t_0.is_number):
        raise ArgumentError("t_0", "with a fractional t_mult, t_0 must be a number of steps here, not "
                                   "an expression of parameters (a time in ep or dur reads one)",
                            hint="write t_0 in batches, e.g. t_0=3000ba: Composer truncates "
                                 "int(t_mult * interval) at each restart, so each interval's length "
                                 "is computed from the number before it")
    return _seg(lr, _restarts_table(int(t_0), float(mult), alpha_f),
                label="CosineAnnealingWarmRestartsScheduler")


def _restarts_table(length: int, mult: float, alpha_f) -> sp.Expr:
    """Composer's restarts for a fractional ``t_mult``: one cosine per interval, each in its
    own local step and joined by ``sequence`` (shifting a built cosine costs sympy far more)."""
    pieces, start = [], 0
    while True:
        following = int(mult * length)  # Composer: int(self.t_mult * current_interval_len.value)
        if following == length:  # no longer grows: one period for good
            pieces.append(Segment(_cosine(alpha_f, sp.Mod(tau, length) / length)))
            break
        if start + length > MAX_STEP:  # the last interval any step reaches
            pieces.append(Segment(_cosine(alpha_f, tau / length)))
            break
        if len(pieces) == MAX_SEGMENTS:
            raise ArgumentError("t_mult", f"t_mult={mult:g} restarts more than {MAX_SEGMENTS} times "
                                          "before the largest step", hint="give a larger t_mult or t_0")
        pieces.append(Segment(_cosine(alpha_f, tau / length), sp.Integer(length)))
        start, length = start + length, following
    return sequence(*pieces).expr


def polynomial_scheduler(power, t_max, alpha_f, lr):
    """``alpha_f + (1 - alpha_f) * (1 - t / t_max) ** power``, then ``alpha_f``."""
    return _seg(lr, alpha_f + (1 - alpha_f) * (1 - tau / t_max) ** power, t_max, "PolynomialScheduler")


def _warm(t_warmup, peak, after):
    """``peak * t / t_warmup`` before ``t_warmup``, ``after`` from then on.

    A zero-length warmup (``0ba``: Composer only warns) is no warmup: ``t < 0`` never holds.
    """
    if t_warmup.is_number and t_warmup == 0:
        return after
    return sp.Piecewise((peak * tau / t_warmup, sp.Lt(tau, t_warmup)), (after, True))


def _tau(t_warmup, t_max):
    """Fraction of the post-warmup time, ``(t - t_warmup) / (t_max - t_warmup)``, 0 if no room.

    The docstrings say ``/ t_max``; the code divides by ``t_max - t_warmup`` and uses 0
    when ``t_max <= t_warmup``.  Durations are whole numbers, so ``max(1, t_max - t_warmup)``
    is the room when there is some, and 1 (with ``t - t_warmup = 0``: the only step the
    formula is read at) when there is none: one expression for both, parameters or not.
    """
    room = t_max - t_warmup
    if room.is_number:
        return (tau - t_warmup) / room if room > 0 else sp.Integer(0)
    return (tau - t_warmup) / sp.Max(1, room)


def _end(t_warmup, t_max):
    """Where the schedule starts holding: ``t_max``, or the warmup's end when the warmup is longer.

    Composer's warmup is a ``LinearScheduler(0, alpha_i, t_warmup)`` that keeps ramping
    until ``t_warmup`` even past ``t_max`` (``t_warmup: 100ba`` with ``max_duration: 10ba``),
    then ``tau = 0``: the held value is the post-warmup start (``alpha_i``, or 1).
    """
    room = t_max - t_warmup
    if room.is_number:
        return t_max if room >= 0 else t_warmup
    return sp.Max(t_warmup, t_max)


def multistep_with_warmup_scheduler(t_warmup, milestones, gamma, scale_warmup, lr):
    """``t / t_warmup`` during the warmup, then ``gamma ** (number of milestones <= t)``."""
    return _seg(lr, _warm(t_warmup, 1, multistep(1, gamma, milestones).expr),
                label="MultiStepWithWarmupScheduler")


def linear_with_warmup_scheduler(t_warmup, alpha_i, alpha_f, t_max, scale_warmup, lr):
    """``alpha_i * t / t_warmup``, then a line from ``alpha_i`` to ``alpha_f`` at ``t_max``; held."""
    after = alpha_i + (alpha_f - alpha_i) * _tau(t_warmup, t_max)
    return _seg(lr, _warm(t_warmup, alpha_i, after), _end(t_warmup, t_max), "LinearWithWarmupScheduler")


def constant_with_warmup_scheduler(t_warmup, alpha, t_max, scale_warmup, lr):
    """``alpha * t / t_warmup``, then ``alpha`` (LinearWithWarmup from ``alpha`` to ``alpha``)."""
    return _seg(lr, _warm(t_warmup, alpha, alpha), _end(t_warmup, t_max), "ConstantWithWarmupScheduler")


def cosine_annealing_with_warmup_scheduler(t_warmup, t_max, alpha_f, scale_warmup, lr):
    """``t / t_warmup``, then a cosine from 1 to ``alpha_f`` at ``t_max``; held."""
    return _seg(lr, _warm(t_warmup, 1, _cosine(alpha_f, _tau(t_warmup, t_max))), _end(t_warmup, t_max),
                "CosineAnnealingWithWarmupScheduler")


def polynomial_with_warmup_scheduler(t_warmup, power, t_max, alpha_f, scale_warmup, lr):
    """``t / t_warmup``, then ``alpha_f + (1 - alpha_f) * (1 - tau) ** power``; held at ``alpha_f``."""
    after = alpha_f + (1 - alpha_f) * (1 - _tau(t_warmup, t_max)) ** power
    return _seg(lr, _warm(t_warmup, 1, after), _end(t_warmup, t_max), "PolynomialWithWarmupScheduler")


def inverse_square_root_with_warmup_scheduler(t_warmup, t_scale, t_cooldown, t_max, alpha_f_decay,
                                              alpha_f_cooldown, lr):
    """llm-foundry's ``inv_sqrt_with_warmup``: warmup, ``1 / sqrt`` decay, a linear cooldown.

    With ``W = t_warmup``, ``s = t_scale``, ``c = t_cooldown``, ``d = alpha_f_decay``,
    ``f = alpha_f_cooldown`` and the cooldown's start ``C = max(W, t_max - c)``::

        t / W                                         t < W
        isr(t) = d + (1 - d) / sqrt((t - W + s) / s)  W <= t < C
        isr(C) + (f - isr(C)) * min(1, (t - C) / c)   C <= t   (c > 0)
        isr(C)                                        C <= t   (c = 0: no cooldown, f unused)

    The cooldown lasts ``c`` from ``C`` even when the warmup pushed ``C`` past
    ``t_max - c``: it then ends at ``W + c``, past ``t_max``; the schedule holds from
    ``max(W + c, t_max)``.  llm-foundry (0.21) refuses ``dur`` for ``t_warmup``,
    ``t_scale`` and ``t_cooldown`` and wants them in ``max_duration``'s unit; the
    importer says so, the preset takes any step count.
    """
    gap = alpha_f_decay - alpha_f_cooldown
    if gap.is_number and gap < 0:
        raise ArgumentError("alpha_f_cooldown", "llm-foundry requires alpha_f_decay >= alpha_f_cooldown, "
                                                f"got {alpha_f_decay} < {alpha_f_cooldown}")

    def isr(x):
        return alpha_f_decay + (1 - alpha_f_decay) / sp.sqrt((x - t_warmup + t_scale) / t_scale)

    start = sp.Max(t_warmup, t_max - t_cooldown)
    held = isr(start)
    if t_cooldown.is_number and t_cooldown == 0:
        after = held
    else:
        # the end value: f, or isr(C) when a parameter makes c = 0 (c is a whole number of steps,
        # so 1 - min(c, 1) is 1 exactly when c = 0); the ramp is only read when c >= 1
        end = alpha_f_cooldown if t_cooldown.is_positive else (
            alpha_f_cooldown + (held - alpha_f_cooldown) * (1 - sp.Min(t_cooldown, 1)))
        room = t_cooldown if t_cooldown.is_positive else sp.Max(t_cooldown, 1)  # no 1/0 when c = 0
        after = sp.Piecewise((held + (alpha_f_cooldown - held) * (tau - start) / room,
                              sp.Lt(tau, start + t_cooldown)), (end, True))
    decay = sp.Piecewise((isr(tau), sp.Lt(tau, start)), (after, True))
    return _seg(lr, _warm(t_warmup, 1, decay), sp.Max(t_warmup + t_cooldown, t_max),
                "InverseSquareRootWithWarmupScheduler")


W = arg("t_warmup", D)
MILESTONES = arg("milestones", L, empty_ok=True)  # Composer takes []: no milestone, no decay
_PRESETS = [
    preset("composer.StepScheduler", step_scheduler, arg("step_size", S), arg("gamma", V, TENTH), LR),
    preset("composer.MultiStepScheduler", multistep_scheduler, MILESTONES,
           arg("gamma", V, TENTH), LR),
    preset("composer.ConstantScheduler", constant_scheduler, arg("alpha", V, 1), T_MAX, LR),
    preset("composer.LinearScheduler", linear_scheduler, arg("alpha_i", V, 1), arg("alpha_f", V, 0),
           T_MAX, LR),
    preset("composer.ExponentialScheduler", exponential_scheduler, arg("gamma", V),
           arg("decay_period", S, TimeDefault(1, "ep")), LR),
    preset("composer.CosineAnnealingScheduler", cosine_annealing_scheduler, T_MAX, arg("alpha_f", V, 0), LR),
    preset("composer.CosineAnnealingWarmRestartsScheduler", cosine_annealing_warm_restarts_scheduler,
           arg("t_0", S), arg("t_mult", C, 1), arg("alpha_f", V, 0), LR),
    preset("composer.PolynomialScheduler", polynomial_scheduler, arg("power", C), T_MAX,
           arg("alpha_f", V, 0), LR),
    preset("composer.MultiStepWithWarmupScheduler", multistep_with_warmup_scheduler, W,
           MILESTONES, arg("gamma", V, TENTH), SCALE_WARMUP, LR),
    preset("composer.ConstantWithWarmupScheduler", constant_with_warmup_scheduler, W,
           arg("alpha", V, 1), T_MAX, SCALE_WARMUP, LR),
    preset("composer.LinearWithWarmupScheduler", linear_with_warmup_scheduler, W, arg("alpha_i", V, 1),
           arg("alpha_f", V, 0), T_MAX, SCALE_WARMUP, LR),
    preset("composer.CosineAnnealingWithWarmupScheduler", cosine_annealing_with_warmup_scheduler, W,
           T_MAX, arg("alpha_f", V, 0), SCALE_WARMUP, LR),
    preset("composer.PolynomialWithWarmupScheduler", polynomial_with_warmup_scheduler, W,
           arg("power", C, 2), T_MAX, arg("alpha_f", V, 0), SCALE_WARMUP, LR),
    # llm-foundry's (llmfoundry.optim.scheduler, registry name inv_sqrt_with_warmup)
    preset("composer.InverseSquareRootWithWarmupScheduler", inverse_square_root_with_warmup_scheduler, W,
           arg("t_scale", S), arg("t_cooldown", D), T_MAX, arg("alpha_f_decay", V, 0),
           arg("alpha_f_cooldown", V, 0), LR),
]
#: Composer reads ``state.timestamp`` in the unit a time is written in: ``t_max="100tok"`` counts
#: the tokens seen.  In a file with a batch schedule, lengths in ``sp``/``tok`` put the preset on
#: that clock (every length in one unit, as Composer requires).
#: Composer's scale-schedule ratio is the Trainer's (``scale_schedule_ratio``, ``ssr`` in
#: ``scheduler(state, ssr)``), not a scheduler's argument: ``scale()`` around the preset.
SSR = "Composer's scale_schedule_ratio is the Trainer's, written scale({name}(...), 0.5)"
PRESETS = [replace(p, clock_from_lengths=True, elsewhere=(("ssr", SSR), ("scale_schedule_ratio", SSR)))
           for p in _PRESETS]
