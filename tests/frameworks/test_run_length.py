"""Imports write ``run`` as each framework computes the run's length, and exports write it back
(SPEC §14).

For every framework the imported ``prog.run`` is compared with the number of updates the
framework's own code trains for that config: the HF ``Trainer`` run for real (its
``state.global_step``), Megatron-LM's ``update_train_iters`` (megatron-core 0.19.2's file, driven
by its own batch calculator) and its ``while iteration < args.train_iters`` loop, torchtitan's
``Trainer.should_continue_training``, Composer's ``Timestamp < max_duration`` (the pinned mosaicml
0.32.1 ``time.py``), timm's ``create_scheduler_v2`` ``num_epochs``, mmengine's train loops'
``max_iters``.  Functions of a framework file whose module cannot be imported here (Megatron's
``training.py``, torchtitan's ``trainer.py``) are taken from the file with ``ast`` and run as
they are written.
"""

from __future__ import annotations

import ast
import json
import math
import sys
import types
import warnings
from pathlib import Path

import pytest

import schedlang
from schedlang.formats import import_file
from schedlang.formats.common.into import Original
from schedlang.formats.export import export

from .real import framework_file, real

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = Path(__file__).parent / "configs"
MEGATRON_019 = ROOT / ".frameworks/megatron-core-0.19.2/megatron"


def _function(path: Path, name: str, namespace: dict, cls: str | None = None):
    """The function ``name`` (a method of ``cls``) of the framework file ``path``, exactly as
    written there, run with ``namespace`` as its globals."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    body = tree.body
    if cls is not None:
        body = next(n for n in body if isinstance(n, ast.ClassDef) and n.name == cls).body
    node = next(n for n in body if isinstance(n, ast.FunctionDef) and n.name == name)
    node.decorator_list = []
    code = compile(ast.Module([node], []), str(path), "exec")
    exec(code, namespace)  # noqa: S102 - the framework's own source, from its installed file
    return namespace[name]


def _imported(tmp_path, name: str, text: str, fmt: str, **params):
    path = tmp_path / name
    path.write_text(text)
    return schedlang.compile(import_file(path, format=fmt), params=params or None)


# -- HF Trainer: the real Trainer, trained -----------------------------------------------------------


def _hf_trained(tmp_path, samples: int, fields: dict) -> int:
    """The optimizer updates a real ``transformers.Trainer`` run makes with these arguments."""
    transformers = pytest.importorskip("transformers")
    import torch

    class Tiny(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.net = torch.nn.Linear(2, 1)

        def forward(self, x, labels=None):
            out = self.net(x)
            return {"loss": torch.nn.functional.mse_loss(out, labels), "logits": out}

    torch.manual_seed(0)
    data = [{"x": x, "labels": x.sum(dim=0, keepdim=True)} for x in torch.randn(samples, 2)]
    args = transformers.TrainingArguments(
        output_dir=str(tmp_path / "out"), use_cpu=True, report_to=[], logging_strategy="no",
        save_strategy="no", disable_tqdm=True, dataloader_num_workers=0, seed=0, **fields)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer = transformers.Trainer(model=Tiny(), args=args, train_dataset=data)
        trainer.train()
    assert trainer.state.max_steps == trainer.state.global_step
    return trainer.state.global_step


HF_RUNS = [  # samples, TrainingArguments fields
    (64, {"max_steps": 7, "per_device_train_batch_size": 4, "lr_scheduler_type": "cosine"}),
    (64, {"num_train_epochs": 2.5, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 3,
          "lr_scheduler_type": "cosine_with_restarts", "lr_scheduler_kwargs": {"num_cycles": 2}}),
    (10, {"num_train_epochs": 3, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 5}),
]


@pytest.mark.parametrize("samples, fields", HF_RUNS, ids=["max_steps", "epochs_accumulated", "short_epoch"])
def test_hf_run_is_the_trainers_updates(tmp_path, samples, fields):
    trained = _hf_trained(tmp_path, samples, fields)
    batches = math.ceil(samples / fields["per_device_train_batch_size"])  # len(train_dataloader)
    per_epoch = max(1, math.ceil(batches / fields.get("gradient_accumulation_steps", 1)))
    prog = _imported(tmp_path, "args.json", json.dumps(fields), "hf-args",
                     **({} if "max_steps" in fields else {"steps_per_epoch": per_epoch}))
    assert prog.run == trained


def test_hf_cosine_of_10000_steps_is_a_run_of_10000_steps(tmp_path, capsys):
    """The issue's case: a periodic HF cosine is checked and drawn over its run, not forever."""
    from schedlang.cli import main

    config = tmp_path / "args.json"
    config.write_text(json.dumps({"lr_scheduler_type": "cosine_with_restarts", "max_steps": 10_000,
                                  "warmup_steps": 100, "learning_rate": 3e-4,
                                  "lr_scheduler_kwargs": {"num_cycles": 4}}))
    out = tmp_path / "lr.sched"
    assert main(["import", str(config), "-o", str(out)]) == 0
    assert schedlang.load(out).run == 10_000
    capsys.readouterr()
    assert main(["check", str(out)]) == 0
    assert "run: 10,000 steps (the last update is step 9,999)" in capsys.readouterr().out


