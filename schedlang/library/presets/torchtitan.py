"""``torchtitan.*``: torchtitan's warmup-stable-decay ``lr_scheduler`` and its older formulas.

torchtitan builds one ``LambdaLR`` per optimizer from the ``[lr_scheduler]``
config (``LRSchedulersContainer.Config`` in
``torchtitan.components.optimizer.lr_scheduler``, 0.3.0); the preset is
``lr * factor(t)`` with ``lr`` the optimizer's learning rate (``[optimizer] lr``,
default 1: the multiplier itself) and ``t`` the ``LambdaLR`` step (0-based: the
step logged as ``k + 1`` trains with ``factor(k)``).

Current formula (since torchtitan commit e7c0cae9, 2025-06-11; v0.1.0 on), with
``T = total_steps or training_steps``, ``W = min(int(warmup_steps), T)``,
``D = round(T * decay_ratio)`` clipped to ``T - W`` (``T - W`` without a ratio),
``S = T + 1 - W - D`` (the "virtual last step") and ``m = min_lr_factor``::

    t < W          (t + 1) / W
    t < W + S      1
    otherwise      m + (1 - m) * f(p),  p = (t + 1 - W - S) / D = (t - T + D) / D
                   f = 1 - p | 1 - sqrt(p) | (1 + cos(pi p)) / 2   (linear | sqrt | cosine)

The last training step ``t = T - 1`` has ``p = (D - 1)/D``; ``t = T`` gives
exactly ``m``.  Past the end ``p > 1`` and torchtitan does not clamp: linear and
sqrt go below ``m`` (negative for ``m = 0``), cosine rises again.  The presets
are therefore infinite (nothing can follow them with ``>>``).  With ``D = 0``
(``decay_ratio`` rounding to 0, or a warmup as long as the run) torchtitan
raises ``AssertionError`` from step ``T + 1`` on; the preset stays at 1 there.

The same TOML keys meant other schedules in older torchtitan, so the older
formulas are separate presets (``docs/presets.md`` has the history):
``torchtitan.lr_scheduler_v2025_03`` (2025-03-27 .. 2025-06-10, v0.0.2; key
``lr_min``) and ``torchtitan.linear_warmup_linear_decay`` (to 2025-03-10;
``[training] warmup_steps``).
"""

from __future__ import annotations

import sympy as sp

from ...core.algebra import tau  # formulas are built in the real-valued step, not t
from ..stdlib import DECAY_SHAPES, ArgumentError
from ._common import OPTION, C, PresetSegment, S, V, arg, preset

HALF = sp.Rational(1, 2)
DECAY_TYPES = ("linear", "sqrt", "cosine")


def _titan(expr, label):
    return PresetSegment(expr, None, label=label)


def _whole_steps(value, name, minimum=0):
    """torchtitan's ``int(...)`` of a count: numbers are truncated; parameters stay as they are."""
    if value.is_number:
        if value < minimum:
            raise ArgumentError(name, f"'{name}' must be >= {minimum}, not {value}")
        return sp.Integer(int(value))
    return value


def _total(training_steps, total_steps):
    total = total_steps if total_steps is not None else training_steps
    if total is None:
        raise ArgumentError("training_steps", "give training_steps (torchtitan's [training] steps) "
                                              "or total_steps")
    name = "total_steps" if total_steps is not None else "training_steps"
    if total.is_number and total < 1:
        raise ArgumentError(name, f"'{name}' must be a positive number of steps, not {total}")
    return total, name


def python_round(x: sp.Expr) -> sp.Integer:
    """Python's ``round(float)``: half to even, on the float product torchtitan computes."""
    return sp.Integer(round(float(x)))


def _decay_steps(total, warmup, decay_ratio, total_name):
    """``round(T * decay_ratio)`` clipped to ``T - W``, or ``T - W`` without a ratio."""
    if decay_ratio is None:
        return total - warmup
    if decay_ratio.is_number and decay_ratio < 0:
        raise ArgumentError("decay_ratio", f"decay_ratio must be >= 0, not {decay_ratio}")
    if not (total.is_number and decay_ratio.is_number):
        raise ArgumentError(total_name, f"with decay_ratio, '{total_name}' must be a number: torchtitan "
                            "computes round(steps * decay_ratio) in floating point (half to even), "
                            "which is exact only on numbers",
                            hint="write the number of steps, or leave decay_ratio out")
    # torchtitan multiplies the float of the TOML value by the int step count
    decay = sp.Integer(round(int(total) * float(decay_ratio)))
    return sp.Min(decay, total - warmup)


