"""``optax.*``: optax's schedule functions (optax 0.2.x), with optax's keywords.

optax schedules return absolute values, so there is no ``lr``.  Every one
holds its end value (optax clamps), so the presets with an end are finite and
``>>`` works after them.  Two optax arguments are dicts in Python; schedlang
has no dicts, so:

- ``boundaries_and_scales`` is a list of ``[boundary, scale]`` pairs,
  ``[[1000, 0.5], [2000, 0.1]]`` for optax's ``{1000: 0.5, 2000: 0.1}``;
- ``sgdr_schedule(cosine_kwargs=[...])`` takes the cycles as schedules,
  normally ``optax.warmup_cosine_decay_schedule(...)`` calls (one per dict),
  each played for its length (``decay_steps``), as optax joins them.

Where optax computes a boundary in floating point (``int(pct_start *
transition_steps)`` in the one-cycle schedules) the preset does the same, so
the boundaries land on the same steps.
"""

from __future__ import annotations

import sympy as sp

from ...core.algebra import (
    Segment,
    sequence,
    tau,  # formulas are built in the real-valued step, not t
)
from ...core.special import geometric
from ..stdlib import ArgumentError
from ._common import (
    FLAG,
    OPTION,
    PAIRS,
    SCHEDULES,
    C,
    L,
    PresetSegment,
    S,
    V,
    arg,
    frac,
    number,
    preset,
    sequential,
)

HALF = sp.Rational(1, 2)


def _seg(expr, duration=None, label=""):
    if duration is not None and duration.is_number and duration <= 0:
        duration = None
    return PresetSegment(expr, duration, label=label)


def _begin(transition_begin):
    # optax: a negative transition_begin falls back to 0
    return sp.Max(0, transition_begin)


def constant_schedule(value):
    """``value`` forever."""
    return _seg(value, label="constant_schedule")


def polynomial_schedule(init_value, end_value, power, transition_steps, transition_begin):
    """``init_value`` until ``transition_begin``, then ``(I - E)(1 - c/T)**power + E``, then ``E``."""
    steps, begin = transition_steps, _begin(transition_begin)
    if steps.is_number and steps <= 0:  # optax: a constant schedule
        return _seg(init_value, label="polynomial_schedule")
    decay = (init_value - end_value) * (1 - (tau - begin) / steps) ** power + end_value
    return _seg(sp.Piecewise((init_value, sp.Lt(tau, begin)), (decay, True)), begin + steps,
                "polynomial_schedule")


def linear_schedule(init_value, end_value, transition_steps, transition_begin):
    """``polynomial_schedule`` with ``power=1``: a line from ``init_value`` to ``end_value``."""
    return polynomial_schedule(init_value, end_value, 1, transition_steps, transition_begin)


def _sorted_pairs(pairs, name):
    bounds = [number(b, name) for b, _ in pairs]
    if len(set(bounds)) != len(bounds):
        raise ArgumentError(name, "boundaries must be distinct (they are the keys of optax's dict)")
    for _, scale in pairs:
        if scale.is_number and scale < 0:
            raise ArgumentError(name, "optax expects non-negative scale factors")
    return sorted(pairs, key=lambda pair: pair[0])


def piecewise_constant_schedule(init_value, boundaries_and_scales):
    """``init_value`` times every scale whose boundary is ``<= t`` (scales accumulate)."""
    if boundaries_and_scales is None:
        return _seg(init_value, label="piecewise_constant_schedule")
    pairs = _sorted_pairs(boundaries_and_scales, "boundaries_and_scales")
    value, branches = init_value, []
    for boundary, scale in pairs:
        branches.append((value, sp.Lt(tau, boundary)))
        value = value * scale
    return _seg(sp.Piecewise(*branches, (value, True)), label="piecewise_constant_schedule")


def exponential_decay(init_value, transition_steps, decay_rate, transition_begin, staircase, end_value):
    """``init_value * decay_rate ** ((t - begin) / transition_steps)`` after ``transition_begin``
    (the exponent floored when ``staircase``), clipped at ``end_value`` when given."""
    if (transition_steps.is_number and transition_steps <= 0) or (decay_rate.is_number and decay_rate == 0):
        return _seg(init_value, label="exponential_decay")
    begin = _begin(transition_begin)
    p = (tau - begin) / transition_steps
    decayed = sp.Piecewise((init_value, sp.Le(tau, begin)),
                           (init_value * geometric(decay_rate, sp.floor(p) if staircase else p), True))
    if end_value is not None:
        clip = sp.Max if number(decay_rate, "decay_rate") < 1 else sp.Min
        decayed = clip(decayed, end_value)
    return _seg(decayed, label="exponential_decay")


