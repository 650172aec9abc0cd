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


# -- what Python never reaches is never imported (issue 39 item 3) --------------------------------

SCHEDULE = "import keras\nschedule = keras.optimizers.schedules.CosineDecay({lr}, 1000)\n"


def _python(tmp_path, text: str, monkeypatch):
    """What Python makes of ``text`` run as a script with no option (a stub ``keras`` records
    the schedule it builds): ``("built", its first argument)``, or the exception the script
    ends with before building it (``(exception, first argument)`` if it was built first)."""
    built = []
    keras = types.ModuleType("keras")
    keras.optimizers = types.SimpleNamespace(schedules=types.SimpleNamespace(
        CosineDecay=lambda *args, **kwargs: built.append(args[0])))
    monkeypatch.setitem(sys.modules, "keras", keras)
    monkeypatch.setattr(sys, "argv", ["train.py"])
    path = tmp_path / "train.py"
    path.write_text(text)
    try:
        runpy.run_path(str(path), run_name="__main__")
    except BaseException as exc:  # noqa: BLE001 - SystemExit and AssertionError are the point
        return (type(exc), built[0]) if built else type(exc)
    return "built", built[0]


@pytest.mark.parametrize(("before", "where", "words", "python"), [
    ("import sys\nsys.exit(0)\n", (2, 1), "sys.exit() stops it", SystemExit),
    ("raise SystemExit('needs a GPU')\n", (1, 1), "this raise stops it", SystemExit),
    ("assert False, 'unreachable'\n", (1, 1), "this assert fails (AssertionError)", AssertionError),
    ("N = 3\nassert N > 4\n", (2, 1), "this assert fails", AssertionError),
    ("import sys\nif __name__ == '__main__':\n    sys.exit(0)\n", (3, 5), "sys.exit() stops it",
     SystemExit),
    ("import sys\ndef main():\n    quit()\nmain()\n", (3, 5), "quit() stops it", SystemExit),
    ("return\n", (1, 1), "'return' outside function", SyntaxError),
    # decided by what Python cannot know here: refused at the statement, not imported past it
    ("import os, sys\nif os.environ.get('SKIP_TRAINING'):\n    sys.exit(0)\n", (2, 1),
     "it may end the script (sys.exit() at line 3), so what follows it is not known", None),
    ("import torch\nassert torch.cuda.is_available()\n", (2, 1),
     "it may end the script (assert at line 2)", None),
    ("import json\ntry:\n    cfg = json.load(open('c.json'))\nexcept OSError:\n    raise\n", (2, 1),
     "it may end the script (raise at line 5)", None),
])
def test_a_schedule_after_the_script_ends_is_refused_where_it_ends(tmp_path, monkeypatch, before, where,
                                                                    words, python):
    text = before + SCHEDULE.format(lr=0.1)
    if python is not None:
        assert _python(tmp_path, text, monkeypatch) is python
    with pytest.raises(SchedlangError) as caught:
        _import_text(text)
    error = caught.value
    assert words in error.message, error.message
    assert (error.span.line, error.span.column) == where, str(error)


@pytest.mark.parametrize("before", [
    "import sys\nDEBUG = False\nif DEBUG:\n    sys.exit(0)\n",  # decided: not taken
    "N = 5\nassert N > 4, 'too few'\n",
    "def check(n):\n    if n < 0:\n        raise ValueError(n)\n    return n\nN = check(3)\n",
])
def test_an_exit_python_does_not_take_changes_nothing(tmp_path, monkeypatch, before):
    text = before + SCHEDULE.format(lr=0.1)
    assert _python(tmp_path, text, monkeypatch) == ("built", 0.1)
    assert "keras.CosineDecay(initial_learning_rate=0.1, decay_steps=1000)" in _import_text(text)


def test_a_schedule_built_in_the_exit_s_argument_is_built(tmp_path, monkeypatch):
    text = ("import sys\nimport keras\ndef main():\n"
            "    return keras.optimizers.schedules.CosineDecay(0.1, 1000)\n"
            "if __name__ == '__main__':\n    sys.exit(main())\n")
    assert _python(tmp_path, text, monkeypatch) == (SystemExit, 0.1)  # it exits after building it
    assert "keras.CosineDecay(initial_learning_rate=0.1" in _import_text(text)


ARGPARSE = """import argparse
parser = argparse.ArgumentParser({parser})
parser.add_argument("--lr", {first})
parser.add_argument("--lr", {second})
args = parser.parse_args()
""" + SCHEDULE.format(lr="args.lr")


