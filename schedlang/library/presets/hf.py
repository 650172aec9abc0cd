"""``hf.*``: the schedule types of ``transformers.get_scheduler`` (transformers 5.x).

HF returns a ``LambdaLR`` multiplier; the preset is ``lr * lambda(t)`` with
``lr`` the optimizer's learning rate (default 1: the multiplier itself).  The
keywords are ``get_scheduler``'s (``num_warmup_steps``, ``num_training_steps``)
plus the type's ``scheduler_specific_kwargs`` written as plain keywords.
Warmups are HF's: ``t / max(1, W)`` (the first step has lr 0).  Every preset
with a warmup also takes ``warmup_ratio=`` (HF v4's ``warmup_ratio``, v5's
``warmup_steps < 1``) instead of ``num_warmup_steps``: ``W = ceil(ratio * T)``,
as the Trainer's ``get_warmup_steps`` computes it.

Past ``num_training_steps``: ``linear``, ``polynomial``, ``cosine_with_restarts``
and ``warmup_stable_decay`` hold their end (these presets are finite, so ``>>``
works after them); ``cosine``, ``cosine_with_min_lr`` and
``cosine_warmup_with_min_lr`` do **not** clamp their progress and rise again,
exactly as HF does; ``inverse_sqrt`` decays forever.
"""

from __future__ import annotations

import functools
import math

import sympy as sp

from ...core.algebra import tau  # formulas are built in the real-valued step, not t
from ..stdlib import DECAY_SHAPES, ArgumentError
from ._common import OPTION, C, PresetSegment, Rejected, S, V, arg, frac, preset

HALF = sp.Rational(1, 2)
LR = arg("lr", V, 1)
W = arg("num_warmup_steps", C, 0)
T = arg("num_training_steps", S)


def _warm(w):
    return tau / sp.Max(1, w)


def _check_warmup(w, n):
    if w.is_number and (not w.is_integer or w < 0):
        raise ArgumentError("num_warmup_steps", f"num_warmup_steps must be a whole number >= 0, not {w}")
    if n is not None and (w - n).is_positive:
        raise ArgumentError("num_warmup_steps", "num_warmup_steps is longer than num_training_steps")


def _hf(value, duration=None, label=""):
    return PresetSegment(value, duration, label=label)


def _with_warmup(w, after):
    return sp.Piecewise((_warm(w), sp.Lt(tau, w)), (after, True))


def constant(lr, num_warmup_steps, num_training_steps):
    """``lr`` (HF's ``constant`` ignores the step counts)."""
    return _hf(lr, label="constant")


def constant_with_warmup(lr, num_warmup_steps, num_training_steps):
    """``lr * t / max(1, W)`` for ``t < W``, then ``lr``."""
    _check_warmup(num_warmup_steps, None)
    return _hf(lr * _with_warmup(num_warmup_steps, 1), label="constant_with_warmup")


def linear(lr, num_warmup_steps, num_training_steps):
    """Warmup, then ``lr * (T - t) / max(1, T - W)`` down to 0 at ``T``; 0 after."""
    w, n = num_warmup_steps, num_training_steps
    _check_warmup(w, n)
    return _hf(lr * _with_warmup(w, (n - tau) / sp.Max(1, n - w)), n, "linear")


def _progress(w, n):
    return (tau - w) / sp.Max(1, n - w)


def cosine(lr, num_warmup_steps, num_training_steps, num_cycles):
    """Warmup, then ``lr * (1 + cos(2 pi num_cycles p)) / 2`` with ``p = (t - W)/max(1, T - W)``.

    ``p`` is not clamped: past ``T`` the lr rises again (HF's behaviour).
    """
    w, n = num_warmup_steps, num_training_steps
    _check_warmup(w, n)
    factor = HALF * (1 + sp.cos(sp.pi * num_cycles * 2 * _progress(w, n)))
    return _hf(lr * _with_warmup(w, factor), label="cosine")


def cosine_with_restarts(lr, num_warmup_steps, num_training_steps, num_cycles):
    """Warmup, then ``num_cycles`` hard-restart cosines from ``lr`` to 0 ending at ``T``; 0 after."""
    w, n = num_warmup_steps, num_training_steps
    _check_warmup(w, n)
    if num_cycles.is_number and num_cycles.is_integer:
        # (num_cycles * p) % 1 on whole numbers: exact at every restart
        phase = sp.Mod(num_cycles * (tau - w), sp.Max(1, n - w)) / sp.Max(1, n - w)
    else:
        phase = sp.Mod(num_cycles * _progress(w, n), 1)
    factor = sp.Piecewise((sp.Max(0, HALF * (1 + sp.cos(sp.pi * phase))), sp.Lt(tau, n)), (0, True))
    return _hf(lr * _with_warmup(w, factor), n, "cosine_with_restarts")


