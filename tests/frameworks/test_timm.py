"""timm presets beyond the conformance rows: the float restart glitch, symbolic warmups,
argument errors (the conditions timm asserts), and proofs against core schedules."""

from __future__ import annotations

import pytest
from anchors.preset_cases import max_error

import schedlang
from frameworks import timm_cases as TC
from frameworks.real import real


def ours(source: str, steps, **params) -> list[float]:
    return schedlang.compile(source, params=params or None)["lr"].values(steps)


def test_cycle_restarts_are_exact_where_timm_float_log_misses_one():
    """timm finds the cycle with ``floor(log(1 + 2 t / 10, 3))``: at t = 1210 (the start of
    cycle 5) the log is 4.999..., so timm plays one more step of cycle 4 (its end, lr_min)."""
    kwargs = dict(t_initial=10, lr_min=1e-6, cycle_mul=3.0, cycle_decay=0.9, cycle_limit=7)
    steps = range(1300)
    source = "timm.CosineLRScheduler(lr=5e-4, t_initial=10, lr_min=1e-6, cycle_mul=3, cycle_decay=0.9, " \
             "cycle_limit=7)"
    mine, theirs = ours(source, steps), TC.values("CosineLRScheduler", kwargs, steps)
    differ = [t for t in steps if abs(mine[t] - theirs[t]) > 1e-12 * abs(theirs[t])]
    assert differ == [1210]
    assert mine[1210] == pytest.approx(5e-4 * 0.9**5, rel=1e-12)  # the restart peak
    assert theirs[1210] == pytest.approx(1e-6, rel=1e-9)           # timm: cycle 4's end


WARMUP_AS_PARAM = [
    ("TanhLRScheduler", "t_initial=10, lr_min=1e-3", dict(t_initial=10, lr_min=1e-3)),
    ("CosineLRScheduler", "t_initial=10, lr_min=1e-3, warmup_prefix=true",
     dict(t_initial=10, lr_min=1e-3, warmup_prefix=True)),
    ("MultiStepLRScheduler", "decay_t=[1, 8], decay_rate=0.5", dict(decay_t=[1, 8], decay_rate=0.5)),
]


@pytest.mark.parametrize("warmup", [0, 1, 5])
@pytest.mark.parametrize("name, args, kwargs", WARMUP_AS_PARAM, ids=[w[0] for w in WARMUP_AS_PARAM])
def test_warmup_length_as_a_parameter(name, args, kwargs, warmup):
    """``warmup_t`` may be a parameter: 0 means no warmup (t = 0 is then the constructor's lr)."""
    source = f"param w: int\nschedule lr = timm.{name}(lr=0.1, {args}, warmup_t=w, warmup_lr_init=0.01)"
    steps = range(30)
    theirs = TC.values(name, dict(kwargs, warmup_t=warmup, warmup_lr_init=0.01), steps, lr=0.1)
    assert max_error(ours(source, steps, w=warmup), theirs, 1e-3) <= 1e-12


def test_sched_on_updates_in_update_units():
    """create_scheduler_v2(step_on_epochs=False) multiplies every epoch count by the updates per
    epoch; the preset takes the products, here as parameter expressions."""
    source = ("param n: int where n > 0\nschedule lr = timm.CosineLRScheduler(lr=1e-3, t_initial=20 * n, "
              "lr_min=1e-5, warmup_t=2 * n, warmup_lr_init=1e-6, t_in_epochs=false)")
    steps = range(0, 7 * 25, 1)
    kwargs = dict(t_initial=140, lr_min=1e-5, warmup_t=14, warmup_lr_init=1e-6, t_in_epochs=False)
    assert max_error(ours(source, steps, n=7), TC.values("CosineLRScheduler", kwargs, steps, lr=1e-3),
                     1e-3) <= 1e-12


