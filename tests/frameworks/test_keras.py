"""Keras presets: the same Keras code run in float64 (the formulas agree to 1e-12), argument
errors (the conditions Keras checks), and proofs against core schedules."""

from __future__ import annotations

import pytest
from anchors.preset_cases import max_error

import schedlang
from frameworks import keras_cases as KC

ROWS = KC.ROWS + [  # longer runs than float32 allows at 1e-6
    KC._row("CosineDecayRestarts", dict(initial_learning_rate=0.1, first_decay_steps=10, t_mul=2.0,
                                         m_mul=0.9, alpha=0.1), 700),
    KC._row("PolynomialDecay", dict(initial_learning_rate=0.1, decay_steps=60, power=0.5, cycle=True), 400),
]


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r["source"][:70])
def test_presets_match_keras_in_float64(row):
    steps = range(row["steps"])
    theirs = KC.values(row["name"], row["kwargs"], steps, float64=True)
    mine = schedlang.compile(row["source"])["lr"].values(steps)
    assert max_error(mine, theirs, 1e-3) <= 1e-12


def test_float64_mode_is_restored():
    import numpy as np

    KC.values("CosineDecay", dict(initial_learning_rate=0.1, decay_steps=10), range(3), float64=True)
    assert KC.schedule("CosineDecay", dict(initial_learning_rate=0.1, decay_steps=10))(np.int64(1)).dtype \
        == np.float32


@pytest.mark.parametrize("source, expected", [
    ("keras.CosineDecay(initial_learning_rate=1, decay_steps=100, alpha=0.1)", "cosine(1, 0.1, 100)"),
    ("keras.CosineDecay(initial_learning_rate=0, decay_steps=90, warmup_target=1, warmup_steps=10)",
     "warmup(linear, 10) >> cosine(1, 0, 90)"),
    ("keras.PolynomialDecay(initial_learning_rate=1, decay_steps=50, end_learning_rate=0.01, power=2)",
     "poly(1, 0.01, 50, power=2)"),
    ("keras.ExponentialDecay(initial_learning_rate=1, decay_steps=10, decay_rate=0.5, staircase=true)",
     "step(1, 0.5, 10)"),
    ("keras.PiecewiseConstantDecay(boundaries=[10, 20], values=[1, 0.5, 0.1])",
     "piecewise([1, 0.5, 0.1], [11, 21])"),
    ("keras.CosineDecayRestarts(initial_learning_rate=1, first_decay_steps=10, t_mul=2)",
     "cosine_restarts(1, 0, 10, mult=2)"),
])
def test_presets_are_proven_equal_to_core_schedules(source, expected):
    assert schedlang.equivalent(schedlang.compile(source)["lr"], expected)


ERRORS = [
    ("keras.ExponentialDecay(initial_learning_rate=0.1, decay_steps=0, decay_rate=0.5)", "decay_steps > 0",
     ("ExponentialDecay", dict(initial_learning_rate=0.1, decay_steps=0, decay_rate=0.5))),
    ("keras.InverseTimeDecay(initial_learning_rate=0.1, decay_steps=-1, decay_rate=0.5)", "decay_steps > 0",
     ("InverseTimeDecay", dict(initial_learning_rate=0.1, decay_steps=-1, decay_rate=0.5))),
    ("keras.PiecewiseConstantDecay(boundaries=[10, 20], values=[0.1, 0.01])", "one more value",
     ("PiecewiseConstantDecay", dict(boundaries=[10, 20], values=[0.1, 0.01]))),
    ("keras.PiecewiseConstantDecay(boundaries=[20, 10], values=[0.1, 0.01, 0.001])", "increasing", None),
    ("keras.PiecewiseConstantDecay(boundaries=[10.5], values=[0.1, 0.01])", "integer type", None),
    ("keras.CosineDecayRestarts(initial_learning_rate=0.1, first_decay_steps=10, t_mul=1.5)", "whole", None),
    ("keras.CosineDecay(initial_learning_rate=0.1, decay_steps=10, warmup_steps=-1, warmup_target=1)",
     "warmup_steps must be >= 0", None),
]


@pytest.mark.parametrize("source, message, real_call", ERRORS, ids=[e[1] for e in ERRORS])
def test_argument_errors(source, message, real_call):
    with pytest.raises(schedlang.SchedlangError) as info:
        schedlang.compile(source)
    assert message in str(info.value) and info.value.line == 1
    if real_call is not None:  # Keras refuses the same arguments
        with pytest.raises(ValueError):
            KC.schedule(*real_call)