def polynomial(lr, num_warmup_steps, num_training_steps, lr_end, power):
    """Warmup, then ``(lr - lr_end) * (1 - (t - W)/(T - W)) ** power + lr_end``; ``lr_end`` after ``T``."""
    w, n = num_warmup_steps, num_training_steps
    _check_warmup(w, n)
    if (lr - lr_end).is_number and not (lr - lr_end).is_positive:
        raise ArgumentError("lr_end", f"lr_end ({lr_end}) must be smaller than lr ({lr}), as HF requires")
    if (n - w).is_number and n - w == 0:
        raise ArgumentError("num_training_steps", "num_training_steps equals num_warmup_steps: HF "
                                                  "divides by their difference (ZeroDivisionError)")
    decay = (lr - lr_end) * (1 - (tau - w) / (n - w)) ** power + lr_end
    return _hf(sp.Piecewise((lr * _warm(w), sp.Lt(tau, w)), (decay, True)), n, "polynomial")


def inverse_sqrt(lr, num_warmup_steps, num_training_steps, timescale):
    """Warmup, then ``lr / sqrt((t + timescale - W) / timescale)``; ``timescale`` defaults to W or 10000."""
    w = num_warmup_steps
    _check_warmup(w, None)
    if timescale is None:
        timescale = w if (w.is_number and w != 0) else (sp.Integer(10_000) if w.is_number else w)
    if timescale.is_number and timescale <= 0:
        raise ArgumentError("timescale", f"timescale must be positive, not {timescale} (HF divides by it)")
    decay = 1 / sp.sqrt((tau + timescale - w) / timescale)
    return _hf(lr * _with_warmup(w, decay), label="inverse_sqrt")


def _min_lr_rate(lr, min_lr, min_lr_rate):
    if min_lr is not None and min_lr_rate is not None:
        raise ArgumentError("min_lr", "give only one of min_lr and min_lr_rate")
    if min_lr is not None:
        return min_lr / lr
    if min_lr_rate is None:
        raise ArgumentError("min_lr_rate", "give one of min_lr or min_lr_rate (HF requires it)")
    return min_lr_rate


def cosine_with_min_lr(lr, num_warmup_steps, num_training_steps, num_cycles, min_lr, min_lr_rate):
    """``cosine`` whose floor is ``min_lr`` (or ``min_lr_rate * lr``); rises again past ``T``."""
    w, n = num_warmup_steps, num_training_steps
    _check_warmup(w, n)
    rate = _min_lr_rate(lr, min_lr, min_lr_rate)
    factor = HALF * (1 + sp.cos(sp.pi * num_cycles * 2 * _progress(w, n)))
    return _hf(lr * _with_warmup(w, sp.Max(0, factor * (1 - rate) + rate)), label="cosine_with_min_lr")


def cosine_warmup_with_min_lr(lr, num_warmup_steps, num_training_steps, num_cycles, min_lr,
                              min_lr_rate, warmup_lr_rate):
    """HF's shifted variant: warmup ``(t + 1)/max(1, W)`` (or from ``warmup_lr_rate``), cosine with
    progress ``(t - W + 1)/max(1, T - W)``: the floor is reached at ``T - 1``, then it rises again."""
    w, n = num_warmup_steps, num_training_steps
    _check_warmup(w, n)
    rate = _min_lr_rate(lr, min_lr, min_lr_rate)
    if warmup_lr_rate is None:
        warm = (tau + 1) / sp.Max(1, w)
    else:
        warm = warmup_lr_rate + (1 - warmup_lr_rate) * tau / sp.Max(1, w - 1)
    progress = (tau - w + 1) / sp.Max(1, n - w)
    factor = HALF * (1 + sp.cos(sp.pi * num_cycles * 2 * progress))
    decay = sp.Max(0, factor * (1 - rate) + rate)
    return _hf(lr * sp.Piecewise((warm, sp.Lt(tau, w)), (decay, True)), label="cosine_warmup_with_min_lr")


_SHAPES = ("linear", "cosine", "1-sqrt")
#: Each ``decay_type`` as the ``cooldown`` shape it is (``stdlib.DECAY_SHAPES``).
COOLDOWN_SHAPE = {"linear": "linear", "cosine": "cosine", "1-sqrt": "sqrt"}


def warmup_stable_decay(lr, num_warmup_steps, num_training_steps, num_decay_steps, num_stable_steps,
                        warmup_type, decay_type, min_lr_ratio, num_cycles):
    """Warmup from ``min_lr_ratio`` to 1, stable at 1, decay to ``min_lr_ratio`` over
    ``num_decay_steps``, then ``min_lr_ratio`` (all times ``lr``).

    ``num_stable_steps`` defaults to ``T - W - num_decay_steps``.
    """
    w, r = num_warmup_steps, min_lr_ratio
    _check_warmup(w, None)
    if num_stable_steps is None:
        if num_training_steps is None:
            raise ArgumentError("num_training_steps", "give num_training_steps or num_stable_steps")
        num_stable_steps = num_training_steps - w - num_decay_steps
    stable_end = w + num_stable_steps
    end = stable_end + num_decay_steps
    p_warm = tau / sp.Max(1, w)
    up = {"linear": p_warm, "cosine": HALF * (1 - sp.cos(sp.pi * p_warm)),
          "1-sqrt": 1 - sp.sqrt(1 - p_warm)}[warmup_type]
    p_decay = (tau - stable_end) / sp.Max(1, num_decay_steps)
    # the cooldown shapes; HF's cosine is the cosine shape at 2 * num_cycles * p (p at 1/2 cycle)
    down = DECAY_SHAPES[COOLDOWN_SHAPE[decay_type]](2 * num_cycles * p_decay if decay_type == "cosine"
                                                     else p_decay)
    value = sp.Piecewise((sp.Max(0, up * (1 - r) + r), sp.Lt(tau, w)), (1, sp.Lt(tau, stable_end)),
                         (sp.Max(0, down * (1 - r) + r), sp.Lt(tau, end)), (r, True))
    return _hf(lr * value, end if (end.is_number and end > 0) else None, "warmup_stable_decay")


