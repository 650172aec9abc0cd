"""A training script's argparse defaults as parameters of the imported file (issue 29): the
imported file, given ``-D`` values, is the run started with those options.  Compared with the
framework's own code fed by what Python makes of the script run with that command line, with
the script imported again after its default edited in place (no framework), and refused where a
flag cannot be carried.
"""

from __future__ import annotations

import re
import types
from pathlib import Path

import pytest
from anchors.preset_cases import max_error

import schedlang
from frameworks import keras_cases as KC
from frameworks.deepspeed_cases import deepspeed_values
from frameworks.real import real
from frameworks.test_training_scripts import _deepspeed_config, _main
from schedlang.cli import main as cli
from schedlang.formats import import_file
from schedlang.formats.deepspeed_json import FORMAT as DEEPSPEED

SCRIPTS = Path(__file__).parent / "configs" / "scripts"


def _params(options: dict, names: dict) -> dict:
    """The ``-D`` values of a command line: each option's parameter, its text as a number."""
    return {names[flag]: (int(text) if re.fullmatch(r"-?\d+", text) else float(text))
            for flag, text in options.items()}


KERAS_NAMES = {"--lr": "args_lr", "--batch-size": "batch_size", "--epochs": "epochs",
               "--warmup-epochs": "warmup_epochs"}


