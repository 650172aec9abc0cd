"""``deepspeed.*``: the schedulers of ``deepspeed.runtime.lr_schedules`` (deepspeed 0.19).

Index: DeepSpeed's engine steps the scheduler *after* each optimizer step and
not at construction; the constructor writes the value of
``last_batch_iteration = -1``.  So optimizer step ``k`` (0-based) runs with
``last_batch_iteration = k - 1``, and the preset's ``t`` is ``k`` (SPEC §1:
``f(0)`` is the value of the first ``optimizer.step()``, ``f(k)`` the value
after ``k`` calls of ``scheduler.step()``).  Below, ``i = t - 1``.

Warmups use ``W' = max(2, warmup_num_steps)`` and ``g(i) = ln(i + 1) / ln(W')``
(``warmup_type="log"``, the default) or ``i / W'`` (``"linear"``) for ``0 <= i < W'``.

* ``WarmupLR``: ``min + (max - min) * g(i)``, ``max`` from ``i = W'`` on; ``min`` at
  ``t = 0`` (and ``t = 1``: ``g(0) = 0``).  ``warmup_max_lr`` defaults to the
  optimizer's lr: give it as ``lr=``.
* ``WarmupDecayLR``: the same warmup, then ``min + (max - min) * max(0, (T - i) /
  max(1, T - W'))``; ``warmup_max_lr`` defaults to 0.001, not the optimizer's lr.
* ``WarmupCosineLR``: ratios of the optimizer's lr (``lr=``, default 1): ``0`` at
  ``t = 0``; ``wmr + (1 - wmr) * g(i)`` during the warmup; then with
  ``p = min(1, (i - W' + 1) / max(1, T - W'))``,
  ``max(0, cmr + (1 - cmr) * (1 + cos(pi p)) / 2)``.
* ``OneCycle``: with ``b = t``, ``S1``, ``S2``, ``N = S1 + S2``: for ``t <= N`` the scale is
  ``b / S1`` up to ``S1`` and ``(N - b) / S2`` after (stairs: ``floor`` of those times
  the stair count, over the count); ``lr = min + (max - min) * scale``; after the
  cycle ``min / (1 + decay_lr_rate * (t - N) / decay_step_size)``, or ``min`` when
  either is 0.  ``OneCycle.get_mom`` is its momentum (Adam's ``betas[0]``):
  ``max_mom - (max_mom - min_mom) * scale``, ``max_mom * (1 + decay_mom_rate * (t - N) /
  decay_step_size)`` after; the constructor writes ``cycle_min_mom`` at ``t = 0``.
* ``LRRangeTest``: ``min * (1 + rate * t / step_size)`` (``floor`` of ``t / step_size``
  with the staircase): it grows without bound, as the range test means to.

Finite presets end where the value stops changing (``>>`` continues there):
``WarmupLR`` at ``W'`` (log) or ``W' + 1`` (linear), ``WarmupDecayLR`` at ``max(T, W') + 1``,
``WarmupCosineLR`` at ``max(T, W' + 1)``, ``OneCycle`` at ``N`` when it does not decay.
"""

from __future__ import annotations

import sympy as sp

from ...core.algebra import tau  # formulas are built in the real-valued step, not t
from ..stdlib import ArgumentError
from ._common import FLAG, OPTION, C, PresetSegment, V, arg, frac, preset
from .megatron import show

HALF = sp.Rational(1, 2)
WARMUP_TYPES = ("log", "linear")
i = tau - 1  # DeepSpeed's last_batch_iteration at optimizer step t


def _known(value) -> bool:
    return isinstance(value, sp.Basic) and value.is_number


def _positive_whole(value, name: str):
    """DeepSpeed 0.19.6+ raises ValueError unless the count is an int > 0."""
    if _known(value) and (not value.is_integer or value <= 0):
        raise ArgumentError(name, f"{name} must be a positive whole number, not {show(value)} "
                                  "(DeepSpeed raises ValueError)")
    return value