def warmup_steps_of(ratio, num_training_steps):
    """The Trainer's ``get_warmup_steps`` for a ratio: ``ceil(num_training_steps * ratio)``.

    HF multiplies in float64 (``math.ceil(0.07 * 100)`` is 8, not 7); with numbers we do
    the same.  With a parameter for ``num_training_steps`` the product is exact, which
    differs from HF only where the float product of a whole result is rounded up.
    """
    if ratio.is_number and (ratio < 0 or ratio >= 1):
        raise ArgumentError("warmup_ratio", f"warmup_ratio must be in [0, 1), not {ratio}",
                            hint="HF reads warmup_steps >= 1 as steps, below 1 as a ratio")
    if num_training_steps is None:
        raise ArgumentError("warmup_ratio", "warmup_ratio needs num_training_steps (W = ceil(ratio * T))")
    if ratio.is_number and num_training_steps.is_number:
        return sp.Integer(math.ceil(float(num_training_steps) * float(ratio)))
    return sp.ceiling(num_training_steps * ratio)


def _ratio(build):
    """``build`` with HF's ``warmup_ratio=``: ``num_warmup_steps = ceil(ratio * num_training_steps)``."""
    @functools.wraps(build)
    def call(warmup_ratio=None, **kwargs):
        if warmup_ratio is not None:
            given = kwargs.get("num_warmup_steps")
            if given is not None and not (given.is_number and given == 0):
                raise ArgumentError("warmup_ratio", "give num_warmup_steps or warmup_ratio, not both")
            kwargs["num_warmup_steps"] = warmup_steps_of(warmup_ratio, kwargs.get("num_training_steps"))
        return build(**kwargs)

    return call


def _warmed(name, build, *args):
    """A preset with a warmup: its arguments, then ``warmup_ratio=none``."""
    return preset(name, _ratio(build), *args, RATIO)


RATIO = arg("warmup_ratio", C, None)
OPT_T = arg("num_training_steps", S, None)
PRESETS = [
    preset("hf.constant", constant, LR, arg("num_warmup_steps", C, None), OPT_T),
    _warmed("hf.constant_with_warmup", constant_with_warmup, LR, W, OPT_T),
    _warmed("hf.linear", linear, LR, W, T),
    _warmed("hf.cosine", cosine, LR, W, T, arg("num_cycles", C, HALF)),
    _warmed("hf.cosine_with_restarts", cosine_with_restarts, LR, W, T, arg("num_cycles", C, 1)),
    _warmed("hf.polynomial", polynomial, arg("lr", V), W, T, arg("lr_end", V, frac("1e-7")),
           arg("power", C, 1)),
    _warmed("hf.inverse_sqrt", inverse_sqrt, LR, W, OPT_T, arg("timescale", C, None)),
    _warmed("hf.cosine_with_min_lr", cosine_with_min_lr, LR, W, T, arg("num_cycles", C, HALF),
           arg("min_lr", V, None), arg("min_lr_rate", C, None)),
    _warmed("hf.cosine_warmup_with_min_lr", cosine_warmup_with_min_lr, LR, W, T,
           arg("num_cycles", C, HALF), arg("min_lr", V, None), arg("min_lr_rate", C, None),
           arg("warmup_lr_rate", C, None)),
    _warmed("hf.warmup_stable_decay", warmup_stable_decay, LR, W, OPT_T, arg("num_decay_steps", C),
           arg("num_stable_steps", C, None), arg("warmup_type", OPTION, "linear", _SHAPES),
           arg("decay_type", OPTION, "cosine", _SHAPES), arg("min_lr_ratio", C, 0),
           arg("num_cycles", C, HALF)),
]

REJECTED = [
    Rejected("hf.reduce_lr_on_plateau",
             "reduce_lr_on_plateau is torch's ReduceLROnPlateau: it lowers the lr when an "
             "evaluation metric stops improving, so its value is not a function of the step; use a "
             "fixed decay such as hf.linear(...) or hf.cosine(...)"),
    Rejected("hf.greedy",
             "greedy (GreedyLR) raises or lowers the lr from the loss it observes, so its value is "
             "not a function of the step; use a fixed schedule such as hf.cosine(...)"),
]