@pytest.mark.parametrize("options", [
    {},
    {"--lr": "1e-3", "--batch-size": "100", "--epochs": "5", "--warmup-epochs": "1.25"},
    {"--batch-size": "333", "--warmup-epochs": "0"},
    {"--batch-size": "4096", "--epochs": "40", "--warmup-epochs": "0.1"},
])
def test_keras_options_are_parameters(monkeypatch, options):
    path = SCRIPTS / "keras_main.py"
    text = import_file(path)
    for flag, name in KERAS_NAMES.items():
        assert re.search(rf"^param {name}: (int|float) = .*# {flag}, argparse default", text, re.M), flag
    assert "let steps_per_epoch = floor(50000 / batch_size)" in text
    ours = schedlang.compile(text, params=_params(options, KERAS_NAMES))["lr"]
    real("keras.optimizers.schedules")
    made = _main(path, monkeypatch, options).optimizer._learning_rate
    config = made.get_config()
    config.pop("name")
    total = config["decay_steps"] + config["warmup_steps"]
    steps = sorted(set(range(0, total + 50, max(1, total // 300)))
                   | {config["warmup_steps"], total, total + 7})
    expected = KC.values(type(made).__name__, config, steps, float64=True)
    assert max_error(ours.values(steps), expected, 1e-3) <= 1e-12


DEEPSPEED_NAMES = {"--lr": "args_lr", "--min-lr": "min_lr", "--train-iters": "train_iters",
                   "--warmup": "args_warmup"}


@pytest.mark.parametrize("options", [
    {},
    {"--lr": "3e-4", "--train-iters": "777", "--warmup": "0.13"},
    {"--min-lr": "0", "--train-iters": "50", "--warmup": "0.5"},
])
def test_deepspeed_options_are_parameters(monkeypatch, options):
    path = SCRIPTS / "deepspeed_main.py"
    text = import_file(path)
    assert "warmup_num_steps=trunc(train_iters * args_warmup)" in text
    program = schedlang.compile(text, params=_params(options, DEEPSPEED_NAMES))
    config = _deepspeed_config(path, monkeypatch, options)
    scheduler = config["scheduler"]
    steps = scheduler["params"]["total_num_steps"] + 100
    expected = deepspeed_values(scheduler["type"], scheduler["params"], steps,
                                lr=config["optimizer"]["params"]["lr"])
    assert program["lr"].values(range(steps)) == pytest.approx(expected, rel=1e-12, abs=1e-18)


HF_NAMES = {"--learning_rate": "learning_rate", "--num_train_epochs": "num_train_epochs",
            "--num_warmup_steps": "num_warmup_steps"}


@pytest.mark.parametrize("options", [{"--num_train_epochs": "1"},
                                     {"--num_warmup_steps": "450", "--learning_rate": "2e-5"}])
def test_options_assigned_back_to_args_are_parameters(monkeypatch, options):
    """``args.max_train_steps = 1000 * args.num_train_epochs`` and ``args.num_warmup_steps =
    max(...)`` (an HF no_trainer script): the assignments become ``let``s of those names."""
    path = SCRIPTS / "hf_no_trainer.py"
    text = import_file(path)
    assert "let max_train_steps = 1000 * num_train_epochs" in text
    program = schedlang.compile(text, params=_params(options, HF_NAMES))
    accelerate = types.SimpleNamespace(Accelerator=lambda: types.SimpleNamespace(print=lambda *a: None))
    config = _main(path, monkeypatch, options, accelerate=accelerate,
                  my_project=types.ModuleType("my_project"),
                  **{"my_project.constants": types.ModuleType("my_project.constants")})
    scheduler = config["scheduler"]
    real("deepspeed")
    steps = scheduler["params"]["total_num_steps"] + 100
    expected = deepspeed_values(scheduler["type"], scheduler["params"], steps, lr=1.0)
    assert program["lr"].values(range(steps)) == pytest.approx(expected, rel=1e-12, abs=1e-18)


def _concrete(script: str, values: dict) -> str:
    """The script with ``parse_args()`` replaced by a ``SimpleNamespace`` of ``values``: imported,
    it has no parameters, only the numbers Python computes (the reference the file is held to)."""
    fields = ", ".join(f"{k}={v!r}" for k, v in values.items())
    concrete, count = re.subn(r"^args = \w+\.parse_args\(\)$",
                              f"from types import SimpleNamespace\nargs = SimpleNamespace({fields})", script,
                              flags=re.M)
    assert count == 1
    return concrete


# -- every operation the parameters go through, against the script imported with its default edited ---


ARITHMETIC = '''import argparse
import deepspeed

parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default={lr})
parser.add_argument("--iters", type=int, default={iters})
parser.add_argument("--ratio", type=float, default={ratio})
parser.add_argument("--shift", default={shift})
args = parser.parse_args()

total = args.iters + args.shift * 3 - args.iters % 7
total -= args.iters // 9
warm = int(args.ratio * args.iters)
floor_min = min(args.lr / 20, 1e-5) + args.lr * 2 ** -4 - float(args.shift) * 1e-9
peak = max(args.lr, floor_min * 1.5) * (1 + args.ratio) ** 2
ds_config = {{"scheduler": {{"type": "WarmupDecayLR", "params": {{
    "total_num_steps": total + warm, "warmup_num_steps": warm, "warmup_min_lr": floor_min,
    "warmup_max_lr": peak, "warmup_type": "linear"}}}}}}
'''
DEFAULTS = {"lr": 1e-3, "iters": 1000, "ratio": 0.0625, "shift": -5}


@pytest.mark.parametrize("given", [
    {}, {"lr": 0.25, "iters": 12345}, {"ratio": 0.5, "shift": 40}, {"iters": 63, "shift": -9, "ratio": 0.25},
])
def test_each_operation_is_carried_exactly(given):
    """``+ - * / // % **``, unary minus, ``int()``, ``float()``, ``min``, ``max``, ``-=``: the file
    imported once, given ``-D`` values, equals the script imported with those values as plain
    numbers (``_concrete``: no parameter left, Python's own arithmetic)."""
    text = DEEPSPEED.reader(ARITHMETIC.format(**DEFAULTS), "train.py")
    assert "let total_2 = total - floor(iters / 9)" in text and "let warm = trunc(ratio * iters)" in text
    assert "taken at its default" not in text
    names = {"lr": "args_lr", "iters": "iters", "ratio": "ratio", "shift": "shift"}
    ours = schedlang.compile(text, params={names[k]: v for k, v in given.items()})["lr"]
    concrete = DEEPSPEED.reader(_concrete(ARITHMETIC.format(**DEFAULTS), DEFAULTS | given), "train.py")
    assert "param " not in concrete
    theirs = schedlang.compile(concrete)["lr"]
    steps = range(0, 14000, 7)
    assert max_error(ours.values(steps), theirs.values(steps), 1e-3) <= 1e-13


# -- flags that cannot be carried -----------------------------------------------------------------------


FROZEN = '''import argparse
import deepspeed

parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=1e-3)
parser.add_argument("--epochs", type=int, default=4)
parser.add_argument("--steps-per-epoch", type=int, default=250)
parser.add_argument("--warmup-ratio", type=float, default=0.29)
parser.add_argument("--mode", choices=[1, 2], type=int, default=1)
parser.add_argument("--fp16", action="store_true")
args = parser.parse_args()

total = args.epochs * args.steps_per_epoch
warmup = int(args.warmup_ratio * 100)
if args.epochs > 10:
    warmup = 0
ds_config = {"scheduler": {"type": "WarmupDecayLR", "params": {
    "total_num_steps": total * args.mode, "warmup_num_steps": warmup, "warmup_max_lr": args.lr}}}
'''


def test_a_flag_read_where_no_parameter_is_carried_is_taken_at_its_default(tmp_path, capsys):
    """``if args.epochs > 10`` branches on --epochs: the file is right for its default only, so
    it is a ``let`` (``-D epochs=`` refused) with the line that read it.  ``int(0.29 * 100)`` is 28
    in Python and 29 exactly: Python's value is written and --warmup-ratio is taken at its default.
    A flag with ``choices=`` and a bool flag are values, not parameters."""
    text = DEEPSPEED.reader(FROZEN, "train.py")
    assert re.search(r"^let epochs = 4 +# --epochs \(line 6\), taken at its default: line 15 reads its value",
                     text, re.M)
    assert "param steps_per_epoch: int = 250" in text and "param args_lr: float = 0.001" in text
    assert re.search(r"^# --warmup-ratio \(line 8\) is taken at its default 0.29: line 14 ", text, re.M)
    assert "warmup_num_steps=28" in text and "total_num_steps=total * 1," in text
    assert "mode" not in text.split("schedule lr")[0] and "fp16" not in text
    path = tmp_path / "frozen.sched"
    path.write_text(text)
    assert cli(["eval", str(path), "--steps", "0:3", "-D", "epochs=5"]) == 2
    assert "the file has no parameter 'epochs'" in capsys.readouterr().err
    assert cli(["eval", str(path), "--steps", "0:3", "-D", "steps_per_epoch=10"]) == 0


def test_hostile_flag_names_reach_the_file_only_as_checked_names_and_comments():
    """A dest that is a word of the language or not ASCII, a flag whose name carries a line break
    and a statement: each param is renamed to a free name and the flag's text is escaped in its
    comment, so nothing is added to the file."""
    script = (
        "import argparse\nimport deepspeed\np = argparse.ArgumentParser()\n"
        "p.add_argument('--peak\\nschedule x = 1', dest='then', type=float, default=0.5)\n"
        "p.add_argument('--t', type=int, default=10)\n"
        "p.add_argument('--\u00e9', type=int, default=2)\n"
        "args = p.parse_args()\n"
        "ds_config = {'scheduler': {'type': 'WarmupLR', 'params': {'warmup_max_lr': args.then,\n"
        "    'warmup_num_steps': args.t * args.\u00e9 + 1}}}\n")
    text = DEEPSPEED.reader(script, "train.py")
    assert "param args_then: float = 0.5  # --peak\\nschedule x = 1, argparse default (line 4)" in text
    assert "param args_t: int = 10" in text and "param value: int = 2" in text
    assert not re.search(r"^schedule x", text, re.M)
    ours = schedlang.compile(text, params={"args_t": 4, "value": 1, "args_then": 0.25})["lr"]
    concrete = _concrete(script.replace("args = p.parse_args()", "args = p.parse_args()"),
                         {"then": 0.25, "t": 4, "\u00e9": 1})
    theirs = schedlang.compile(DEEPSPEED.reader(concrete, "train.py"))["lr"]
    at_defaults = schedlang.compile(text)["lr"].values(range(12))
    assert ours.values(range(12)) == theirs.values(range(12)) != at_defaults


def test_a_config_file_keeps_its_values():
    """An OpenMMLab config is data, not a script run with options: its argparse defaults (rare)
    stay values, as before."""
    from schedlang.formats.common.pyconfig.literal import Module

    module = Module('import argparse\np = argparse.ArgumentParser()\np.add_argument("--lr", default=0.1)\n'
                    'lr = p.parse_args().lr * 2\n', "cfg.py")
    assert module.get("lr").raw == 0.2


# -- random scripts: the file given -D values is the script imported with those defaults --------------


def _random_expression(rng, names: list[str], depth: int) -> str:
    """An expression over ``args.*`` and dyadic numbers whose float arithmetic is exact, so the
    script's Python values and the file's exact ones are equal at any defaults."""
    if depth == 0 or rng.random() < 0.25:
        return rng.choice([f"args.{rng.choice(names)}", str(rng.choice([1, 2, 3, 7, 16])),
                           str(rng.choice([0.5, 0.25, 1.5, 0.125]))])
    a, b = _random_expression(rng, names, depth - 1), _random_expression(rng, names, depth - 1)
    form = rng.choice(["({a} + {b})", "({a} - {b})", "({a} * {b})", "({a} // {d})", "({a} % {d})",
                       "min({a}, {b})", "max({a}, {b})", "int({a})", "float({a})", "(-{a})", "({a} / 4)",
                       "({a} ** 2)"])
    return form.format(a=a, b=b, d=rng.choice([2, 3, 5, "args.k"]))


RANDOM = '''import argparse
import deepspeed
p = argparse.ArgumentParser()
p.add_argument("--n", type=int, default={n})
p.add_argument("--k", type=int, default={k})
p.add_argument("--f", type=float, default={f})
args = p.parse_args()
x = {x}
y = {y}
ds_config = {{"scheduler": {{"type": "WarmupDecayLR", "params": {{"warmup_max_lr": 1,
    "warmup_min_lr": 0, "warmup_num_steps": 2 + abs_value, "total_num_steps": 40 + abs_value + abs_other}}}}}}
'''


@pytest.mark.parametrize("seed", range(12))
def test_random_scripts_carry_their_parameters_exactly(seed):
    """Random arithmetic over the options whose float arithmetic is exact: the file given ``-D``
    values equals the script with those values as plain numbers, at every step."""
    import random

    rng = random.Random(seed)
    x, y = (_random_expression(rng, ["n", "k", "f"], 3) for _ in range(2))
    defaults = {"n": rng.randrange(0, 60), "k": rng.randrange(1, 9), "f": rng.choice([0.5, 2.25, 3.0])}
    script = RANDOM.replace("abs_value", "int(max(x, -x)) % 50").replace("abs_other", "int(max(y, -y)) % 97")
    text = DEEPSPEED.reader(script.format(x=x, y=y, **defaults), "train.py")
    assert "taken at its default" not in text, (x, y)
    for _ in range(3):
        given = {"n": rng.randrange(0, 60), "k": rng.randrange(1, 9), "f": rng.choice([0.75, 1.0, 4.5])}
        names = {"n": "n", "k": "k", "f": "f"}
        declared = {names[k]: v for k, v in given.items() if re.search(rf"^param {names[k]}:", text, re.M)}
        ours = schedlang.compile(text, params=declared)["lr"]
        concrete = _concrete(script.format(x=x, y=y, **defaults), given)
        theirs = schedlang.compile(DEEPSPEED.reader(concrete, "train.py"))["lr"]
        assert ours.values(range(0, 200, 3)) == theirs.values(range(0, 200, 3)), (x, y, given)


def test_a_long_chain_of_variables_is_a_chain_of_lets():
    """``v = v + 1`` a thousand times, then ``if v > 3``: a ``let`` per assignment, each naming
    the one before (a value holds only the names its own text has), and the test freezes the
    option the whole chain reads."""
    chain = "\n".join("v = v + 1" for _ in range(1000))
    script = ("import argparse\nimport deepspeed\np = argparse.ArgumentParser()\n"
              "p.add_argument('--peak', type=float, default=0.5)\nargs = p.parse_args()\nv = args.peak\n"
              f"{chain}\nif v > 3:\n    pass\n"
              "ds_config = {'scheduler': {'type': 'WarmupLR', 'params': {'warmup_max_lr': v,"
              " 'warmup_num_steps': 10}}}\n")
    text = DEEPSPEED.reader(script, "train.py")
    assert "let peak = 0.5  # --peak (line 4), taken at its default: line 1007 reads its value" in text
    assert "let v_1000 = v_999 + 1" in text and "warmup_max_lr=v_1000" in text
    assert schedlang.compile(text)["lr"].values([10]) == [1000.5]


def test_parse_known_args_gives_the_same_parameters():
    """``args, rest = parser.parse_known_args()`` (scripts that pass the rest to a launcher)."""
    script = ("import argparse\nimport deepspeed\np = argparse.ArgumentParser()\n"
              "p.add_argument('--steps', type=int, default=500)\nargs, rest = p.parse_known_args()\n"
              "assert not rest\n"
              "ds_config = {'scheduler': {'type': 'WarmupLR', 'params': {'warmup_max_lr': 0.1,"
              " 'warmup_num_steps': args.steps // 10}}}\n")
    text = DEEPSPEED.reader(script, "train.py")
    assert "param steps: int = 500" in text and "warmup_num_steps=floor(steps / 10)" in text
    program = schedlang.compile(text, params={"steps": 90})
    assert program["lr"].values([9, 10]) == [0.1, 0.1] != program["lr"].values([7, 8])
