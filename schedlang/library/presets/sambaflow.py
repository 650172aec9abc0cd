"""``sambaflow.*``: SambaFlow's three built-in lr schedules, from its public docs.

SambaFlow's code is not public, so these follow the documented behaviour
(SPEC §3): a linear warmup from 0 to ``learning_rate`` over
``warmup_steps``, then a cosine (``cosine_schedule_with_warmup``) or a linear
decay (``polynomial_decay_schedule_with_warmup``: "the 'polynomial' part of the
name is misleading; decay is always linear") reaching
``end_lr_ratio * learning_rate`` at ``max_steps``, held after.  ``fixed_lr``
is ``learning_rate`` and ignores the other arguments, as the CLI does.
"""

from __future__ import annotations

import sympy as sp

from ...core.algebra import tau  # formulas are built in the real-valued step, not t
from ..stdlib import ArgumentError
from ._common import C, PresetSegment, S, V, arg, frac, preset


def _warmup_then(learning_rate, warmup_steps, max_steps, decay, label):
    w, n = warmup_steps, max_steps
    if w.is_number and (not w.is_integer or w < 0):
        raise ArgumentError("warmup_steps", f"warmup_steps must be a whole number >= 0, not {w}")
    if (n - w).is_number and n - w <= 0:
        raise ArgumentError("max_steps", "max_steps must be larger than warmup_steps")
    frac_ = (tau - w) / (n - w)
    value = sp.Piecewise((learning_rate * tau / w, sp.Lt(tau, w)), (decay(frac_), True))
    return PresetSegment(value, n, label=label)


def cosine_schedule_with_warmup(learning_rate, warmup_steps, max_steps, end_lr_ratio):
    """Warmup to ``learning_rate``, cosine down to ``end_lr_ratio * learning_rate`` at ``max_steps``."""
    end = end_lr_ratio * learning_rate
    return _warmup_then(learning_rate, warmup_steps, max_steps,
                        lambda p: end + (learning_rate - end) * (1 + sp.cos(sp.pi * p)) / 2,
                        "cosine_schedule_with_warmup")


def polynomial_decay_schedule_with_warmup(learning_rate, warmup_steps, max_steps, end_lr_ratio):
    """Warmup to ``learning_rate``, then a line to ``end_lr_ratio * learning_rate`` at ``max_steps``."""
    end = end_lr_ratio * learning_rate
    return _warmup_then(learning_rate, warmup_steps, max_steps,
                        lambda p: learning_rate + (end - learning_rate) * p,
                        "polynomial_decay_schedule_with_warmup")


def fixed_lr(learning_rate, warmup_steps, max_steps, end_lr_ratio):
    """``learning_rate`` forever."""
    return PresetSegment(learning_rate, label="fixed_lr")


LR = arg("learning_rate", V)
WARM = arg("warmup_steps", C, 0)
PRESETS = [
    preset("sambaflow.cosine_schedule_with_warmup", cosine_schedule_with_warmup, LR, WARM,
           arg("max_steps", S), arg("end_lr_ratio", V, frac("0.1"))),
    preset("sambaflow.polynomial_decay_schedule_with_warmup", polynomial_decay_schedule_with_warmup,
           LR, WARM, arg("max_steps", S), arg("end_lr_ratio", V, 0)),
    preset("sambaflow.fixed_lr", fixed_lr, LR, arg("warmup_steps", C, None), arg("max_steps", C, None),
           arg("end_lr_ratio", V, None)),
]
