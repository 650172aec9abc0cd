# ruff: noqa: E501 - a transcribed table: one case a row, as the source writes it
"""DeepSpeed's own LR scheduler test cases, as data.

Transcribed from deepspeedai/DeepSpeed ``tests/unit/runtime/test_lr_schedulers.py`` at commit
01e73b59344214ed69bfc9dc9cb0981a5f239c20 (the file of the installed deepspeed 0.19.8: its
``store_true`` flags and ``override_warmupCosineLR_params`` are that release's).  The engine
tests (``deepspeed.initialize`` with ``"scheduler": {"type", "params"}``) step the scheduler
after each ``model.step()``: a read *after* ``model.step()`` number ``n`` (``step_lrs[n]``) is
the preset's step ``t = n + 1``, a read *before* it is ``t = n``.  The unit tests'
``scheduler.step(k)`` sets ``last_batch_iteration = k``: the preset's ``t = k + 1``.

A row: ``name`` (the test and its parameters), ``cls`` (the scheduler), ``kwargs`` (as the test
gives them), ``lr`` (the optimizer's, given to the presets that read it as ``lr=``), ``read``
(``lr`` or ``momentum``: ``betas[0]``), ``steps`` (the run compared with the real scheduler at
every step: the test's own run, made long enough to pass every boundary and the end),
``points`` (the test's asserts ``(t, expected, abs_tol)``; ``abs_tol`` None: the test's ``==``,
"approx": ``pytest.approx``'s default rel 1e-6) and ``shapes`` (the test's
``_verify_continuous_increase`` / ``_decrease`` / ``_staircase_increase`` over ``range(a, b)``
of ``t``).  Where a test asserts only against DeepSpeed's own code (``get_lr() == model.get_lr()``,
one run against another) its row has no points: the real scheduler is the expected value.
"""

from __future__ import annotations

import math

ENGINE_LR = 0.00015  # every engine test's "optimizer": {"type": "Adam", "params": {"lr": 0.00015}}