def _decay(p, decay_type, floor):
    return floor + (1 - floor) * DECAY_SHAPES[decay_type](p)  # the cooldown shapes, same names


def lr_scheduler(lr, training_steps, warmup_steps, decay_ratio, decay_type, min_lr_factor, total_steps):
    """torchtitan's warmup-stable-decay (current formula): ``(t + 1)/W`` up, 1 until the
    decay's last ``D`` steps, then decay to ``min_lr_factor`` at ``t = T``; not clamped after."""
    total, name = _total(training_steps, total_steps)
    warm = sp.Min(_whole_steps(warmup_steps, "warmup_steps"), total)
    decay = _decay_steps(total, warm, decay_ratio, name)
    has_decay = sp.Min(1, decay)  # 0 when D = 0: torchtitan asserts there; we stay at 1
    p = has_decay * (tau - total + decay) / sp.Max(1, decay)
    factor = sp.Piecewise(((tau + 1) / sp.Max(1, warm), sp.Lt(tau, warm)),
                          (1, sp.Lt(tau, total + 1 - decay)),
                          (_decay(p, decay_type, min_lr_factor), True))
    return _titan(lr * factor, "lr_scheduler")


def _no_long_warmup(warmup, total, total_name):
    if (warmup - total).is_positive:
        raise ArgumentError("warmup_steps", f"warmup_steps ({warmup}) is longer than {total_name} "
                            f"({total}): this torchtitan release does not clip it and divides by "
                            "the negative decay length (the current lr_scheduler clips it)")


def lr_scheduler_v2025_03(lr, training_steps, warmup_steps, decay_ratio, decay_type, lr_min):
    """torchtitan 2025-03-27 .. 2025-06-10 (v0.0.2): warmup ``(t + 1)/(W + 1)``, stable
    ``S = T - W - D``, decay progress ``(t + 1 - W - S)/(D + 1)``; never clamped."""
    total, name = _total(training_steps, None)
    warm = _whole_steps(warmup_steps, "warmup_steps")
    _no_long_warmup(warm, total, name)
    decay = _decay_steps(total, warm, decay_ratio, name)
    p = (tau + 1 - total + decay) / (decay + 1)
    factor = sp.Piecewise(((tau + 1) / (warm + 1), sp.Lt(tau, warm)),
                          (1, sp.Lt(tau, total - decay)),
                          (_decay(p, decay_type, lr_min), True))
    return _titan(lr * factor, "lr_scheduler_v2025_03")


def linear_warmup_linear_decay(lr, training_steps, warmup_steps):
    """torchtitan to 2025-03-10 (``[training] warmup_steps``): ``(t + 1)/(W + 1)`` for
    ``t < W``, then ``1 - (t - W)/max(1, T - W)``: 0 at ``t = T``, negative after."""
    total, name = _total(training_steps, None)
    warm = _whole_steps(warmup_steps, "warmup_steps")
    _no_long_warmup(warm, total, name)
    factor = sp.Piecewise(((tau + 1) / (warm + 1), sp.Lt(tau, warm)),
                          (1 - (tau - warm) / sp.Max(1, total - warm), True))
    return _titan(lr * factor, "linear_warmup_linear_decay")


LR = arg("lr", V, 1)
STEPS = arg("training_steps", S, None)
WARMUP = arg("warmup_steps", C, 200)
RATIO = arg("decay_ratio", C, None)
TYPE = arg("decay_type", OPTION, "linear", DECAY_TYPES)

PRESETS = [
    preset("torchtitan.lr_scheduler", lr_scheduler, LR, STEPS, WARMUP, RATIO, TYPE,
           arg("min_lr_factor", C, 0), arg("total_steps", S, None)),
    preset("torchtitan.lr_scheduler_v2025_03", lr_scheduler_v2025_03, LR, STEPS, WARMUP, RATIO, TYPE,
           arg("lr_min", C, 0)),
    preset("torchtitan.linear_warmup_linear_decay", linear_warmup_linear_decay, LR, STEPS, WARMUP),
]

REJECTED: list = []