@pytest.mark.parametrize("source, expected", [
    ("timm.CosineLRScheduler(lr=1, t_initial=6, lr_min=0.1, warmup_t=4, warmup_prefix=true)",
     "warmup(linear, 4) >> cosine(1, 0.1, 6)"),
    ("timm.StepLRScheduler(lr=1, decay_t=3, decay_rate=0.5)", "step(1, 0.5, 3)"),
    ("timm.MultiStepLRScheduler(lr=1, decay_t=[5, 9], decay_rate=0.1)", "multistep(1, 0.1, [4, 8])"),
    ("timm.PolyLRScheduler(lr=1, t_initial=10, power=2, lr_min=0.01)", "poly(1, 0.01, 10, power=2)"),
    ("timm.WSDLRScheduler(lr=1, t_initial=10, decay_t=4, decay_fn=\"linear\")",
     "constant(1, 7) >> linear(0.75, 0, 3)"),  # lr_min is reached one step after the last decay step
])
def test_presets_are_proven_equal_to_core_schedules(source, expected):
    assert schedlang.equivalent(schedlang.compile(source)["lr"], expected)


def _error(source: str) -> schedlang.SchedlangError:
    with pytest.raises(schedlang.SchedlangError) as info:
        schedlang.compile(source)
    return info.value


# (schedlang source, message, the real call that fails the same way or None)
ERRORS = [
    ("timm.CosineLRScheduler(lr=0.1, t_initial=0)", "must be positive",
     ("CosineLRScheduler", dict(t_initial=0))),
    ("timm.CosineLRScheduler(lr=0.1, t_initial=10, lr_min=-1e-5)", "lr_min >= 0",
     ("CosineLRScheduler", dict(t_initial=10, lr_min=-1e-5))),
    ("timm.TanhLRScheduler(lr=0.1, t_initial=10, lb=3, ub=3)", "lb < ub",
     ("TanhLRScheduler", dict(t_initial=10, lb=3, ub=3))),
    ("timm.TanhLRScheduler(lr=0.1, t_initial=10, warmup_lr_init=-1)", "warmup_lr_init >= 0",
     ("TanhLRScheduler", dict(t_initial=10, warmup_lr_init=-1))),
    ("timm.WSDLRScheduler(lr=0.1, t_initial=10, decay_t=11)", "0 < decay_t <= t_initial",
     ("WSDLRScheduler", dict(t_initial=10, decay_t=11))),
    ("timm.WSDLRScheduler(lr=0.1, t_initial=10, decay_t=5, decay_fn=\"exp\", decay_ratio=1)",
     "0 < decay_ratio < 1", ("WSDLRScheduler", dict(t_initial=10, decay_t=5, decay_ratio=1.0))),
    ("timm.WSDLRScheduler(lr=0.1, t_initial=10, decay_t=5, stable_fn=\"rsqrt\")", "stable_timescale",
     ("WSDLRScheduler", dict(t_initial=10, decay_t=5, stable_fn="rsqrt"))),
    ("timm.WSDLRScheduler(lr=0.1, t_initial=10, decay_t=5, decay_fn=\"sqrt\")", "not a valid decay_fn",
     ("WSDLRScheduler", dict(t_initial=10, decay_t=5, decay_fn="sqrt"))),
    ("timm.CosineLRScheduler(lr=0.1, t_initial=10, noise_range_t=5)", "random generator", None),
    ("timm.CosineLRScheduler(lr=0.1, t_initial=10, cycle_mul=0.5, cycle_limit=2)", "math domain error",
     None),
    ("timm.CosineLRScheduler(lr=0.1, t_initial=10, k_decay=0)", "k_decay must be positive", None),
    ("timm.MultiStepLRScheduler(lr=0.1, decay_t=[30, 10])", "must be sorted", None),
    ("timm.StepLRScheduler(lr=0.1, decay_t=0)", "decay_t must be positive", None),
    ("timm.CosineLRScheduler(t_initial=10)", "missing", None),
    ("timm.PlateauLRScheduler(lr=0.1)", "ReduceLROnPlateau", None),
]


@pytest.mark.parametrize("source, message, real_call", ERRORS, ids=[e[1] for e in ERRORS])
def test_argument_errors_point_at_the_argument(source, message, real_call):
    err = _error(source)
    assert message in str(err), str(err)
    assert err.line == 1
    if real_call is not None:  # timm refuses the same arguments
        name, kwargs = real_call
        with pytest.raises((AssertionError, ValueError)):
            getattr(real("timm.scheduler"), name)(TC.optimizer(0.1), **kwargs)


def test_noise_error_points_at_the_keyword():
    err = _error("timm.CosineLRScheduler(lr=0.1, t_initial=10, noise_range_t=5)")
    assert err.column == len("timm.CosineLRScheduler(lr=0.1, t_initial=10, noise_range_t=") + 1