def test_hf_export_writes_the_run_back_into_the_arguments(tmp_path):
    original = tmp_path / "args.json"
    original.write_text(json.dumps({"lr_scheduler_type": "cosine", "max_steps": 900, "warmup_steps": 30,
                                    "learning_rate": 1e-4, "per_device_train_batch_size": 8}))
    text = import_file(original).replace("run = 900", "run = 1200").replace("=900", "=1200")
    assert "run = 1200" in text and "num_training_steps=1200" in text
    written = json.loads(export(text, "lr.sched", format="hf-args",
                                into=Original(original.read_text(), str(original))))
    assert written["max_steps"] == 1200 and written["per_device_train_batch_size"] == 8
    back = tmp_path / "back.json"
    back.write_text(json.dumps(written))
    assert schedlang.compile(import_file(back)).run == 1200


def test_hf_export_refuses_a_run_the_trainer_cannot_state():
    text = "run = 500\nschedule lr = hf.cosine(lr=1e-3, num_warmup_steps=10, num_training_steps=1000)\n"
    with pytest.raises(schedlang.SchedlangError, match="the HF Trainer trains max_steps") as info:
        export(text, "lr.sched", format="hf-args")
    assert (info.value.line, info.value.column) == (1, 1)


# -- Megatron-LM: update_train_iters and the training loop ----------------------------------------------


def _megatron_iterations(flags: dict) -> int:
    """``args.train_iters`` after Megatron-LM's ``update_train_iters`` (megatron-core 0.19.2's
    ``training.py``) with its batch calculator, and the iterations ``while iteration <
    args.train_iters`` then trains."""
    from .test_megatron_batch import core_019

    calculators = core_019()
    training = framework_file(MEGATRON_019 / "training/training.py", "megatron-core 0.19.2")
    unset = dict.fromkeys(("train_iters", "train_samples", "step_batch_size_schedule", "global_batch_size",
                           "rampup_batch_size"))
    args = types.SimpleNamespace(**{**unset, **flags})
    if args.step_batch_size_schedule is not None:
        calculators._GLOBAL_NUM_MICROBATCHES_CALCULATOR = calculators.StepBatchsizeNumMicroBatchesCalculator(
            1, 1, False, 1, args.step_batch_size_schedule, flags.get("seq_length"))
    namespace = {"update_num_microbatches": calculators.update_num_microbatches,
                 "get_current_global_batch_size": calculators.get_current_global_batch_size,
                 "print_rank_0": lambda *_: None}
    _function(training, "update_train_iters", namespace)(args)
    iteration = 0
    while iteration < args.train_iters:  # train()'s loop
        iteration += 1
    return iteration


