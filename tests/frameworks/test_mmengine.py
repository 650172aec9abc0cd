"""mmengine presets: their errors, the families' agreement and the long-run drift.

The presets' values are checked in tests/test_presets_conformance.py (mmengine_cases.py);
``schedlang import --format mmengine-config`` is tested in tests/formats/test_mmengine_config.py,
against mmengine's own schedulers built by ``_reference`` below (which tests/frameworks/
test_training_scripts.py uses too).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from anchors.preset_cases import max_error

import schedlang
from frameworks.mmengine_cases import mmengine_values
from frameworks.real import real


def _reference(path: Path, schedule: str, epoch_length, steps) -> list[float]:
    """mmengine's Config reads the file (it runs it: this is the test's reference only)."""
    config = real("mmengine.config").Config.fromfile(str(path))
    optimizer = config.optim_wrapper["optimizer"]
    base = optimizer[schedule] if schedule in optimizer else optimizer["betas"][0]
    loop = config.train_cfg
    schedulers = []
    for cfg in config.param_scheduler:
        cfg = dict(cfg)
        if not isinstance(cfg["type"], str):
            cfg["type"] = cfg["type"].__name__
        if ("Momentum" in cfg["type"]) != (schedule == "momentum"):
            continue
        if "end" not in cfg:
            cfg["end"] = loop["max_epochs"] if cfg.get("by_epoch", True) else loop["max_iters"]
        schedulers.append(cfg)
    return mmengine_values(schedulers, base, steps, epoch_length, schedule)


PRESET_ERRORS = [
    ("mmengine.LinearLR(start_factor=1.5)", "between 0 and 1"),
    ("mmengine.LinearLR(start_factor=0, end=10)", "divides by zero"),
    ("mmengine.ConstantLR(begin=5, end=5)", "end should be larger than begin"),
    ("mmengine.CosineAnnealingLR(eta_min=0.1, eta_min_ratio=0.1)", "not both"),
    ("mmengine.CosineRestartLR(periods=[10, 20], restart_weights=[1])", "same length"),
    ("mmengine.CosineRestartLR(periods=[10])", "eta_min"),
    ("mmengine.OneCycleLR(eta_max=0.1, total_steps=10, end=20)", "raises ValueError"),
    ('mmengine.OneCycleParamScheduler(param_name="momentum", eta_max=0.1, end=20)', "OneCycle"),
    ("mmengine.LinearLR(convert_to_iter_based=true, end=5)", "epoch_length"),
    ("mmengine.ExponentialLR(end=5)", "gamma"),
    ("mmengine.param_scheduler([mmengine.LinearLR(end=5, by_epoch=false), mmengine.StepLR(step_size=2)])",
     "epoch_length"),
    ("mmengine.param_scheduler([mmengine.LinearLR(lr=0.1, end=5), mmengine.StepLR(lr=0.2, step_size=2)])",
     "different initial values"),
    ("mmengine.ReduceOnPlateauLR()", "metric"),
]


@pytest.mark.parametrize(("source", "words"), PRESET_ERRORS)
def test_preset_errors(source, words):
    with pytest.raises(schedlang.SchedlangError) as info:
        schedlang.compile(source)
    assert words in str(info.value) and "^" in str(info.value)


def test_every_family_agrees_with_lr():
    """Momentum and generic ParamScheduler twins are the LR classes' math on another value."""
    for stem, kwargs in [("Linear", "start_factor=0.5, end=30"), ("Constant", "factor=0.5, end=30"),
                         ("Exponential", "gamma=0.9"), ("Step",
     "step_size=7"), ("MultiStep", "milestones=[3, 9]"),
                         ("Poly", "eta_min=0.1, end=30"), ("CosineAnnealing", "eta_min=0.1, end=30"),
                         ("CosineRestart", "periods=[10, 20], restart_weights=[1, 0.5], eta_min=0.1")]:
        lr = schedlang.compile(f"mmengine.{stem}LR(lr=0.9, {kwargs})")["lr"]
        mom = schedlang.compile(f"mmengine.{stem}Momentum(momentum=0.9, {kwargs})")["lr"]
        gen = schedlang.compile(f'mmengine.{stem}ParamScheduler(param_name="weight_decay", value=0.9, '
                                f"{kwargs})")["lr"]
        assert schedlang.equivalent(lr, mom) and schedlang.equivalent(lr, gen), stem


def test_long_run_drift():
    """mmengine multiplies step by step; over 20000 steps the closed form stays within 1e-11."""
    source = ("mmengine.param_scheduler([mmengine.LinearLR(lr=0.1, start_factor=0.001, end=20000, "
              "by_epoch=false), mmengine.ExponentialLR(gamma=0.9999, end=20000, by_epoch=false)])")
    steps = range(0, 20000, 1)
    ours = schedlang.compile(source)["lr"].values(steps)
    anchor = mmengine_values([dict(type="LinearLR", start_factor=0.001, end=20000, by_epoch=False),
                              dict(type="ExponentialLR", gamma=0.9999, end=20000, by_epoch=False)],
                             0.1, steps, 1)
    assert max_error(ours, anchor, 1e-3) <= 1e-11


def test_weight_decay_family_is_the_generic_cosine_on_weight_decay():
    wd = schedlang.compile("mmengine.CosineAnnealingWeightDecay(weight_decay=0.05, eta_min=0.2, T_max=30, "
                           "begin=0, end=30, by_epoch=false)")["lr"]
    generic = schedlang.compile('mmengine.CosineAnnealingParamScheduler(param_name="weight_decay", '
                                "value=0.05, eta_min=0.2, T_max=30, begin=0, end=30, by_epoch=false)")["lr"]
    assert schedlang.equivalent(wd, generic)
    with pytest.raises(schedlang.SchedlangError, match="param_name"):
        schedlang.compile('mmengine.CosineAnnealingWeightDecay(weight_decay=0.05, param_name="lr")')