def test_an_option_added_twice_is_argparse_s_error_at_the_second(tmp_path, monkeypatch):
    """It imported as a second parameter, ``args_lr_2``; argparse raises ArgumentError there."""
    import argparse

    text = ARGPARSE.format(parser="", first="type=float, default=1e-3", second="type=float, default=2e-3")
    assert _python(tmp_path, text, monkeypatch) is argparse.ArgumentError
    with pytest.raises(SchedlangError, match="argument --lr: conflicting option string: --lr") as caught:
        _import_text(text)
    assert (caught.value.span.line, caught.value.span.column) == (4, 1)
    resolved = ARGPARSE.format(parser='conflict_handler="resolve"', first="type=float, default=1e-3",
                               second="type=float, default=2e-3")
    assert _python(tmp_path, resolved, monkeypatch) == ("built", 2e-3)
    assert "param args_lr: float = 0.002  # --lr" in _import_text(resolved)  # the one --lr there is


def test_a_string_default_without_type_stays_a_string(tmp_path, monkeypatch):
    """argparse passes a string default through ``type=`` only: ``default="1e-3"`` alone gives
    Keras the string (it was imported as 0.001)."""
    text = ("import argparse\nparser = argparse.ArgumentParser()\n"
            "parser.add_argument('--lr', default='1e-3')\nargs = parser.parse_args()\n"
            + SCHEDULE.format(lr="args.lr"))
    assert _python(tmp_path, text, monkeypatch) == ("built", "1e-3")
    with pytest.raises(SchedlangError, match="must be a number, not the string '1e-3'") as caught:
        _import_text(text)
    assert (caught.value.span.line, caught.value.span.column) == (6, 51)
    assert "type=float" in caught.value.hint
    typed = text.replace("default='1e-3'", "type=float, default='1e-3'")
    assert _python(tmp_path, typed, monkeypatch) == ("built", 1e-3)
    assert "param args_lr: float = 0.001" in _import_text(typed)


# -- HF Trainer scripts (issue 41 item 1) ---------------------------------------------------------


def _hf_trained(path: Path, monkeypatch, options: dict | None = None):
    """The ``TrainingArguments`` (transformers' real class) and the optimizer the script's
    ``Trainer(...)`` is given, run with ``options`` (the models and datasets stubbed)."""
    transformers = real("transformers")
    seen = {}

    class Trainer:
        def __init__(self, model=None, args=None, *rest, optimizers=(None, None), **kwargs):
            seen["args"], seen["optimizers"] = args, optimizers

        def train(self):
            pass

    torch = real("torch")
    model = types.SimpleNamespace(parameters=lambda: [torch.nn.Parameter(torch.zeros(1))])
    stub = types.SimpleNamespace(from_pretrained=lambda *a, **k: model)
    stubs = {"AutoModelForCausalLM": stub, "AutoModelForSeq2SeqLM": stub, "AutoTokenizer": stub,
             "AutoModelForSequenceClassification": stub,
             "Trainer": Trainer, "Seq2SeqTrainer": Trainer}

    class Transformers(types.ModuleType):  # the real module but for the stubs (its lazy names reset)
        def __getattr__(self, name):
            return stubs[name] if name in stubs else getattr(transformers, name)

    hf = Transformers("transformers")
    hf.__path__ = transformers.__path__
    datasets = types.ModuleType("datasets")
    datasets.load_dataset = lambda *a, **k: {"train": [], "validation": []}
    _main(path, monkeypatch, options, datasets=datasets, transformers=hf)
    return seen["args"], seen["optimizers"]


def _hf_reference(args, steps, lr=None):
    """The Trainer's scheduler for ``args`` (a real ``TrainingArguments``): ``get_scheduler`` with
    ``args.get_warmup_steps(N)``, on an optimizer at ``lr`` (``args.learning_rate`` by default)."""
    from anchors import reference as R

    total = args.max_steps
    kind = getattr(args.lr_scheduler_type, "value", args.lr_scheduler_type)
    return R.hf_values(kind, steps, lr=args.learning_rate if lr is None else lr,
                       num_warmup_steps=args.get_warmup_steps(total), num_training_steps=total,
                       **(args.lr_scheduler_kwargs or {}))


