# ruff: noqa: E501 - a transcribed table: one case a row, as the source writes it
"""Keras' own learning-rate schedule test cases, as data.

Transcribed from Keras 3.15.1's ``keras/src/optimizers/schedules/learning_rate_schedule_test.py``
(the file the wheel installs; keras-team/keras at the v3.15.1 tag).  Rows: the test, the
schedule class and its keyword arguments (the test's positional ones named), the steps it
reads and the values it expects (its helpers ``np_cosine_decay``, ``linear_warmup`` and
``np_cosine_decay_restarts`` evaluated as it writes them), asserted with
``assertAllClose(value, expected, 1e-6)`` (atol 1e-6, Keras' default rtol 1e-6).  The first
read of ``PiecewiseConstantDecay.test_piecewise_values``, at step -999, is no step (SPEC §1)
and is left out; ``test_config`` / ``test_variables`` / ``test_float64`` repeat cases above.
"""

from __future__ import annotations

import math

ATOL = RTOL = 1e-6


def _cosine(step, decay_steps, alpha=0.0):
    step = min(step, decay_steps)
    return (1.0 - alpha) * 0.5 * (1.0 + math.cos(math.pi * step / decay_steps)) + alpha


def _warmup(step, warmup_steps, initial_lr, target_lr):
    return step / warmup_steps * (target_lr - initial_lr)


def _restarts(step, decay_steps, t_mul=2.0, m_mul=1.0, alpha=0.0):
    fac = 1.0
    while step >= decay_steps:
        step -= decay_steps
        decay_steps *= t_mul
        fac *= m_mul
    return (1.0 - alpha) * fac * 0.5 * (1.0 + math.cos(math.pi * step / decay_steps)) + alpha


_ED = {"initial_learning_rate": 0.1, "decay_steps": 3, "decay_rate": 0.96, "staircase": True}
_Q = range(0, 1500, 250)

