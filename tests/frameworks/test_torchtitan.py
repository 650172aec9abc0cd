"""torchtitan presets: their errors, and symbolic training steps bound later.

The presets' values are checked in tests/test_presets_conformance.py (torchtitan_cases.py);
``schedlang import --format torchtitan-toml`` is tested in tests/formats/test_torchtitan_toml.py.
"""

from __future__ import annotations

import pytest

import schedlang

PRESET_ERRORS = [
    ("torchtitan.lr_scheduler(warmup_steps=10)", "training_steps"),
    ("torchtitan.lr_scheduler(training_steps=100, warmup_steps=-1)", "warmup_steps"),
    ('torchtitan.lr_scheduler(training_steps=100, decay_type="exp")', "decay_type"),
    ("torchtitan.lr_scheduler(training_steps=100, decay_ratio=-0.5)", "decay_ratio"),
    ("param n: int\nschedule lr = torchtitan.lr_scheduler(training_steps=n, decay_ratio=0.1)",
     "floating point"),
    ("torchtitan.lr_scheduler_v2025_03(training_steps=100, warmup_steps=200)", "longer than"),
    ("torchtitan.linear_warmup_linear_decay(training_steps=0)", "positive"),
]


@pytest.mark.parametrize(("source", "words"), PRESET_ERRORS)
def test_preset_errors(source, words):
    with pytest.raises(schedlang.SchedlangError) as info:
        schedlang.compile(source)
    assert words in str(info.value) and "^" in str(info.value)


def test_symbolic_steps_bind_later():
    prog = schedlang.compile("param total: int\nschedule lr = torchtitan.lr_scheduler(lr=1, "
                             "training_steps=total, warmup_steps=10)", params={"total": 100})
    assert prog["lr"](9) == 1.0 and prog["lr"](100) == 0.0
