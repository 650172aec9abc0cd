"""``keras.*``: the schedules of ``keras.optimizers.schedules`` (Keras 3.15).

Keras calls a schedule with ``optimizer.iterations``, the number of updates
already applied, so update ``t`` (from 0) uses ``schedule(t)``: the presets'
``t`` is that count.  Keyword names and defaults are Keras' (``name`` is left
out: it labels the ops and changes no value).  Values are absolute, like
Keras'.  Keras computes in the dtype of ``initial_learning_rate`` converted to
a tensor, float32 for a Python float, so its values differ from these exact
formulas by float32 rounding (about 1e-7 relative).

Past the end: PolynomialDecay (without ``cycle``), CosineDecay and
PiecewiseConstantDecay hold their last value (finite presets, ``>>`` works
after them); ExponentialDecay, InverseTimeDecay, ``PolynomialDecay(cycle=true)``
and CosineDecayRestarts go on for ever.
"""

from __future__ import annotations

import sympy as sp

from ...core.algebra import tau  # formulas are built in the real-valued step, not t
from ...core.special import geometric, restart_index, restart_start
from ..stdlib import ArgumentError
from ._common import FLAG, C, L, PresetSegment, S, V, arg, frac, increasing, number, preset

HALF = sp.Rational(1, 2)


def _seg(expr, duration, label):
    return PresetSegment(expr, duration, label=label)


def _positive(value, name):
    if value.is_number and value <= 0:
        raise ArgumentError(name, f"Keras requires {name} > 0, got {value}")
    return value


def _progress(decay_steps, staircase):
    p = tau / decay_steps
    return sp.floor(p) if staircase else p


def exponential_decay(initial_learning_rate, decay_steps, decay_rate, staircase):
    """``initial_learning_rate * decay_rate ** (t / decay_steps)`` (the exponent floored when
    ``staircase``), for ever."""
    _positive(decay_steps, "decay_steps")
    value = initial_learning_rate * geometric(decay_rate, _progress(decay_steps, staircase))
    return _seg(value, None, "ExponentialDecay")


def piecewise_constant_decay(boundaries, values):
    """``values[0]`` while ``t <= boundaries[0]``, ``values[i]`` while
    ``boundaries[i-1] < t <= boundaries[i]``, ``values[-1]`` after the last boundary: a
    boundary step still has the earlier value."""
    if len(boundaries) != len(values) - 1:
        raise ArgumentError("values", "Keras requires one more value than boundaries; got "
                                      f"{len(boundaries)} boundaries and {len(values)} values")
    for b in boundaries:
        if b.is_number and not b.is_integer:
            raise ArgumentError("boundaries", f"boundaries are optimizer steps (Keras casts them to the "
                                              f"step's integer type), not {b}")
    increasing(boundaries, "boundaries")
    pairs = [(v, sp.Lt(tau, b + 1)) for v, b in zip(values, boundaries)]
    duration = boundaries[-1] + 1
    if duration.is_number and duration <= 0:
        return _seg(values[-1], None, "PiecewiseConstantDecay")
    return _seg(sp.Piecewise(*pairs, (values[-1], True)), duration, "PiecewiseConstantDecay")


def polynomial_decay(initial_learning_rate, decay_steps, end_learning_rate, power, cycle):
    """``(initial - end) * (1 - t / decay_steps) ** power + end`` up to ``decay_steps``, then
    ``end``.  ``cycle=true``: the horizon is ``decay_steps * max(1, ceil(t / decay_steps))``, so
    at every multiple of ``decay_steps`` the value is ``end`` and then jumps up to the next,
    longer, decay (the horizon grows; it is not a restart of the first decay)."""
    _positive(decay_steps, "decay_steps")
    drop = initial_learning_rate - end_learning_rate
    if cycle:
        horizon = decay_steps * sp.Max(1, sp.ceiling(tau / decay_steps))
        return _seg(drop * (1 - tau / horizon) ** power + end_learning_rate, None, "PolynomialDecay")
    return _seg(drop * (1 - tau / decay_steps) ** power + end_learning_rate, decay_steps, "PolynomialDecay")