def _megatron_ramp_iterations(train_samples: int, start: int, increment: int, ramp: int, batch: int) -> int:
    """megatron-core <= 0.17's ``update_train_iters`` under ``--rampup-batch-size`` (Megatron-LM
    core_r0.16.0 ``megatron/training/training.py``: its training.py is not installed here, so its
    loop is written out) on the installed 0.16.1 ramp calculator."""
    calculator = real("megatron.core.num_microbatches_calculator").RampupBatchsizeNumMicroBatchesCalculator(
        batch, 1, 1, False, 1, start, increment, ramp)
    iterations = consumed = 0
    while consumed <= ramp:
        calculator.update(consumed, False)
        consumed += calculator.get_current_global_batch_size()
        iterations += 1
    return iterations + (train_samples - consumed) // batch


MEGATRON_RUNS = [  # the command's flags, the flags update_train_iters reads
    ("--train-iters 500 --lr 1e-4 --lr-decay-style cosine --lr-warmup-iters 10",
     {"train_iters": 500}),
    ("--train-samples 28850 --global-batch-size 96 --lr 1e-4 --lr-decay-samples 24000 "
     "--lr-warmup-samples 960",
     {"train_samples": 28850, "global_batch_size": 96}),
    ('--train-samples 100000 --lr 3e-4 --lr-decay-samples 90000 --lr-warmup-samples 1000 '
     '--step-batch-size-schedule "0:32 20001:256"',
     {"train_samples": 100000, "step_batch_size_schedule": "0:32 20001:256"}),
    ('--train-samples 99999 --lr 3e-4 --lr-decay-samples 90000 --lr-warmup-samples 1000 --seq-length 2048 '
     '--step-batch-size-schedule "0:32 41M:256"',
     {"train_samples": 99999, "step_batch_size_schedule": "0:32 41M:256", "seq_length": 2048}),
]


@pytest.mark.parametrize("command, flags", MEGATRON_RUNS, ids=["iters", "samples", "step_schedule", "tokens"])
def test_megatron_run_is_update_train_iters(tmp_path, command, flags):
    prog = _imported(tmp_path, "run.sh", f"python pretrain_gpt.py {command}\n", "megatron-args")
    assert prog.run == _megatron_iterations(flags)


@pytest.mark.parametrize("ramp", [(32, 32, 20000, 256, 100000), (16, 16, 5000, 64, 5001),
                                  (8, 8, 999, 64, 4000)])
def test_megatron_run_under_a_rampup_is_the_0_17_rule(tmp_path, ramp):
    start, increment, samples, batch, train = ramp
    command = (f"python pretrain_gpt.py --train-samples {train} --lr 3e-4 --lr-decay-samples {train - 1} "
               f"--rampup-batch-size {start} {increment} {samples} --global-batch-size {batch}\n")
    prog = _imported(tmp_path, "ramp.sh", command, "megatron-args")
    assert prog.run == _megatron_ramp_iterations(train, start, increment, samples, batch)


def test_megatron_run_is_a_parameter_where_train_iters_is_one(tmp_path):
    path = tmp_path / "run.sh"
    path.write_text("TRAIN=400\npython pretrain_gpt.py --train-iters $TRAIN --lr 3e-4 "
                    "--lr-decay-style cosine\n")
    text = import_file(path, format="megatron-args")
    assert "run = train" in text
    assert schedlang.compile(text).run == 400
    assert schedlang.compile(text, params={"train": 650}).run == 650


