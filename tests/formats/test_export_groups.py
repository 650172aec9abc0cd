"""Per-group lrs in exports (issue 41, item 4): the frameworks that give a param group a schedule
of its own get one written, each group's lr run through the framework's real code at every step;
the others, and what those cannot say, are refused at the group's schedule, naming it.

- Megatron-LM: ``--decoupled-lr`` / ``--decoupled-min-lr``, the embedding and output layers'
  own max and min lr (megatron-core's ``ParamGroupOverride``, built by its real
  ``get_standard_config_overrides`` and ``_get_param_groups``), ``schedule lr__decoupled``.
- DeepSpeed: its Muon optimizer's halves, ``muon_lr`` and ``adam_lr`` (its real
  ``DeepSpeedEngine._muon_param_groups``), under one scheduler block that scales each half's
  own lr (``WarmupCosineLR``, ``WarmupLR`` without ``warmup_max_lr``): ``lr__muon``, ``lr__adam``.
"""

from __future__ import annotations

import json
import tempfile
import warnings
from types import SimpleNamespace

import pytest
from frameworks.megatron_cases import CLASS_DEFAULTS
from frameworks.real import real

import schedlang
from schedlang.formats.export import export
from schedlang.importers import import_file

DECOUPLED = """run = 1000
schedule lr = warmup(linear, 100) >> cosine(3e-4, 3e-5, 900)
schedule lr__decoupled = warmup(linear, 100) >> cosine(1e-3, 1e-4, 900)
"""
SAME_FLOOR = """run = 600
schedule lr = warmup(linear, 50) >> linear(3e-4, 3e-5, 550)
schedule lr__decoupled = warmup(linear, 50) >> linear(6e-4, 3e-5, 550)
"""
MUON = """schedule lr__muon = constant(0) for 1 >> (0.02 * t / 100 for 100)
    >> (0.002 + 0.018 * (1 + cos(pi * (t + 1) / 900)) / 2 for 899) >> constant(0.002)
schedule lr__adam = deepspeed.WarmupCosineLR(total_num_steps=1000, warmup_num_steps=100,
    warmup_type="linear", cos_min_ratio=0.1, lr=3e-4)
"""
MUON_WARMUP = """schedule lr__muon = deepspeed.WarmupLR(warmup_num_steps=50, warmup_type="linear", lr=0.02)
schedule lr__adam = deepspeed.WarmupLR(warmup_num_steps=50, warmup_type="linear", lr=1e-4)
"""


def _flags(text: str) -> dict:
    words = text.replace("\\\n", " ").split()
    return {w.lstrip("-"): words[i + 1] for i, w in enumerate(words) if w.startswith("--")}


def _megatron_groups(flags: dict, steps: int) -> list[tuple[bool, list[float]]]:
    """Each param group of a model with an embedding and an output layer, built by megatron-core's
    own ``_get_param_groups`` from the flags' ``OptimizerConfig`` (its ``--decoupled-lr`` becomes a
    ``ParamGroupOverride``), its lr at every step of the real ``OptimizerParamScheduler``:
    ``(is_embedding_or_output, lrs)``."""
    import torch

    core = real("megatron.core.optimizer")
    scheduler_module = real("megatron.core.optimizer_param_scheduler")
    def number(flag):
        return float(flags[flag]) if flag in flags else None

    config = core.OptimizerConfig(lr=float(flags["lr"]), min_lr=float(flags.get("min-lr", 0)),
                                  decoupled_lr=number("decoupled-lr"),
                                  decoupled_min_lr=number("decoupled-min-lr"))
    model = torch.nn.Sequential(torch.nn.Embedding(10, 4), torch.nn.Linear(4, 4), torch.nn.Linear(4, 10))
    model[0].weight.is_embedding_or_output_parameter = True
    model[2].weight.is_embedding_or_output_parameter = True
    started = not torch.distributed.is_initialized()
    if started:  # _get_param_groups gathers the groups' keys over the ranks: a world of one
        torch.distributed.init_process_group("gloo", init_method=f"file://{tempfile.mktemp()}", rank=0,
                                             world_size=1)
    try:
        groups = core._get_param_groups([model], config, None)
    finally:
        if started:
            torch.distributed.destroy_process_group()
    kwargs = {**CLASS_DEFAULTS, "max_lr": config.lr, "min_lr": config.min_lr,
              "lr_warmup_steps": int(flags.get("lr-warmup-iters", 0)),
              "lr_decay_steps": int(flags["lr-decay-iters"]),
              "lr_decay_style": flags.get("lr-decay-style", "linear")}
    scheduler = scheduler_module.OptimizerParamScheduler(SimpleNamespace(param_groups=groups), **kwargs)
    values = [[] for _ in groups]
    for _ in range(steps):
        for group, lrs in zip(groups, values):
            lrs.append(float(group["lr"]))
        scheduler.step(1)
    embedding = {id(model[0].weight), id(model[2].weight)}
    return [(any(id(p) in embedding for p in g["params"]), lrs)
            for g, lrs in zip(groups, values) if g["params"]]