def cosine_decay_schedule(init_value, decay_steps, alpha, exponent):
    """``init_value * ((1 - alpha) * ((1 + cos(pi t / D)) / 2) ** exponent + alpha)``, held after D."""
    cosine = HALF * (1 + sp.cos(sp.pi * tau / decay_steps))
    return _seg(init_value * ((1 - alpha) * cosine**exponent + alpha), decay_steps, "cosine_decay_schedule")


def warmup_constant_schedule(init_value, peak_value, warmup_steps):
    """A line from ``init_value`` to ``peak_value`` over ``warmup_steps``, then ``peak_value``."""
    return linear_schedule(init_value, peak_value, warmup_steps, 0)


def _join(first: Segment, boundary, then: Segment, label: str) -> PresetSegment:
    """optax's ``join_schedules([first, then], [boundary])``."""
    if boundary.is_number and boundary <= 0:
        return _seg(then.expr, then.duration, label)
    joined = sequence(Segment(first.held(), boundary), then)
    return _seg(joined.expr, joined.duration, label)


def warmup_cosine_decay_schedule(init_value, peak_value, warmup_steps, decay_steps, end_value, exponent):
    """Linear warmup to ``peak_value``, then a cosine to ``end_value``; ``decay_steps`` counts the warmup."""
    if (decay_steps - warmup_steps).is_number and decay_steps - warmup_steps <= 0:
        raise ArgumentError("decay_steps", "decay_steps includes the warmup and must be longer than "
                                           "warmup_steps (optax raises otherwise)")
    alpha = 0 if (peak_value.is_number and peak_value == 0) else end_value / peak_value
    warm = linear_schedule(init_value, peak_value, warmup_steps, 0)
    decay = cosine_decay_schedule(peak_value, decay_steps - warmup_steps, alpha, exponent)
    return _join(warm, warmup_steps, decay, "warmup_cosine_decay_schedule")


def warmup_exponential_decay_schedule(init_value, peak_value, warmup_steps, transition_steps, decay_rate,
                                      transition_begin, staircase, end_value):
    """Linear warmup to ``peak_value``, then ``exponential_decay`` from ``peak_value``."""
    warm = linear_schedule(init_value, peak_value, warmup_steps, 0)
    decay = exponential_decay(peak_value, transition_steps, decay_rate, transition_begin, staircase,
                              end_value)
    return _join(warm, warmup_steps, decay, "warmup_exponential_decay_schedule")


def sgdr_schedule(cosine_kwargs):
    """The cycles one after another, each for its own length (optax joins them at the
    cumulative ``decay_steps``); the last one holds its end."""
    for i, cycle in enumerate(cosine_kwargs):
        if cycle.duration is None and i < len(cosine_kwargs) - 1:
            raise ArgumentError("cosine_kwargs", "every cycle but the last needs a length; use "
                                                 "optax.warmup_cosine_decay_schedule(...) cycles")
    result = sequence(*cosine_kwargs) if len(cosine_kwargs) > 1 else cosine_kwargs[0]
    return _seg(result.expr, result.duration, "sgdr_schedule")


def join_schedules(schedules, boundaries):
    """``schedules[i]`` from ``boundaries[i-1]`` on, at its local step ``t - boundaries[i-1]``."""
    joined = sequential(schedules, boundaries, "join_schedules")
    return _seg(joined.expr, joined.duration, "join_schedules")


def _interpolate(kind, start, end, pct):
    if kind == "linear":
        return (end - start) * pct + start
    return end + (start - end) / 2 * (sp.cos(sp.pi * pct) + 1)


def piecewise_interpolate_schedule(interpolate_type, init_value, boundaries_and_scales):
    """Interpolate (linearly or by cosine) between the accumulated values ``init_value * prod
    scales`` at the boundaries, starting from ``init_value`` at step 0; the last value after."""
    if not boundaries_and_scales:
        return _seg(init_value, label="piecewise_interpolate_schedule")
    pairs = _sorted_pairs(boundaries_and_scales, "boundaries_and_scales")
    if any(b < 0 for b, _ in pairs):
        raise ArgumentError("boundaries_and_scales", "boundaries must be steps >= 0")
    bounds = [sp.Integer(0), *(b for b, _ in pairs)]
    values = [init_value]
    for _, scale in pairs:
        values.append(values[-1] * scale)
    branches = []
    for i in range(len(pairs)):
        lo, hi = bounds[i], bounds[i + 1]
        pct = (tau - lo) / sp.Max(hi - lo, 1)
        branches.append((_interpolate(interpolate_type, values[i], values[i + 1], pct), sp.Lt(tau, hi)))
    return _seg(sp.Piecewise(*branches, (values[-1], True)), bounds[-1], "piecewise_interpolate_schedule")