@pytest.mark.parametrize("command, flag", [
    ("--train-iters 500 --lr 1e-4 --lr-decay-style cosine --lr-decay-iters 400 --lr-warmup-iters 10",
     lambda run: f"--train-iters {run}"),
    ("--train-samples 28800 --global-batch-size 96 --lr 1e-4 --lr-decay-samples 24000 "
     "--lr-warmup-samples 960",
     lambda run: f"--train-samples {run * 96}"),
    ('--train-samples 100000 --lr 3e-4 --lr-decay-samples 90000 --lr-warmup-samples 1000 '
     '--step-batch-size-schedule "0:32 20001:256"', lambda run: "--train-samples 105120"),
], ids=["iters", "samples", "step_schedule"])
def test_megatron_export_writes_the_run_back(tmp_path, command, flag):
    """import, a longer run, export --into the command: its --train-* trains the new run (the
    export's proof reads the merged command back and checks its run, ``common/proof.py``)."""
    original = tmp_path / "run.sh"
    original.write_text(f"python pretrain_gpt.py {command}\n")
    text = import_file(original, format="megatron-args")
    line = next(line for line in text.splitlines() if line.startswith("run = "))
    longer = "run = 105120sp" if "sp" in line.split("#")[0] else f"run = {schedlang.compile(text).run + 20}"
    text = text.replace(line, longer)
    run = schedlang.compile(text).run
    written = export(text, "lr.sched", format="megatron-args",
                     into=Original(original.read_text(), str(original)))
    assert flag(run) in written
    name, value = flag(run).split()
    assert run == _megatron_iterations({name.removeprefix("--").replace("-", "_"): int(value),
                                        **_batch_flags(command)})


def _batch_flags(command: str) -> dict:
    if "step-batch-size-schedule" in command:
        return {"step_batch_size_schedule": "0:32 20001:256"}
    return {"global_batch_size": 96} if "global-batch-size" in command else {}


# -- torchtitan: the train loop's condition ----------------------------------------------------------------


@pytest.mark.parametrize("config", ["torchtitan_llama_8b.toml", "torchtitan_defaults.toml",
                                    "torchtitan_wsd.toml"])
def test_torchtitan_run_is_the_train_loops_steps(config):
    configs = real("torchtitan.config.configs")
    trainer = framework_file(Path(configs.__file__).parents[1] / "trainer.py", "torchtitan")
    should_continue = _function(trainer, "should_continue_training", {}, cls="Trainer")
    import tomllib

    steps = tomllib.loads((CONFIGS / config).read_text()).get("training", {}).get(
        "steps", configs.TrainingConfig().steps)
    job = types.SimpleNamespace(training=types.SimpleNamespace(steps=steps))
    state = types.SimpleNamespace(step=0, config=job)
    while should_continue(state):  # Trainer.train: while self.should_continue_training(): self.step += 1
        state.step += 1
    assert schedlang.compile(import_file(CONFIGS / config, format="torchtitan-toml")).run == state.step


# -- Composer: Timestamp < max_duration ----------------------------------------------------------------------


def _composer_batches(max_duration: str, dataloader_len: int, batch: int = 1, seq_len: int = 1) -> int:
    """The batches Composer's Trainer trains: it goes on while ``state.timestamp <
    state.max_duration`` (the pinned ``composer/core/time.py``'s comparison, in the duration's
    unit), each batch advancing the timestamp by its samples and tokens, each epoch of
    ``dataloader_len`` batches ending with ``to_next_epoch``."""
    from anchors.reference import AnchorUnavailable, _load_composer

    try:
        time = _load_composer().time
    except AnchorUnavailable as exc:
        pytest.skip(str(exc))
    duration = time.Time.from_timestring(max_duration)
    stamp = time.Timestamp()
    while stamp < duration:
        for _ in range(dataloader_len):
            stamp = stamp.to_next_batch(samples=batch, tokens=batch * seq_len)
            if stamp >= duration:
                break
        else:
            stamp = stamp.to_next_epoch()
    return int(stamp.batch)


COMPOSER_RUNS = [  # the YAML, Composer's dataloader_len (steps_per_epoch), batch, seq_len
    ("max_duration: 400ba\nscheduler: {name: cosine_with_warmup, t_warmup: 50ba}\n", 37, 1, 1),
    ("max_duration: 4ep\nscheduler: {name: linear_decay_with_warmup, t_warmup: 0.125dur}\n", 37, 1, 1),
    ("max_duration: 3\nscheduler: {name: linear_decay_with_warmup, t_warmup: 10ba}\n", 11, 1, 1),
    ("max_duration: 10000sp\nglobal_train_batch_size: 96\n"
     "scheduler: {name: cosine_with_warmup, t_warmup: 960sp}\n", 1000, 96, 1),
    ("max_duration: 1000001tok\nglobal_train_batch_size: 8\nmax_seq_len: 2048\n"
     "scheduler: {name: cosine_with_warmup, t_warmup: 100000tok}\n", 1000, 8, 2048),
]


