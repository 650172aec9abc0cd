"""Training scripts as users write them (``tests/frameworks/configs/scripts/``): the schedule
built inside ``main()`` (called under ``if __name__ == "__main__":``), from argparse defaults,
after star imports.  Each imports with the framework's values at every step, compared with
the framework's own code fed by what *Python* makes of the script (the test runs it, with a
command line that gives no option; schedlang never does), or is refused with the caret on
the reason.
"""

from __future__ import annotations

import runpy
import sys
import types
from pathlib import Path

import pytest
from anchors.preset_cases import max_error

import schedlang
from frameworks import keras_cases as KC
from frameworks.deepspeed_cases import deepspeed_values
from frameworks.real import real
from frameworks.test_mmengine import _reference
from schedlang.errors import SchedlangError
from schedlang.formats import guess_format, import_file

SCRIPTS = Path(__file__).parent / "configs" / "scripts"


def _main(path: Path, monkeypatch, options: dict | None = None, **stubs) -> object:
    """What the script's ``main()`` returns, run with ``options`` on its command line (none by
    default), ``stubs`` standing in for modules it imports."""
    argv = [str(path)]
    for flag, value in (options or {}).items():
        argv += [flag, value]
    monkeypatch.setattr(sys, "argv", argv)
    for name, module in stubs.items():
        monkeypatch.setitem(sys.modules, name, module)
    return runpy.run_path(str(path))["main"]()


def test_keras_schedule_built_in_main_from_argparse(monkeypatch):
    path = SCRIPTS / "keras_main.py"
    assert guess_format(path, path.read_text()) == "keras-json"
    ours = schedlang.compile(import_file(path))["lr"]
    real("keras.optimizers.schedules")
    made = _main(path, monkeypatch).optimizer._learning_rate  # the schedule Keras really holds
    config = made.get_config()
    config.pop("name")
    assert config["warmup_target"] == 3e-4 and config["warmup_steps"] == 97
    steps = sorted(set(range(0, 700, 3)) | {2000})
    assert max_error(ours.values(steps), KC.values(type(made).__name__, config, steps, float64=True),
                     1e-3) <= 1e-12


def _deepspeed_config(path: Path, monkeypatch, options: dict | None = None, **stubs) -> dict:
    """The config the script hands ``deepspeed.initialize`` (stopped there)."""
    deepspeed = real("deepspeed")
    seen = {}

    class Stop(Exception):
        pass

    def initialize(**kwargs):
        seen.update(kwargs["config"])
        raise Stop

    monkeypatch.setattr(deepspeed, "initialize", initialize)
    with pytest.raises(Stop):
        _main(path, monkeypatch, options, **stubs)
    return seen


def test_deepspeed_config_built_in_main_from_argparse(monkeypatch):
    path = SCRIPTS / "deepspeed_main.py"
    assert guess_format(path, path.read_text()) == "deepspeed-json"
    program = schedlang.compile(import_file(path))
    config = _deepspeed_config(path, monkeypatch)
    scheduler = config["scheduler"]
    assert scheduler["params"]["warmup_num_steps"] == 100
    lr = config["optimizer"]["params"]["lr"]
    expected = deepspeed_values(scheduler["type"], scheduler["params"], 2100, lr=lr)
    assert program["lr"].values(range(2100)) == pytest.approx(expected, rel=1e-12, abs=1e-18)


def test_hf_style_script_with_a_star_import(monkeypatch):
    """argparse groups, a default of None filled in after parse_args(), args.x = ..., a helper
    returning the config, and names from a star import that the schedule does not need."""
    path = SCRIPTS / "hf_no_trainer.py"
    assert guess_format(path, path.read_text()) == "deepspeed-json"
    program = schedlang.compile(import_file(path))
    accelerate = types.SimpleNamespace(Accelerator=lambda: types.SimpleNamespace(print=lambda *a: None))
    config = _main(path, monkeypatch, accelerate=accelerate, my_project=types.ModuleType("my_project"),
                   **{"my_project.constants": types.ModuleType("my_project.constants")})
    scheduler = config["scheduler"]
    assert scheduler["params"] == {"warmup_min_lr": 0, "warmup_max_lr": 5e-5, "warmup_num_steps": 300,
                                   "total_num_steps": 3000}
    real("deepspeed")
    expected = deepspeed_values(scheduler["type"], scheduler["params"], 3200, lr=1.0)
    assert program["lr"].values(range(3200)) == pytest.approx(expected, rel=1e-12, abs=1e-18)


