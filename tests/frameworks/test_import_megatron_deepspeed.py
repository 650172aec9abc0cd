"""``--format megatron-args`` and ``--format deepspeed-json``: each sample config imported, compiled and
compared with the real framework at every step past the end; preset and core styles proven equal;
unsupported input refused at its line and column."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

import schedlang
from schedlang.formats import import_file

from .deepspeed_cases import deepspeed_values
from .real import real

CONFIGS = Path(__file__).parent / "configs"


def _both(path: Path, fmt: str, params: dict | None = None):
    presets = schedlang.compile(import_file(path, fmt), params=params)
    core = schedlang.compile(import_file(path, fmt, style="core"), params=params)
    for name in presets.schedules:
        assert schedlang.equivalent(presets[name], core[name]), name
    return presets


# -- Megatron-LM ---------------------------------------------------------------------------

# What Megatron-LM's get_optimizer_param_scheduler passes the class for each sample, in samples
# (the flags read by hand), the global batch size, the iterations to compare, and -D values.
MEGATRON_LM = {
    "gpt_345m.sh": (dict(init_lr=0.0, max_lr=0.00015, min_lr=1e-5, lr_warmup_steps=0.01 * 320 * 256,
                         lr_decay_steps=320 * 256, lr_decay_style="cosine", start_wd=0.01, end_wd=0.01,
                         wd_incr_steps=500 * 256, wd_incr_style="constant"), 256, 500, {}),
    "llama_wsd.sh": (dict(init_lr=1e-6, max_lr=3e-4, min_lr=3e-5, lr_warmup_steps=40 * 128,
                          lr_decay_steps=400 * 128, lr_decay_style="WSD", wsd_decay_steps=80 * 128,
                          lr_wsd_decay_style="minus_sqrt", start_wd=0.01, end_wd=0.1,
                          wd_incr_steps=400 * 128, wd_incr_style="linear"), 128, 460, {}),
    "t5_samples.sh": (dict(init_lr=0.0, max_lr=1e-4, min_lr=1e-5, lr_warmup_steps=1000,
                           lr_decay_steps=24000,
                           lr_decay_style="linear", start_wd=0.05, end_wd=0.05, wd_incr_steps=28800,
                           wd_incr_style="constant"), 96, 320, {}),
    "env_iters.sh": (dict(init_lr=0.0, max_lr=6e-4, min_lr=6e-5, lr_warmup_steps=20 * 512,
                          lr_decay_steps=300 * 512, lr_decay_style="cosine", start_wd=0.01, end_wd=0.01,
                          wd_incr_steps=300 * 512, wd_incr_style="constant"), 512, 360, {"train_iters": 300}),
    "bert_isr.yaml": (dict(init_lr=0.0, max_lr=1e-4, min_lr=1e-6, lr_warmup_steps=0, lr_decay_steps=250 * 32,
                           lr_decay_style="inverse-square-root", start_wd=0.01, end_wd=0.01,
                           wd_incr_steps=300 * 32, wd_incr_style="constant"), 32, 300, {}),
}


def _megatron_lm(kwargs: dict, batch: int, iterations: int) -> tuple[list[float], list[float]]:
    """lr and weight decay per iteration: the real class stepped by the batch size, as Megatron-LM does."""
    module = real("megatron.core.optimizer_param_scheduler")
    optimizer = SimpleNamespace(param_groups=[{}])
    scheduler = module.OptimizerParamScheduler(optimizer, **kwargs)
    lr, wd = [], []
    for _ in range(iterations):
        lr.append(optimizer.param_groups[0]["lr"])
        wd.append(optimizer.param_groups[0]["weight_decay"])
        scheduler.step(batch)
    return lr, wd


@pytest.mark.parametrize("name", sorted(MEGATRON_LM))
def test_megatron_config_matches_megatron_lm(name):
    kwargs, batch, iterations, params = MEGATRON_LM[name]
    program = _both(CONFIGS / "megatron" / name, "megatron-args", params)
    text = import_file(CONFIGS / "megatron" / name, "megatron-args")
    per_sample = "t counts samples" in text
    steps = [i * batch if per_sample else i for i in range(iterations)]
    lr, wd = _megatron_lm(kwargs, batch, iterations)
    assert program["lr"].values(steps) == pytest.approx(lr, rel=1e-12, abs=1e-18)
    assert program["weight_decay"].values(steps) == pytest.approx(wd, rel=1e-12, abs=1e-18)
    assert per_sample == (name == "bert_isr.yaml")


@pytest.mark.parametrize("name, where, message", [
    ("computed_lr.sh", ":3:50:", "the shell would compute it"),
    ("fraction_and_iters.sh", ":2:49:", "can only specify one of"),
])
def test_megatron_config_refused_with_caret(name, where, message):
    with pytest.raises(schedlang.SchedlangError) as info:
        import_file(CONFIGS / "megatron" / name, "megatron-args")
    text = str(info.value)
    assert where in text and message in text and "^" in text


@pytest.mark.parametrize("flags, message", [
    ("--lr 1e-3 --train-iters 10 --train-samples 100", "expected iteration-based training"),
    ("--lr 1e-3 --train-iters 10 --lr-decay-samples 100", "expected iteration-based learning rate decay"),
    ("--lr 1e-3 --train-samples 100 --lr-decay-iters 10", "expected sample-based training"),
    ("--lr 1e-3 --train-iters 10 --rampup-batch-size 16 16 100", "no batch-size rampup"),
    ("--lr 1e-3 --min-lr 1e-2 --train-iters 10", "must be <= --lr"),
    ("--lr 1e-3 --train-iters 10 --start-weight-decay 0.1", "needs a non-constant"),
    ("--lr 1e-3 --train-iters 10 --weight-decay-incr-style linear --start-weight-decay 0",
     "needs --end-weight"),
    ("--lr 1e-3 --train-iters 10 --lr-decay-style WSD", "needs --lr-wsd-decay-iters"),
    ("--lr 1e-3 --train-iters 10 --lr-decay-style cosin", "did you mean 'cosine'"),
    ("--lr 1e-3 --train-iters 10 --warmup 0.1", "--warmup was removed"),
    ("--lr 1e-3 --train-iters 100 --lr-warmup-iters 100", "not shorter than the decay"),
    ("--train-iters 100", "no --lr"),
    ("--lr 1e-3", "neither --train-iters nor --train-samples"),
    ("--lr 1e-3 --train-iters 10 --lr-decay-style $STYLE", "cannot be left to a variable"),
])
def test_megatron_validation(tmp_path, flags, message):
    path = tmp_path / "run.sh"
    path.write_text(f"python pretrain_gpt.py {flags}\n")
    with pytest.raises(schedlang.SchedlangError) as info:
        import_file(path, "megatron-args")
    assert message in str(info.value)


STEP = "python pretrain_gpt.py --lr 1e-3 --train-samples 100000 --step-batch-size-schedule '0:16 1K:32' "


@pytest.mark.parametrize("flags, where, other", [
    ("--global-batch-size 32", "32", "--global-batch-size"),
    ("--rampup-batch-size 16 16 1000", "16", "--rampup-batch-size"),
    ("--decrease-batch-size-if-needed", "--decrease", "--decrease-batch-size-if-needed"),
])
def test_megatron_step_batch_size_schedule_refused_as_megatron_refuses(tmp_path, flags, where, other):
    """Megatron-LM (main) raises ValueError for these pairs; the import used to drop the schedule."""
    path = tmp_path / "run.sh"
    path.write_text(STEP + flags + "\n")
    with pytest.raises(schedlang.SchedlangError) as info:
        import_file(path, "megatron-args")
    text = str(info.value)
    assert f"Cannot specify both --step-batch-size-schedule and {other}" in text
    assert f"run.sh:1:{len(STEP) + flags.index(where) + 1}:" in text and "^" in text


def test_megatron_step_batch_size_schedule_by_iterations_is_refused_with_the_reason(tmp_path):
    path = tmp_path / "run.sh"
    path.write_text("python pretrain_gpt.py --lr 1e-3 --train-iters 1000 "
                    "--step-batch-size-schedule '0:16 1K:32'\n")
    with pytest.raises(schedlang.SchedlangError, match="scales every --lr-\\*-iters length by the default "
                                                       "global batch size"):
        import_file(path, "megatron-args")


@pytest.mark.parametrize("ramp", ["--rampup-batch-size 16 16 2000",
                                  "--step-batch-size-schedule '0:16 1K:32'"])
def test_megatron_batch_ramp_by_samples_matches_megatron_at_every_iteration(tmp_path, ramp):
    """With a batch-size ramp the import is per step on the sample clock of Megatron's own batch
    table: step k is the real class at the samples consumed before it (megatron-core's own
    microbatch calculator for --rampup-batch-size).  tests/frameworks/test_import_megatron_batch.py
    drives both real calculators at production sizes."""
    path = tmp_path / "run.sh"
    path.write_text("python pretrain_gpt.py --lr 1e-3 --min-lr 1e-4 --lr-decay-style cosine "
                    "--train-samples 6000 --lr-warmup-samples 500 --lr-decay-samples 5000 "
                    f"--micro-batch-size 8 {ramp}" + (" --global-batch-size 64" if "rampup" in ramp else "")
                    + "\n")
    text = import_file(path, "megatron-args")
    assert "t counts optimizer steps" in text and "on_samples(megatron.OptimizerParamScheduler(" in text
    prog = schedlang.compile(text)
    ours = prog["lr"]
    calculator = real("megatron.core.num_microbatches_calculator")
    module = real("megatron.core.optimizer_param_scheduler")
    if "rampup" in ramp:
        calculator.unset_num_microbatches_calculator()
        calculator.init_num_microbatches_calculator(0, [16, 16, 2000], 64, 8, 1)
        def batch_at(consumed):
            calculator.update_num_microbatches(consumed, consistency_check=False)
            return calculator.get_current_global_batch_size()
    else:  # megatron-core 0.16 has no step schedule: the table Megatron-LM main reads in "0:16 1K:32"
        def batch_at(consumed):
            return 16 if consumed < 1000 else 32
    optimizer = SimpleNamespace(param_groups=[{}])
    scheduler = module.OptimizerParamScheduler(
        optimizer, init_lr=0.0, max_lr=1e-3, min_lr=1e-4, lr_warmup_steps=500, lr_decay_steps=5000,
        lr_decay_style="cosine", start_wd=0.01, end_wd=0.01, wd_incr_steps=6000, wd_incr_style="constant")
    consumed, at, expected, batches = 0, [], [], set()
    while consumed < 6000:
        batch = batch_at(consumed)
        batches.add(batch)
        at.append(consumed)
        expected.append(optimizer.param_groups[0]["lr"])
        scheduler.step(batch)
        consumed += batch
    assert len(batches) > 1  # the batch size really changed
    assert [prog.samples_at(k) for k in range(len(at))] == at  # Megatron's batches, step by step
    assert ours.values(range(len(at))) == pytest.approx(expected, rel=1e-12, abs=1e-18)
    if "rampup" in ramp:
        calculator.unset_num_microbatches_calculator()


def test_megatron_repeated_flag_keeps_the_last_with_a_note(tmp_path):
    path = tmp_path / "run.sh"
    path.write_text("python pretrain_gpt.py --lr 1e-3 --train-iters 100 --lr 2e-3\n")
    text = import_file(path, "megatron-args")
    assert "max_lr=0.002" in text and "given twice" in text


# -- DeepSpeed ------------------------------------------------------------------------------

# type, its keyword arguments, the optimizer's lr, steps, and -D values for "auto"
DEEPSPEED_JSON = {
    "warmup_decay_fp16.json": ("WarmupDecayLR", dict(warmup_min_lr=0, warmup_max_lr=3e-4, warmup_num_steps=50,
                                                     total_num_steps=300), 3e-4, 400, {}),
    "hf_auto_cosine.json": ("WarmupCosineLR", dict(total_num_steps=240, warmup_num_steps=24,
                                                   warmup_min_ratio=0.05,
                                                   cos_min_ratio=0.1, warmup_type="linear"), 2e-5, 320,
                            {"learning_rate": 2e-5, "total_num_steps": 240, "warmup_num_steps": 24}),
    "onecycle_adam.json": ("OneCycle", dict(cycle_min_lr=1e-4, cycle_max_lr=1e-3, cycle_first_step_size=80,
                                            cycle_second_step_size=120, decay_step_size=25, decay_lr_rate=0.2,
                                            cycle_min_mom=0.85, cycle_max_mom=0.95, decay_mom_rate=0.001),
                           1e-3, 400, {}),
    "warmup_lr_optimizer_lr.json": ("WarmupLR", dict(warmup_num_steps=40, warmup_type="exponential"), 2e-3,
                                    100, {}),
}


@pytest.mark.parametrize("name", sorted(DEEPSPEED_JSON))
def test_deepspeed_config_matches_deepspeed(name):
    kind, kwargs, lr, steps, params = DEEPSPEED_JSON[name]
    program = _both(CONFIGS / "deepspeed" / name, "deepspeed-json", params)
    expected = deepspeed_values(kind, kwargs, steps, lr=lr)
    assert program["lr"].values(range(steps)) == pytest.approx(expected, rel=1e-12, abs=1e-18)
    if kind == "OneCycle":
        momentum = deepspeed_values(kind, kwargs, steps, lr=lr, read="momentum")
        assert program["momentum"].values(range(steps)) == pytest.approx(momentum, rel=1e-12)


def test_deepspeed_torch_fallback_matches_torch():
    import torch

    program = _both(CONFIGS / "deepspeed" / "torch_fallback_step.json", "deepspeed-json")
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=30, gamma=0.5)
    expected = []
    for _ in range(100):
        expected.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    assert program["lr"].values(range(100)) == pytest.approx(expected, rel=1e-12)


def test_deepspeed_unknown_key_is_a_type_error_at_its_line():
    with pytest.raises(schedlang.SchedlangError) as info:
        import_file(CONFIGS / "deepspeed" / "bad_cosine_keys.json", "deepspeed-json")
    text = str(info.value)
    assert ":5:41:" in text and "warmup_min_ratio" in text and "^" in text


@pytest.mark.parametrize("config, message", [
    ('{"optimizer": {"type": "Adam"}}', 'no "scheduler" block'),
    ('{"scheduler": {"type": "CosineDecay"}}', "neither a DeepSpeed nor a torch scheduler"),
    ('{"scheduler": {"type": "ReduceLROnPlateau", "params": {}}}', "cannot be imported"),
    ('{"scheduler": {"type": "WarmupLR", "params": {"last_batch_iteration": 99}}}', "resumes a run"),
])
def test_deepspeed_refusals(tmp_path, config, message):
    path = tmp_path / "ds_config.json"
    path.write_text(config)
    with pytest.raises(schedlang.SchedlangError) as info:
        import_file(path, "deepspeed-json")
    assert message in str(info.value)


def test_cli_imports_and_verify_proves_the_styles_equal(tmp_path):
    for fmt, path in (("megatron-args", CONFIGS / "megatron" / "llama_wsd.sh"),
                      ("deepspeed-json", CONFIGS / "deepspeed" / "onecycle_adam.json")):
        outs = []
        for extra in ([], ["--lower"]):
            out = tmp_path / f"{fmt}{len(extra)}.sched"
            subprocess.run([sys.executable, "-m", "schedlang", "import", str(path), "--format", fmt, *extra,
                            "-o", str(out)], check=True)
            outs.append(out)
        result = subprocess.run([sys.executable, "-m", "schedlang", "verify", str(outs[0]), str(outs[1])],
                                capture_output=True, text=True)
        assert result.returncode == 0, result.stdout + result.stderr


def test_megatron_yaml_rampup_list_is_read_not_dropped(tmp_path):
    """``rampup_batch_size: [16, 16, 100]`` in YAML was skipped as a nested value."""
    path = tmp_path / "args.yaml"
    path.write_text("lr: 1.0e-3\ntrain_iters: 100\nrampup_batch_size: [16, 16, 100]\n")
    with pytest.raises(schedlang.SchedlangError, match="no batch-size rampup") as info:
        import_file(path, "megatron-args")
    assert "args.yaml:3:20" in str(info.value)