def _close(ours, theirs):
    assert ours == pytest.approx(theirs, rel=1e-12, abs=1e-18)


@pytest.mark.parametrize("source, written, absent", [
    (DECOUPLED, ["--decoupled-lr 0.001", "--decoupled-min-lr 0.0001"], []),
    (SAME_FLOOR, ["--decoupled-lr 0.0006"], ["--decoupled-min-lr"]),  # min_lr is --min-lr's
])
def test_megatron_decoupled_lr_is_each_groups_lr_in_megatron_core(source, written, absent):
    flags = export(source, "lr.sched", format="megatron-args")
    for flag in written:
        assert flag in flags
    for flag in absent:
        assert flag not in flags
    program = schedlang.compile(source)
    groups = _megatron_groups(_flags(flags), program.run + 50)
    assert {embedding for embedding, _ in groups} == {True, False}
    for embedding, lrs in groups:
        ours = program["lr__decoupled" if embedding else "lr"].values(range(len(lrs)))
        _close(ours, lrs)


def test_megatron_import_gives_the_embedding_and_output_layers_their_schedule(tmp_path):
    command = tmp_path / "train.sh"
    command.write_text("python pretrain_gpt.py --lr 3e-4 --min-lr 3e-5 --decoupled-lr 1e-3 "
                       "--decoupled-min-lr 1e-4 --lr-warmup-iters 100 --lr-decay-iters 800 "
                       "--lr-decay-style WSD --lr-wsd-decay-iters 200 --lr-wsd-decay-style minus_sqrt "
                       "--train-iters 800\n")
    text = import_file(command, format="megatron-args")
    assert "schedule lr__decoupled = megatron.OptimizerParamScheduler(" in text
    program = schedlang.compile(text)
    core = real("megatron.core.optimizer")
    scheduler_module = real("megatron.core.optimizer_param_scheduler")
    config = core.OptimizerConfig(lr=3e-4, min_lr=3e-5, decoupled_lr=1e-3, decoupled_min_lr=1e-4)
    overrides = core.get_standard_config_overrides(config)  # megatron-core's own ParamGroupOverrides
    decoupled = next(v for v in overrides.values() if "max_lr" in v)
    groups = [{"max_lr": 3e-4, "min_lr": 3e-5}, {"max_lr": 3e-4, "min_lr": 3e-5, **decoupled}]
    scheduler = scheduler_module.OptimizerParamScheduler(
        SimpleNamespace(param_groups=groups), **{**CLASS_DEFAULTS, "max_lr": 3e-4, "min_lr": 3e-5,
                                                  "lr_warmup_steps": 100, "lr_decay_steps": 800,
                                                  "lr_decay_style": "WSD", "wsd_decay_steps": 200,
                                                  "lr_wsd_decay_style": "minus_sqrt"})
    lrs = [[], []]
    for _ in range(850):
        for group, seen in zip(groups, lrs):
            seen.append(float(group["lr"]))
        scheduler.step(1)
    _close(program["lr"].values(range(850)), lrs[0])
    _close(program["lr__decoupled"].values(range(850)), lrs[1])


def test_megatron_export_into_a_command_with_decoupled_lr_round_trips(tmp_path):
    command = tmp_path / "train.sh"
    command.write_text("python pretrain_gpt.py --lr 1e-4 --decoupled-lr 5e-4 --lr-decay-iters 1000 "
                       "--train-iters 1000 --global-batch-size 8\n")
    flags = export(DECOUPLED, "lr.sched", format="megatron-args", into=command)
    assert "--decoupled-lr 0.001" in flags and "--decoupled-lr 5e-4" not in flags
    plain = export("run = 1000\nschedule lr = warmup(linear, 100) >> cosine(3e-4, 3e-5, 900)\n", "lr.sched",
                   format="megatron-args", into=command)
    # the file drives every group alike: the command's --decoupled-lr is replaced (and said so), not kept
    assert "--decoupled-lr (1:" in plain and "    --decoupled-lr" not in plain


