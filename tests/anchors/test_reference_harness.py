"""Checks of the anchor reference harness against verified numbers.

Expected rows are the outputs of the research snippets run against the real
libraries (shared/research/anchor_snippets/expected_output/*.txt, printed with
6 significant digits) and the consensus table of anchors.md §8.  A test skips
only when the harness raises AnchorUnavailable (library not installed, or the
pinned mosaicml / cerebras sources cannot be fetched).
"""

from __future__ import annotations

import math
import sys
import types

import pytest

from . import reference as R

# --------------------------------------------------------------------------- helpers


def run(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except R.AnchorUnavailable as exc:
        pytest.skip(f"anchor unavailable: {exc}")


def row(text: str) -> list[float]:
    return [float(x) for x in text.split()]


def assert_row(got, expected, rel=1e-5, abs_=1e-9):
    """Match values printed with %.6g (relative error of printing <= 5e-6)."""
    expected = row(expected) if isinstance(expected, str) else expected
    assert len(got) == len(expected)
    for t, (g, e) in enumerate(zip(got, expected)):
        assert isinstance(g, float), f"t={t}: {type(g).__name__} is not a Python float"
        if math.isinf(e):
            assert g == e, f"t={t}: got {g}, expected {e}"
        else:
            assert math.isclose(g, e, rel_tol=rel, abs_tol=abs_), f"t={t}: got {g!r}, expected {e!r}\n{got}"


# anchors.md §8: warmup(linear, 4) >> cosine(1.0 -> 0.1, 6), t = 0..12
CONSENSUS = "0 .25 .5 .75 1 .939711 .775 .55 .325 .160289 .1 .1 .1"
CONSENSUS_PERIODIC = "0 .25 .5 .75 1 .939711 .775 .55 .325 .160289 .1 .160289 .325"


def consensus_exact(t: int, periodic: bool = False) -> float:
    """The same schedule in float64: linear 0 -> 1 over 4 steps, then cosine 1 -> 0.1 over 6."""
    if t < 4:
        return t / 4
    s = t - 4 if periodic else min(t - 4, 6)
    return 0.1 + 0.9 * (1 + math.cos(math.pi * s / 6)) / 2

# --------------------------------------------------------------------------- torch

TORCH = [
    ("LambdaLR", {"lr_lambda": lambda t: 0.9 ** t}, None,
     "1 0.9 0.81 0.729 0.6561 0.59049 0.531441 0.478297 0.430467 0.38742 0.348678 0.313811"),
    ("MultiplicativeLR", {"lr_lambda": lambda t: 0.9}, None,
     "1 0.9 0.81 0.729 0.6561 0.59049 0.531441 0.478297 0.430467 0.38742 0.348678 0.313811"),
    ("StepLR", {"step_size": 3}, None, "1 1 1 0.1 0.1 0.1 0.01 0.01 0.01 0.001 0.001 0.001"),
    ("MultiStepLR", {"milestones": [2, 5, 5], "gamma": 0.5}, None,
     "1 1 0.5 0.5 0.5 0.125 0.125 0.125 0.125 0.125 0.125 0.125"),
    ("ConstantLR", {}, None, "0.333333 0.333333 0.333333 0.333333 0.333333 1 1 1 1 1 1 1"),
    ("LinearLR", {}, None, "0.333333 0.466667 0.6 0.733333 0.866667 1 1 1 1 1 1 1"),
    ("LinearLR", {"start_factor": 0.25, "end_factor": 1.0, "total_iters": 4}, None,
     "0.25 0.4375 0.625 0.8125 1 1 1 1 1 1 1 1"),
    ("ExponentialLR", {"gamma": 0.9}, None,
     "1 0.9 0.81 0.729 0.6561 0.59049 0.531441 0.478297 0.430467 0.38742 0.348678 0.313811"),
    ("PolynomialLR", {}, None, "1 0.8 0.6 0.4 0.2 0 0 0 0 0 0 0"),
    ("PolynomialLR", {"total_iters": 8, "power": 2.0}, None,
     "1 0.765625 0.5625 0.390625 0.25 0.140625 0.0625 0.015625 0 0 0 0"),
    ("CosineAnnealingLR", {"T_max": 8, "eta_min": 0.1}, None,
     "1 0.965746 0.868198 0.722208 0.55 0.377792 0.231802 0.134254 0.1 0.134254 0.231802 0.377792"),
    ("CosineAnnealingWarmRestarts", {"T_0": 4}, None,
     "1 0.853553 0.5 0.146447 1 0.853553 0.5 0.146447 1 0.853553 0.5 0.146447"),
    ("CosineAnnealingWarmRestarts", {"T_0": 2, "T_mult": 2}, None,
     "1 0.5 1 0.853553 0.5 0.146447 1 0.96194 0.853553 0.691342 0.5 0.308658"),
    ("CyclicLR", {"base_lr": 0.1, "max_lr": 1.0, "step_size_up": 2, "step_size_down": 4}, {"momentum": 0.9},
     "0.1 0.55 1 0.775 0.55 0.325 0.1 0.55 1 0.775 0.55 0.325"),
    ("CyclicLR", {"base_lr": 0.1, "max_lr": 1.0, "step_size_up": 2, "mode": "triangular2"}, {"momentum": 0.9},
     "0.1 0.55 1 0.55 0.1 0.325 0.55 0.325 0.1 0.2125 0.325 0.2125"),
    ("CyclicLR", {"base_lr": 0.1, "max_lr": 1.0, "step_size_up": 2, "mode": "exp_range", "gamma": 0.9},
     {"momentum": 0.9},
     "0.1 0.505 0.829 0.42805 0.1 0.365721 0.578297 0.315234 0.1 0.274339 0.413811 0.241215"),
    ("OneCycleLR", {"max_lr": 1.0, "total_steps": 10}, {"momentum": 0.9},
     "0.04 0.52 1 0.950485 0.811746 0.611262 0.388742 0.188258 0.0495194 4e-06"),
    ("OneCycleLR", {"max_lr": 1.0, "total_steps": 10, "anneal_strategy": "linear"}, {"momentum": 0.9},
     "0.04 0.52 1 0.857143 0.714287 0.57143 0.428574 0.285717 0.142861 4e-06"),
    ("OneCycleLR", {"max_lr": 1.0, "total_steps": 10, "three_phase": True}, {"momentum": 0.9},
     "0.04 0.52 1 0.52 0.04 0.0361807 0.0261817 0.0138223 0.00382328 4e-06"),
    ("SequentialLR", {"schedulers": [
        ("LinearLR", {"start_factor": 0.25, "end_factor": 1.0, "total_iters": 4}),
        ("CosineAnnealingLR", {"T_max": 6, "eta_min": 0.1})], "milestones": [4]}, None,
     "0.25 0.4375 0.625 0.8125 1 0.939711 0.775 0.55 0.325 0.160289 0.1 0.160289"),
    ("ChainedScheduler", {"schedulers": [("ConstantLR", {"factor": 0.1, "total_iters": 2}),
                                         ("ExponentialLR", {"gamma": 0.9})]}, None,
     "0.1 0.09 0.81 0.729 0.6561 0.59049 0.531441 0.478297 0.430467 0.38742 0.348678 0.313811"),
]


@pytest.mark.parametrize(("cls", "kwargs", "opt_kw", "expected"), TORCH,
                         ids=[f"{i}-{c[0]}" for i, c in enumerate(TORCH)])
def test_torch_snippet_values(cls, kwargs, opt_kw, expected):
    n = len(row(expected))
    assert_row(run(R.torch_values, cls, kwargs, range(n), optimizer_kwargs=opt_kw), expected)


def test_torch_consensus_and_lr_scaling():
    kw = {"schedulers": [("LinearLR", {"start_factor": 1e-8, "end_factor": 1.0, "total_iters": 4}),
                         ("CosineAnnealingLR", {"T_max": 6, "eta_min": 0.1})], "milestones": [4]}
    got = run(R.torch_values, "SequentialLR", kw, range(13))
    assert got[0] == pytest.approx(1e-8)  # torch cannot warm up from exactly 0
    assert_row(got[1:], row(CONSENSUS_PERIODIC)[1:])
    assert_row(got[4:], [consensus_exact(t, periodic=True) for t in range(4, 13)], rel=1e-12)
    # absolute lr: scales with the optimizer's lr (eta_min is absolute, so use a pure multiplier)
    assert_row(run(R.torch_values, "StepLR", {"step_size": 3, "gamma": 0.5}, range(7), lr=0.01),
               "0.01 0.01 0.01 0.005 0.005 0.005 0.0025")


def test_torch_sparse_unsorted_steps_match_dense():
    kw = {"T_max": 8, "eta_min": 0.1}
    dense = run(R.torch_values, "CosineAnnealingLR", kw, range(20))
    steps = [19, 0, 7, 7, 3]
    assert run(R.torch_values, "CosineAnnealingLR", kw, steps) == [dense[t] for t in steps]
    assert run(R.torch_values, "CosineAnnealingLR", kw, []) == []


def test_torch_rejections():
    with pytest.raises(ValueError, match="metric"):
        run(R.torch_values, "ReduceLROnPlateau", {}, range(3))
    with pytest.raises(ValueError, match="no scheduler class"):
        run(R.torch_values, "NoSuchLR", {}, range(3))
    with pytest.raises(ValueError, match="Tried to step 11 times"):  # torch's own OneCycleLR limit
        run(R.torch_values, "OneCycleLR", {"max_lr": 1.0, "total_steps": 10}, [11],
            optimizer_kwargs={"momentum": 0.9})


# --------------------------------------------------------------------------- HF transformers

W, T = 4, 10
HF = [
    ("constant", {}, "1 1 1 1 1 1 1 1 1 1 1 1 1 1"),
    ("constant_with_warmup", {"num_warmup_steps": W}, "0 0.25 0.5 0.75 1 1 1 1 1 1 1 1 1 1"),
    ("linear", {"num_warmup_steps": W, "num_training_steps": T},
     "0 0.25 0.5 0.75 1 0.833333 0.666667 0.5 0.333333 0.166667 0 0 0 0"),
    ("cosine", {"num_warmup_steps": W, "num_training_steps": T},
     "0 0.25 0.5 0.75 1 0.933013 0.75 0.5 0.25 0.0669873 0 0.0669873 0.25 0.5"),
    ("cosine_with_restarts", {"num_warmup_steps": W, "num_training_steps": T, "num_cycles": 2},
     "0 0.25 0.5 0.75 1 0.75 0.25 1 0.75 0.25 0 0 0 0"),
    ("polynomial", {"num_warmup_steps": W, "num_training_steps": T},
     "0 0.25 0.5 0.75 1 0.833333 0.666667 0.5 0.333333 0.166667 1e-07 1e-07 1e-07 1e-07"),
    ("polynomial", {"num_warmup_steps": W, "num_training_steps": T, "lr_end": 0.1, "power": 2.0},
     "0 0.25 0.5 0.75 1 0.725 0.5 0.325 0.2 0.125 0.1 0.1 0.1 0.1"),
    ("inverse_sqrt", {"num_warmup_steps": W},
     "0 0.25 0.5 0.75 1 0.894427 0.816497 0.755929 0.707107 0.666667 0.632456 0.603023 0.57735 0.5547"),
    ("inverse_sqrt", {"num_warmup_steps": 0},
     "1 0.99995 0.9999 0.99985 0.9998 0.99975 0.9997 0.99965 0.9996 0.99955 0.9995 0.99945 "
     "0.999401 0.999351"),
    ("cosine_with_min_lr", {"num_warmup_steps": W, "num_training_steps": T, "min_lr_rate": 0.1},
     "0 0.25 0.5 0.75 1 0.939711 0.775 0.55 0.325 0.160289 0.1 0.160289 0.325 0.55"),
    ("cosine_warmup_with_min_lr", {"num_warmup_steps": W, "num_training_steps": T, "min_lr_rate": 0.1},
     "0.25 0.5 0.75 1 0.939711 0.775 0.55 0.325 0.160289 0.1 0.160289 0.325 0.55 0.775"),
    ("cosine_warmup_with_min_lr",
     {"num_warmup_steps": W, "num_training_steps": T, "min_lr_rate": 0.1, "warmup_lr_rate": 0.2},
     "0.2 0.466667 0.733333 1 0.939711 0.775 0.55 0.325 0.160289 0.1 0.160289 0.325 0.55 0.775"),
    ("warmup_stable_decay", {"num_warmup_steps": W, "num_training_steps": T, "num_decay_steps": 4},
     "0 0.25 0.5 0.75 1 1 1 0.853553 0.5 0.146447 0 0 0 0"),
    ("warmup_stable_decay", {"num_warmup_steps": W, "num_training_steps": T, "num_decay_steps": 4,
                             "decay_type": "linear", "min_lr_ratio": 0.1},
     "0.1 0.325 0.55 0.775 1 1 1 0.775 0.55 0.325 0.1 0.1 0.1 0.1"),
    ("warmup_stable_decay", {"num_warmup_steps": W, "num_training_steps": T, "num_decay_steps": 4,
                             "warmup_type": "1-sqrt", "decay_type": "1-sqrt"},
     "0 0.133975 0.292893 0.5 1 1 1 0.5 0.292893 0.133975 0 0 0 0"),
]


@pytest.mark.parametrize(("name", "kwargs", "expected"), HF, ids=[f"{i}-{c[0]}" for i, c in enumerate(HF)])
def test_hf_snippet_values(name, kwargs, expected):
    assert_row(run(R.hf_values, name, range(14), **kwargs), expected)


def test_hf_consensus_lr_and_rejections():
    got = run(R.hf_values, "cosine_with_min_lr", range(13), num_warmup_steps=4, num_training_steps=10,
              min_lr_rate=0.1)
    assert_row(got, CONSENSUS_PERIODIC)
    assert_row(got, [consensus_exact(t, periodic=True) for t in range(13)], rel=1e-12)
    got = run(R.hf_values, "linear", [0, 4, 7], lr=3e-4, num_warmup_steps=4, num_training_steps=10)
    assert_row(got, [0.0, 3e-4, 1.5e-4])
    with pytest.raises(ValueError, match="metric"):
        run(R.hf_values, "reduce_lr_on_plateau", range(3))


# --------------------------------------------------------------------------- optax

def _lin(i, e, n):
    return ("linear_schedule", {"init_value": i, "end_value": e, "transition_steps": n})


OPTAX = [
    ("constant_schedule", {"value": 0.5}, "0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5"),
    ("linear_schedule", {"init_value": 1.0, "end_value": 0.1, "transition_steps": 8},
     "1 0.8875 0.775 0.6625 0.55 0.4375 0.325 0.2125 0.1 0.1 0.1 0.1 0.1 0.1"),
    ("linear_schedule", {"init_value": 1.0, "end_value": 0.1, "transition_steps": 8, "transition_begin": 3},
     "1 1 1 1 0.8875 0.775 0.6625 0.55 0.4375 0.325 0.2125 0.1 0.1 0.1"),
    ("linear_schedule", {"init_value": 1.0, "end_value": 0.1, "transition_steps": 0},
     "1 1 1 1 1 1 1 1 1 1 1 1 1 1"),
    ("polynomial_schedule", {"init_value": 1.0, "end_value": 0.0, "power": 2, "transition_steps": 8},
     "1 0.765625 0.5625 0.390625 0.25 0.140625 0.0625 0.015625 0 0 0 0 0 0"),
    ("piecewise_constant_schedule", {"init_value": 1.0, "boundaries_and_scales": {3: 0.5, 6: 0.1}},
     "1 1 1 0.5 0.5 0.5 0.05 0.05 0.05 0.05 0.05 0.05 0.05 0.05"),
    ("exponential_decay", {"init_value": 1.0, "transition_steps": 4, "decay_rate": 0.5},
     "1 0.840896 0.707107 0.594604 0.5 0.420448 0.353553 0.297302 0.25 0.210224 0.176777 0.148651 "
     "0.125 0.105112"),
    ("exponential_decay", {"init_value": 1.0, "transition_steps": 4, "decay_rate": 0.5, "staircase": True},
     "1 1 1 1 0.5 0.5 0.5 0.5 0.25 0.25 0.25 0.25 0.125 0.125"),
    ("exponential_decay", {"init_value": 1.0, "transition_steps": 4, "decay_rate": 0.5, "transition_begin": 2,
                           "end_value": 0.3},
     "1 1 1 0.840896 0.707107 0.594604 0.5 0.420448 0.353553 0.3 0.3 0.3 0.3 0.3"),
    ("cosine_decay_schedule", {"init_value": 1.0, "decay_steps": 8, "alpha": 0.1},
     "1 0.965746 0.868198 0.722208 0.55 0.377792 0.231802 0.134254 0.1 0.1 0.1 0.1 0.1 0.1"),
    ("cosine_decay_schedule", {"init_value": 1.0, "decay_steps": 8, "alpha": 0.0, "exponent": 2.0},
     "1 0.925328 0.728553 0.477953 0.25 0.0952699 0.0214466 0.00144858 0 0 0 0 0 0"),
    ("warmup_constant_schedule", {"init_value": 0.0, "peak_value": 1.0, "warmup_steps": 4},
     "0 0.25 0.5 0.75 1 1 1 1 1 1 1 1 1 1"),
    ("warmup_cosine_decay_schedule", {"init_value": 0.0, "peak_value": 1.0, "warmup_steps": 4,
                                      "decay_steps": 10, "end_value": 0.1},
     "0 0.25 0.5 0.75 1 0.939711 0.775 0.55 0.325 0.160289 0.1 0.1 0.1 0.1"),
    ("warmup_exponential_decay_schedule", {"init_value": 0.0, "peak_value": 1.0, "warmup_steps": 4,
                                           "transition_steps": 2, "decay_rate": 0.5},
     "0 0.25 0.5 0.75 1 0.707107 0.5 0.353553 0.25 0.176777 0.125 0.0883883 0.0625 0.0441942"),
    ("join_schedules", {"schedules": [_lin(0.0, 1.0, 4), ("cosine_decay_schedule", {"init_value": 1.0,
                                                                                    "decay_steps": 6})],
                        "boundaries": [4]},
     "0 0.25 0.5 0.75 1 0.933013 0.75 0.5 0.25 0.0669873 0 0 0 0"),
    ("sgdr_schedule", {"cosine_kwargs": [
        {"init_value": 0.0, "peak_value": 1.0, "warmup_steps": 1, "decay_steps": 4},
        {"init_value": 0.0, "peak_value": 0.5, "warmup_steps": 1, "decay_steps": 6}]},
     "0 1 0.75 0.25 0 0.5 0.452254 0.327254 0.172746 0.0477457 0 0 0 0"),
    ("piecewise_interpolate_schedule", {"interpolate_type": "linear", "init_value": 1.0,
                                        "boundaries_and_scales": {2: 0.5, 6: 0.1}},
     "1 0.75 0.5 0.3875 0.275 0.1625 0.05 0.05 0.05 0.05 0.05 0.05 0.05 0.05"),
    ("piecewise_interpolate_schedule", {"interpolate_type": "cosine", "init_value": 1.0,
                                        "boundaries_and_scales": {2: 0.5, 6: 0.1}},
     "1 0.75 0.5 0.434099 0.275 0.115901 0.05 0.05 0.05 0.05 0.05 0.05 0.05 0.05"),
    ("linear_onecycle_schedule", {"transition_steps": 10, "peak_value": 1.0},
     "0.04 0.36 0.68 1 0.808 0.616 0.424 0.232 0.04 0.020002 4e-06 4e-06 4e-06 4e-06"),
    ("cosine_onecycle_schedule", {"transition_steps": 10, "peak_value": 1.0},
     "0.04 0.28 0.76 1 0.950485 0.811746 0.611262 0.388742 0.188258 0.0495193 4e-06 4e-06 4e-06 4e-06"),
    ("cosine_onecycle_schedule", {"transition_steps": 3, "peak_value": 1.0, "pct_start": 0.2},
     "1 0.750001 0.250003 4e-06 4e-06"),
]


@pytest.mark.parametrize(("fn", "kwargs", "expected"), OPTAX,
                         ids=[f"{i}-{c[0]}" for i, c in enumerate(OPTAX)])
def test_optax_snippet_values(fn, kwargs, expected):
    assert_row(run(R.optax_values, fn, kwargs, range(len(row(expected)))), expected)


def test_optax_consensus_float64_and_x64_restored():
    jax = pytest.importorskip("jax")
    before = bool(jax.config.jax_enable_x64)
    kw = {"init_value": 0.0, "peak_value": 1.0, "warmup_steps": 4, "decay_steps": 10, "end_value": 0.1}
    got = run(R.optax_values, "warmup_cosine_decay_schedule", kw, range(13))
    assert_row(got, CONSENSUS)
    assert_row(got, [consensus_exact(t) for t in range(13)], rel=1e-12)  # float64, not float32
    assert bool(jax.config.jax_enable_x64) == before
    # the optimizer's int32 counter saturates: far steps hold the end value
    assert run(R.optax_values, "linear_schedule", dict(_lin(0.0, 1.0, 4)[1]), [2**40]) == [1.0]


# --------------------------------------------------------------------------- Composer

COMPOSER = [  # (class, kwargs, expected) for t = 0..13, max_duration="10ba", dataloader_len=5
    ("ConstantScheduler", {}, "1 1 1 1 1 1 1 1 1 1 1 1 1 1"),
    ("ConstantScheduler", {"alpha": 0.5, "t_max": "4ba"}, "0.5 0.5 0.5 0.5 1 1 1 1 1 1 1 1 1 1"),
    ("StepScheduler", {"step_size": "3ba", "gamma": 0.5},
     "1 1 1 0.5 0.5 0.5 0.25 0.25 0.25 0.125 0.125 0.125 0.0625 0.0625"),
    ("MultiStepScheduler", {"milestones": ["2ba", "5ba"], "gamma": 0.5},
     "1 1 0.5 0.5 0.5 0.25 0.25 0.25 0.25 0.25 0.25 0.25 0.25 0.25"),
    ("LinearScheduler", {}, "1 0.9 0.8 0.7 0.6 0.5 0.4 0.3 0.2 0.1 0 0 0 0"),
    ("LinearScheduler", {"alpha_i": 0.25, "alpha_f": 1.0, "t_max": "4ba"},
     "0.25 0.4375 0.625 0.8125 1 1 1 1 1 1 1 1 1 1"),
    ("ExponentialScheduler", {"gamma": 0.5, "decay_period": "4ba"},
     "1 0.840896 0.707107 0.594604 0.5 0.420448 0.353553 0.297302 0.25 0.210224 0.176777 0.148651 "
     "0.125 0.105112"),
    ("ExponentialScheduler", {"gamma": 0.5},
     "1 0.870551 0.757858 0.659754 0.574349 0.5 0.435275 0.378929 0.329877 0.287175 0.25 0.217638 "
     "0.189465 0.164938"),
    ("CosineAnnealingScheduler", {},
     "1 0.975528 0.904508 0.793893 0.654508 0.5 0.345492 0.206107 0.0954915 0.0244717 0 0 0 0"),
    ("CosineAnnealingScheduler", {"t_max": "8ba", "alpha_f": 0.1},
     "1 0.965746 0.868198 0.722208 0.55 0.377792 0.231802 0.134254 0.1 0.1 0.1 0.1 0.1 0.1"),
    ("CosineAnnealingWarmRestartsScheduler", {"t_0": "4ba"},
     "1 0.853553 0.5 0.146447 1 0.853553 0.5 0.146447 1 0.853553 0.5 0.146447 1 0.853553"),
    ("CosineAnnealingWarmRestartsScheduler", {"t_0": "2ba", "t_mult": 2.0},
     "1 0.5 1 0.853553 0.5 0.146447 1 0.96194 0.853553 0.691342 0.5 0.308658 0.146447 0.0380602"),
    ("PolynomialScheduler", {"power": 2.0}, "1 0.81 0.64 0.49 0.36 0.25 0.16 0.09 0.04 0.01 0 0 0 0"),
    ("MultiStepWithWarmupScheduler", {"t_warmup": "4ba", "milestones": ["6ba", "8ba"], "gamma": 0.5},
     "0 0.25 0.5 0.75 1 1 0.5 0.5 0.25 0.25 0.25 0.25 0.25 0.25"),
    ("ConstantWithWarmupScheduler", {"t_warmup": "4ba"}, "0 0.25 0.5 0.75 1 1 1 1 1 1 1 1 1 1"),
    ("LinearWithWarmupScheduler", {"t_warmup": "4ba"},
     "0 0.25 0.5 0.75 1 0.833333 0.666667 0.5 0.333333 0.166667 0 0 0 0"),
    ("LinearWithWarmupScheduler", {"t_warmup": "4ba", "alpha_i": 0.5, "alpha_f": 0.1},
     "0 0.125 0.25 0.375 0.5 0.433333 0.366667 0.3 0.233333 0.166667 0.1 0.1 0.1 0.1"),
    ("CosineAnnealingWithWarmupScheduler", {"t_warmup": "4ba"},
     "0 0.25 0.5 0.75 1 0.933013 0.75 0.5 0.25 0.0669873 0 0 0 0"),
    ("CosineAnnealingWithWarmupScheduler", {"t_warmup": "4ba", "alpha_f": 0.1},
     "0 0.25 0.5 0.75 1 0.939711 0.775 0.55 0.325 0.160289 0.1 0.1 0.1 0.1"),
    ("PolynomialWithWarmupScheduler", {"t_warmup": "4ba"},
     "0 0.25 0.5 0.75 1 0.694444 0.444444 0.25 0.111111 0.0277778 0 0 0 0"),
    ("CosineAnnealingWithWarmupScheduler", {"t_warmup": "0.4dur"},
     "0 0.25 0.5 0.75 1 0.933013 0.75 0.5 0.25 0.0669873 0 0 0 0"),
]


@pytest.mark.parametrize(("cls", "kwargs", "expected"), COMPOSER,
                         ids=[f"{i}-{c[0]}" for i, c in enumerate(COMPOSER)])
def test_composer_snippet_values(cls, kwargs, expected):
    got = run(R.composer_values, cls, kwargs, range(14), max_duration="10ba", dataloader_len=5)
    assert_row(got, expected)


@pytest.mark.parametrize(("cls", "kwargs", "expected"), [
    ("CosineAnnealingWithWarmupScheduler", {"t_warmup": "2ba"}, "0 0.5 1 0.75 0.25 0 0"),
    ("CosineAnnealingWithWarmupScheduler", {"t_warmup": "2ba", "scale_warmup": True}, "0 1 1 0.75 0.25 0 0"),
    ("LinearWithWarmupScheduler", {"t_warmup": "4ba", "scale_warmup": True}, "0 0.5 1 1 1 0 0"),
    ("StepScheduler", {"step_size": "4ba", "gamma": 0.5}, "1 1 0.5 0.5 0.25 0.25 0.125"),
])
def test_composer_scale_schedule_ratio(cls, kwargs, expected):
    got = run(R.composer_values, cls, kwargs, range(7), max_duration="5ba", dataloader_len=5, ssr=0.5)
    assert_row(got, expected)


def test_composer_units_consensus_and_errors():
    got = run(R.composer_values, "LinearScheduler", {"alpha_i": 1.0, "alpha_f": 0.0, "t_max": "0.25dur"},
              range(5), max_duration="2ep", dataloader_len=5)
    assert_row(got, "1 0.5 0 0 0")
    got = run(R.composer_values, "CosineAnnealingWithWarmupScheduler",
              {"t_warmup": "4ba", "t_max": "10ba", "alpha_f": 0.1}, range(13))  # no max_duration needed
    assert_row(got, CONSENSUS)
    assert_row(got, [consensus_exact(t) for t in range(13)], rel=1e-12)
    with pytest.raises(ValueError, match="t_max"):  # t_max shorter than max_duration
        run(R.composer_values, "CosineAnnealingWithWarmupScheduler", {"t_warmup": "4ba", "t_max": "8ba"},
            [0], max_duration="10ba")
    with pytest.raises(ValueError, match="no scheduler class"):
        run(R.composer_values, "compile_composer_scheduler", {}, [0])
    with pytest.raises(ValueError, match="max_duration"):  # t_max defaults to "1dur"
        run(R.composer_values, "LinearWithWarmupScheduler", {"t_warmup": "4ba"}, [0])
    assert run(R.composer_values, "StepScheduler", {"step_size": "3ba", "gamma": 0.5}, [8, 0]) == [0.25, 1.0]


# --------------------------------------------------------------------------- Cerebras

CEREBRAS = [  # t = 0..11, from expected_output/cerebras_cstorch.txt
    ("ConstantLR", {"learning_rate": 0.5}, None, "0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5"),
    ("LinearLR", {"initial_learning_rate": 0.0, "end_learning_rate": 1.0, "total_iters": 4}, None,
     "0 0.25 0.5 0.75 1 1 1 1 1 1 1 1"),
    ("LinearLR", {"initial_learning_rate": 1.0, "end_learning_rate": 0.1, "total_iters": 8}, None,
     "1 0.8875 0.775 0.6625 0.55 0.4375 0.325 0.2125 0.1 0.1 0.1 0.1"),
    ("LinearLR", {"initial_learning_rate": 1.0, "end_learning_rate": 0.1, "total_iters": 8, "cycle": True},
     None,
     "1 0.8875 0.775 0.6625 0.55 0.4375 0.325 0.2125 0.1 0.1 0.1 0.1"),
    ("PolynomialLR", {"initial_learning_rate": 1.0, "end_learning_rate": 0.0, "total_iters": 8, "power": 2.0},
     None, "1 0.765625 0.5625 0.390625 0.25 0.140625 0.0625 0.015625 0 0 0 0"),
    ("ExponentialLR", {"initial_learning_rate": 1.0, "total_iters": 4, "decay_rate": 0.5}, None,
     "1 0.840896 0.707107 0.594604 0.5 0.420448 0.353553 0.297302 0.25 0.210224 0.176777 0.148651"),
    ("ExponentialLR", {"initial_learning_rate": 1.0, "total_iters": 4, "decay_rate": 0.5, "staircase": True},
     None, "1 1 1 1 0.5 0.5 0.5 0.5 0.25 0.25 0.25 0.25"),
    ("InverseExponentialTimeDecayLR", {"initial_learning_rate": 1.0, "step_exponent": 1, "total_iters": 2,
                                       "decay_rate": 1.0}, None,
     "1 0.666667 0.5 0.4 0.333333 0.285714 0.25 0.222222 0.2 0.181818 0.166667 0.153846"),
    ("InverseExponentialTimeDecayLR", {"initial_learning_rate": 1.0, "step_exponent": 1, "total_iters": 2,
                                       "decay_rate": 1.0, "staircase": True}, None,
     "1 1 0.5 0.5 0.333333 0.333333 0.25 0.25 0.2 0.2 0.166667 0.166667"),
    ("InverseSquareRootDecayLR", {}, None,
     "1 1 0.707107 0.57735 0.5 0.447214 0.408248 0.377964 0.353553 0.333333 0.316228 0.301511"),
    ("InverseSquareRootDecayLR", {"initial_learning_rate": 2.0, "scale": 1.0, "warmup_steps": 4}, None,
     "1 1 1 1 1 0.894427 0.816497 0.755929 0.707107 0.666667 0.632456 0.603023"),
    ("InverseSquareRootDecayLR", {"initial_learning_rate": 1.0, "scale": 1.0, "warmup_steps": 0}, None,
     "inf 1 0.707107 0.57735 0.5 0.447214 0.408248 0.377964 0.353553 0.333333 0.316228 0.301511"),
    ("CosineDecayLR", {"initial_learning_rate": 1.0, "end_learning_rate": 0.1, "total_iters": 8}, None,
     "1 0.965746 0.868198 0.722208 0.55 0.377792 0.231802 0.134254 0.1 0.1 0.1 0.1"),
    ("CosineAnnealingLR", {"initial_learning_rate": 1.0, "T_max": 8, "eta_min": 0.1}, None,
     "1 0.965746 0.868198 0.722208 0.55 0.377792 0.231802 0.134254 0.1 0.134254 0.231802 0.377793"),
    ("StepLR", {"initial_learning_rate": 1.0, "step_size": 3, "gamma": 0.5}, None,
     "1 1 1 0.5 0.5 0.5 0.25 0.25 0.25 0.125 0.125 0.125"),
    ("MultiStepLR", {"initial_learning_rate": 1.0, "gamma": 0.5, "milestones": [2, 5]}, None,
     "1 1 0.5 0.5 0.5 0.25 0.25 0.25 0.25 0.25 0.25 0.25"),
    ("PiecewiseConstantLR", {"learning_rates": [1.0, 0.5, 0.25], "milestones": [3, 6]}, None,
     "1 1 1 0.5 0.5 0.5 0.25 0.25 0.25 0.25 0.25 0.25"),
    ("MultiplicativeLR", {"initial_learning_rate": 1.0, "coefficient": 0.9}, None,
     "1 0.9 0.81 0.729 0.6561 0.59049 0.531441 0.478297 0.430467 0.38742 0.348678 0.31381"),
    ("LambdaLR", {"initial_learning_rate": 1.0}, None,
     "0 0.0316667 0.0601667 0.0857375 0.108601 0.128963 0.147018 0.162945 0.176912 0.189075 0.199579 "
     "0.20856"),
    ("CosineAnnealingWarmRestarts", {"initial_learning_rate": 1.0, "T_0": 4}, None,  # 2.10.0 bug after T_0
     "1 0.853553 0.5 0.146447 1 1 1 1 0 0 0 0"),
    ("CyclicLR", {"base_lr": 0.1, "max_lr": 1.0, "step_size_up": 2, "step_size_down": 4}, None,
     "0.1 0.55 1 0.775 0.55 0.325 0.1 0.55 1 0.775 0.55 0.325"),
    ("CyclicLR", {"base_lr": 0.1, "max_lr": 1.0, "step_size_up": 2, "mode": "triangular2"}, None,
     "0.1 0.55 1 0.55 0.1 0.325 0.55 0.325 0.1 0.2125 0.325 0.2125"),
    ("CyclicLR", {"base_lr": 0.1, "max_lr": 1.0, "step_size_up": 2, "mode": "exp_range", "gamma": 0.9}, None,
     "0.1 0.505 0.829 0.42805 0.1 0.36572 0.578297 0.315234 0.1 0.274339 0.41381 0.241215"),
    ("OneCycleLR", {"initial_learning_rate": 0.04, "max_lr": 1.0, "total_steps": 10, "pct_start": 0.3}, None,
     "0.04 0.52 1 0.950485 0.811746 0.611262 0.388742 0.188258 0.0495193 4e-06 0.0495194 0.188258"),
    ("OneCycleLR", {"initial_learning_rate": 0.04, "max_lr": 1.0, "total_steps": 10, "pct_start": 0.3,
                    "anneal_strategy": "linear"}, None,
     "0.04 0.52 1 0.857143 0.714287 0.57143 0.428574 0.285717 0.142861 3.99351e-06 -0.142853 -0.285709"),
    ("OneCycleLR", {"initial_learning_rate": 0.04, "max_lr": 1.0, "total_steps": 10, "pct_start": 0.3,
                    "three_phase": True}, None,
     "0.04 0.52 1 0.52 0.04 0.0361807 0.0261817 0.0138223 0.00382328 4e-06 0.00382328 0.0138223"),
    ("SequentialLR", {"schedulers": [
        ("LinearLR", {"initial_learning_rate": 0.0, "end_learning_rate": 1.0, "total_iters": 4}),
        ("CosineDecayLR", {"initial_learning_rate": 1.0, "end_learning_rate": 0.1, "total_iters": 6})],
        "milestones": [4]}, None, "0 0.25 0.5 0.75 1 0.939711 0.775 0.55 0.325 0.160289 0.1 0.1"),
    ("ChainedScheduler", {"schedulers": [
        ("LinearLR", {"initial_learning_rate": 0.5, "end_learning_rate": 1.0, "total_iters": 4}),
        ("ExponentialLR", {"initial_learning_rate": 2.0, "total_iters": 1, "decay_rate": 0.9})]}, None,
     "0.5 0.5625 0.6075 0.637875 0.6561 0.59049 0.531441 0.478297 0.430467 0.38742 0.348678 0.31381"),
    ("ScalePerParamLR", {"scheduler": ("LinearLR", {"initial_learning_rate": 1.0, "end_learning_rate": 0.0,
                                                    "total_iters": 8})},
     {"adjust_learning_rate": 0.5}, "0.5 0.4375 0.375 0.3125 0.25 0.1875 0.125 0.0625 0 0 0 0"),
    ("CosineDecayWD", {"initial_val": 0.1, "end_val": 0.0, "total_iters": 8}, {"weight_decay": 0.1},
     "0.1 0.096194 0.0853553 0.0691342 0.05 0.0308658 0.0146447 0.00380602 0 0 0 0"),
]


@pytest.mark.parametrize(("cls", "kwargs", "group", "expected"), CEREBRAS,
                         ids=[f"{i}-{c[0]}" for i, c in enumerate(CEREBRAS)])
def test_cerebras_snippet_values(cls, kwargs, group, expected):
    assert_row(run(R.cerebras_values, cls, kwargs, range(12), param_group=group), expected)


def test_cerebras_consensus_modelzoo_milestones_and_sparse_steps():
    children = [("LinearLR", {"initial_learning_rate": 0.0, "end_learning_rate": 1.0, "total_iters": 4}),
                ("CosineDecayLR", {"initial_learning_rate": 1.0, "end_learning_rate": 0.1, "total_iters": 6})]
    # no milestones: ModelZoo derives cumsum(total_iters[:-1]) = [4]
    got = run(R.cerebras_values, "SequentialLR", {"schedulers": children}, range(13))
    assert_row(got, CONSENSUS)
    explicit = run(R.cerebras_values, "SequentialLR", {"schedulers": children, "milestones": [4]},
                   [12, 5, 0, 5])
    assert explicit == [got[12], got[5], got[0], got[5]]
    # the same through the weight-decay twins (generic argument names)
    wd_children = [("LinearWD", {"initial_val": 0.0, "end_val": 1.0, "total_iters": 4}),
                   ("CosineDecayWD", {"initial_val": 1.0, "end_val": 0.1, "total_iters": 6})]
    assert run(R.cerebras_values, "SequentialWD", {"schedulers": wd_children}, range(13)) == got


def test_cerebras_quirks_and_isolation():
    # a ConstantLR after the first ChainedScheduler element has no initial_val (anchors.md §1.2)
    with pytest.raises(AttributeError, match="initial_val"):
        run(R.cerebras_values, "ChainedScheduler", {"schedulers": [
            ("LinearLR", {"initial_learning_rate": 0.5, "end_learning_rate": 1.0, "total_iters": 4}),
            ("ConstantLR", {"learning_rate": 0.5})]}, range(3))
    with pytest.raises(ValueError, match="no scheduler class"):
        run(R.cerebras_values, "Scheduler", {}, [0])
    # lr tensors are float32
    v = run(R.cerebras_values, "CosineDecayLR", {"initial_learning_rate": 1.0, "end_learning_rate": 0.1,
                                                 "total_iters": 8}, [1])[0]
    assert v != 0.1 + 0.9 * (1 + math.cos(math.pi / 8)) / 2 and v == pytest.approx(0.965746, rel=1e-6)
    # neither the import stubs nor the loaded source modules are left in sys.modules
    run(R.composer_values, "ConstantScheduler", {}, [0], max_duration="10ba")
    loaded = {id(m) for ns in R._loaded.values() for m in vars(ns).values()
              if isinstance(m, types.ModuleType)}
    assert loaded
    for name, mod in list(sys.modules.items()):
        assert id(mod) not in loaded, name
        if name.split(".")[0] in ("cerebras", "composer"):
            assert getattr(mod, "__spec__", None) is not None, f"stub {name} leaked"


# --------------------------------------------------------------------------- SambaFlow (documented formulas)

def test_sambaflow_documented_formulas():
    kw = {"learning_rate": 1.0, "warmup_steps": 4, "max_steps": 10}
    got = R.sambaflow_values("cosine_schedule_with_warmup", kw, range(13))
    assert_row(got, CONSENSUS)
    assert_row(got, [consensus_exact(t) for t in range(13)], rel=1e-12)
    assert_row(R.sambaflow_values("cosine_schedule_with_warmup", {**kw, "end_lr_ratio": 0.0}, [5, 10, 20]),
               [0.5 * (1 + math.cos(math.pi / 6)), 0.0, 0.0])
    assert_row(R.sambaflow_values("polynomial_decay_schedule_with_warmup", kw, range(12)),
               "0 0.25 0.5 0.75 1 0.833333 0.666667 0.5 0.333333 0.166667 0 0")
    poly = {**kw, "learning_rate": 2.0, "end_lr_ratio": 0.5}
    assert_row(R.sambaflow_values("polynomial_decay_schedule_with_warmup", poly, [4, 7, 10, 99]),
               [2.0, 1.5, 1.0, 1.0])
    assert R.sambaflow_values("fixed_lr", {"learning_rate": 3e-4}, [0, 5, 1000]) == [3e-4] * 3
    with pytest.raises(ValueError, match="unknown"):
        R.sambaflow_values("linear", kw, [0])


# --------------------------------------------------------------------------- source cache

def test_unavailable_sources_raise_anchor_unavailable(tmp_path, monkeypatch):
    monkeypatch.setenv("SCHEDLANG_ANCHOR_FETCH", "0")
    with pytest.raises(R.AnchorUnavailable, match="fetch_anchor_sources"):
        R.cerebras_values("ConstantLR", {"learning_rate": 0.5}, [0], cache_dir=tmp_path)
    with pytest.raises(R.AnchorUnavailable):
        R.composer_values("ConstantScheduler", {}, [0], cache_dir=tmp_path)
    assert list(tmp_path.iterdir()) == []