CASES = [
    ("ExponentialDecayTest.test_continuous", "ExponentialDecay", {"initial_learning_rate": 0.05, "decay_steps": 10, "decay_rate": 0.96},
     [5], [0.05 * 0.96 ** (5.0 / 10.0)]),
    ("ExponentialDecayTest.test_staircase", "ExponentialDecay", _ED, [1, 2, 100], [0.1, 0.1, 0.1 * 0.96 ** (100 // 3)]),
    ("PiecewiseConstantDecayTest.test_piecewise_values", "PiecewiseConstantDecay",
     {"boundaries": [100, 110, 120], "values": [1.0, 0.1, 0.01, 0.001]}, [100, 105, 110, 120, 999], [1.0, 0.1, 0.1, 0.01, 0.001]),
    ("PiecewiseConstantDecayTest.test_boundary_values", "PiecewiseConstantDecay",
     {"boundaries": [1, 2, 3], "values": [0.4, 0.5, 0.6, 0.7]}, [0, 1, 2, 3, 4], [0.4, 0.4, 0.5, 0.6, 0.7]),
    ("LinearDecayTest.test_halfway", "PolynomialDecay", {"initial_learning_rate": 0.05, "decay_steps": 10, "end_learning_rate": 0.0}, [5], [0.05 * 0.5]),
    ("LinearDecayTest.test_end", "PolynomialDecay", {"initial_learning_rate": 0.05, "decay_steps": 10, "end_learning_rate": 0.001}, [10], [0.001]),
    ("LinearDecayTest.test_halfway_with_end", "PolynomialDecay", {"initial_learning_rate": 0.05, "decay_steps": 10, "end_learning_rate": 0.001},
     [5], [(0.05 + 0.001) * 0.5]),
    ("LinearDecayTest.test_beyond_end", "PolynomialDecay", {"initial_learning_rate": 0.05, "decay_steps": 10, "end_learning_rate": 0.001}, [15], [0.001]),
    ("LinearDecayTest.test_beyond_end_with_cycle", "PolynomialDecay",
     {"initial_learning_rate": 0.05, "decay_steps": 10, "end_learning_rate": 0.001, "cycle": True}, [15], [(0.05 - 0.001) * 0.25 + 0.001]),
    ("SqrtDecayTest.test_halfway", "PolynomialDecay", {"initial_learning_rate": 0.05, "decay_steps": 10, "end_learning_rate": 0.0, "power": 0.5},
     [5], [0.05 * 0.5**0.5]),
    ("SqrtDecayTest.test_end", "PolynomialDecay", {"initial_learning_rate": 0.05, "decay_steps": 10, "end_learning_rate": 0.001, "power": 0.5},
     [10], [0.001]),
    ("SqrtDecayTest.test_halfway_with_end", "PolynomialDecay",
     {"initial_learning_rate": 0.05, "decay_steps": 10, "end_learning_rate": 0.001, "power": 0.5}, [5], [(0.05 - 0.001) * 0.5**0.5 + 0.001]),
    ("SqrtDecayTest.test_beyond_end", "PolynomialDecay", {"initial_learning_rate": 0.05, "decay_steps": 10, "end_learning_rate": 0.001, "power": 0.5},
     [15], [0.001]),
    ("SqrtDecayTest.test_beyond_end_with_cycle", "PolynomialDecay",
     {"initial_learning_rate": 0.05, "decay_steps": 10, "end_learning_rate": 0.001, "power": 0.5, "cycle": True}, [15],
     [(0.05 - 0.001) * 0.25**0.5 + 0.001]),
    ("SqrtDecayTest.test_begin_with_cycle", "PolynomialDecay", {"initial_learning_rate": 0.001, "decay_steps": 10, "cycle": True}, [0], [0.001]),
    ("InverseTimeDecayTest.test_decay", "InverseTimeDecay", {"initial_learning_rate": 0.1, "decay_steps": 10, "decay_rate": 0.96},
     list(range(11)), [0.1 / (1 + i / 10 * 0.96) for i in range(11)]),
    ("InverseTimeDecayTest.test_staircase", "InverseTimeDecay", {"initial_learning_rate": 0.1, "decay_steps": 10, "decay_rate": 0.96, "staircase": True},
     list(range(11)), [0.1 / (1 + 0.96 * (i // 10)) for i in range(11)]),
    ("CosineDecayTest.test_decay", "CosineDecay", {"initial_learning_rate": 1.0, "decay_steps": 1000}, list(_Q), [_cosine(s, 1000) for s in _Q]),
    ("CosineDecayTest.test_warmup", "CosineDecay", {"initial_learning_rate": 0.0, "decay_steps": 10, "warmup_target": 10.0, "warmup_steps": 1500},
     list(_Q), [_warmup(s, 1500, 0.0, 10.0) for s in _Q]),
    ("CosineDecayTest.test_alpha", "CosineDecay", {"initial_learning_rate": 1.0, "decay_steps": 1000, "alpha": 0.1}, list(_Q),
     [_cosine(s, 1000, 0.1) for s in _Q]),
    ("CosineDecayTest.test_warmup_decay", "CosineDecay", {"initial_learning_rate": 0.0, "decay_steps": 1000, "warmup_target": 10.0, "warmup_steps": 2000},
     list(range(0, 3000, 250)), [_warmup(s, 2000, 0.0, 10.0) if s < 2000 + 1 else 10.0 * _cosine(s - 2000, 1000) for s in range(0, 3000, 250)]),
    ("CosineDecayRestartsTest.test_decay", "CosineDecayRestarts", {"initial_learning_rate": 1.0, "first_decay_steps": 1000}, list(_Q),
     [_restarts(s, 1000) for s in _Q]),
    ("CosineDecayRestartsTest.test_alpha", "CosineDecayRestarts", {"initial_learning_rate": 1.0, "first_decay_steps": 1000, "alpha": 0.1}, list(_Q),
     [_restarts(s, 1000, alpha=0.1) for s in _Q]),
    ("CosineDecayRestartsTest.test_mmul", "CosineDecayRestarts", {"initial_learning_rate": 1.0, "first_decay_steps": 1000, "m_mul": 0.9}, list(_Q),
     [_restarts(s, 1000, m_mul=0.9) for s in _Q]),
    ("CosineDecayRestartsTest.test_tmul", "CosineDecayRestarts", {"initial_learning_rate": 1.0, "first_decay_steps": 1000, "t_mul": 1.0}, list(_Q),
     [_restarts(s, 1000, t_mul=1.0) for s in _Q]),
]
