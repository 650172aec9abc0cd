"""Python configuration files read with Python's meaning (``formats/python_literal.py``).

Each config of ours is imported (followed over ``ast``, never run) and compared at every step
with the framework's own scheduler built from what *Python* makes of the same file: mmengine's
``Config.fromfile`` (which runs it), and for DeepSpeed and Keras the test runs the file itself
(the test's reference only; schedlang never does).  Then the hostile cases: each refusal is a
located error at the statement, never a traceback, a hang or a silently dropped statement.
"""

from __future__ import annotations

import runpy
import time
from pathlib import Path

import pytest
from anchors.preset_cases import max_error

import schedlang
from frameworks import keras_cases as KC
from frameworks.deepspeed_cases import deepspeed_values
from frameworks.real import real
from frameworks.test_mmengine import _reference
from schedlang.formats import guess_format, import_file

CONFIGS = Path(__file__).parent / "configs" / "python"


@pytest.mark.parametrize(("name", "epoch_length", "steps"), [
    ("mmengine_statements.py", None, 260),   # reassignment, x[k] = v, .append, .update, *=, if, deepcopy, del
    ("mmpretrain_arith.py", 9, 300),         # lr=5e-4 * 1024 / 512, eta_min=1e-5 * 3
])
def test_mmengine_statements_follow_python(name, epoch_length, steps):
    path = CONFIGS / name
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


def test_deepspeed_dict_in_a_python_file():
    path = CONFIGS / "deepspeed_dict.py"
    assert guess_format(path, path.read_text()) == "deepspeed-json"
    program = schedlang.compile(import_file(path))
    scheduler = runpy.run_path(str(path))["config"]["scheduler"]  # Python's own reading of the file
    assert scheduler["params"]["warmup_max_lr"] == 3e-4 and scheduler["params"]["warmup_num_steps"] == 100
    expected = deepspeed_values(scheduler["type"], scheduler["params"], 2100, lr=6e-4)
    assert program["lr"].values(range(2100)) == pytest.approx(expected, rel=1e-12, abs=1e-18)


@pytest.mark.parametrize("name", ["keras_script.py", "keras_inline.py"])
def test_keras_schedule_written_as_a_call(name):
    path = CONFIGS / name
    assert guess_format(path, path.read_text()) == "keras-json"
    ours = schedlang.compile(import_file(path))["lr"]
    real("keras.optimizers.schedules")
    made = runpy.run_path(str(path))["model"].optimizer._learning_rate  # the schedule Keras really holds
    config = made.get_config()
    config.pop("name")
    steps = sorted(set(range(0, 1200, 7)) | {4000})
    assert max_error(ours.values(steps), KC.values(type(made).__name__, config, steps, float64=True),
                     1e-3) <= 1e-12


def test_tf_keras_spelling_reads_the_same():
    """``tf.keras.optimizers.schedules.X`` (TensorFlow is not installed: the text is compared)."""
    ours = import_file(CONFIGS / "tf_keras_script.py", format="keras-json")
    theirs = import_file(CONFIGS / "keras_script.py", format="keras-json")
    assert ours.splitlines()[1:] == theirs.splitlines()[1:]


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


def test_keras_refusals(tmp_path):
    path = tmp_path / "train.py"
    for text, words in [
        ("import keras\nwith strategy.scope():\n    s = keras.optimizers.schedules.ExponentialDecay(0.1, 10, "
         "0.9)\n", "built inside a with block"),
        ("import keras, os\ns = keras.optimizers.schedules.ExponentialDecay(float(os.environ['LR']), 10, "
         "0.9)\n", "not followed"),
        ("import keras\ns = keras.optimizers.schedules.ExponentialDecay(0.1, 10, 0.9)\n"
         "s.initial_learning_rate = 0.5\n", "it assigns an attribute"),
        ("import keras\na = keras.optimizers.schedules.CosineDecay(0.1, 10)\n"
         "b = keras.optimizers.schedules.CosineDecay(0.2, 10)\n", "builds 2 Keras schedules"),
        ("import keras\nmodel = keras.Sequential()\n", "no Keras LearningRateSchedule"),
    ]:
        path.write_text(text)
        with pytest.raises(schedlang.SchedlangError, match=words):
            import_file(path, "keras-json")


def test_keras_positional_order_is_keras_own():
    import inspect

    from schedlang.formats.keras_json import POSITIONAL

    schedules = real("keras.optimizers.schedules")
    for name, order in POSITIONAL.items():
        assert tuple(inspect.signature(getattr(schedules, name)).parameters) == order, name


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