def _float_int(pct, steps) -> sp.Integer:
    """``int(pct * transition_steps)`` computed in floating point, as optax does."""
    return sp.Integer(int(float(number(pct, "pct_start")) * int(number(steps, "transition_steps"))))


def _onecycle(kind, transition_steps, peak_value, scales):
    steps = number(transition_steps, "transition_steps")
    if steps <= 0:
        raise ArgumentError("transition_steps", "transition_steps must be positive")
    table = {}
    for boundary, scale in scales:  # a dict: a repeated boundary keeps the last scale
        table[boundary] = scale
    return piecewise_interpolate_schedule(kind, peak_value / scales[0][1], list(table.items()))


def linear_onecycle_schedule(transition_steps, peak_value, pct_start, pct_final, div_factor,
                             final_div_factor):
    """Three lines: ``peak/div`` up to ``peak`` at ``int(pct_start*T)``, back to ``peak/div`` at
    ``int(pct_final*T)``, down to ``peak/(div*final_div)`` at ``T``; held after."""
    scales = [(_float_int(pct_start, transition_steps), div_factor),
              (_float_int(pct_final, transition_steps), 1 / div_factor),
              (transition_steps, 1 / final_div_factor)]
    segment = _onecycle("linear", transition_steps, peak_value, scales)
    return _seg(segment.expr, segment.duration, "linear_onecycle_schedule")


def cosine_onecycle_schedule(transition_steps, peak_value, pct_start, div_factor, final_div_factor):
    """Cosine from ``peak/div`` up to ``peak`` at ``int(pct_start*T)``, down to
    ``peak/(div*final_div)`` at ``T`` (one step later than torch's OneCycleLR); held after."""
    scales = [(_float_int(pct_start, transition_steps), div_factor),
              (transition_steps, 1 / (div_factor * final_div_factor))]
    segment = _onecycle("cosine", transition_steps, peak_value, scales)
    return _seg(segment.expr, segment.duration, "cosine_onecycle_schedule")


_BEGIN = arg("transition_begin", C, 0)
PRESETS = [
    preset("optax.constant_schedule", constant_schedule, arg("value", V)),
    preset("optax.linear_schedule", linear_schedule, arg("init_value", V), arg("end_value", V),
           arg("transition_steps", C), _BEGIN),
    preset("optax.polynomial_schedule", polynomial_schedule, arg("init_value", V), arg("end_value", V),
           arg("power", C), arg("transition_steps", C), _BEGIN),
    preset("optax.piecewise_constant_schedule", piecewise_constant_schedule, arg("init_value", V),
           arg("boundaries_and_scales", PAIRS, None)),
    preset("optax.exponential_decay", exponential_decay, arg("init_value", V), arg("transition_steps", C),
           arg("decay_rate", C), _BEGIN, arg("staircase", FLAG, False), arg("end_value", V, None)),
    preset("optax.cosine_decay_schedule", cosine_decay_schedule, arg("init_value", V),
           arg("decay_steps", S), arg("alpha", V, 0), arg("exponent", C, 1)),
    preset("optax.warmup_constant_schedule", warmup_constant_schedule, arg("init_value", V),
           arg("peak_value", V), arg("warmup_steps", C)),
    preset("optax.warmup_cosine_decay_schedule", warmup_cosine_decay_schedule, arg("init_value", V),
           arg("peak_value", V), arg("warmup_steps", C), arg("decay_steps", S), arg("end_value", V, 0),
           arg("exponent", C, 1)),
    preset("optax.warmup_exponential_decay_schedule", warmup_exponential_decay_schedule,
           arg("init_value", V), arg("peak_value", V), arg("warmup_steps", C), arg("transition_steps", C),
           arg("decay_rate", C), _BEGIN, arg("staircase", FLAG, False), arg("end_value", V, None)),
    preset("optax.sgdr_schedule", sgdr_schedule, arg("cosine_kwargs", SCHEDULES)),
    preset("optax.join_schedules", join_schedules, arg("schedules", SCHEDULES), arg("boundaries", L)),
    preset("optax.piecewise_interpolate_schedule", piecewise_interpolate_schedule,
           arg("interpolate_type", OPTION, choices=("linear", "cosine")), arg("init_value", V),
           arg("boundaries_and_scales", PAIRS, None)),
    preset("optax.linear_onecycle_schedule", linear_onecycle_schedule, arg("transition_steps", S),
           arg("peak_value", V), arg("pct_start", C, frac("0.3")), arg("pct_final", C, frac("0.85")),
           arg("div_factor", C, 25), arg("final_div_factor", C, 10_000)),
    preset("optax.cosine_onecycle_schedule", cosine_onecycle_schedule, arg("transition_steps", S),
           arg("peak_value", V), arg("pct_start", C, frac("0.3")), arg("div_factor", C, 25),
           arg("final_div_factor", C, 10_000)),
]
