"""``megatron.*`` presets against megatron-core's real ``OptimizerParamScheduler``, and its asserts
as schedlang diagnostics."""

from __future__ import annotations

import pytest
from anchors.cookbook import evaluate
from anchors.preset_cases import max_error

import schedlang

from .megatron_cases import MEGATRON


@pytest.mark.parametrize("case", MEGATRON, ids=lambda c: c.source[:90])
def test_matches_megatron(case):
    ours, anchor = evaluate(case)
    error = max_error(ours, anchor, case.floor)
    if error > case.tolerance:
        worst = max(case.compared, key=lambda i: abs(ours[i] - anchor[i]))
        pytest.fail(f"max error {error:.3g}; at t={worst}: schedlang {ours[worst]!r}, "
                    f"megatron {anchor[worst]!r}")


def test_every_style_is_covered():
    styles = {c.kwargs.get("lr_decay_style", "linear") for c in MEGATRON if "max_lr" in c.kwargs}
    wsd = {c.kwargs.get("lr_wsd_decay_style", "exponential") for c in MEGATRON
           if c.kwargs.get("lr_decay_style") == "WSD"}
    wd = {c.kwargs.get("wd_incr_style", "constant") for c in MEGATRON if "start_wd" in c.kwargs}
    assert styles == {"constant", "linear", "cosine", "inverse-square-root", "WSD"}
    assert wsd == {"exponential", "linear", "cosine", "minus_sqrt"}
    assert wd == {"constant", "linear", "cosine"}


def _lr(**kwargs):
    args = {"max_lr": 1e-3, "lr_decay_steps": 100, **kwargs}
    text = ", ".join(f"{k}={v}" for k, v in args.items())
    return schedlang.compile(f"megatron.OptimizerParamScheduler({text})")["lr"]


@pytest.mark.parametrize("kwargs, message", [
    ({"min_lr": -1e-5}, "min_lr must be >= 0"),
    ({"min_lr": 2e-3}, "max_lr (0.001) must be >= min_lr"),
    ({"init_lr": 2e-3}, "init_lr (0.002) must be <= max_lr"),
    ({"lr_decay_steps": 0}, "lr_decay_steps must be > 0"),
    ({"lr_warmup_steps": 100}, "must be smaller than lr_decay_steps"),
    ({"lr_warmup_steps": -1}, "lr_warmup_steps must be >= 0"),
    ({"lr_decay_style": '"WSD"'}, "needs wsd_decay_steps"),
    ({"lr_decay_style": '"WSD"', "wsd_decay_steps": -5}, "wsd_decay_steps must be >= 0"),
    ({"lr_decay_style": '"exponential"'}, "not a valid lr_decay_style"),
    ({"start_wd": 0.1, "end_wd": 0.01, "wd_incr_steps": 10, "wd_incr_style": '"linear"'},
     "only increases"),
    ({"start_wd": 0.1}, "give end_wd"),
    ({"use_checkpoint_opt_param_scheduler": "true", "override_opt_param_scheduler": "true"},
     "both override and use-checkpoint"),
])
def test_class_asserts_are_diagnostics(kwargs, message):
    with pytest.raises(schedlang.SchedlangError) as info:
        _lr(**kwargs)
    assert message in str(info.value)
    assert "^" in str(info.value)


@pytest.mark.parametrize("kwargs, message", [
    ("start_wd=-0.1, end_wd=0.1, wd_incr_steps=10, wd_incr_style=\"linear\"", "start_wd must be >= 0"),
    ("start_wd=0.0, end_wd=0.1, wd_incr_steps=10", 'constant" needs start_wd == end_wd'),
    ("start_wd=0.0, end_wd=0.1, wd_incr_steps=0, wd_incr_style=\"cosine\"", "wd_incr_steps must be > 0"),
])
def test_wd_asserts_are_diagnostics(kwargs, message):
    with pytest.raises(schedlang.SchedlangError) as info:
        schedlang.compile(f"megatron.OptimizerParamScheduler.get_wd({kwargs})")
    assert message in str(info.value)


def test_durations_and_past_the_end():
    assert _lr(lr_decay_style='"cosine"', lr_warmup_steps=10).duration == 100
    assert _lr(lr_decay_style='"inverse-square-root"', min_lr=1e-6).duration == 101
    assert _lr(lr_decay_steps=99.5).duration == 100
    constant = _lr(lr_decay_style='"constant"', lr_warmup_steps=10, min_lr=1e-5)
    assert constant(10_000) == pytest.approx(1e-3)


def test_symbolic_lengths_compile_and_bind():
    source = ("param total: int where total > 100\n"
              "schedule lr = megatron.OptimizerParamScheduler(max_lr=1e-3, min_lr=1e-5, "
              "lr_warmup_steps=0.01 * total, lr_decay_steps=total, lr_decay_style=\"cosine\")\n")
    lr = schedlang.compile(source, params={"total": 1000})["lr"]
    direct = _lr(max_lr=1e-3, min_lr=1e-5, lr_warmup_steps=10, lr_decay_steps=1000,
                 lr_decay_style='"cosine"')
    assert schedlang.equivalent(lr, direct)