@pytest.mark.parametrize("source, line, message", [
    (DECOUPLED.replace("lr__decoupled", "lr__muon"), 3,
     "'lr__muon' gives the param groups tagged 'muon' their own lr: Megatron-LM's flags give a param group "
     "an lr of its own only for the embedding and output layers"),
    (DECOUPLED.replace("warmup(linear, 100) >> cosine(1e-3, 1e-4, 900)",
                       "warmup(linear, 200) >> cosine(1e-3, 1e-4, 800)"), 3,
     "'lr__decoupled' is not megatron.OptimizerParamScheduler with its own max_lr and min_lr"),
    (DECOUPLED + "schedule weight_decay__decoupled = constant(0)\n", 4,
     "'weight_decay__decoupled' gives the param groups tagged 'decoupled' their own weight_decay"),
])
def test_megatron_refuses_what_its_flags_cannot_say_at_the_group(source, line, message):
    with pytest.raises(schedlang.SchedlangError) as info:
        export(source, "lr.sched", format="megatron-args")
    assert message in info.value.message and info.value.span.line == line
    assert "--schedule lr" not in (info.value.hint or "")


def test_a_shape_refusal_names_the_first_differing_step():
    source = DECOUPLED.replace("warmup(linear, 100) >> cosine(1e-3, 1e-4, 900)",
                               "warmup(linear, 200) >> cosine(1e-3, 1e-4, 800)")
    with pytest.raises(schedlang.SchedlangError, match=r"first differs at step 1 \(5e-06 here vs 1e-05 "):
        export(source, "lr.sched", format="megatron-args")


# -- DeepSpeed's Muon -----------------------------------------------------------------------------


def _deepspeed_halves(config: dict, steps: int) -> dict[str, list[float]]:
    """The lr of each half DeepSpeed's own ``_muon_param_groups`` makes of a model's one param
    group (a weight for Muon, a bias for Adam), from the config's optimizer params, at every step
    of the config's real scheduler (stepped after each optimizer step, as the engine does)."""
    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        engine = real("deepspeed.runtime.engine")
        schedules = real("deepspeed.runtime.lr_schedules")
    layer = torch.nn.Linear(4, 4)
    layer.weight.use_muon, layer.bias.use_muon = True, False
    groups = engine.DeepSpeedEngine._muon_param_groups(list(layer.parameters()),
                                                       config["optimizer"]["params"])
    optimizer = torch.optim.SGD(groups, lr=1.0)  # a stand-in that keeps each group's lr and keys
    block = config["scheduler"]
    scheduler = getattr(schedules, block["type"])(optimizer, **block["params"])
    lrs = {g["name"].split("-")[0]: [] for g in optimizer.param_groups}
    for _ in range(steps):
        for group in optimizer.param_groups:
            lrs[group["name"].split("-")[0]].append(float(group["lr"]))
        scheduler.step()
    return lrs


@pytest.mark.parametrize("source, kind", [(MUON, "WarmupCosineLR"), (MUON_WARMUP, "WarmupLR")])
def test_deepspeed_muon_and_adam_lrs_are_each_halfs_lr_in_deepspeed(source, kind):
    config = json.loads(export(source, "lr.sched", format="deepspeed-json"))
    assert config["optimizer"]["type"] == "Muon" and config["scheduler"]["type"] == kind
    assert set(config["optimizer"]["params"]) == {"muon_lr", "adam_lr"}
    assert not {"lr", "warmup_max_lr"} & set(config["scheduler"]["params"])
    program = schedlang.compile(source)
    halves = _deepspeed_halves(config, 1100)
    assert set(halves) == {"muon", "adam"}
    for half, lrs in halves.items():
        _close(program[f"lr__{half}"].values(range(len(lrs))), lrs)