def _warm_steps(warmup_num_steps):
    return sp.Max(2, _positive_whole(warmup_num_steps, "warmup_num_steps"))


def _gamma(warmup_type, w):
    """``g(i)`` during the warmup, ``0 <= i < W'``."""
    return sp.log(i + 1) / sp.log(w) if warmup_type == "log" else i / w


def warmup_lr(warmup_min_lr, warmup_max_lr, warmup_num_steps, warmup_type, lr):
    """``warmup_min_lr`` up to ``warmup_max_lr`` (default: the optimizer's ``lr``) over
    ``max(2, warmup_num_steps)`` steps, log or linear; then constant."""
    if warmup_max_lr is None:
        if lr is None:
            raise ArgumentError("warmup_max_lr", "WarmupLR without warmup_max_lr warms up to the "
                                                 "optimizer's lr: give it as lr= (or give warmup_max_lr)")
        warmup_max_lr = lr
    w = _warm_steps(warmup_num_steps)
    lo, hi = warmup_min_lr, warmup_max_lr
    value = sp.Piecewise((lo, sp.Lt(tau, 1)), (lo + (hi - lo) * _gamma(warmup_type, w), sp.Lt(i, w)),
                         (hi, True))
    return PresetSegment(value, w if warmup_type == "log" else w + 1, label="WarmupLR")


def warmup_decay_lr(total_num_steps, warmup_min_lr, warmup_max_lr, warmup_num_steps, warmup_type):
    """WarmupLR's warmup, then a line from ``warmup_max_lr`` at ``W'`` down to ``warmup_min_lr`` at
    ``total_num_steps``, held."""
    w, n = _warm_steps(warmup_num_steps), _whole(total_num_steps, "total_num_steps")
    lo, hi = warmup_min_lr, warmup_max_lr
    decay = lo + (hi - lo) * sp.Max(0, (n - i) / sp.Max(1, n - w))
    value = sp.Piecewise((lo, sp.Lt(tau, 1)), (lo + (hi - lo) * _gamma(warmup_type, w), sp.Lt(i, w)),
                         (decay, True))
    return PresetSegment(value, sp.Max(n, w) + 1, label="WarmupDecayLR")


def _whole(value, name: str):
    if _known(value) and (not value.is_integer or value < 0):
        raise ArgumentError(name, f"{name} must be a whole number of steps, not {show(value)}")
    return value


def warmup_cosine_lr(total_num_steps, warmup_min_ratio, warmup_num_steps, cos_min_ratio, warmup_type, lr):
    """``lr`` times: 0 at the first step, ``warmup_min_ratio`` up to 1 over ``W'`` steps, then a
    cosine (one step in at ``W'``) down to ``cos_min_ratio`` at ``total_num_steps``, held."""
    w, n = _warm_steps(warmup_num_steps), _whole(total_num_steps, "total_num_steps")
    wmr, cmr = warmup_min_ratio, cos_min_ratio
    progress = sp.Min(1, (i - w + 1) / sp.Max(1, n - w))
    cosine = sp.Max(0, cmr + (1 - cmr) * (1 + sp.cos(sp.pi * progress)) / 2)
    ratio = sp.Piecewise((0, sp.Lt(tau, 1)), (wmr + (1 - wmr) * _gamma(warmup_type, w), sp.Lt(i, w)),
                         (cosine, True))
    return PresetSegment(lr * ratio, sp.Max(n, w + 1), label="WarmupCosineLR")