@pytest.mark.parametrize("options", [None, {"--lr": "1e-4"}, {"--lr": "3e-5", "--max_steps": "1200"}])
def test_hf_trainer_script_with_training_arguments(monkeypatch, options):
    """TrainingArguments(...) in main(), from argparse options and a ``**dict``: guessed hf-args
    (it was guessed mmengine and refused), every step against get_scheduler; ``--lr`` a parameter."""
    path = SCRIPTS / "hf_trainer.py"
    assert guess_format(path, path.read_text()) == "hf-args"
    text = import_file(path)
    assert "param args_lr: float = 2e-05  # --lr" in text
    params = {"args_lr": float(options["--lr"])} if options else None
    ours = schedlang.compile(text, params=params)["lr"]
    args, _ = _hf_trained(path, monkeypatch, options)
    assert args.max_steps == 1200 and args.lr_scheduler_type == "cosine"
    steps = range(1300)
    assert max_error(ours.values(steps), _hf_reference(args, steps), 1e-3) <= 1e-12
    core = schedlang.compile(import_file(path, style="core"), params=params)["lr"]  # --lower
    assert core.values(steps) == pytest.approx(ours.values(steps), rel=1e-12, abs=1e-18)


def test_keras_schedule_made_in_a_helper_called_inside_model_compile(monkeypatch):
    """``model.compile(optimizer=make_optimizer(model))`` on a model the file does not follow: the
    argument is computed first, as Python does, so the helper is followed (it was "never called")."""
    path = SCRIPTS / "keras_compile_helper.py"
    assert guess_format(path, path.read_text()) == "keras-json"
    ours = schedlang.compile(import_file(path))["lr"]
    real("keras.optimizers.schedules")
    made = _main(path, monkeypatch).optimizer._learning_rate  # what the compiled model holds
    config = made.get_config()
    config.pop("name")
    assert config["warmup_steps"] == 781 and config["decay_steps"] == 8591
    steps = sorted(set(range(0, 9500, 11)) | {0, 780, 781, 782, 9371, 9372, 9373})
    assert max_error(ours.values(steps), KC.values(type(made).__name__, config, steps, float64=True),
                     1e-3) <= 1e-12


def test_trl_sft_config_with_trl_s_learning_rate_default(monkeypatch):
    """``SFTConfig(...)`` leaves ``learning_rate`` at TRL's 2e-5 (trl/trainer/sft_config.py); the
    rest is TrainingArguments' (TRL is not installed here: its SFTConfig is that subclass)."""
    import dataclasses

    transformers = real("transformers")
    path = SCRIPTS / "trl_sft_quickstart.py"
    assert guess_format(path, path.read_text()) == "hf-args"
    ours = schedlang.compile(import_file(path))["lr"]
    seen = {}
    trl = types.ModuleType("trl")
    trl.SFTConfig = dataclasses.make_dataclass("SFTConfig", [("learning_rate", float, dataclasses.field(
        default=2e-5))], bases=(transformers.TrainingArguments,))
    trl.SFTTrainer = lambda **kwargs: seen.update(kwargs) or types.SimpleNamespace(train=lambda: None)
    datasets = types.ModuleType("datasets")
    datasets.load_dataset = lambda *a, **k: []
    monkeypatch.setitem(sys.modules, "trl", trl)
    monkeypatch.setitem(sys.modules, "datasets", datasets)
    runpy.run_path(str(path))
    args = seen["args"]
    assert args.learning_rate == 2e-5 and args.get_warmup_steps(args.max_steps) == 50
    steps = range(1100)
    assert max_error(ours.values(steps), _hf_reference(args, steps), 1e-3) <= 1e-12


TRAINER = """import torch
from transformers import AutoModelForCausalLM, Seq2SeqTrainer, Seq2SeqTrainingArguments

model = AutoModelForCausalLM.from_pretrained("gpt2")
args = Seq2SeqTrainingArguments(output_dir="out", learning_rate=1e-3, max_steps=500, warmup_steps=40,
                                lr_scheduler_type="linear")
optimizer = torch.optim.AdamW(model.parameters(), lr={lr}, weight_decay=0.01)
{before}trainer = Seq2SeqTrainer(model=model, args=args, optimizers=(optimizer, {scheduler}))
trainer.train()
"""


def test_a_trainer_given_only_its_optimizer_schedules_that_optimizer_s_lr(monkeypatch):
    """``optimizers=(optimizer, None)``: the Trainer builds the arguments' scheduler on the given
    optimizer, which keeps its own lr (get_scheduler multiplies it), not ``learning_rate``."""
    text = TRAINER.format(lr="3e-4", before="", scheduler="None")
    assert guess_format(Path("train.py"), text) == "hf-args"
    from schedlang.formats.hf_args import FORMAT

    ours = schedlang.compile(FORMAT.reader(text, "train.py"))["lr"]
    transformers = real("transformers")
    torch = real("torch")
    args = transformers.Seq2SeqTrainingArguments(output_dir="out", learning_rate=1e-3, max_steps=500,
                                                 warmup_steps=40, lr_scheduler_type="linear")
    trainer = transformers.Trainer.__new__(transformers.Trainer)  # only its create_scheduler is run
    trainer.args, trainer.lr_scheduler = args, None
    optimizer = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))], lr=3e-4, weight_decay=0.01)
    trainer.create_scheduler(args.max_steps, optimizer=optimizer)
    values = []
    for _ in range(600):
        values.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        trainer.lr_scheduler.step()
    assert max_error(ours.values(range(600)), values, 1e-3) <= 1e-12


