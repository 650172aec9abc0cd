# ruff: noqa: E501 - a transcribed table: one case a row, as the source writes it
"""Megatron-LM's own ``OptimizerParamScheduler`` test cases, as data.

Transcribed from NVIDIA/Megatron-LM ``tests/unit_tests/test_optimizer_param_scheduler.py`` at
commit bae83e49859cb2245344fcb063416cbe203c5972.  Each test builds the class with the keyword
arguments below, calls ``step(increment)`` (``num_steps`` adds up the increments) and reads
``get_lr(param_group)`` / ``get_wd()`` or the param group.  Rows: the test, the kwargs, and
its reads ``(num_steps, "lr" | "wd", expected, rel_tol)`` (``rel_tol=None``: the test asks
``==``).  The preset's step ``t`` is ``num_steps``: Megatron-LM's loop reads the group after
``t`` calls of ``step(1)``.  ``test_initialization``, ``test_state_dict`` and
``test_load_state_dict`` read attributes, not values: nothing to run.
"""

from __future__ import annotations

import math

_BASE = dict(init_lr=0.01, max_lr=0.1, min_lr=0.001, lr_warmup_steps=100, lr_decay_steps=1000)

CASES = [
    ("test_get_wd_constant", {**_BASE, "lr_decay_style": "linear", "start_wd": 0.1, "end_wd": 0.1, "wd_incr_steps": 1000,
                              "wd_incr_style": "constant"}, [(500, "wd", 0.1, None)]),
    ("test_get_wd_linear", {**_BASE, "lr_decay_style": "linear", "start_wd": 0.0, "end_wd": 0.1, "wd_incr_steps": 1000,
                            "wd_incr_style": "linear"}, [(500, "wd", 0.05, None)]),
    ("test_get_wd_cosine", {**_BASE, "lr_decay_style": "cosine", "start_wd": 0.0, "end_wd": 0.1, "wd_incr_steps": 1000,
                            "wd_incr_style": "cosine"}, [(500, "wd", 0.05 * (math.cos(math.pi * (1 - 0.5)) + 1.0), 1e-5)]),
    ("test_get_lr_linear", {**_BASE, "lr_decay_style": "linear", "start_wd": 0.0, "end_wd": 0.1, "wd_incr_steps": 1000,
                            "wd_incr_style": "linear"},
     [(50, "lr", 0.01 + (0.1 - 0.01) * (50 / 100), 1e-5), (500, "lr", 0.1 - ((0.1 - 0.001) * ((500 - 100) / (1000 - 100))), 1e-5),
      (1001, "lr", 0.001, 1e-5)]),
    ("test_get_lr_cosine", {**_BASE, "lr_decay_style": "cosine", "start_wd": 0.0, "end_wd": 0.1, "wd_incr_steps": 1000,
                            "wd_incr_style": "linear"},
     [(500, "lr", 0.001 + (0.1 - 0.001) * 0.5 * (math.cos(math.pi * ((500 - 100) / (1000 - 100))) + 1.0), 1e-5)]),
    ("test_step_function", {**_BASE, "lr_decay_style": "linear", "start_wd": 0.0, "end_wd": 0.1, "wd_incr_steps": 1000,
                            "wd_incr_style": "linear"},
     [(100, "lr", 0.01 + (0.1 - 0.01) * (100 / 100), 1e-5), (100, "wd", 0.01, 1e-5)]),
]
