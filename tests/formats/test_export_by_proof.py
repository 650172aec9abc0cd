"""Export by proof (issue 41, item 3): a file whose lr is no preset call of the framework is
written as the framework's scheduler the prover proves equal to it (``common/by_proof.py``), or
refused at the schedule with the closest scheduler and its first differing step.

Each exported text is read back and proven equal by the writer itself; these tests also run it
through the framework's own scheduler code where the installed framework allows (megatron-core's
``OptimizerParamScheduler``, transformers' ``get_scheduler``, DeepSpeed's ``lr_schedules``,
Composer's schedulers), and compare every step with the file.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
import tomllib
from anchors import reference as R
from anchors.preset_cases import max_error
from frameworks.deepspeed_cases import deepspeed_values
from frameworks.megatron_cases import CLASS_DEFAULTS
from frameworks.real import real
from frameworks.torchtitan_cases import titan_values

import schedlang
from formats.test_hf_args import _get_scheduler_values
from schedlang.errors import SchedlangError
from schedlang.formats.export import export

ISSUE = "run = 100000\nschedule lr = warmup(linear, 2000) >> cosine(3e-4, 3e-5, 98000)\n"
TITAN = ("run = 1000\nschedule lr = warmup(linear, 99, start=1e-5) >> constant(1e-3) for 1 "
         ">> cosine(1e-3, 1e-4, 900)\n")
WSD = "warmup(linear, 100) >> constant(1e-3) for 700 >> cooldown(linear, 200, 1e-4)"

#: format, file (equal to one of the framework's presets, written without it), what the export says.
EQUAL = [
    ("megatron-args", ISSUE, ["--lr 0.0003", "--min-lr 3.0e-05", "--lr-warmup-iters 2000",
                              "--lr-decay-iters 100000", "--lr-decay-style cosine", "--train-iters 100000"]),
    ("megatron-args", "warmup(linear, 100) >> linear(1e-3, 1e-4, 900)",
     ["--lr-warmup-iters 100", "--lr-decay-iters 1000"]),  # linear: Megatron's default style
    ("megatron-args", WSD,
     ["--lr-decay-style WSD", "--lr-wsd-decay-iters 200", "--lr-wsd-decay-style linear"]),
    ("megatron-args", "linear(1, 0, 10)", ["--lr 1", "--lr-decay-iters 10"]),
    ("hf-args", "run = 1000\nschedule lr = warmup(linear, 100) >> cosine(1e-3, 0, 900)",
     ['"lr_scheduler_type": "cosine"', '"warmup_steps": 100', '"max_steps": 1000']),
    ("hf-args", "warmup(linear, 100) >> linear(2e-5, 0, 900)",
     ['"lr_scheduler_type": "linear"', '"learning_rate": 2e-05', '"max_steps": 1000']),
    ("hf-args", ISSUE, ['"lr_scheduler_type": "cosine_with_min_lr"', '"min_lr_rate": 0.1']),
    ("deepspeed-json", "constant(0) for 1 >> warmup(linear, 100) >> linear(1e-3, 0, 900)",
     ['"type": "WarmupDecayLR"', '"total_num_steps": 1000', '"warmup_num_steps": 100']),
    # DeepSpeed's step t runs its formula at t - 1, and its cosine is one step in at the warmup's end
    ("deepspeed-json", "constant(0) for 1 >> (1e-3 * t / 100 for 100) "
                       ">> (1e-4 + 9e-4 * (1 + cos(pi * (t + 1) / 900)) / 2 for 899) >> constant(1e-4)",
     ['"type": "WarmupCosineLR"', '"total_num_steps": 1000', '"cos_min_ratio": 0.1',
      '"warmup_type": "linear"']),
    ("composer-yaml", "warmup(linear, 100) >> cosine(1e-3, 1e-4, 900)",
     ["name: cosine_with_warmup", "t_warmup: 100ba", "t_max: 1000ba", "alpha_f: 0.1", "lr: 0.001"]),
    ("composer-yaml", "warmup(linear, 100) >> linear(1e-3, 0, 900)",
     ["name: linear_decay_with_warmup", "t_warmup: 100ba", "t_max: 1000ba"]),
    # torchtitan's ramp is (t + 1) / W and its decay starts a step after the warmup ends
    ("torchtitan-toml", TITAN, ["lr = 0.001", "steps = 1000", "warmup_steps = 100", 'decay_type = "cosine"',
                                "min_lr_factor = 0.1"]),
    ("cerebras-yaml", ISSUE, ["SequentialLR", "LinearLR", "CosineDecayLR"]),  # any chain, by construct
    # no Cerebras form by its syntax: the class, or a SequentialLR cut at breakpoints, by proof
    ("cerebras-yaml", "0.5 * cosine(2e-3, 0, 1000)", ["CosineDecayLR", "initial_learning_rate: 0.001"]),
    ("cerebras-yaml", "1e-3 * (if t < 100 then t / 100 else 1)", ["SequentialLR", "LinearLR", "ConstantLR"]),
    # step shapes: the drops read off the file (milestones, period, factor)
    ("composer-yaml", "step(1e-3, 0.5, 100)", ["name: step", "step_size: 100ba", "gamma: 0.5"]),
    ("composer-yaml", "constant(1e-3) for 300 >> constant(1e-4) for 300 >> constant(1e-5)",
     ["name: multistep", "milestones: [300ba, 600ba]"]),
    ("composer-yaml", "warmup(linear, 100) >> multistep(1e-3, 0.1, [200, 500])",
     ["name: multistep_with_warmup", "t_warmup: 100ba", "milestones: [300ba, 600ba]"]),
    # DeepSpeed: a ramp from a floor (warmup_min_ratio), a log ramp, a one-cycle, read on its clock
    ("deepspeed-json", "constant(0) for 1 >> (1e-4 + 9e-4 * t / 100 for 100) "
                       ">> (1e-4 + 9e-4 * (1 + cos(pi * (t + 1) / 900)) / 2 for 899) >> constant(1e-4)",
     ['"type": "WarmupCosineLR"', '"total_num_steps": 1000', '"warmup_min_ratio": 0.1']),
    ("deepspeed-json", "constant(0) for 1 >> (1e-3 * log(t + 1) / log(100) for 100) >> linear(1e-3, 0, 900)",
     ['"type": "WarmupDecayLR"', '"total_num_steps": 1000', '"warmup_num_steps": 100']),
    ("deepspeed-json", "linear(1e-4, 1e-3, 100) >> linear(1e-3, 1e-4, 100) >> constant(1e-4)",
     ['"type": "OneCycle"', '"cycle_first_step_size": 100']),
]

#: OLMo-core sets update t's lr at t + 1: the file read a step on is its scheduler
OLMO_EQUAL = [
    ("run = 1000\nschedule lr = warmup(linear, 99, start=3e-6) >> cosine(3e-4, 3e-5, 900)\n",
     ["olmo_core.optim.scheduler.CosWithWarmup", '"warmup_steps": 100', '"alpha_f": 0.1']),
    ("run = 2000\nschedule lr = warmup(linear, 199, start=5e-6) >> linear(1e-3, 1e-4, 1800)\n",
     ["olmo_core.optim.scheduler.WSD", '"warmup_steps": 200', '"decay_steps": 1800']),
]


@pytest.mark.parametrize("text, says", OLMO_EQUAL)
def test_a_file_equal_to_an_olmo_core_scheduler_is_written_as_it(text, says):
    exported = export(text, "lr.sched", format="olmo-core-json")  # read back and proven inside
    for fragment in says:
        assert fragment in exported, exported


def _source(text: str) -> str:
    return text if "schedule " in text else f"schedule lr = {text}\n"


@pytest.mark.parametrize("fmt, text, says", EQUAL, ids=[f"{f}:{t[-40:]}" for f, t, _ in EQUAL])
def test_a_file_equal_to_a_preset_is_written_as_that_preset(fmt, text, says):
    exported = export(_source(text), "lr.sched", format=fmt)  # read back and proven inside
    for fragment in says:
        assert fragment in exported, exported


def _steps(text: str) -> range:
    program = schedlang.compile(_source(text))
    return range(program.run if program.run is not None else 1200)


def _flags(text: str) -> dict:
    words = text.replace("\\\n", " ").split()
    return {w.lstrip("-"): words[i + 1] for i, w in enumerate(words) if w.startswith("--")}


def _megatron(flags: dict, steps: range) -> list[float]:
    """megatron-core's class, stepped by 1, built from the flags as Megatron-LM passes them."""
    from types import SimpleNamespace

    module = real("megatron.core.optimizer_param_scheduler")
    kwargs = {**CLASS_DEFAULTS, "max_lr": float(flags["lr"]), "min_lr": float(flags.get("min-lr", 0)),
              "lr_warmup_steps": int(flags.get("lr-warmup-iters", 0)),
              "lr_decay_steps": int(flags["lr-decay-iters"]),
              "lr_decay_style": flags.get("lr-decay-style", "linear")}
    if "lr-wsd-decay-iters" in flags:
        kwargs.update(wsd_decay_steps=int(flags["lr-wsd-decay-iters"]),
                      lr_wsd_decay_style=flags["lr-wsd-decay-style"])
    optimizer = SimpleNamespace(param_groups=[{}])
    scheduler = module.OptimizerParamScheduler(optimizer, **kwargs)
    values = []
    for _ in steps:
        values.append(float(optimizer.param_groups[0]["lr"]))
        scheduler.step(1)
    return values


