"""mmengine: the presets' errors, and `schedlang import --format mmengine-config` end to end.

The presets' values are checked in tests/test_presets_conformance.py (mmengine_cases.py);
here each sample config is imported (read with ``ast``, never run), compiled and compared
with mmengine's own schedulers built from the same config by ``mmengine.config.Config``
and stepped like ``ParamSchedulerHook``, and the preset-style import is proven equal to
the core-style one.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from anchors.preset_cases import max_error

import schedlang
from frameworks.mmengine_cases import mmengine_values
from frameworks.real import real
from schedlang.formats import import_file

CONFIGS = Path(__file__).parent / "configs"

# name -> (epoch_length to bind, steps compared, {schedule: (param read, optimizer base key)})
SAMPLES = {
    "mmdet_retina_1x.py": (37, 500, {"lr": "lr"}),
    "mmpretrain_vit_cosine.py": (7, 760, {"lr": "lr"}),
    "mmseg_poly_iters.py": (None, 17000, {"lr": "lr"}),
    "mmpose_epoch_momentum.py": (None, 230, {"lr": "lr", "momentum": "momentum"}),
    "mmengine_bases/retinanet_2x.py": (37, 1000, {"lr": "lr"}),  # _base_: two files, dicts merged
    "mmengine_bases/adamw_cosine.py": (29, 760, {"lr": "lr"}),  # _base_ of a _base_, _delete_
}


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


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_import_matches_mmengine(name):
    path = CONFIGS / name
    epoch_length, n, schedules = SAMPLES[name]
    params = {"epoch_length": epoch_length} if epoch_length else {}
    presets = schedlang.compile(import_file(path, "mmengine-config"), params=params)
    core = schedlang.compile(import_file(path, "mmengine-config", style="core"), params=params)
    steps = range(n)
    for schedule in schedules:
        ours = presets[schedule].values(steps)
        anchor = _reference(path, schedule, epoch_length, steps)
        assert max_error(ours, anchor, 1e-3) <= 1e-12, schedule
        assert schedlang.equivalent(presets[schedule], core[schedule]), schedule


BAD = [
    ("_base_ = ['../_base_/schedules/schedule_1x.py']\nparam_scheduler = []\n", "1:11", "not found"),
    ("_base_ = 'cfg.py'\nparam_scheduler = []\n", "1:10", "inherits from itself"),
    ("_base_ = ['x.yaml']\n", "1:11", "path of a .py config"),
    ("from mmengine.config import read_base\nwith read_base():\n    from ._base_ import *\n", "2:1",
     "read_base"),
    ("lr = 0.1\noptim_wrapper = dict(optimizer=dict(lr=lr / 0))\n"
     "param_scheduler = dict(type='ExponentialLR', gamma=0.9, end=10)\n", "2:40", "ZeroDivisionError"),
    ("import math\noptim_wrapper = dict(optimizer=dict(lr=0.1))\n"
     "param_scheduler = dict(type='StepLR', step_size=math.floor(2.5), end=9)\n", "3:49",
     "the call math.floor(...) is not followed"),
    ("optim_wrapper = dict(optimizer=dict(lr=0.1))\n"
     "param_scheduler = dict(type='QuadraticWarmupLR', end=5, by_epoch=False)\n", "2:29",
     "not an mmengine parameter scheduler"),
    ("optim_wrapper = dict(optimizer=dict(lr=0.1))\n"
     "param_scheduler = dict(type='ReduceOnPlateauLR', monitor='loss')\n",
     "2:29", "not a function of the step"),
    ("optim_wrapper = dict(optimizer=dict(lr=0.1))\n"
     "param_scheduler = dict(type='LinearLR', start_factr=0.1, end=5, by_epoch=False)\n",
     "2:41", "start_factor"),
    ("optim_wrapper = dict(optimizer=dict(lr=0.1))\n"
     "train_cfg = dict(type='IterBasedTrainLoop', max_iters=100)\n"
     "param_scheduler = dict(type='LinearLR', end=5)\n", "3:29", "never steps"),
    ("optim_wrapper = dict(optimizer=dict(lr=0.1))\n"
     "param_scheduler = [dict(type='LinearLR', begin=0, end=50, by_epoch=False),\n"
     "    dict(type='CosineAnnealingLR', eta_min=1e-4, begin=10, end=100, by_epoch=False)]\n",
     "2:19", "overlaps"),
    ("param_scheduler = dict(type='LinearLR', end=5, by_epoch=False\n", "1:", "not valid Python"),
]


@pytest.mark.parametrize(("text", "where", "words"), BAD)
def test_import_errors_point_into_the_file(tmp_path, text, where, words):
    path = tmp_path / "cfg.py"
    path.write_text(text)
    with pytest.raises(schedlang.SchedlangError) as info:
        schedlang.compile(import_file(path))
    message = str(info.value)
    assert words in message
    assert f"cfg.py:{where}" in message and "^" in message


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


def test_base_files_merge_as_mmengine_merges(tmp_path):
    """A key two bases set is refused; a child's dict merges into the base's key by key;
    errors point into the file that holds the value."""
    (tmp_path / "a.py").write_text("optim_wrapper = dict(optimizer=dict(type='SGD', lr=0.1, momentum=0.9))\n"
                                   "train_cfg = dict(type='EpochBasedTrainLoop', max_epochs=10)\n")
    (tmp_path / "b.py").write_text("train_cfg = dict(max_epochs=20)\n")
    (tmp_path / "child.py").write_text("_base_ = ['a.py', 'b.py']\n"
                                       "param_scheduler = dict(type='ExponentialLR', gamma=0.9)\n")
    with pytest.raises(schedlang.SchedlangError) as info:
        import_file(tmp_path / "child.py")
    assert "set by two _base_ files" in str(info.value) and "b.py:1:13" in str(info.value)
    (tmp_path / "child.py").write_text("_base_ = 'a.py'\ntrain_cfg = dict(max_epochs=3)\n"
                                       "optim_wrapper = dict(optimizer=dict(lr=0.5))\n"
                                       "param_scheduler = dict(type='ExponentialLR', gamma=0.9)\n")
    lr = schedlang.compile(import_file(tmp_path / "child.py"))["lr"]
    assert lr.values([0, 1, 2, 3, 9]) == pytest.approx([0.5, 0.45, 0.405, 0.405, 0.405])  # ends at epoch 3
    (tmp_path / "a.py").write_text("optim_wrapper = dict(optimizer=dict(type=str('SGD'), lr=1))\n")
    with pytest.raises(schedlang.SchedlangError) as info:
        import_file(tmp_path / "child.py")
    assert "a.py:1:42: error: the call str(...) is not followed" in str(info.value)


def _mmpretrain_values(configs: list[dict], lr: float, weight_decay: float, steps: int, epoch_length: int):
    """lr and weight decay of mmpretrain's registry (mmengine's types plus its own
    CosineAnnealingWeightDecay), built and stepped like ParamSchedulerHook."""
    import warnings

    torch = real("torch")
    registry = real("mmpretrain.registry")
    real("mmpretrain.engine.schedulers.weight_decay_scheduler")  # registers CosineAnnealingWeightDecay
    optimizer = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1, dtype=torch.float64))], lr=lr,
                                  weight_decay=weight_decay)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        schedulers = [registry.PARAM_SCHEDULERS.build(dict(cfg), default_args=dict(
            optimizer=optimizer, epoch_length=epoch_length)) for cfg in configs]
    by_iter = [s for s in schedulers if not s.by_epoch]
    by_epoch = [s for s in schedulers if s.by_epoch]
    values = {"lr": [], "weight_decay": []}
    for i in range(steps):
        for key in values:
            values[key].append(optimizer.param_groups[0][key])
        for s in by_iter:
            s.step()
        if (i + 1) % epoch_length == 0:
            for s in by_epoch:
                s.step()
    return values


@pytest.mark.parametrize("weight_decay", [0.04, 0.0])
def test_mmpretrain_weight_decay_schedule_matches_mmpretrain(tmp_path, weight_decay):
    """SparK's CosineAnnealingWeightDecay (weight decay rising to eta_min) next to its lr schedule;
    an initial weight decay of 0 stays 0 (mmpretrain's own rule)."""
    path = CONFIGS / "python" / "mmpretrain_spark_wd.py"
    if weight_decay == 0.0:
        path = tmp_path / "wd0.py"
        path.write_text((CONFIGS / "python" / "mmpretrain_spark_wd.py").read_text()
                        .replace("weight_decay=0.04", "weight_decay=0.0"))
    config = real("mmengine.config").Config.fromfile(str(path))
    optimizer = config.optim_wrapper["optimizer"]
    epoch_length, steps = 6, 130
    anchor = _mmpretrain_values(config.param_scheduler, optimizer["lr"], optimizer["weight_decay"], steps,
                                epoch_length)
    program = schedlang.compile(import_file(path), params={"epoch_length": epoch_length})
    for name in ("lr", "weight_decay"):
        assert max_error(program[name].values(range(steps)), anchor[name], 1e-3) <= 1e-12, name
    assert (max(anchor["weight_decay"]) == 0.0) == (weight_decay == 0.0)


def test_weight_decay_family_is_the_generic_cosine_on_weight_decay():
    wd = schedlang.compile("mmengine.CosineAnnealingWeightDecay(weight_decay=0.05, eta_min=0.2, T_max=30, "
                           "begin=0, end=30, by_epoch=false)")["lr"]
    generic = schedlang.compile('mmengine.CosineAnnealingParamScheduler(param_name="weight_decay", '
                                "value=0.05, eta_min=0.2, T_max=30, begin=0, end=30, by_epoch=false)")["lr"]
    assert schedlang.equivalent(wd, generic)
    with pytest.raises(schedlang.SchedlangError, match="param_name"):
        schedlang.compile('mmengine.CosineAnnealingWeightDecay(weight_decay=0.05, param_name="lr")')