@pytest.mark.parametrize("yaml, per_epoch, batch, seq_len", COMPOSER_RUNS,
                         ids=["ba", "ep", "int_ep", "sp", "tok"])
def test_composer_run_is_the_trainers_batches(tmp_path, yaml, per_epoch, batch, seq_len):
    duration = yaml.split("\n")[0].split(": ")[1]
    duration = duration if not duration.isdigit() else duration + "ep"  # the Trainer's default unit
    params = {"steps_per_epoch": per_epoch} if duration.endswith("ep") else {}
    prog = _imported(tmp_path, "run.yaml", yaml, "composer-yaml", **params)
    assert prog.run == _composer_batches(duration, per_epoch, batch, seq_len)


def test_composer_export_writes_the_run_as_max_duration(tmp_path):
    original = tmp_path / "run.yaml"
    original.write_text("max_duration: 4800ba\nscheduler: {name: cosine_with_warmup, t_warmup: 100ba, "
                        "alpha_f: 0.1}\noptimizer: {name: decoupled_adamw, lr: 6.0e-4}\n")
    text = import_file(original, format="composer-yaml")
    assert "run = max_duration" in text
    written = export(text, "lr.sched", format="composer-yaml", params={"max_duration": 6000},
                     into=Original(original.read_text(), str(original)))
    assert "max_duration: 6000ba" in written
    back = tmp_path / "back.yaml"
    back.write_text(written)
    assert schedlang.compile(import_file(back, format="composer-yaml")).run == 6000
    tokens = "param seq_len: int = 2048\nbatch = 8\nrun = 1000001tok\nschedule lr = composer." \
             "CosineAnnealingWithWarmupScheduler(t_warmup=100000tok, t_max=1000001tok, lr=1e-3)\n"
    written = export(tokens, "lr.sched", format="composer-yaml")
    assert "max_duration: 1000001tok" in written


# -- timm: create_scheduler_v2's num_epochs --------------------------------------------------------------


def test_timm_run_is_create_scheduler_v2s_num_epochs():
    from formats.test_timm_args import TIMM, timm_reference  # the configs and train.py's arguments

    from schedlang.formats.timm_args import TRAIN_DEFAULTS

    scheduler_module = real("timm.scheduler")
    for name, arguments, params, _, _ in TIMM:
        cfg = types.SimpleNamespace(**{**TRAIN_DEFAULTS, **arguments})
        updates = params.get("updates_per_epoch", 0)
        _, num_epochs = scheduler_module.create_scheduler_v2(
            timm_reference.__globals__["TC"].optimizer(1.0), **scheduler_module.scheduler_kwargs(cfg),
            updates_per_epoch=updates)
        run = schedlang.compile(import_file(CONFIGS / name, format="timm-args"), params=params).run
        assert run == num_epochs * (updates or 1), name  # t counts epochs, or updates


# -- mmengine: the train loops' max_iters -------------------------------------------------------------------


@pytest.mark.parametrize("config, epoch_length", [
    ("mmdet_retina_1x.py", 7), ("mmpose_epoch_momentum.py", None), ("mmseg_poly_iters.py", None),
    ("mmpretrain_vit_cosine.py", 5)])