def _framework_values(fmt: str, exported: str, steps: range) -> list[float]:
    if fmt == "megatron-args":
        return _megatron(_flags(exported), steps)
    if fmt == "hf-args":
        fields = json.loads(exported)
        return _get_scheduler_values(fields["lr_scheduler_type"], fields["learning_rate"],
                                     fields.get("warmup_steps", 0), fields["max_steps"],
                                     fields.get("lr_scheduler_kwargs"), len(steps))
    if fmt == "torchtitan-toml":
        data = tomllib.loads(exported)
        return titan_values(data["lr_scheduler"], data["training"]["steps"], data["optimizer"]["lr"], steps)
    if fmt == "deepspeed-json":
        config = json.loads(exported)
        lr = config.get("optimizer", {}).get("params", {}).get("lr", 1.0)
        return deepspeed_values(config["scheduler"]["type"], config["scheduler"]["params"], len(steps), lr=lr)
    import yaml

    from schedlang.formats.composer_names import EXPORT_NAMES

    data = yaml.safe_load(exported)
    kwargs = dict(data["scheduler"])
    cls = {v: k for k, v in EXPORT_NAMES.items()}.get(kwargs.pop("name"))
    try:
        values = R.composer_values(cls, kwargs, steps, max_duration=data.get("max_duration"))
    except R.AnchorUnavailable as exc:
        pytest.skip(str(exc))
    return [data["optimizer"]["lr"] * v for v in values]