@pytest.mark.parametrize(("parts", "where", "words"), [
    ({"before": "sched = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1.0)\n",
      "scheduler": "sched"}, (9, 61), "is given its own scheduler here"),
    ({"lr": "args.learning_rate", "scheduler": "None"}, (7, 54), "attribute .learning_rate"),
])
def test_a_trainer_given_its_own_scheduler_is_refused_at_it(parts, where, words):
    from schedlang.formats.hf_args import FORMAT

    text = TRAINER.format(**({"lr": "3e-4", "before": ""} | parts))
    with pytest.raises(SchedlangError) as caught:
        FORMAT.reader(text, "train.py")
    assert words in caught.value.message, caught.value.message
    assert (caught.value.span.line, caught.value.span.column) == where, str(caught.value)


@pytest.mark.parametrize(("name", "where", "call"), [
    ("hf_run_clm.py", (45, 48), "parse_json_file()"),
    ("trl_sft.py", (28, 46), "parse_args_and_config()"),
])
def test_arguments_parsed_from_the_command_line_are_refused_at_the_parser(name, where, call):
    """run_clm.py and TRL's sft.py read TrainingArguments from the command line (or its JSON /
    YAML config): guessed hf-args, refused at the parsing call, which says where the values are."""
    path = SCRIPTS / name
    assert guess_format(path, path.read_text()) == "hf-args"
    with pytest.raises(SchedlangError) as caught:
        import_file(path)
    error = caught.value
    assert f"the TrainingArguments come from {call}" in error.message
    assert (error.span.line, error.span.column) == where
    assert "--format hf-args" in error.hint


# -- the script's own modules, beside it (issue 41 item 1) ----------------------------------------