def test_mmengine_run_is_the_loops_length(config, epoch_length):
    import torch

    sys.modules.setdefault("cv2", types.ModuleType("cv2"))  # mmengine.runner's visualizer imports it
    loops = real("mmengine.runner.loops")
    train_cfg = _train_cfg(CONFIGS / config)
    loader = torch.utils.data.DataLoader(list(range(epoch_length or 3)), batch_size=1)
    kind = train_cfg.pop("type", "EpochBasedTrainLoop")
    train_cfg.pop("by_epoch", None)
    train_cfg.pop("val_interval", None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loop = getattr(loops, kind)(types.SimpleNamespace(), loader, **train_cfg)
    text = import_file(CONFIGS / config, format="mmengine-config")
    prog = schedlang.compile(text, params={"epoch_length": epoch_length} if epoch_length else None)
    by_epoch = "t counts epochs" in text
    assert prog.run == (loop.max_epochs if by_epoch else loop.max_iters)


def _train_cfg(path: Path) -> dict:
    """``train_cfg`` of a config (its ``dict(...)`` of literals and names assigned a literal before
    it, as the configs here write it)."""
    names: dict = {}
    for node in ast.parse(path.read_text()).body:
        if not (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)):
            continue
        if node.targets[0].id == "train_cfg":
            return {k.arg: names[k.value.id] if isinstance(k.value, ast.Name) else ast.literal_eval(k.value)
                    for k in node.value.keywords}
        try:
            names[node.targets[0].id] = ast.literal_eval(node.value)
        except ValueError:
            continue
    raise AssertionError(f"{path.name} has no train_cfg")


# -- Cerebras ModelZoo: the loop's num_steps / max_steps -------------------------------------------------


@pytest.mark.parametrize("loop, run", [
    ("trainer:\n  init:\n    loop: {max_steps: 2400, eval_frequency: 100}\n", 2400),
    ("trainer:\n  init:\n    loop: {num_steps: 900, max_steps: 2400}\n", 900),
    ("trainer:\n  init:\n    loop: {num_steps: 900}\n", 900),
    ("runconfig: {max_steps: 700}\n", 700),
    ("trainer:\n  init:\n    loop: {num_epochs: 3}\n", None),
], ids=["max_steps", "both", "num_steps", "legacy", "epochs"])
def test_cerebras_run_is_the_loops_steps(tmp_path, loop, run):
    """ModelZoo's loop from global step 0 (``compute_num_steps``: num_steps steps, up to the global
    step max_steps; the whole rule, run against ModelZoo's own loop, is test_cerebras_loop.py).  A
    run exported into the config sets the keys it has (max_steps where it has neither), and the
    merged config reads back that run."""
    schedulers = "- LinearLR: {initial_learning_rate: 0.0, end_learning_rate: 0.001, total_iters: 1000}\n"
    if loop.startswith("trainer"):
        text = loop + "    schedulers:\n" + "".join(f"      {line}\n" for line in schedulers.splitlines())
    else:
        text = loop + "trainer:\n  init:\n    schedulers:\n      " + schedulers
    assert _imported(tmp_path, "run.yaml", text, "cerebras-yaml").run == run
    if run is None:
        return
    from schedlang.formats.cerebras_export import _merged

    original = Original(text, str(tmp_path / "run.yaml"))
    shorter = f"run = {run - 100}\nschedule lr = linear(0, 0.001, 1000)\n"
    merged = tmp_path / "merged.yaml"
    merged.write_text(_merged(original, export(shorter, "lr.sched", format="cerebras-yaml", into=original)))
    assert _imported(tmp_path, "merged.yaml", merged.read_text(), "cerebras-yaml").run == run - 100


def test_composer_export_refuses_a_run_other_than_the_max_duration_dur_counts_against():
    text = ("param max_duration: int = 400\nrun = 500\n"
            "schedule lr = composer.CosineAnnealingWithWarmupScheduler(t_warmup=0.1dur, lr=1e-3)\n")
    with pytest.raises(schedlang.SchedlangError, match="'dur' counts against max_duration") as info:
        export(text, "lr.sched", format="composer-yaml")
    assert (info.value.line, info.value.column) == (2, 1)


def test_writers_without_a_run_length_say_so():
    """DeepSpeed's config states no run: the export warns at `run`."""
    from schedlang.errors import SchedlangWarning

    deepspeed = "run = 900\nschedule lr = deepspeed.WarmupDecayLR(total_num_steps=1000, warmup_max_lr=3e-4)\n"
    with pytest.warns(SchedlangWarning, match="the run's length is not written"):
        export(deepspeed, "lr.sched", format="deepspeed-json")