RUNS = [(f, t) for f, t, _ in EQUAL if f != "cerebras-yaml"]


@pytest.mark.parametrize("fmt, text", RUNS, ids=[f"{f}:{t[-40:]}" for f, t in RUNS])
def test_the_framework_runs_the_export_as_the_file(fmt, text):
    exported = export(_source(text), "lr.sched", format=fmt)
    steps = _steps(text)
    ours = schedlang.compile(_source(text))["lr"].values(steps)
    assert max_error(_framework_values(fmt, exported, steps), ours, 1e-3) <= 1e-12


#: format, file equal to none of the framework's schedulers, the closest named, its first differing step.
NONE = [
    ("megatron-args", "warmup(linear, 100) >> poly(1e-3, 1e-4, 900, 2)", "megatron.OptimizerParamScheduler",
     101),
    ("hf-args", "warmup(linear, 100) >> exp(1e-3, 0.99, 1)", "hf.", None),
    ("deepspeed-json", ISSUE, "deepspeed.", 2001),
    ("composer-yaml", "warmup(linear, 100) >> poly(1e-3, 1e-4, 900, 3)", "composer.", None),
    ("hf-args", "warmup(linear, 10) >> cosine(1e-3, 0, 90) >> constant(5e-4)", "hf.", None),
    ("torchtitan-toml", "run = 1000\nschedule lr = warmup(linear, 100) >> cosine(1e-3, 1e-4, 900)",
     "torchtitan.lr_scheduler", 0),
    # OLMo-core sets update t's lr at t + 1: a warmup from 0 at update 0 is no OLMo-core scheduler
    ("olmo-core-json", "run = 1000\nschedule lr = warmup(linear, 100) >> cosine(3e-4, 3e-5, 900)",
     "olmo_core.", None),
    ("composer-yaml", "constant(1e-3) for 100 >> constant(5e-4) for 100 >> constant(1e-4)", "composer.", 200),
    ("cerebras-yaml", "cosine(1e-3, 0, 1000) for 100", "cerebras.", None),  # no class stops a cosine early
]


@pytest.mark.parametrize("fmt, text, closest, step", NONE, ids=[f"{f}:{t[-40:]}" for f, t, _, _ in NONE])
def test_a_file_equal_to_none_is_refused_with_the_closest_and_its_first_differing_step(fmt, text, closest,
                                                                                       step):
    with pytest.raises(SchedlangError) as info:
        export(_source(text), "lr.sched", format=fmt)
    library = {"olmo-core-json": "olmo_core"}.get(fmt, fmt.split("-")[0])
    found = re.search(rf"no {library} scheduler equals this lr schedule: the closest, ({re.escape(closest)}"
                      r"\w*\(.*\)), first differs at step (\d+) \((\S+) here vs (\S+) there\)",
                      info.value.message)
    assert found, info.value.message
    assert info.value.span.line == len(_source(text).splitlines())  # at the schedule
    if step is not None:
        assert int(found.group(2)) == step
    # the values named are the file's and the closest call's at that step
    at = int(found.group(2))
    assert float(found.group(3)) == pytest.approx(schedlang.compile(_source(text))["lr"](at), rel=1e-12)
    closest_lr = schedlang.compile(f"schedule lr = {found.group(1)}\n")["lr"]
    assert float(found.group(4)) == pytest.approx(closest_lr(at), rel=1e-12)


