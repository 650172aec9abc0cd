# ruff: noqa: E501 - a transcribed table: one case a row, as the source writes it
"""transformers' own scheduler test cases, as data.

Transcribed from huggingface/transformers ``tests/optimization/test_optimization.py`` at commit
74714520aed84bb44c9e6724ba805d2cd1e1eff7, ``ScheduleInitTest.test_schedulers``: an AdamW at
``lr=10.0``, ten steps read by ``unwrap_schedule`` (the lr before each ``scheduler.step()``:
steps 0 .. 9), compared with ``assertAlmostEqual(delta=1e-2)``.  Rows: the ``get_*`` function's
``get_scheduler`` name, its keyword arguments, the expected lrs.
"""

from __future__ import annotations

LR = 10.0
NUM_STEPS = 10
TOLERANCE = 1e-2
_COMMON = {"num_warmup_steps": 2, "num_training_steps": 10}

CASES = [
    ("constant", {}, [10.0] * NUM_STEPS),  # get_constant_schedule
    ("constant_with_warmup", {"num_warmup_steps": 4}, [0.0, 2.5, 5.0, 7.5, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0]),
    ("linear", {**_COMMON}, [0.0, 5.0, 10.0, 8.75, 7.5, 6.25, 5.0, 3.75, 2.5, 1.25]),
    ("cosine", {**_COMMON}, [0.0, 5.0, 10.0, 9.61, 8.53, 6.91, 5.0, 3.08, 1.46, 0.38]),
    ("cosine_with_restarts", {**_COMMON, "num_cycles": 2}, [0.0, 5.0, 10.0, 8.53, 5.0, 1.46, 10.0, 8.53, 5.0, 1.46]),
    ("polynomial", {**_COMMON, "power": 2.0, "lr_end": 1e-7},
     [0.0, 5.0, 10.0, 7.656, 5.625, 3.906, 2.5, 1.406, 0.625, 0.156]),
    ("inverse_sqrt", {"num_warmup_steps": 2}, [0.0, 5.0, 10.0, 8.165, 7.071, 6.325, 5.774, 5.345, 5.0, 4.714]),
]
