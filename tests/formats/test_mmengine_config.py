"""OpenMMLab configs (``mmengine-config``): import, ``_base_`` files, the refusals.

Each sample config is imported (read with ``ast``, never run), compiled and compared with
mmengine's own schedulers built from the same config by ``mmengine.config.Config`` and stepped like
``ParamSchedulerHook`` (``_reference``, in tests/frameworks/test_mmengine.py), and the preset-style
import is proven equal to the core-style one; mmpretrain's weight-decay schedule against
mmpretrain's registry.

Python configuration files read with Python's meaning (``formats/common/pyconfig/literal.py``): configs
written with statements are compared at every step with what *Python* makes of the same file
(``Config.fromfile`` runs it).  Then the hostile cases: each refusal is a located error at the
statement, never a traceback, a hang or a silently dropped statement, and nothing in the file runs.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from anchors.preset_cases import max_error
from frameworks.real import real
from frameworks.test_mmengine import _reference

import schedlang
from schedlang.formats import guess_format, import_file

CONFIGS = Path(__file__).parents[1] / "frameworks" / "configs"
PYTHON = CONFIGS / "python"


# name -> (epoch_length to bind, steps compared, {schedule: (param read, optimizer base key)})
SAMPLES = {
    "mmdet_retina_1x.py": (37, 500, {"lr": "lr"}),
    "mmpretrain_vit_cosine.py": (7, 760, {"lr": "lr"}),
    "mmseg_poly_iters.py": (None, 17000, {"lr": "lr"}),
    "mmpose_epoch_momentum.py": (None, 230, {"lr": "lr", "momentum": "momentum"}),
    "mmengine_bases/retinanet_2x.py": (37, 1000, {"lr": "lr"}),  # _base_: two files, dicts merged
    "mmengine_bases/adamw_cosine.py": (29, 760, {"lr": "lr"}),  # _base_ of a _base_, _delete_
}


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


AT_THE_VALUE = [
    ("param_scheduler = dict(type='LinearLR', start_factor=0, end=5, by_epoch=False)\n", "start_factor=",
     "divides by zero"),
    ("param_scheduler = dict(type='LinearLR', begin=10, end=5, by_epoch=False)\n", "end=",
     "end should be larger than begin"),
    ("param_scheduler = dict(type='PolyLR', power=True, by_epoch=False)\n", "power=", "expected a number"),
    ("param_scheduler = dict(type='CosineRestartLR', periods=[10, -20], restart_weights=[1, 1], eta_min=0, "
     "by_epoch=False)\n", "periods=[10, ", "periods must be positive"),
    ("param_scheduler = dict(type='LinearLR', lr=0.5, end=5, by_epoch=False)\n", "lr=",
     "keyword 'lr' is given twice"),
]


@pytest.mark.parametrize(("line", "after", "words"), AT_THE_VALUE, ids=range(len(AT_THE_VALUE)))
def test_what_the_presets_refuse_is_at_the_value(tmp_path, line, after, words):
    """Each scheduler is built as nodes at the config's values (issue 40), so what lowering refuses
    is at the value that caused it, not at the whole ``param_scheduler``."""
    path = tmp_path / "cfg.py"
    path.write_text("optim_wrapper = dict(optimizer=dict(type='SGD', lr=0.1))\n"
                    "train_cfg = dict(type='IterBasedTrainLoop', max_iters=100)\n" + line)
    with pytest.raises(schedlang.SchedlangError) as info:
        import_file(path, "mmengine-config")
    assert words in info.value.message
    assert (info.value.line, info.value.column) == (3, line.index(after) + len(after) + 1)


def test_the_runs_length_is_refused_at_the_loops_key(tmp_path):
    path = tmp_path / "cfg.py"
    loop = "train_cfg = dict(type='IterBasedTrainLoop', max_iters=2.5)\n"
    path.write_text("optim_wrapper = dict(optimizer=dict(type='SGD', lr=0.1))\n" + loop
                    + "param_scheduler = dict(type='LinearLR', end=2, by_epoch=False)\n")
    with pytest.raises(schedlang.SchedlangError, match="whole number of steps") as info:
        import_file(path, "mmengine-config")
    assert (info.value.line, info.value.column) == (2, loop.index("max_iters") + 1)


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


# -- configs written with Python statements (formats/common/pyconfig/literal.py) -------------------


@pytest.mark.parametrize(("name", "epoch_length", "steps"), [
    ("mmengine_statements.py", None, 260),   # reassignment, x[k] = v, .append, .update, *=, if, deepcopy, del
    ("mmpretrain_arith.py", 9, 300),         # lr=5e-4 * 1024 / 512, eta_min=1e-5 * 3
])
def test_mmengine_statements_follow_python(name, epoch_length, steps):
    path = PYTHON / name
    assert guess_format(path, path.read_text()) == "mmengine-config"
    params = {"epoch_length": epoch_length} if epoch_length else {}
    program = schedlang.compile(import_file(path), params=params)
    anchor = _reference(path, "lr", epoch_length, range(steps))
    assert max_error(program["lr"].values(range(steps)), anchor, 1e-3) <= 1e-12


def test_arithmetic_is_the_float_python_computes(tmp_path):
    """``0.1 * 3`` is 0.30000000000000004 in Python, and so in the import (written as repr)."""
    path = tmp_path / "cfg.py"
    path.write_text("optim_wrapper = dict(optimizer=dict(type='SGD', lr=0.1 * 3))\n"
                    "param_scheduler = dict(type='ExponentialLR', gamma=1 - 1 / 10, end=10 // 3 * 3)\n")
    text = import_file(path)
    assert "lr=0.30000000000000004" in text and "gamma=0.9" in text and "end=9" in text
    config = real("mmengine.config").Config.fromfile(str(path))
    assert config.optim_wrapper["optimizer"]["lr"] == 0.30000000000000004


HEAD = "optim_wrapper = dict(optimizer=dict(type='SGD', lr=0.1))\n"


TAIL = "param_scheduler = dict(type='ExponentialLR', gamma=0.9, end=10, by_epoch=False)\n" \
       "train_cfg = dict(type='IterBasedTrainLoop', max_iters=10)\n"


REFUSED = [
    ("LR = LR\n" + HEAD + TAIL, "1:6", "'LR' is used before it is assigned"),
    ("optim_wrapper = dict(optimizer=dict(lr=LR))\nLR = 0.1\n" + TAIL, "1:40", "used before it is assigned"),
    ("x = " + "-" * 100_000 + "1\n" + HEAD + TAIL, "1:", "nests more than 100 levels"),
    ("x = " + "+".join(["1"] * 100_000) + "\n" + HEAD + TAIL, "1:", "nests more than 100 levels"),
    ("x = " + "(" * 150 + "1" + ")" * 150 + "\n", "1:", "nests more than 100 levels"),
    (HEAD + TAIL + "for s in [param_scheduler]:\n    s['gamma'] = 0.5\n", "4:1",
     "and it may change 'param_scheduler'"),
    (HEAD + TAIL + "def tweak():\n    param_scheduler['gamma'] = 0.5\n", "4:1", "may change it when it runs"),
    (HEAD + TAIL + "import os\nif os.environ.get('FAST'):\n    param_scheduler = []\n", "5:1",
     "this if is not followed"),
    (HEAD + TAIL + "exec('param_scheduler = []')\n", "4:1", "'exec' can change any name"),
    (HEAD + TAIL + "optim_wrapper['optimizer'].lr = 0.5\n", "4:1", "it assigns an attribute"),
    (HEAD + TAIL + "param_scheduler.clear()\n", "4:1", ".clear() on a dict is not followed"),
    (HEAD + TAIL + "param_scheduler['gamma'] = 0.9 / 0\n", "4:28", "ZeroDivisionError"),
    (HEAD + TAIL + "param_scheduler['end'] = 10 ** 10 ** 10\n", "4:26", "more than 400 digits"),
    (HEAD + TAIL + "a = [1]\n" + "a = a + a\n" * 40, "20:5", "more than 100000 values"),
    (HEAD + TAIL + "a = []\na.append(a)\n", "5:1", "contains itself"),
    (HEAD + "param_scheduler = dict(type='ExponentialLR', gamma=float(input()), end=10, by_epoch=False)\n",
     "2:58", "the call input(...) is not followed"),
    ("r = []\nc = r\n" + "c.append([])\nc = c[-1]\n" * 150 + HEAD
     + "param_scheduler = dict(type='ExponentialLR', gamma=0.9, end=10, by_epoch=False, x=r)\n", "304:19",
     "nests more than 100 levels"),
    ("big = [" + ", ".join(["0"] * 5000) + "]\nx = {}\n" + "x['k'] = big\n" * 100 + HEAD + TAIL, "",
     "more than 100000 values"),
    (HEAD + "param_scheduler = dict(type='ExponentialLR', gamma='%s' % 0.9, end=10, by_epoch=False)\n",
     "2:52", "% on str and float is not followed"),
    (HEAD + TAIL + "import math\nx = [math.floor(g := 2)]\nparam_scheduler['gamma'] = g\n", "5:1",
     "a part of it is not followed"),
]


@pytest.mark.parametrize(("text", "where", "words"), REFUSED, ids=range(len(REFUSED)))
def test_refused_at_the_statement(tmp_path, text, where, words):
    path = tmp_path / "cfg.py"
    path.write_text(text)
    start = time.monotonic()
    with pytest.raises(schedlang.SchedlangError) as info:
        schedlang.compile(import_file(path, "mmengine-config"))
    assert time.monotonic() - start < 5
    message = str(info.value)
    assert words in message, message
    assert f"cfg.py:{where}" in message and "^" in message, message  # "" : any line


def test_statements_that_cannot_change_the_config_are_allowed(tmp_path):
    """A function that only reads other names, a print, a library call given the config, a
    module-level ``global``, a value not followed that nothing reads."""
    path = tmp_path / "cfg.py"
    path.write_text(HEAD + TAIL + "import mmengine\nprint(param_scheduler)\nglobal train_cfg\n"
                    "def build():\n    return dict(model=1)\nmmengine.dump(train_cfg, 'x.json')\n"
                    "model = dict(backbone=build(), pipeline=[x for x in range(3)])\n")
    assert "gamma=0.9" in import_file(path)


def test_nothing_in_the_file_runs(tmp_path):
    """Calls that would write a file or run a command are not followed: nothing happens."""
    marker = tmp_path / "ran"
    path = tmp_path / "cfg.py"
    path.write_text(f"open({str(marker)!r}, 'w').write('ran')\n"
                    f"import pathlib\npathlib.Path({str(marker)!r}).touch()\n" + HEAD + TAIL)
    assert "gamma=0.9" in import_file(path)
    assert not marker.exists()
    path.write_text(HEAD + TAIL + "__import__('os').system('touch ran')\n")
    with pytest.raises(schedlang.SchedlangError, match="'__import__' can change any name"):
        import_file(path)


def test_cli_refuses_a_hostile_file_with_status_2(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "cfg.py"
    path.write_text("x = " + "-" * 100_000 + "1\n")
    done = subprocess.run([sys.executable, "-m", "schedlang", "import", str(path)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "cfg.py:1:" in done.stderr and "nests more than 100 levels" in done.stderr