def test_export_by_proof_into_the_original_command(tmp_path):
    """--into: the found scheduler is written for the user's command, its other flags kept."""
    command = tmp_path / "run.sh"
    command.write_text("python pretrain_gpt.py --global-batch-size 8 --lr 1e-4 --lr-decay-style linear "
                       "--train-iters 10\n")
    flags = export(ISSUE, "lr.sched", format="megatron-args", into=command)
    assert "--lr-decay-style cosine" in flags and "--global-batch-size 8" in flags
    assert "--train-iters 100000" in flags


def test_export_by_proof_into_an_hf_recipe(tmp_path):
    recipe = tmp_path / "args.json"
    recipe.write_text(json.dumps({"output_dir": "out", "lr_scheduler_type": "linear", "warmup_ratio": 0.1,
                                  "max_steps": 500}))
    merged = json.loads(export(ISSUE, "lr.sched", format="hf-args", into=recipe))
    assert merged["output_dir"] == "out" and "warmup_ratio" not in merged
    assert merged["lr_scheduler_type"] == "cosine_with_min_lr" and merged["max_steps"] == 100000


def test_cli_refusal_exits_2_at_the_schedule(tmp_path):
    path = tmp_path / "lr.sched"
    path.write_text(_source(NONE[0][1]))
    run = subprocess.run([sys.executable, "-m", "schedlang", "export", str(path), "--format",
                          "megatron-args"], capture_output=True, text=True)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert f"{path}:1:15: error: no megatron scheduler equals this lr schedule" in run.stderr


def test_the_docs_refusal_is_what_export_says(tmp_path):
    """docs/import_export.md, "Export by proof", quotes a refusal: it is the command's own."""
    from pathlib import Path

    docs = (Path(__file__).parents[2] / "docs" / "import_export.md").read_text(encoding="utf-8")
    quoted = next(line for line in docs.splitlines() if line.startswith("lr.sched:2:15: error: no deepspeed"))
    (tmp_path / "lr.sched").write_text(ISSUE)
    run = subprocess.run([sys.executable, "-m", "schedlang", "export", "lr.sched", "--format",
                          "deepspeed-json"], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 2 and run.stderr.splitlines()[0] == quoted


def test_a_file_that_differs_only_after_its_decay_is_told_that_a_run_would_do():
    """HF's cosine_with_min_lr climbs back after num_training_steps; the file holds its floor. Without
    `run` the two differ (after the decay), so the refusal says a run ending by then is written."""
    endless = ISSUE.split("\n", 1)[1]  # the issue's file without `run = 100000`
    with pytest.raises(SchedlangError) as info:
        export(endless, "lr.sched", format="hf-args")
    assert "first differs at step 100001" in info.value.message
    assert "declare it (`run = N`, N <= 100001)" in info.value.hint
    assert '"max_steps": 100000' in export(ISSUE, "lr.sched", format="hf-args")


def test_torchtitan_export_into_the_original_job_toml(tmp_path):
    """--into a job TOML: its [lr_scheduler] table replaced, lr and steps set, its other lines kept;
    torchtitan's own scheduler, built from the merged file, runs the file's lr at every step."""
    original = tmp_path / "job.toml"
    original.write_text("[job]\ndescription = \"llama\"\n\n[optimizer]\nname = \"AdamW\"\nlr = 3e-4\n\n"
                        "[lr_scheduler]\nwarmup_steps = 20\ndecay_ratio = 0.5\n\n[training]\nsteps = 300\n"
                        "seq_len = 2048\n")
    merged = export(TITAN, "lr.sched", format="torchtitan-toml", into=original)
    data = tomllib.loads(merged)
    assert data["job"] == {"description": "llama"} and data["training"]["seq_len"] == 2048
    assert data["optimizer"] == {"name": "AdamW", "lr": 0.001} and "decay_ratio" not in data["lr_scheduler"]
    steps = range(1000)
    ours = schedlang.compile(TITAN)["lr"].values(steps)
    theirs = titan_values(data["lr_scheduler"], data["training"]["steps"], data["optimizer"]["lr"], steps)
    assert max_error(theirs, ours, 1e-3) <= 1e-12


def test_parameters_are_bound_before_the_search():
    """The search reads the schedule with -D's values (the export writes numbers); a parameter
    left without one is refused at the schedule, naming it."""
    source = ("param peak: float = 3e-4\nparam total: int\nlet trunk = warmup(linear, 2000) >> "
              "cosine(peak, peak / 10, total - 2000)\nschedule lr = trunk\n")
    flags = export(source, "lr.sched", format="megatron-args", params={"total": 50000})
    assert "--lr-decay-iters 50000" in flags and "--min-lr 3.0e-05" in flags
    with pytest.raises(SchedlangError, match="parameter 'total' has no value") as info:
        export(source, "lr.sched", format="megatron-args")
    assert info.value.span.line == 4
