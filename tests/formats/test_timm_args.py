"""timm ``train.py`` arguments (``timm-args``: ``args.yaml`` and command lines): import, the errors.

Each config of ours is imported in both styles, the two are proven equal, and the values equal
timm's own scheduler (``create_scheduler_v2`` from the arguments ``train.py`` would parse) at every
step; errors point into the file.
"""

from __future__ import annotations

import math
import types
from pathlib import Path

import pytest
from anchors.preset_cases import max_error
from frameworks import timm_cases as TC
from frameworks.real import real

import schedlang
from schedlang.formats import import_file
from schedlang.formats.timm_args import TRAIN_DEFAULTS

CONFIGS = Path(__file__).parents[1] / "frameworks" / "configs"


# file, the arguments train.py would parse from it, params, optimizer lr train.py ends with, epochs to run
TIMM = [
    ("timm_vit_args.yaml", dict(lr=0.001, min_lr=1e-5, warmup_lr=1e-6, cooldown_epochs=10, opt="adamw",
                                batch_size=256), {}, 0.001, 320),
    ("timm_resnet_step.sh", dict(lr=0.4, sched="step", epochs=90, decay_epochs=30, warmup_epochs=3,
                                 warmup_lr=0.01), {}, 0.4, 120),
    ("timm_convnext_updates_args.yaml", dict(batch_size=128, epochs=60, grad_accum_steps=2, lr_base=0.004,
                                             lr_base_size=4096, lr_cycle_limit=2, lr_cycle_mul=2.0,
                                             min_lr=1e-6, opt="adamw", sched_on_updates=True,
                                             warmup_epochs=2, warmup_lr=1e-6, warmup_prefix=True),
     {"updates_per_epoch": 7, "world_size": 8}, 0.004 * math.sqrt(128 * 2 * 8 / 4096), 200),
    ("timm_multistep.sh", dict(lr=0.1, sched="multistep", decay_milestones=[30, 60, 80], decay_rate=0.2,
                               epochs=100, warmup_epochs=1, warmup_lr=0.001), {}, 0.1, 120),
    ("timm_wsd_args.yaml", dict(batch_size=512, decay_epochs=0.2, epochs=100, lr=0.002, min_lr=1e-6,
                                opt="lamb", sched="wsd", warmup_epochs=5, warmup_lr=1e-6), {}, 0.002, 120),
    ("timm_poly_tanh.sh", dict(lr=0.048, sched="poly", decay_rate=2.0, lr_k_decay=0.5, epochs=50,
                               warmup_epochs=3, min_lr=1e-5), {}, 0.048, 70),
]


def timm_reference(arguments: dict, lr: float, steps, updates_per_epoch: int) -> list[float]:
    scheduler_module = real("timm.scheduler")
    cfg = types.SimpleNamespace(**{**TRAIN_DEFAULTS, **arguments})
    opt = TC.optimizer(lr)
    scheduler, _ = scheduler_module.create_scheduler_v2(opt, **scheduler_module.scheduler_kwargs(cfg),
                                                        updates_per_epoch=updates_per_epoch)
    out = [opt.param_groups[0]["lr"]]
    for t in steps[1:]:
        scheduler.step_update(t) if cfg.sched_on_updates else scheduler.step(t)
        out.append(opt.param_groups[0]["lr"])
    return out


@pytest.mark.parametrize("name, arguments, params, lr, horizon", TIMM, ids=[c[0] for c in TIMM])
def test_timm_args_import(name, arguments, params, lr, horizon):
    presets = import_file(CONFIGS / name, format="timm-args")
    core = import_file(CONFIGS / name, format="timm-args", style="core")
    assert "timm." in presets and "timm." not in core.split("schedule lr =")[1]
    a, b = schedlang.compile(presets, params=params)["lr"], schedlang.compile(core, params=params)["lr"]
    assert schedlang.equivalent(a, b)
    steps = list(range(horizon * params.get("updates_per_epoch", 1)))
    theirs = timm_reference(arguments, lr, steps, params.get("updates_per_epoch", 0))
    assert max_error(a.values(steps), theirs, 1e-3) <= 1e-12


def test_timm_guesses_args_yaml(tmp_path):
    (tmp_path / "args.yaml").write_text((CONFIGS / "timm_vit_args.yaml").read_text())
    assert "timm.CosineLRScheduler" in import_file(tmp_path / "args.yaml")


@pytest.mark.parametrize("text, message, where", [
    ("python train.py --lr 0.5 --epochs 100 --lr-noise 0.42 0.9", "noise", (1, 39)),
    ("sched: plateau\nlr: 0.1\n", "evaluation metric", (2 - 1, 8)),
    ("sched: cosin\n", "not a timm scheduler", (1, 8)),
    ("sched: wsd\nepochs: 10\nwarmup_epochs: 5\ndecay_epochs: 6\nlr: 0.1\n", "decay_epochs <=", (4, 15)),
    ("python train.py --sched step --decay-epochs 0 --lr 1", "positive", (1, 30)),
    ("lr: fast\n", "lr must be a number", (1, 5)),
])
def test_timm_args_errors_point_into_the_file(tmp_path, text, message, where):
    path = tmp_path / "cfg.txt"
    path.write_text(text)
    with pytest.raises(schedlang.SchedlangError) as info:
        import_file(path, format="timm-args")
    assert message in str(info.value)
    assert (info.value.line, info.value.column) == where, str(info.value)


@pytest.mark.parametrize("style", ["presets", "core"])
@pytest.mark.parametrize("text, where", [
    ("sched: cosine\nlr: 0.1\nepochs: 10\nlr_k_decay: 0\n", (4, 13)),
    ("python train.py --sched cosine --lr 0.1 --epochs 10 --lr-k-decay 0", (1, 53)),
])
def test_an_error_the_lowering_raises_lands_on_the_argument_it_came_from(tmp_path, style, text, where):
    """The preset's ``k_decay`` check is the lowering's, not the reader's: the call the import
    builds carries each argument's span on its value, so the error is at ``lr_k_decay`` (in both
    styles: core style lowers the preset first), not a quote of the generated line."""
    path = tmp_path / "cfg.txt"
    path.write_text(text)
    with pytest.raises(schedlang.SchedlangError) as info:
        import_file(path, format="timm-args", style=style)
    assert "k_decay must be positive" in info.value.message
    assert info.value.span.source.filename == str(path)
    assert (info.value.line, info.value.column) == where, str(info.value)


def test_cli_imports_and_verifies(tmp_path, capsys):
    from schedlang.cli import main

    config = CONFIGS / "timm_resnet_step.sh"
    a, b = tmp_path / "a.sched", tmp_path / "b.sched"
    assert main(["import", str(config), "--format", "timm-args", "-o", str(a)]) == 0
    assert main(["import", str(config), "--format", "timm-args", "--lower", "-o", str(b)]) == 0
    assert main(["verify", str(a), str(b)]) == 0