def test_keras_schedule_from_a_dataclass_config(monkeypatch):
    """``@dataclass(frozen=True)`` with literal defaults, one given where the instance is built, a
    method and a ``default_factory`` field the schedule does not read; the schedule made in a
    helper from the fields."""
    path = SCRIPTS / "keras_dataclass.py"
    assert guess_format(path, path.read_text()) == "keras-json"
    ours = schedlang.compile(import_file(path))["lr"]
    real("keras.optimizers.schedules")
    made = _main(path, monkeypatch)._learning_rate  # the optimizer main() returns holds the schedule
    config = made.get_config()
    config.pop("name")
    assert config["boundaries"] == [480, 960]
    steps = sorted(set(range(0, 1200, 7)) | {479, 480, 481, 959, 960, 961})
    assert max_error(ours.values(steps), KC.values(type(made).__name__, config, steps, float64=True),
                     1e-3) <= 1e-12


def test_deepspeed_config_from_a_simple_namespace(monkeypatch):
    """``SimpleNamespace`` settings changed after they are built, the dict returned by a helper
    called inside ``deepspeed.initialize(config=ds_config(HP))``."""
    path = SCRIPTS / "deepspeed_namespace.py"
    program = schedlang.compile(import_file(path))
    config = _deepspeed_config(path, monkeypatch)
    scheduler = config["scheduler"]
    assert scheduler["params"]["total_num_steps"] == 3500
    expected = deepspeed_values(scheduler["type"], scheduler["params"], 3600,
                                lr=config["optimizer"]["params"]["lr"])
    assert program["lr"].values(range(3600)) == pytest.approx(expected, rel=1e-12, abs=1e-18)


DATACLASS = """from dataclasses import dataclass, field
import keras

@dataclass{decorator}
class Config:
    lr: float = 0.1
    steps: int = 100
{body}
cfg = Config({args})
{after}
schedule = keras.optimizers.schedules.ExponentialDecay({lr}, cfg.steps, 0.5)
"""


@pytest.mark.parametrize(("parts", "where", "words"), [
    ({"args": "lr=0.2, lr=0.3"}, None, "given twice"),
    ({"args": "0.2, 10, 3"}, (9, 7), "takes 2 positional arguments but 3 were given"),
    ({"args": "rate=0.2"}, (9, 7), "unexpected keyword argument 'rate'"),
    ({"body": "    decay: float\n"}, (8, 5), "non-default argument 'decay' follows default argument"),
    ({"decorator": "(frozen=True)", "after": "cfg.lr = 0.5"}, (10, 1), "FrozenInstanceError"),
    ({"body": "    warm: list = field(default_factory=list)\n", "lr": "cfg.warm"},
     (8, 18), "default_factory is not followed"),
    ({"body": "    def __post_init__(self):\n        self.lr = 1.0\n"}, (5, 1),
     "this class definition is not followed"),
    ({"body": "    extra: list = []\n"}, (8, 19), "mutable default list"),
    ({"args": "", "after": "print(cfg.momentum)"}, (10, 7), "has no attribute 'momentum'"),
])
def test_dataclass_configs_refused_as_python_refuses_them(parts, where, words):
    blank = {"decorator": "", "body": "", "args": "", "after": "", "lr": "cfg.lr"}
    text = DATACLASS.format(**(blank | parts))
    with pytest.raises(SchedlangError) as caught:
        _import_text(text)
    assert words in caught.value.message, caught.value.message
    if where is not None:
        assert (caught.value.span.line, caught.value.span.column) == where, str(caught.value)


def _import_text(text: str) -> str:
    from schedlang.formats.keras_json import FORMAT

    return FORMAT.reader(text, "train.py")


def test_mmengine_config_after_a_star_import(tmp_path):
    """The star import binds no name the schedule reads.  mmengine refuses ``from m import *``
    outside ``read_base()``, so its reference reads the file without that line."""
    path = SCRIPTS / "mmengine_star_names.py"
    assert guess_format(path, path.read_text()) == "mmengine-config"
    program = schedlang.compile(import_file(path), params={"epoch_length": 50})
    plain = tmp_path / "plain.py"
    plain.write_text(path.read_text().replace("from math import *  # noqa: F403\n", ""))
    anchor = _reference(plain, "lr", 50, range(700))
    assert max_error(program["lr"].values(range(700)), anchor, 1e-3) <= 1e-12


@pytest.mark.parametrize(("name", "where", "words"), [
    ("mmengine_star_unknown.py", (5, 9), "'e' is unknown"),
    ("mmengine_star.py", (4, 1), "read_base()"),
    ("deepspeed_required.py", (7, 5), "--lr is not known here: it is required"),
    ("keras_uncalled.py", (6, 16), "make_optimizer(), which this file never calls"),
    ("timm_style.py", (13, 12), "create_scheduler_v2()"),
])
def test_refused_with_the_caret_on_the_reason(name, where, words):
    path = SCRIPTS / name
    with pytest.raises(SchedlangError) as caught:
        import_file(path)
    error = caught.value
    assert words in error.message
    assert (error.span.line, error.span.column) == where
    assert error.hint