def _cycle(first, second, first_stairs, second_stairs):
    """``(N, scale(t))`` of OneCycle's cycle, for ``0 <= t <= N``."""
    if _known(first) and first <= 0:
        raise ArgumentError("cycle_first_step_size",
                            f"cycle_first_step_size must be positive, not {show(first)} "
                            "(DeepSpeed raises ValueError)")
    second = first if second is None else second
    if _known(second) and second < 0:
        raise ArgumentError("cycle_second_step_size", f"cycle_second_step_size must be >= 0, not {second} "
                                                      "(DeepSpeed raises ValueError)")
    second_stairs = first_stairs if second_stairs is None else second_stairs
    total = first + second
    up, down = tau / first, (total - tau) / second if not (_known(second) and second == 0) else sp.Integer(0)
    if _stairs(first_stairs, "cycle_first_stair_count"):
        up = sp.floor(tau * first_stairs / first) / first_stairs
    if _stairs(second_stairs, "cycle_second_stair_count") and not (_known(second) and second == 0):
        down = sp.floor((total - tau) * second_stairs / second) / second_stairs
    if _known(second) and second == 0:
        # DeepSpeed's x = frac(t / N) wraps to 0 at t = N: with no second half the peak is never
        # reached, the step that would hold it reads scale 0 (the cycle's minimum)
        return total, sp.Piecewise((up, sp.Lt(tau, first)), (sp.Integer(0), True))
    return total, sp.Piecewise((up, sp.Le(tau, first)), (down, True))


def _stairs(count, name: str) -> bool:
    if not _known(count) or not count.is_integer:
        raise ArgumentError(name, f"{name} must be a whole number, not {show(count)}")
    return count > 0


def _one_cycle(cycle_min_lr, cycle_max_lr, decay_lr_rate, cycle_first_step_size, cycle_second_step_size,
               cycle_first_stair_count, cycle_second_stair_count, decay_step_size):
    total, scale = _cycle(cycle_first_step_size, cycle_second_step_size, cycle_first_stair_count,
                          cycle_second_stair_count)
    return total, scale, _zero(decay_step_size)


def _zero(value) -> bool:
    """DeepSpeed's ``math.isclose(x, 0)``: exactly zero (no absolute tolerance)."""
    return _known(value) and value == 0


def one_cycle(cycle_min_lr, cycle_max_lr, decay_lr_rate, cycle_first_step_size, cycle_second_step_size,
              cycle_first_stair_count, cycle_second_stair_count, decay_step_size, cycle_momentum,
              cycle_min_mom, cycle_max_mom, decay_mom_rate):
    """``cycle_min_lr`` up to ``cycle_max_lr`` over ``cycle_first_step_size`` steps and back over
    ``cycle_second_step_size``; then ``cycle_min_lr / (1 + decay_lr_rate * d / decay_step_size)``
    ``d`` steps after the cycle (``cycle_min_lr`` when either is 0)."""
    total, scale, no_step = _one_cycle(cycle_min_lr, cycle_max_lr, decay_lr_rate, cycle_first_step_size,
                                       cycle_second_step_size, cycle_first_stair_count,
                                       cycle_second_stair_count, decay_step_size)
    lo, hi = cycle_min_lr, cycle_max_lr
    cycle = lo + (hi - lo) * scale
    if no_step or _zero(decay_lr_rate):
        return PresetSegment(sp.Piecewise((cycle, sp.Le(tau, total)), (lo, True)), sp.ceiling(total),
                             label="OneCycle")
    after = lo / (1 + decay_lr_rate * (tau - total) / decay_step_size)
    return PresetSegment(sp.Piecewise((cycle, sp.Le(tau, total)), (after, True)), label="OneCycle")