def _batches(samples: int) -> int:
    """``random_dataloader``'s batches: a DataLoader of batch 2 (``train_batch_size``), no drop_last."""
    return -(-samples // 2)


def _row(name, cls, kwargs, steps, lr=ENGINE_LR, read="lr", points=(), shapes=()):
    return dict(name=name, cls=cls, kwargs=kwargs, lr=lr, read=read, steps=steps, points=list(points),
                shapes=list(shapes))


CASES = []

# TestGetLrBeforeTrain: group lr == get_lr() before training, 25 steps (50 samples); own code only.
for _cls, _params, _end in [("WarmupLR", {}, 1010), ("WarmupDecayLR", {"warmup_num_steps": 10, "total_num_steps": 20}, 40),
                            ("WarmupCosineLR", {"warmup_num_steps": 10, "total_num_steps": 20}, 40),
                            ("OneCycle", {"cycle_min_lr": 0, "cycle_max_lr": 0.1}, 4010), ("LRRangeTest", {}, 4010)]:
    CASES.append(_row(f"TestGetLrBeforeTrain[{_cls}]", _cls, _params, _end))

# TestLrSchedule: warmup_min_lr 0.1, warmup_max_lr 0.2, reads after model.step(), 2W steps.
for _w in (10, 15, 19, 33):
    for _type in ("log", "linear"):
        _kw = {"warmup_min_lr": 0.1, "warmup_max_lr": 0.2, "warmup_num_steps": _w, "warmup_type": _type}
        CASES.append(_row(f"TestLrSchedule.test_lr_warmup_schedule[{_type}-{_w}]", "WarmupLR", _kw, 2 * _w + 10,
                          points=[(1, 0.1, None)] + [(t, 0.2, None) for t in range(_w + 1, 2 * _w + 1)]))
        CASES.append(_row(f"TestLrSchedule.test_lr_warmup_decay_schedule[{_type}-{_w}]", "WarmupDecayLR",
                          {**_kw, "total_num_steps": 2 * _w}, 2 * _w + 10,
                          points=[(1, 0.1, None), (_w + 1, 0.2, None)], shapes=[("decrease", _w + 1, 2 * _w + 1)]))

# TestSchedulerOptimizerParity: get_lr() == model.get_lr() after each of 25 steps; own code only.
for _cls, _params, _end in [("WarmupLR", {}, 1010), ("WarmupDecayLR", {"warmup_num_steps": 5, "total_num_steps": 10}, 25),
                            ("OneCycle", {"cycle_min_lr": 0, "cycle_max_lr": 0.1, "cycle_first_step_size": 5, "decay_step_size": 5}, 25),
                            ("LRRangeTest", {"lr_range_test_min_lr": 1e-4, "lr_range_test_step_size": 1}, 25)]:
    CASES.append(_row(f"TestSchedulerOptimizerParity[{_cls}]", _cls, _params, _end))

# TestLrRange: reads before model.step(), max(50, 2 * step_size) samples.
for _min, _rate, _size, _stairs in [(1e-4, 1e-5, 1, True), (1e-5, 1e-5, 1, False), (1e-4, 1e-3, 10, True),
                                    (1e-3, 1e-3, 10, False), (1e-2, 1e-2, 19, True), (1e-2, 1e-2, 19, False)]:
    _n = _batches(max(50, _size * 2))
    CASES.append(_row(f"TestLrRange[{_min}-{_rate}-{_size}-{_stairs}]", "LRRangeTest",
                      {"lr_range_test_min_lr": _min, "lr_range_test_step_rate": _rate, "lr_range_test_step_size": _size,
                       "lr_range_test_staircase": _stairs}, max(_n, 3 * _size + 10), points=[(0, _min, None)],
                      shapes=[(f"stairs:{_size}" if _stairs else "increase", 0, _n)]))

# TestOneCycle.test_lr: reads before model.step(), max(50, 3 * cycle_step_size) samples.
for _i, (_min, _max, _rate, _size, _dsize) in enumerate([(1e-5, 1e-2, 1e-3, 10, 10), (1e-3, 1e-1, 0, 21, 21), (1e-5, 1e-2, 1e-3, 10, 10),
                                                         (1e-3, 1e-1, 1e-1, 21, 21), (1e-5, 1e-1, 0, 10, 0)]):
    _n = _batches(max(50, _size * 3))
    CASES.append(_row(f"TestOneCycle.test_lr[{_i}]", "OneCycle",
                      {"cycle_min_lr": _min, "cycle_max_lr": _max, "decay_lr_rate": _rate, "cycle_first_step_size": _size,
                       "decay_step_size": _dsize}, max(_n, 2 * _size + 3 * max(_dsize, 10)),
                      points=[(0, _min, None), (_size, _max, None)],
                      shapes=[("increase", 0, _size), ("decrease", _size, 2 * _size)]
                      + ([("decrease", 2 * _size, _n)] if _rate > 0 else [])))

# TestOneCycle.test_mom: get_mom() before model.step().  Its t = 0 read is the scheduler's get_mom()
# (cycle_max_mom), which the constructor does not write: the group holds cycle_min_mom at t = 0
# (MOM_T0 below); the preset follows the group, what Adam's first step uses.
MOM_T0 = "get_mom() at t = 0 is cycle_max_mom; the param group's betas[0] is cycle_min_mom"
for _i, (_lo, _hi, _rate, _size) in enumerate([(0.08, 0.09, 1e-3, 10), (0.08, 0.09, 0, 21), (0.08, 0.09, 1e-3, 10), (0.08, 0.09, 0, 21)]):
    _n = _batches(max(50, _size * 3))
    CASES.append(_row(f"TestOneCycle.test_mom[{_i}]", "OneCycle",
                      {"cycle_min_lr": 1e-3, "cycle_max_lr": 1e-2, "cycle_min_mom": _lo, "cycle_max_mom": _hi,
                       "decay_mom_rate": _rate, "cycle_first_step_size": _size, "decay_step_size": _size},
                      max(_n, 5 * _size), read="momentum", points=[(0, _hi, None), (_size, _lo, None)],
                      shapes=[("decrease", 1, _size), ("increase", _size, 2 * _size)]
                      + ([("increase", 2 * _size, _n)] if _rate > 0 else [])))

# TestWarmupCosineLR.test_lr: opt_lr 0.0015, reads after model.step(), max(50, 3 * T) samples.
for _t, _w, _cmr, _wmr in [(100, 10, 0.1, 0.2), (200, 20, 0.1, 0.2), (500, 30, 0.0, 0.2), (600, 300, 0.1, 0.0), (600, 550, 0.0, 0.0)]:
    _lr = 0.0015
    CASES.append(_row(f"TestWarmupCosineLR.test_lr[{_t}-{_w}-{_cmr}-{_wmr}]", "WarmupCosineLR",
                      {"total_num_steps": _t, "warmup_min_ratio": _wmr, "warmup_num_steps": _w, "cos_min_ratio": _cmr},
                      _batches(max(50, _t * 3)) + 1, lr=_lr,
                      points=[(1, _lr * _wmr, 1e-7), (_w, _lr, 1e-7), (_t, _lr * _cmr, 1e-7)],
                      shapes=[("increase", 1, _w + 1), ("decrease", _w + 1, _t + 1)]))

_R = math.log(2) / math.log(10)
for _g, _lr in enumerate((0.0015, 0.003)):  # test_warmup_cosine_lr_initializes_all_param_groups, group by group
    CASES.append(_row(f"test_warmup_cosine_lr_initializes_all_param_groups[group {_g}]", "WarmupCosineLR",
                      {"total_num_steps": 100, "warmup_num_steps": 10, "warmup_min_ratio": 0.0}, 110, lr=_lr,
                      points=[(0, 0.0, None), (2, _lr * _R, "approx")]))
for _g, _lr in enumerate((0.1, 0.2)):  # test_warmup_lr_inherits_per_group_lr_when_max_unspecified: step(10)
    CASES.append(_row(f"test_warmup_lr_inherits_per_group_lr_when_max_unspecified[group {_g}]", "WarmupLR",
                      {"warmup_num_steps": 10}, 20, lr=_lr, points=[(11, _lr, "approx")]))

# TENSOR_LR_CONTRACTS (test_lr_scheduler_preserves_tensor_lr, lr_shape () and (1,) read the same values):
# SGD lr 0.1, init_lr at t = 0, step_lr after step(1).
for _cls, _kw, _init, _after, _end in [
        ("LRRangeTest", {}, 1e-3, 1e-3 * (1 + 2 / 2000), 4010),
        ("OneCycle", dict(cycle_min_lr=0.01, cycle_max_lr=0.1, cycle_first_step_size=10, cycle_second_step_size=10, cycle_momentum=False), 0.01, 0.01 + (0.1 - 0.01) * 2 / 10, 30),
        ("WarmupLR", dict(warmup_num_steps=10), 0.0, 0.1 * math.log(2) / math.log(10), 20),
        ("WarmupDecayLR", dict(total_num_steps=100, warmup_num_steps=10, warmup_max_lr=0.1), 0.0, 0.1 * math.log(2) / math.log(10), 110),
        ("WarmupCosineLR", dict(total_num_steps=100, warmup_num_steps=10), 0.0, 0.1 * math.log(2) / math.log(10), 110)]:
    CASES.append(_row(f"test_lr_scheduler_preserves_tensor_lr[{_cls}]", _cls, _kw, _end, lr=0.1,
                      points=[(0, _init, "approx"), (2, _after, "approx")]))

# test_warmup_cosine_lr_total_num_steps_equals_warmup_num_steps: step(10 .. 14), ratio == cos_min_ratio.
CASES.append(_row("test_warmup_cosine_lr_total_num_steps_equals_warmup_num_steps", "WarmupCosineLR",
                  {"total_num_steps": 10, "warmup_num_steps": 10, "cos_min_ratio": 0.1}, 30, lr=0.01,
                  points=[(s + 1, 0.01 * 0.1, "approx") for s in range(10, 15)]))
# test_warmup_cosine_lr_unknown_warmup_type_falls_back_to_log: the reference run (warmup_type="log"),
# step(0 .. 14); the unknown warmup_type itself is UNKNOWN_WARMUP_TYPE below.
CASES.append(_row("test_warmup_cosine_lr_unknown_warmup_type_falls_back_to_log[reference]", "WarmupCosineLR",
                  {"total_num_steps": 100, "warmup_num_steps": 10, "warmup_type": "log"}, 110, lr=0.001))
# test_warmup_cosine_lr_linear_warmup_type_produces_linear_ratios: step(s), ratio == s / 10.
CASES.append(_row("test_warmup_cosine_lr_linear_warmup_type_produces_linear_ratios", "WarmupCosineLR",
                  {"total_num_steps": 100, "warmup_num_steps": 10, "warmup_min_ratio": 0.0, "warmup_type": "linear"}, 110,
                  lr=0.001, points=[(s + 1, 0.001 * s / 10, "approx") for s in range(10)]))

# _one_cycle_lrs (test_one_cycle_stair_count_holds_lr_flat, ..._handles_asymmetric_cycle): Adam lr 0.001,
# get_lr() after each step(); the tests compare runs with each other, so the real code is the value.
for _test, _first_stairs, _steps, _first, _second, _second_stairs, _points in [
        ("holds_lr_flat[continuous]", 0, 16, 8, 8, None, []), ("holds_lr_flat[stairs 2]", 2, 16, 8, 8, None, []),
        ("holds_lr_flat[stairs 8]", 8, 16, 8, 8, None, []),
        ("handles_asymmetric_cycle[continuous]", 0, 31, 10, 21, 0, []),
        ("handles_asymmetric_cycle[batch aligned]", 10, 31, 10, 21, 21, [(10, 0.01, "approx")]),
        ("handles_asymmetric_cycle[first only]", 2, 31, 10, 21, 0, []),
        ("handles_asymmetric_cycle[second only]", 0, 31, 10, 21, 3, [])]:
    _kw = dict(cycle_min_lr=0.001, cycle_max_lr=0.01, cycle_first_step_size=_first, cycle_second_step_size=_second,
               cycle_first_stair_count=_first_stairs)
    if _second_stairs is not None:
        _kw["cycle_second_stair_count"] = _second_stairs
    CASES.append(_row(f"test_one_cycle_stair_count_{_test}", "OneCycle", _kw, _steps + 10, lr=0.001, points=_points))

# test_one_cycle_allows_zero_second_step_size: get_lr() == approx(0.001) at t = 0, > 0.001 after 3 steps.
CASES.append(_row("test_one_cycle_allows_zero_second_step_size", "OneCycle",
                  dict(cycle_min_lr=0.001, cycle_max_lr=0.1, cycle_first_step_size=100, cycle_second_step_size=0), 110,
                  lr=0.1, points=[(0, 0.001, "approx")], shapes=[("increase", 0, 4)]))
# The same with a decay after the cycle, and its momentum (not in DeepSpeed's test: the lead's rows,
# against DeepSpeed's code at every step; the peak is never reached, x wraps to 0 at t = 100).
CASES.append(_row("test_one_cycle_allows_zero_second_step_size[decay]", "OneCycle",
                  dict(cycle_min_lr=0.001, cycle_max_lr=0.1, cycle_first_step_size=100, cycle_second_step_size=0,
                       decay_lr_rate=0.1, decay_step_size=10), 140, lr=0.1))
CASES.append(_row("test_one_cycle_allows_zero_second_step_size[momentum]", "OneCycle",
                  dict(cycle_min_lr=0.001, cycle_max_lr=0.1, cycle_first_step_size=100, cycle_second_step_size=0,
                       cycle_min_mom=0.8, cycle_max_mom=0.9),
                  110, lr=0.1, read="momentum", points=[(0, 0.8, "approx"), (100, 0.9, "approx")]))

# test_one_cycle_accepts_per_group_lr_and_momentum_lists, group by group: t = 0, step(4) (t = 5), step(9) (t = 10).
for _g, (_lo, _hi, _mlo, _mhi) in enumerate([(0.001, 0.01, 0.8, 0.9), (0.002, 0.02, 0.85, 0.95)]):
    _kw = dict(cycle_min_lr=_lo, cycle_max_lr=_hi, cycle_min_mom=_mlo, cycle_max_mom=_mhi, cycle_first_step_size=5,
               cycle_second_step_size=5)
    CASES.append(_row(f"test_one_cycle_accepts_per_group_lr_and_momentum_lists[group {_g} lr]", "OneCycle", _kw, 20,
                      lr=0.1, points=[(0, _lo, "approx"), (5, _hi, "approx"), (10, _lo, "approx")]))
    CASES.append(_row(f"test_one_cycle_accepts_per_group_lr_and_momentum_lists[group {_g} betas]", "OneCycle", _kw, 20,
                      lr=0.1, read="momentum", points=[(0, _mlo, "approx"), (5, _mlo, "approx"), (10, _mhi, "approx")]))

# The CLI tests (test_*_from_args_*, test_*_reaches_scheduler_params, test_*_is_an_opt_in_flag) test the
# argparse plumbing of a DeepSpeed later than the installed 0.19.8 (whose get_config_from_args still passes
# cycle_second_step_size=-1): not transcribed.

#: What the test file refuses (``pytest.raises(ValueError)``), refused by schedlang at the call:
#: ``(test, schedlang line, what the message says)``.
_POSITIVE = "must be a positive whole number, not"
REFUSALS = [
    *[(f"test_warmup_schedulers_reject_invalid_warmup_num_steps[-5-{cls}]",
       f"deepspeed.{cls}(warmup_num_steps=-5{', total_num_steps=100' if cls != 'WarmupLR' else ', lr=0.001'})",
       f"warmup_num_steps {_POSITIVE} -5") for cls in ("WarmupLR", "WarmupDecayLR", "WarmupCosineLR")],
    *[(f"test_lr_range_test_rejects_nonpositive_step_size[{size}]", f"deepspeed.LRRangeTest(lr_range_test_step_size={size})",
       f"lr_range_test_step_size {_POSITIVE} {size}") for size in (0, -5)],
    *[(f"test_one_cycle_rejects_nonpositive_step_sizes[{first}-{second}]",
       f"deepspeed.OneCycle(cycle_min_lr=0.001, cycle_max_lr=0.1, cycle_first_step_size={first}"
       + (f", cycle_second_step_size={second})" if second is not None else ")"),
       f"cycle_first_step_size must be positive, not {first}" if first <= 0 else f"cycle_second_step_size must be >= 0, not {second}")
      for first, second in [(0, 0), (0, None), (-1, None), (0, 100), (100, -1)]],
    # test_cycle_momentum_flag_decides_whether_betas_move[False]: betas[0] stays the optimizer's 0.9 (a constant,
    # written 0.9); the momentum preset refuses, saying there is no momentum schedule.
    ("test_cycle_momentum_flag_decides_whether_betas_move[False]",
     "deepspeed.OneCycle.get_mom(cycle_min_lr=1e-4, cycle_max_lr=1e-3, cycle_first_step_size=4, cycle_momentum=false)",
     "there is no momentum schedule"),
]

#: Rows whose schedlang value differs from DeepSpeed's (reported to the lead; strict xfails).
WRONG: dict[str, str] = {}

#: test_warmup_schedulers_reject_invalid_warmup_num_steps[None-*]: a .sched file has no None (a missing
#: warmup_num_steps is the default 1000), but a DeepSpeed config does (JSON ``null``, which DeepSpeed
#: passes on as None): the deepspeed-json import refuses it at the key, with DeepSpeed's ValueError.
#: ``(test, scheduler type, params)``: each config is also run through the real scheduler, which raises.
NULL_REFUSALS = [(f"test_warmup_schedulers_reject_invalid_warmup_num_steps[None-{cls}]", cls,
                  {"warmup_num_steps": None, **({"total_num_steps": 100} if cls != "WarmupLR" else {})})
                 for cls in ("WarmupLR", "WarmupDecayLR", "WarmupCosineLR")]
NULL_MESSAGE = "raises ValueError (it must be a positive integer, got None)"

#: No spelling, and no SPEC rule against one (reported to the lead as a gap): the unknown warmup_type
#: that DeepSpeed warns about and runs as "log" (schedlang refuses it:
#: '"not_a_warmup_type" is not a valid warmup_type').
UNKNOWN_WARMUP_TYPE = ('deepspeed.WarmupCosineLR(total_num_steps=100, warmup_num_steps=10, warmup_type="not_a_warmup_type", lr=0.001)',
                       '"not_a_warmup_type" is not a valid warmup_type')