@pytest.mark.parametrize("epochs", [None, 30])
def test_a_star_import_of_a_module_beside_the_script_is_followed(monkeypatch, epochs):
    """``from config import *`` with ``config.py`` beside ``train.py`` (its ``__all__``, a helper
    of it called with an argparse option): read by the same reader, as Python finds it first
    (``sys.path[0]``); it was refused as "may bind it"."""
    path = SCRIPTS / "star_module" / "train.py"
    assert guess_format(path, path.read_text()) == "keras-json"  # by what config.py calls
    ours = schedlang.compile(import_file(path), params={"epochs": epochs} if epochs else None)["lr"]
    real("keras.optimizers.schedules")
    monkeypatch.syspath_prepend(str(path.parent))
    monkeypatch.delitem(sys.modules, "config", raising=False)
    made = _main(path, monkeypatch, {"--epochs": str(epochs)} if epochs else None)._learning_rate
    config = made.get_config()
    config.pop("name")
    assert config["boundaries"] == [390 * ((epochs or 20) // 2), 390 * ((epochs or 20) * 3 // 4)]
    steps = sorted(set(range(0, 12000, 13)) | {b + d for b in config["boundaries"] for d in (-1, 0, 1)})
    assert max_error(ours.values(steps), KC.values(type(made).__name__, config, steps, float64=True),
                     1e-3) <= 1e-12


MODULE = ("import keras\nPEAK = 0.1\nSTEPS = 100\n\ndef make():\n"
          "    return keras.optimizers.schedules.CosineDecay(PEAK, STEPS)\n")


@pytest.mark.parametrize(("script", "module", "expected"), [
    ("import keras\nimport config\nconfig.PEAK = 0.5\n"
     "s = keras.optimizers.schedules.CosineDecay(config.PEAK, config.STEPS)\n", MODULE,
     "initial_learning_rate=0.5, decay_steps=100"),
    ("import config\ns = config.make()\n", MODULE, "initial_learning_rate=0.1, decay_steps=100"),
    ("from config import make, STEPS as N\nimport keras\n"
     "s = keras.optimizers.schedules.CosineDecay(0.2, N)\n", MODULE,
     "initial_learning_rate=0.2, decay_steps=100"),
    ("from config import *\ns = make()\n", MODULE.replace("PEAK = 0.1", "PEAK = 0.1\n_hidden = 1"),
     "initial_learning_rate=0.1, decay_steps=100"),
])
def test_a_module_beside_the_script_is_read_as_python_imports_it(tmp_path, monkeypatch, script, module,
                                                                 expected):
    (tmp_path / "config.py").write_text(module)
    path = tmp_path / "train.py"
    path.write_text(script)
    assert expected in import_file(path)
    keras = types.ModuleType("keras")  # what Python builds: a stub keras records the call
    keras.optimizers = types.SimpleNamespace(schedules=types.SimpleNamespace(
        CosineDecay=lambda *args: ("CosineDecay", *args)))
    monkeypatch.setitem(sys.modules, "keras", keras)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "config", raising=False)
    built = runpy.run_path(str(path), run_name="__main__")["s"]
    assert f"initial_learning_rate={built[1]}, decay_steps={built[2]}" == expected


@pytest.mark.parametrize(("script", "module", "where", "words"), [
    # no config.py beside the script: its names are unknown (refused where read)
    ("from config import *\nimport keras\ns = keras.optimizers.schedules.CosineDecay(PEAK, 10)\n", None,
     (3, 44), "`from config import *` (line 1) may bind it"),
    ("from config import *\ns = make()\n", "X = 1\n", (2, 5), "'make' is not assigned in this file"),
    ("from config import make\n", "X = 1\n", (1, 1), "cannot import name 'make' from 'config'"),
    ("import config\n", "import train\n", (1, 1), "a cycle"),
    ("import config\nimport keras\ns = keras.optimizers.schedules.CosineDecay(0.1, 10)\n",
     "import sys\nsys.exit(1)\n", (2, 1), "importing config ends the script"),
])
def test_a_module_beside_the_script_refused_as_python_would_fail(tmp_path, script, module, where, words):
    if module is not None:
        (tmp_path / "config.py").write_text(module)
    path = tmp_path / "train.py"
    path.write_text(script)
    with pytest.raises(SchedlangError) as caught:
        import_file(path, "keras-json")
    assert words in caught.value.message, caught.value.message
    assert (caught.value.span.line, caught.value.span.column) == where, str(caught.value)


# -- optax scripts (issue 41 item 1) --------------------------------------------------------------


def _x64():
    jax = real("jax")
    previous = bool(jax.config.jax_enable_x64)
    jax.config.update("jax_enable_x64", True)
    return jax, previous


def test_optax_schedule_made_in_a_helper_chained_before_adamw(monkeypatch):
    """``optax.chain(clip, optax.adamw(learning_rate=schedule))`` with the schedule from a helper fed
    by argparse options (it was refused at line 1): every step against the schedule optax's adamw is
    given, at the defaults and with options."""
    path = SCRIPTS / "optax_helper.py"
    assert guess_format(path, path.read_text()) == "optax"
    text = import_file(path)
    optax = real("optax")
    jax, previous = _x64()
    adamw, given = optax.adamw, []
    monkeypatch.setattr(optax, "adamw", lambda learning_rate, **kw: given.append(learning_rate) or adamw(
        learning_rate, **kw))
    try:
        for options, params in ((None, None), ({"--batch_size": "100", "--learning_rate": "3e-4"},
                                               {"batch_size": 100, "learning_rate": 3e-4})):
            ours = schedlang.compile(text, params=params)["lr"]
            given.clear()
            _main(path, monkeypatch, options)
            steps = sorted(set(range(0, 6500, 7)) | {468, 469, 470, 599, 600, 601, 4687, 4688, 6000})
            theirs = [float(given[0](jax.numpy.asarray(t, dtype=jax.numpy.int64))) for t in steps]
            assert max_error(ours.values(steps), theirs, 1e-3) <= 1e-12
    finally:
        jax.config.update("jax_enable_x64", previous)


def test_optax_inject_hyperparams_join_schedules_read_back_from_the_state():
    """The Flax ImageNet example: ``join_schedules`` of a warmup and a cosine made in a helper,
    ``inject_hyperparams(optax.sgd)(learning_rate=...)``: optax's own state gives the lr of each
    update."""
    path = SCRIPTS / "optax_inject.py"
    assert guess_format(path, path.read_text()) == "optax"
    ours = schedlang.compile(import_file(path))["lr"]
    jax, previous = _x64()
    try:
        made = runpy.run_path(str(path))
        tx, schedule = made["tx"], made["learning_rate_fn"]
        exact = [float(schedule(jax.numpy.asarray(t, dtype=jax.numpy.int64))) for t in range(5200)]
        params = {"w": jax.numpy.zeros(2)}
        state = tx.init(params)
        grads = {"w": jax.numpy.ones(2)}
        update = jax.jit(tx.update)
        theirs = []
        for _ in range(5200):  # the state holds the lr the update just used (schedule(count))
            _, state = update(grads, state, params)
            theirs.append(float(state.hyperparams["learning_rate"]))
    finally:
        jax.config.update("jax_enable_x64", previous)
    assert max_error(ours.values(range(5200)), exact, 1e-3) <= 1e-12
    # the state's count is int32, so optax computes the warmup in float32 even under x64: within
    # float32's rounding of the peak (0.1 * 2**-24 per operation), cancellation near 0 included
    assert max(abs(a - b) for a, b in zip(ours.values(range(5200)), theirs)) <= 2e-8


def test_optax_presets_take_optax_s_positional_order():
    """A script's positional arguments are bound in the preset's order: it is optax's own."""
    import inspect

    from schedlang.formats.optax_script import SCHEDULES
    from schedlang.library.presets import PRESETS

    optax = real("optax")
    for name in SCHEDULES:
        ours = [a.name for a in PRESETS[f"optax.{name}"].args]
        assert ours == list(inspect.signature(getattr(optax, name)).parameters), name


# -- LearningRateSchedule subclasses, traced (issue 41 item 1) -------------------------------------


def test_a_learning_rate_schedule_subclass_is_traced(monkeypatch):
    """The Transformer tutorials' ``CustomSchedule(d_model)``: ``__init__`` followed, ``__call__``
    traced with a symbolic step (it was refused at line 1 without naming the class); step 0 is
    ``min(rsqrt(0), 0) = 0`` as Keras computes it.  Against the real schedule Keras holds (float32)
    and the tutorial's formula in float64."""
    path = SCRIPTS / "keras_transformer_schedule.py"
    assert guess_format(path, path.read_text()) == "keras-json"
    text = import_file(path)
    assert "schedule lr = if t < 1 then 0 else" in text
    ours = schedlang.compile(text)["lr"]
    real("keras.optimizers.schedules")
    made = _main(path, monkeypatch)._learning_rate
    assert type(made).__name__ == "CustomSchedule"
    steps = sorted(set(range(0, 20000, 9)) | {1, 3999, 4000, 4001})
    keras_values = [float(made(step)) for step in steps]
    assert max_error(ours.values(steps), keras_values, 1e-3) <= 1e-6  # Keras computes in float32
    formula = [0.0 if s == 0 else 128 ** -0.5 * min(s ** -0.5, s * 4000 ** -1.5) for s in steps]
    assert max_error(ours.values(steps), formula, 1e-3) <= 1e-12


SUBCLASS = """import keras
from keras import ops


class WarmupSchedule(keras.optimizers.schedules.LearningRateSchedule):
    def __init__(self, peak, warmup):
        super().__init__()
        self.peak = peak
        self.warmup = warmup

    def __call__(self, step):
{body}


lr = WarmupSchedule(1e-3, 100)
optimizer = keras.optimizers.Adam(learning_rate=lr)
"""


@pytest.mark.parametrize(("body", "expected"), [
    ("        step = ops.cast(step, 'float32')\n"
     "        return self.peak * ops.minimum(1.0, (step + 1) / self.warmup)",
     "min(1, 0.01 + t / 100) / 1000"),
    ("        return self.peak * ops.exp(-step / self.warmup)", "(e ** (-(t / 100))) / 1000"),
])
def test_a_subclass_traced_to_its_formula(body, expected):
    text = _import_text(SUBCLASS.format(body=body))
    assert f"schedule lr = {expected}" in text, text


@pytest.mark.parametrize(("body", "words"), [
    ("        if step < self.warmup:\n            return self.peak * step / self.warmup\n"
     "        return self.peak",
     "its __call__ has an if (it would decide once, on one step) (line 12)"),
    ("        return self.peak * ops.cond(step < 10, lambda: 1.0, lambda: 0.5)",
     "calls ops.cond(), which a trace does not know (line 12)"),
    ("        return self.peak / ops.sqrt(step)", "is not finite at step 0"),
])
def test_a_subclass_not_closed_form_is_refused_at_the_class_naming_it(body, words):
    with pytest.raises(SchedlangError) as caught:
        _import_text(SUBCLASS.format(body=body))
    error = caught.value
    assert "WarmupSchedule" in error.message and words in error.message, error.message
    assert (error.span.line, error.span.column) == (5, 1), str(error)


#: The format each script of the corpus is guessed as, by what it calls (None: refused at its
#: framework's own scheduler call).
GUESSED = {"deepspeed_main.py": "deepspeed-json", "deepspeed_namespace.py": "deepspeed-json",
           "deepspeed_required.py": "deepspeed-json", "hf_no_trainer.py": "deepspeed-json",
           "hf_trainer.py": "hf-args", "hf_run_clm.py": "hf-args", "trl_sft.py": "hf-args",
           "trl_sft_quickstart.py": "hf-args", "hf_seq2seq_dataclass.py": "hf-args",
           "hf_custom_scheduler.py": "hf-args",
           "keras_dataclass.py": "keras-json",
           "keras_main.py": "keras-json",
           "keras_uncalled.py": "keras-json", "keras_compile_helper.py": "keras-json",
           "keras_transformer_schedule.py": "keras-json", "mmengine_star.py": "mmengine-config",
           "mmengine_star_names.py": "mmengine-config", "mmengine_star_unknown.py": "mmengine-config",
           "optax_helper.py": "optax", "optax_inject.py": "optax", "timm_style.py": None,
           "star_module/train.py": "keras-json", "star_module/config.py": "keras-json"}


def test_every_script_of_the_corpus_is_guessed_by_what_it_calls():
    found = {str(p.relative_to(SCRIPTS)) for p in SCRIPTS.rglob("*.py")}
    assert found == set(GUESSED)
    for name, expected in GUESSED.items():
        path = SCRIPTS / name
        if expected is None:
            with pytest.raises(SchedlangError, match="which schedlang does not follow into that library"):
                guess_format(path, path.read_text())
        else:
            assert guess_format(path, path.read_text()) == expected, name


OPTAX = "import optax\n{body}"


@pytest.mark.parametrize(("body", "where", "words"), [
    ("tx = optax.adamw(learning_rate=3e-4)\n", (1, 1), "no optax schedule is built in this file"),
    ("a = optax.linear_schedule(0.0, 1.0, 10)\nb = optax.cosine_decay_schedule(1.0, 10)\n", (3, 5),
     "builds 2 optax schedules"),
    ("s = optax.cosine_decay_schedule(1.0, 10, alpha=0.1, alhpa=0.2)\n", (2, 53), "has no argument 'alhpa'"),
    ("def make():\n    return optax.cosine_decay_schedule(1.0, 10)\n", (3, 12),
     "make(), which this file never calls"),
])
def test_optax_scripts_refused_at_the_reason(body, where, words):
    from schedlang.formats.optax_script import FORMAT

    with pytest.raises(SchedlangError) as caught:
        FORMAT.reader(OPTAX.format(body=body), "train.py")
    assert words in caught.value.message, caught.value.message
    assert (caught.value.span.line, caught.value.span.column) == where, str(caught.value)


@pytest.mark.parametrize("style", ["presets", "core"])
@pytest.mark.parametrize(("body", "where", "words"), [
    # positional: no ``decay_steps=`` in the script to search for, and 0 no literal to find
    ("tx = optax.adamw(optax.cosine_decay_schedule(1.0, 0))\n", (2, 51), "a period must be positive"),
    # the number of steps a variable: its literal on line 2 was what a search found
    ("steps = 1000\ntx = optax.adamw(optax.warmup_cosine_decay_schedule(0.0, 1.0, steps, steps))\n", (3, 70),
     "must be longer than warmup_steps"),
])
def test_an_error_the_lowering_raises_lands_on_the_argument_it_came_from(body, where, words, style):
    """The preset call the import lowers is built of nodes at the script's arguments, so what the
    preset refuses (the lowering's check, not the reader's) is at the argument it is about, in both
    styles: ``decay_steps``, positional or a variable, never a literal that happens to be equal."""
    from schedlang.formats.optax_script import FORMAT

    with pytest.raises(SchedlangError) as caught:
        FORMAT.reader(OPTAX.format(body=body), "train.py", style)
    assert words in caught.value.message, caught.value.message
    assert caught.value.span.source.filename == "train.py"
    assert (caught.value.span.line, caught.value.span.column) == where, str(caught.value)


def test_optax_dicts_and_positional_arguments(tmp_path):
    """``piecewise_constant_schedule(0.1, {32000: 0.1, 48000: 0.1})`` given positionally to
    ``optax.sgd``: optax's dict is the preset's list of pairs; every step against optax."""
    text = OPTAX.format(body="sched = optax.piecewise_constant_schedule(0.1, {32000: 0.1, 48000: 0.1})\n"
                             "tx = optax.sgd(sched, momentum=0.9)\n")
    path = tmp_path / "train.py"
    path.write_text(text)
    assert guess_format(path, text) == "optax"
    ours = schedlang.compile(import_file(path))["lr"]
    from anchors import reference as R

    steps = sorted(set(range(0, 60000, 101)) | {31999, 32000, 32001, 47999, 48000, 48001})
    theirs = R.optax_values("piecewise_constant_schedule", {"init_value": 0.1, "boundaries_and_scales": {
        32000: 0.1, 48000: 0.1}}, steps)
    assert max_error(ours.values(steps), theirs, 1e-3) <= 1e-12


TF_TUTORIAL = '''import tensorflow as tf

d_model = 512


class CustomSchedule(tf.keras.optimizers.schedules.LearningRateSchedule):
    def __init__(self, d_model, warmup_steps=4000):
        super().__init__()
        self.d_model = d_model
        self.d_model = tf.cast(self.d_model, tf.float32)
        self.warmup_steps = warmup_steps

    def __call__(self, step):
        step = tf.cast(step, dtype=tf.float32)
        arg1 = tf.math.rsqrt(step)
        arg2 = step * (self.warmup_steps ** -1.5)
        return tf.math.rsqrt(self.d_model) * tf.math.minimum(arg1, arg2)


learning_rate = CustomSchedule(d_model)
optimizer = tf.keras.optimizers.Adam(learning_rate, beta_1=0.9, beta_2=0.98, epsilon=1e-9)
'''


def test_the_tensorflow_transformer_tutorial_schedule():
    """tensorflow.org/text/tutorials/transformer, as written (tf.cast, tf.math.rsqrt / minimum;
    TensorFlow is not installed here: the formula is compared in float64)."""
    assert guess_format(Path("train.py"), TF_TUTORIAL) == "keras-json"
    ours = schedlang.compile(_import_text(TF_TUTORIAL))["lr"]
    steps = [0, 1, 2, 100, 3999, 4000, 4001, 10_000, 100_000]
    formula = [0.0 if s == 0 else 512 ** -0.5 * min(s ** -0.5, s * 4000 ** -1.5) for s in steps]
    assert max_error(ours.values(steps), formula, 1e-3) <= 1e-12


def test_seq2seq_arguments_from_a_dataclass_and_the_scheduler_type_enum():
    """``Seq2SeqTrainingArguments`` in a helper from a ``@dataclass`` config, ``SchedulerType.
    COSINE_WITH_RESTARTS``, epochs: ``steps_per_epoch`` is the file's parameter; against
    get_scheduler with the real arguments (the Trainer's ``ceil(epochs * steps_per_epoch)``)."""
    import math

    path = SCRIPTS / "hf_seq2seq_dataclass.py"
    ours = schedlang.compile(import_file(path), params={"steps_per_epoch": 250})["lr"]
    real("transformers")
    args = runpy.run_path(str(path))["args"]
    assert args.num_train_epochs == 4 and args.lr_scheduler_type == "cosine_with_restarts"
    args.max_steps = math.ceil(args.num_train_epochs * 250)  # what the Trainer computes from epochs
    steps = range(1100)
    assert max_error(ours.values(steps), _hf_reference(args, steps), 1e-3) <= 1e-12


def test_a_trainer_given_an_hf_scheduler_imports_that_scheduler(monkeypatch):
    """``Trainer(..., optimizers=(optimizer, get_cosine_schedule_with_warmup(optimizer, ...)))``:
    the given scheduler is the schedule (TrainingArguments' linear is not used), on the optimizer's
    own lr; against the very scheduler the script builds."""
    path = SCRIPTS / "hf_custom_scheduler.py"
    assert guess_format(path, path.read_text()) == "hf-args"
    ours = schedlang.compile(import_file(path))["lr"]
    _, (optimizer, scheduler) = _hf_trained(path, monkeypatch)
    theirs = []
    for _ in range(3200):
        theirs.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    assert max_error(ours.values(range(3200)), theirs, 1e-3) <= 1e-12


LOOP = """import torch
import transformers
model = torch.nn.Linear(2, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
sched = transformers.get_scheduler("polynomial", opt, num_warmup_steps=10, num_training_steps=100,
                                   scheduler_specific_kwargs={"power": 2.0, "lr_end": 1e-4})
for step in range(100):
    opt.step()
    sched.step()
"""


def test_a_training_loop_s_own_hf_scheduler():
    """A loop without the Trainer (``accelerate`` / plain torch): ``transformers.get_scheduler(...)``
    is the schedule (it was refused, pointing at the JSON); every step against it."""
    assert guess_format(Path("train.py"), LOOP) == "hf-args"
    from schedlang.formats.hf_args import FORMAT

    ours = schedlang.compile(FORMAT.reader(LOOP, "train.py"))["lr"]
    from anchors import reference as R

    theirs = R.hf_values("polynomial", range(120), lr=0.1, num_warmup_steps=10, num_training_steps=100,
                         power=2.0, lr_end=1e-4)
    assert max_error(ours.values(range(120)), theirs, 1e-3) <= 1e-12