def one_cycle_mom(cycle_min_lr, cycle_max_lr, decay_lr_rate, cycle_first_step_size, cycle_second_step_size,
                  cycle_first_stair_count, cycle_second_stair_count, decay_step_size, cycle_momentum,
                  cycle_min_mom, cycle_max_mom, decay_mom_rate):
    """OneCycle's momentum (``betas[0]``): ``cycle_min_mom`` at the first step (the constructor's),
    then ``cycle_max_mom - (cycle_max_mom - cycle_min_mom) * scale`` through the cycle and
    ``cycle_max_mom * (1 + decay_mom_rate * d / decay_step_size)`` after it."""
    if not cycle_momentum:
        raise ArgumentError("cycle_momentum", "with cycle_momentum=false OneCycle leaves the momentum "
                                              "alone: there is no momentum schedule")
    total, scale, no_step = _one_cycle(cycle_min_lr, cycle_max_lr, decay_lr_rate, cycle_first_step_size,
                                       cycle_second_step_size, cycle_first_stair_count,
                                       cycle_second_stair_count, decay_step_size)
    lo, hi = cycle_min_mom, cycle_max_mom
    cycle = hi - (hi - lo) * scale
    first = (lo, sp.Lt(tau, 1))
    if no_step or _zero(decay_mom_rate):
        return PresetSegment(sp.Piecewise(first, (cycle, sp.Le(tau, total)), (hi, True)), sp.ceiling(total),
                             label="OneCycle.get_mom")
    after = hi * (1 + decay_mom_rate * (tau - total) / decay_step_size)
    return PresetSegment(sp.Piecewise(first, (cycle, sp.Le(tau, total)), (after, True)),
                         label="OneCycle.get_mom")


def lr_range_test(lr_range_test_min_lr, lr_range_test_step_size, lr_range_test_step_rate,
                  lr_range_test_staircase):
    """``lr_range_test_min_lr * (1 + lr_range_test_step_rate * t / lr_range_test_step_size)``
    (``floor(t / step_size)`` with the staircase), growing forever."""
    size = _positive_whole(lr_range_test_step_size, "lr_range_test_step_size")
    interval = sp.floor(tau / size) if lr_range_test_staircase else tau / size
    return PresetSegment(lr_range_test_min_lr * (1 + lr_range_test_step_rate * interval),
                         label="LRRangeTest")


WARMUP_TYPE = arg("warmup_type", OPTION, "log", WARMUP_TYPES)
WARMUP_STEPS = arg("warmup_num_steps", C, 1000)
ONE_CYCLE = (arg("cycle_min_lr", V), arg("cycle_max_lr", V), arg("decay_lr_rate", C, 0),
             arg("cycle_first_step_size", C, 2000), arg("cycle_second_step_size", C, None),
             arg("cycle_first_stair_count", C, 0), arg("cycle_second_stair_count", C, None),
             arg("decay_step_size", C, 0), arg("cycle_momentum", FLAG, True),
             arg("cycle_min_mom", V, frac("0.8")), arg("cycle_max_mom", V, frac("0.9")),
             arg("decay_mom_rate", C, 0))
PRESETS = [
    preset("deepspeed.WarmupLR", warmup_lr, arg("warmup_min_lr", V, 0), arg("warmup_max_lr", V, None),
           WARMUP_STEPS, WARMUP_TYPE, arg("lr", V, None)),
    preset("deepspeed.WarmupDecayLR", warmup_decay_lr, arg("total_num_steps", C), arg("warmup_min_lr", V, 0),
           arg("warmup_max_lr", V, frac("0.001")), WARMUP_STEPS, WARMUP_TYPE),
    preset("deepspeed.WarmupCosineLR", warmup_cosine_lr, arg("total_num_steps", C),
           arg("warmup_min_ratio", V, 0), WARMUP_STEPS, arg("cos_min_ratio", V, frac("0.0001")), WARMUP_TYPE,
           arg("lr", V, 1)),
    preset("deepspeed.OneCycle", one_cycle, *ONE_CYCLE),
    preset("deepspeed.OneCycle.get_mom", one_cycle_mom, *ONE_CYCLE),
    preset("deepspeed.LRRangeTest", lr_range_test, arg("lr_range_test_min_lr", V, frac("0.001")),
           arg("lr_range_test_step_size", C, 2000), arg("lr_range_test_step_rate", V, 1),
           arg("lr_range_test_staircase", FLAG, False)),
]
