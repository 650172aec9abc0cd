"""``deepspeed.*`` presets against ``deepspeed.runtime.lr_schedules``, and its ValueErrors as
schedlang diagnostics."""

from __future__ import annotations

import pytest
from anchors.cookbook import evaluate
from anchors.preset_cases import max_error

import schedlang

from .deepspeed_cases import DEEPSPEED


@pytest.mark.parametrize("case", DEEPSPEED, ids=lambda c: c.source[:90])
def test_matches_deepspeed(case):
    ours, anchor = evaluate(case)
    error = max_error(ours, anchor, case.floor)
    if error > case.tolerance:
        worst = max(case.compared, key=lambda i: abs(ours[i] - anchor[i]))
        pytest.fail(f"max error {error:.3g}; at t={worst}: schedlang {ours[worst]!r}, "
                    f"deepspeed {anchor[worst]!r}")


def test_every_scheduler_is_covered():
    assert {c.preset for c in DEEPSPEED} == {
        "deepspeed.WarmupLR", "deepspeed.WarmupDecayLR", "deepspeed.WarmupCosineLR", "deepspeed.OneCycle",
        "deepspeed.OneCycle.get_mom", "deepspeed.LRRangeTest"}


@pytest.mark.parametrize("source, message", [
    ("deepspeed.WarmupLR(warmup_max_lr=1e-3, warmup_num_steps=0)", "warmup_num_steps must be a positive"),
    ("deepspeed.WarmupLR(warmup_max_lr=1e-3, warmup_num_steps=2.5)", "warmup_num_steps must be a positive"),
    ("deepspeed.WarmupLR(warmup_num_steps=10)", "give it as lr="),
    ('deepspeed.WarmupLR(lr=1e-3, warmup_type="exp")', "not a valid warmup_type"),
    ("deepspeed.WarmupDecayLR(total_num_steps=100, warmup_num_steps=-3)",
     "warmup_num_steps must be a positive"),
    ("deepspeed.WarmupCosineLR(total_num_steps=100, warmup_min_lr=0.0)", "has no argument 'warmup_min_lr'"),
    ("deepspeed.WarmupCosineLR(total_num_steps=100.5)", "total_num_steps must be a whole number"),
    ("deepspeed.OneCycle(cycle_min_lr=1e-4, cycle_max_lr=1e-3, cycle_first_step_size=0)",
     "cycle_first_step_size must be positive"),
    ("deepspeed.OneCycle(cycle_min_lr=1e-4, cycle_max_lr=1e-3, cycle_second_step_size=-1)",
     "cycle_second_step_size must be >= 0"),
    ("deepspeed.OneCycle.get_mom(cycle_min_lr=1e-4, cycle_max_lr=1e-3, cycle_momentum=false)",
     "no momentum schedule"),
    ("deepspeed.LRRangeTest(lr_range_test_step_size=0)", "lr_range_test_step_size must be a positive"),
])
def test_value_errors_are_diagnostics(source, message):
    with pytest.raises(schedlang.SchedlangError) as info:
        schedlang.compile(source)
    assert message in str(info.value)
    assert "^" in str(info.value)


def test_durations():
    def duration(source):
        return schedlang.compile(source)["lr"].duration

    assert duration("deepspeed.WarmupLR(lr=1e-3, warmup_num_steps=50)") == 50
    assert duration('deepspeed.WarmupLR(lr=1e-3, warmup_num_steps=50, warmup_type="linear")') == 51
    assert duration("deepspeed.WarmupDecayLR(total_num_steps=300, warmup_num_steps=40)") == 301
    assert duration("deepspeed.WarmupCosineLR(total_num_steps=300, warmup_num_steps=40)") == 300
    one_cycle = "deepspeed.OneCycle(cycle_min_lr=1e-4, cycle_max_lr=1e-3, cycle_first_step_size=50"
    assert duration(one_cycle + ")") == 100
    assert duration("deepspeed.OneCycle(cycle_min_lr=1e-4, cycle_max_lr=1e-3, cycle_first_step_size=50, "
                    "decay_lr_rate=0.1, decay_step_size=10)") is None
    assert duration("deepspeed.LRRangeTest()") is None


def test_first_steps_follow_the_engine():
    """The constructor's value is the first optimizer step's; the log warmup's g(0) = 0 repeats it."""
    lr = schedlang.compile("deepspeed.WarmupLR(warmup_min_lr=1e-5, warmup_max_lr=1e-3, "
                           "warmup_num_steps=10)")["lr"]
    assert lr(0) == lr(1) == pytest.approx(1e-5) and lr(10) == pytest.approx(1e-3)
    cosine = schedlang.compile("deepspeed.WarmupCosineLR(total_num_steps=100, warmup_min_ratio=0.2, "
                               "warmup_num_steps=10, lr=1e-3)")["lr"]
    assert cosine(0) == 0 and cosine(1) == pytest.approx(2e-4)