def inverse_time_decay(initial_learning_rate, decay_steps, decay_rate, staircase):
    """``initial_learning_rate / (1 + decay_rate * t / decay_steps)`` (``floor(t / decay_steps)``
    when ``staircase``), for ever."""
    _positive(decay_steps, "decay_steps")
    value = initial_learning_rate / (1 + decay_rate * _progress(decay_steps, staircase))
    return _seg(value, None, "InverseTimeDecay")


def _cosine(peak, alpha, progress):
    return peak * ((1 - alpha) * HALF * (1 + sp.cos(sp.pi * progress)) + alpha)


def cosine_decay(initial_learning_rate, decay_steps, alpha, warmup_target, warmup_steps):
    """``initial * ((1 - alpha) * (1 + cos(pi t / decay_steps)) / 2 + alpha)``, held after
    ``decay_steps`` (``alpha`` is a fraction of the peak).  With ``warmup_target``: a line from
    ``initial`` to ``warmup_target`` over ``warmup_steps``, then the same cosine from
    ``warmup_target``; without it ``warmup_steps`` is ignored, as in Keras."""
    _positive(decay_steps, "decay_steps")
    if warmup_target is None:
        return _seg(_cosine(initial_learning_rate, alpha, tau / decay_steps), decay_steps, "CosineDecay")
    w = warmup_steps
    if w.is_number and w < 0:
        raise ArgumentError("warmup_steps", f"warmup_steps must be >= 0, got {w}")
    decay = _cosine(warmup_target, alpha, (tau - w) / decay_steps)
    if w.is_number and w == 0:
        return _seg(decay, decay_steps, "CosineDecay")
    warm = initial_learning_rate + (warmup_target - initial_learning_rate) * tau / w
    return _seg(sp.Piecewise((warm, sp.Lt(tau, w)), (decay, True)), w + decay_steps, "CosineDecay")


def cosine_decay_restarts(initial_learning_rate, first_decay_steps, t_mul, m_mul, alpha):
    """SGDR: restart ``i`` lasts ``first_decay_steps * t_mul**i`` steps and gives
    ``initial * ((1 - alpha) * m_mul**i * (1 + cos(pi p)) / 2 + alpha)``, ``p`` the fraction of
    the restart done (``alpha`` is not scaled by ``m_mul``); for ever."""
    first = _positive(first_decay_steps, "first_decay_steps")
    mul = number(t_mul, "t_mul")
    if mul == 1:
        index = sp.floor(tau / first)
        local, length = tau - first * index, first
    elif mul.is_integer and mul >= 2:
        index = restart_index(tau, first, mul)
        local, length = tau - restart_start(index, first, mul), first * mul**index
    else:
        raise ArgumentError("t_mul", f"t_mul={mul}: schedlang's restart index is exact for whole "
                                     "multipliers (1, 2, 3, ...) only",
                            hint="use a whole t_mul, or write the restarts out with >>")
    value = initial_learning_rate * ((1 - alpha) * geometric(m_mul, index) * HALF
                                     * (1 + sp.cos(sp.pi * local / length)) + alpha)
    return _seg(value, None, "CosineDecayRestarts")


PRESETS = [
    preset("keras.ExponentialDecay", exponential_decay, arg("initial_learning_rate", V),
           arg("decay_steps", C), arg("decay_rate", C), arg("staircase", FLAG, False)),
    preset("keras.PiecewiseConstantDecay", piecewise_constant_decay, arg("boundaries", L), arg("values", L)),
    preset("keras.PolynomialDecay", polynomial_decay, arg("initial_learning_rate", V), arg("decay_steps", S),
           arg("end_learning_rate", V, frac("0.0001")), arg("power", C, 1), arg("cycle", FLAG, False)),
    preset("keras.InverseTimeDecay", inverse_time_decay, arg("initial_learning_rate", V),
           arg("decay_steps", C), arg("decay_rate", C), arg("staircase", FLAG, False)),
    preset("keras.CosineDecay", cosine_decay, arg("initial_learning_rate", V), arg("decay_steps", S),
           arg("alpha", C, 0), arg("warmup_target", V, None), arg("warmup_steps", C, 0)),
    preset("keras.CosineDecayRestarts", cosine_decay_restarts, arg("initial_learning_rate", V),
           arg("first_decay_steps", S), arg("t_mul", C, 2), arg("m_mul", C, 1), arg("alpha", C, 0)),
]