def test_deepspeed_import_of_muon_halves_and_of_the_7713_overwrite(tmp_path):
    split = tmp_path / "split.json"
    split.write_text(json.dumps({
        "optimizer": {"type": "Muon", "params": {"lr": 1e-4, "muon_lr": 0.02, "adam_lr": 3e-4}},
        "scheduler": {"type": "WarmupCosineLR",
                      "params": {"total_num_steps": 500, "warmup_num_steps": 50, "cos_min_ratio": 0.05}}}))
    overwritten = tmp_path / "7713.json"  # deepspeedai/DeepSpeed#7713's config
    overwritten.write_text(json.dumps({
        "optimizer": {"type": "Muon", "params": {"lr": 1e-4, "muon_lr": 2e-2, "adam_lr": 1e-5}},
        "scheduler": {"type": "WarmupLR", "params": {"warmup_min_lr": 0, "warmup_max_lr": 1e-3,
                                                     "warmup_num_steps": 4}}}))
    text = import_file(split, format="deepspeed-json")
    program = schedlang.compile(text)
    assert set(program.schedules) == {"lr__muon", "lr__adam"}
    for half, lrs in _deepspeed_halves(json.loads(split.read_text()), 550).items():
        _close(program[f"lr__{half}"].values(range(550)), lrs)
    text = import_file(overwritten, format="deepspeed-json")
    assert "overwritten from the first step (DeepSpeed #7713)" in text
    program = schedlang.compile(text)
    assert set(program.schedules) == {"lr"}
    for lrs in _deepspeed_halves(json.loads(overwritten.read_text()), 20).values():
        _close(program["lr"].values(range(20)), lrs)


def test_deepspeed_muon_export_into_a_muon_config(tmp_path):
    original = tmp_path / "ds.json"
    original.write_text(json.dumps({"train_batch_size": 8,
                                    "optimizer": {"type": "Muon", "params": {"lr": 1e-4, "muon_lr": 1e-2,
                                                                             "betas": [0.9, 0.95]}},
                                    "scheduler": {"type": "WarmupLR", "params": {}}}))
    config = json.loads(export(MUON, "lr.sched", format="deepspeed-json", into=original))
    assert config["train_batch_size"] == 8 and config["optimizer"]["params"]["betas"] == [0.9, 0.95]
    written = config["optimizer"]["params"]
    assert (written["muon_lr"], written["adam_lr"]) == (0.02, 0.0003)
    adamw = tmp_path / "adamw.json"
    adamw.write_text(json.dumps({"optimizer": {"type": "AdamW", "params": {"lr": 1e-4}}}))
    with pytest.raises(schedlang.SchedlangError, match="does not optimize with DeepSpeed's Muon"):
        export(MUON, "lr.sched", format="deepspeed-json", into=adamw)


@pytest.mark.parametrize("source, line, message", [
    ("schedule lr__muon = deepspeed.WarmupDecayLR(total_num_steps=1000, warmup_max_lr=0.02)\n"
     "schedule lr__adam = deepspeed.WarmupDecayLR(total_num_steps=1000, warmup_max_lr=3e-4)\n", 1,
     "which sets one lr curve for every param group: DeepSpeed's config then overwrites muon_lr and adam_lr "
     "(DeepSpeed #7713)"),
    (MUON.replace("lr__adam", "lr__adamw"), 3,
     "'lr__adamw' gives the param groups tagged 'adamw' their own lr: DeepSpeed's config gives a param group "
     "an lr of its own only as a half of its Muon optimizer"),
    (MUON.replace("total_num_steps=1000", "total_num_steps=2000"), 3,
     "'lr__adam' is not deepspeed.WarmupCosineLR with its own lr: one scheduler block drives both halves"),
    (MUON.split("schedule lr__adam")[0], 1, "the file schedules only 'lr__muon'"),
    (MUON + "schedule lr = constant(1e-3)\n", 5, "'lr' beside lr__muon / lr__adam"),
])
def test_deepspeed_refuses_what_its_config_cannot_say_at_the_group(source, line, message):
    with pytest.raises(schedlang.SchedlangError) as info:
        export(source, "lr.sched", format="deepspeed-json")
    assert message in info.value.message and info.value.span.line == line
    assert "--schedule lr" not in (info.value.hint or "")


@pytest.mark.parametrize("fmt", ["hf-args", "composer-yaml", "torchtitan-toml"])
def test_one_scheduler_formats_refuse_a_group_naming_it(fmt):
    source = "run = 1000\nschedule lr = warmup(linear, 100) >> linear(1e-3, 0, 900)\n" \
             "schedule lr__muon = warmup(linear, 100) >> linear(2e-2, 0, 900)\n"
    with pytest.raises(schedlang.SchedlangError) as info:
        export(source, "lr.sched", format=fmt)
    assert (f"'lr__muon' gives the param groups tagged 'muon' their own lr, and {fmt} has one lr schedule "
            "for every param group") in info.value.message
    assert info.value.span.line == 3 and "deepspeed-json" in info.value.hint
