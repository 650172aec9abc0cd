"""Megatron-LM command lines and YAML (``megatron-args``): import, export, the refusals.

Each sample config is imported, compiled and compared with the real framework at every step past
the end; preset and core styles are proven equal; unsupported input is refused at its line and
column (``CONFIGS/megatron``).

Runs whose batch changes, against the real code.  A Megatron-LM run with
``--step-batch-size-schedule`` (Megatron-LM main; megatron-core 0.19.2's
``StepBatchsizeNumMicroBatchesCalculator``, loaded from ``.frameworks``) or ``--rampup-batch-size``
(megatron-core <= 0.17; the installed 0.16.1's ``RampupBatchsizeNumMicroBatchesCalculator``) is
imported per optimizer step: ``batch = megatron.<its table>`` and ``on_samples(
megatron.OptimizerParamScheduler(...))``.  The reference is the installed megatron-core 0.16.1
``OptimizerParamScheduler`` for the ramp, and megatron-core 0.19.2's (loaded from ``.frameworks``) for
the step schedule and for Megatron-LM main ignoring the ramp, each built with the
arguments Megatron-LM's ``get_optimizer_param_scheduler`` passes for ``--train-samples`` (mirrored
in :func:`megatron_kwargs`) and driven as Megatron-LM's training loop drives it: the constructor's
``step(0)``, then after each iteration ``step(increment=batch)`` with the batch the real calculator
gives (:class:`frameworks.test_megatron_batch.Loop`).  The lr and weight decay the optimizer holds
before update ``k`` must be ``prog["lr"](k)`` and ``prog["weight_decay"](k)``.

Small runs are compared at every step past the last switch, the warmup end and the decay end;
production sizes (a ramp over 469B tokens at seq 4096, 10**13-token runs) at every batch switch and
every lr boundary, +-3 steps, with the real calculator's batch at the closed form's ``S_k``.

``schedlang export --format megatron-args``: every Megatron lr row exported as Megatron-LM flags,
imported back and compared at every step with the real ``OptimizerParamScheduler`` of the row; rows
whose lengths are not whole numbers of samples are refused with the reason.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from frameworks.megatron_cases import MEGATRON
from frameworks.real import real
from frameworks.test_megatron_batch import (
    Loop,
    ramp_calculator,
    real_batch_at,
    scheduler_019,
    step_calculator,
)
from helpers import both_styles

import schedlang
from schedlang.errors import SchedlangError
from schedlang.formats import from_megatron_args, import_file
from schedlang.formats.export import export

CONFIGS = Path(__file__).parents[1] / "frameworks" / "configs"


# -- Megatron-LM configs ---------------------------------------------------------------------------

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
    program = both_styles(CONFIGS / "megatron" / name, "megatron-args", params)
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
    microbatch calculator for --rampup-batch-size).  The runs whose batch changes, below,
    drive both real calculators at production sizes."""
    path = tmp_path / "run.sh"
    path.write_text("python pretrain_gpt.py --lr 1e-3 --min-lr 1e-4 --lr-decay-style cosine "
                    "--train-samples 6000 --lr-warmup-samples 500 --lr-decay-samples 5000 "
                    f"--micro-batch-size 8 {ramp}" + (" --global-batch-size 64" if "rampup" in ramp else "")
                    + "\n")
    text = import_file(path, "megatron-args")
    assert "t counts optimizer steps" in text and "on_samples(\n    megatron.OptimizerParamScheduler(" in text
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


def test_megatron_yaml_rampup_list_is_read_not_dropped(tmp_path):
    """``rampup_batch_size: [16, 16, 100]`` in YAML was skipped as a nested value."""
    path = tmp_path / "args.yaml"
    path.write_text("lr: 1.0e-3\ntrain_iters: 100\nrampup_batch_size: [16, 16, 100]\n")
    with pytest.raises(schedlang.SchedlangError, match="no batch-size rampup") as info:
        import_file(path, "megatron-args")
    assert "args.yaml:3:20" in str(info.value)


# -- runs whose batch changes, against the real code ---------------------------------------------

REL = dict(rel=1e-12, abs=1e-18)


def scheduler_module(flags: dict):
    """The lr scheduler of the Megatron whose batch flag the run uses: megatron-core 0.19.2's for
    ``--step-batch-size-schedule`` (Megatron-LM main), the installed 0.16.1's for the ramp."""
    if "step_batch_size_schedule" in flags:
        return scheduler_019()
    return real("megatron.core.optimizer_param_scheduler")


def megatron_kwargs(flags: dict) -> dict:
    """What Megatron-LM's ``get_optimizer_param_scheduler`` passes the class for a sample-based
    run (``--train-samples``), from the flags as a dict (underscored names, parsed values)."""
    decay = flags.get("lr_decay_samples") or flags["train_samples"]
    if flags.get("lr_warmup_fraction") is not None:
        warmup = flags["lr_warmup_fraction"] * decay
    else:
        warmup = flags.get("lr_warmup_samples", 0)
    style = flags.get("weight_decay_incr_style", "constant")
    wd = flags.get("weight_decay", 0.01)
    return dict(init_lr=flags.get("lr_warmup_init", 0.0), max_lr=flags["lr"], min_lr=flags.get("min_lr", 0.0),
                lr_warmup_steps=warmup, lr_decay_steps=decay,
                lr_decay_style=flags.get("lr_decay_style", "linear"),
                start_wd=flags.get("start_weight_decay", wd), end_wd=flags.get("end_weight_decay", wd),
                wd_incr_steps=flags["train_samples"], wd_incr_style=style,
                wsd_decay_steps=flags.get("lr_wsd_decay_samples"),
                lr_wsd_decay_style=flags.get("lr_wsd_decay_style", "exponential"))


def command(flags: dict) -> str:
    words = ["python", "pretrain_gpt.py"]
    for key, value in flags.items():
        flag = "--" + key.replace("_", "-")
        if key == "step_batch_size_schedule":
            words += [flag, f"'{value}'"]
        elif key == "rampup_batch_size":
            words += [flag, *map(str, value)]
        else:
            words += [flag, str(value)]
    return " ".join(words) + "\n"


def imported(tmp_path, flags: dict, options=None) -> tuple[str, schedlang.Program]:
    path = tmp_path / "run.sh"
    path.write_text(command(flags))
    text = import_file(path, "megatron-args", options=options)
    return text, schedlang.compile(text)


def calculator_of(flags: dict):
    if "step_batch_size_schedule" in flags:
        return step_calculator(flags["step_batch_size_schedule"], flags.get("seq_length"))
    start, increment, samples = flags["rampup_batch_size"]
    return ramp_calculator(start, increment, samples, flags["global_batch_size"])


def real_run(flags: dict, steps: int):
    """lr, weight decay and batch of each of ``steps`` iterations: the real class stepped by the
    real calculator's batch in Megatron-LM's loop."""
    optimizer = SimpleNamespace(param_groups=[{}])
    scheduler = scheduler_module(flags).OptimizerParamScheduler(optimizer, **megatron_kwargs(flags))
    loop = Loop(calculator_of(flags))
    lr, wd, consumed, batches = [], [], [], []
    for _ in range(steps):
        lr.append(optimizer.param_groups[0]["lr"])
        wd.append(optimizer.param_groups[0]["weight_decay"])
        before, batch = loop.step()
        consumed.append(before)
        batches.append(batch)
        scheduler.step(increment=batch)
    return lr, wd, consumed, batches


BASE = dict(lr=3e-4, min_lr=3e-5, train_samples=6000, lr_warmup_samples=700, lr_decay_samples=5000)

#: Small runs, every step: the batch switches, the warmup end, the decay end and past the end.
SMALL = {
    "step-cosine": dict(BASE, lr_decay_style="cosine", seq_length=100,
                        step_batch_size_schedule="0:8 50K:16 150K:40"),
    "step-samples-linear": dict(BASE, lr_decay_style="linear",
                                step_batch_size_schedule="0:3 10:5 11:7 400:9"),
    "step-fraction-isr": dict(lr=1e-3, min_lr=1e-5, train_samples=3000, lr_warmup_fraction=0.013,
                              lr_decay_style="inverse-square-root", seq_length=7,
                              step_batch_size_schedule="0:16 1.5K:48 12.3K:96"),
    "step-init-lr-constant": dict(BASE, lr_warmup_init=1e-5, lr_decay_style="constant", seq_length=2048,
                                  step_batch_size_schedule="0:4 1M:12"),
    "ramp-float-quirk": dict(BASE, train_samples=9000, lr_decay_samples=8000, lr_warmup_samples=3000,
                             lr_decay_style="cosine", rampup_batch_size=(32, 8, 7200), global_batch_size=248),
    "ramp-seq": dict(BASE, lr_decay_style="linear", seq_length=4096, rampup_batch_size=(16, 16, 2000),
                     global_batch_size=64),
    "ramp-isr-short-warmup": dict(lr=1e-3, min_lr=1e-6, train_samples=4000, lr_warmup_samples=0,
                                  lr_decay_style="inverse-square-root", rampup_batch_size=(1, 1, 50),
                                  global_batch_size=9),
    **{f"wsd-{style}": dict(BASE, lr_decay_style="WSD", lr_wsd_decay_samples=2000, lr_wsd_decay_style=style,
                            seq_length=100, step_batch_size_schedule="0:8 50K:16 380K:40")
       for style in ("linear", "cosine", "exponential", "minus_sqrt")},
    "wsd-ramp": dict(BASE, lr_decay_style="WSD", lr_wsd_decay_samples=1500, lr_wsd_decay_style="cosine",
                     rampup_batch_size=(16, 8, 4000), global_batch_size=64),
    **{f"wd-{style}": dict(BASE, weight_decay_incr_style=style, start_weight_decay=0.01,
                           end_weight_decay=0.1, lr_decay_style="cosine", seq_length=100,
                           step_batch_size_schedule="0:8 50K:16 150K:40")
       for style in ("linear", "cosine")},
}


@pytest.mark.parametrize("name", sorted(SMALL))
def test_imported_batch_run_is_megatrons_at_every_step(tmp_path, name):
    flags = SMALL[name]
    text, prog = imported(tmp_path, flags)
    assert "batch = megatron." in text and "on_samples(\n    megatron.OptimizerParamScheduler(" in text
    kwargs = megatron_kwargs(flags)
    # past the decay end and the run end by a margin, every batch switch included
    steps = prog.step_at(samples=flags["train_samples"]) + 20
    lr, wd, consumed, batches = real_run(flags, steps)
    assert [prog.samples_at(k) for k in range(steps)] == consumed
    assert [prog.batch_at(k) for k in range(steps)] == batches
    assert len(set(batches)) > 1
    assert consumed[-1] > kwargs["lr_decay_steps"] > kwargs["lr_warmup_steps"]
    assert prog["lr"].values(range(steps)) == pytest.approx(lr, **REL)
    assert prog["weight_decay"].values(range(steps)) == pytest.approx(wd, **REL)
    if flags.get("seq_length"):
        assert "param seq_len: int = " + str(flags["seq_length"]) in text
    # the core (--lower) form is the same schedule
    path = tmp_path / "run.sh"
    lowered = schedlang.compile(import_file(path, "megatron-args", style="core"))
    assert lowered["lr"].values(range(steps)) == pytest.approx(lr, **REL)
    assert lowered["weight_decay"].values(range(steps)) == pytest.approx(wd, **REL)


def _boundaries(prog, kwargs, flags, around=3):
    """Every batch switch and every lr/wd boundary of the run as a step, +-``around``."""
    samples = [kwargs["lr_warmup_steps"], kwargs["lr_decay_steps"], kwargs["wd_incr_steps"]]
    if kwargs.get("wsd_decay_steps"):
        samples.append(kwargs["lr_decay_steps"] - kwargs["wsd_decay_steps"])
    centres = {prog.step_at(samples=int(s)) for s in samples}
    centres |= {stage.first for stage in prog.clock.stages}
    return sorted({k + d for k in centres for d in range(-around, around + 1) if k + d >= 0})


T = 10**12
#: Production sizes: (flags, tokens the run lasts).  Compared at every switch and boundary.
PRODUCTION = {
    "deepseek-v3-469B": dict(lr=2.2e-4, min_lr=2.2e-5, lr_decay_style="cosine", seq_length=4096,
                             train_samples=10 * T // 4096, lr_warmup_samples=2000 * 3072,
                             lr_decay_samples=8 * T // 4096,
                             step_batch_size_schedule="0:3072 100B:6144 469B:15360"),
    "megatron-docs-wsd": dict(lr=3e-4, min_lr=3e-5, lr_decay_style="WSD", lr_wsd_decay_style="minus_sqrt",
                              seq_length=4096, train_samples=10 * T // 4096, lr_warmup_fraction=0.001,
                              lr_wsd_decay_samples=2 * T // 4096,
                              step_batch_size_schedule="0:768 250B:1536 500B:3072 750B:6144",
                              weight_decay_incr_style="cosine", start_weight_decay=0.01,
                              end_weight_decay=0.1),
    "gpt-2.4B-floor": dict(lr=6e-4, min_lr=6e-5, lr_decay_style="linear", seq_length=2048,
                           train_samples=10 * T // 2048, lr_warmup_samples=375 * 10**6 // 2048,
                           step_batch_size_schedule="0:16 2.4B:320 4.35B:512 1.1T:1024"),
    "ramp-469B-0.17": dict(lr=2.2e-4, min_lr=2.2e-5, lr_decay_style="WSD", lr_wsd_decay_style="exponential",
                           seq_length=4096, train_samples=10 * T // 4096, lr_warmup_samples=2000 * 3072,
                           lr_wsd_decay_samples=T // 4096,
                           # 48 increments of 256 (increments of 16, 768 stages, compile in ~35 s)
                           rampup_batch_size=(3072, 256, 469 * 10**9 // 4096), global_batch_size=15360),
    "ramp-gpt3-175B": dict(lr=0.6e-4, min_lr=0.6e-5, lr_decay_style="cosine", train_samples=146_484_375,
                           lr_decay_samples=126_953_125, lr_warmup_samples=183_105,
                           rampup_batch_size=(16, 16, 5_859_375), global_batch_size=1536),
}


@pytest.mark.parametrize("name", sorted(PRODUCTION))
def test_imported_production_run_is_megatrons_at_every_boundary(tmp_path, name):
    flags = PRODUCTION[name]
    _, prog = imported(tmp_path, flags)
    kwargs = megatron_kwargs(flags)
    calculator = calculator_of(flags)
    optimizer = SimpleNamespace(param_groups=[{}])
    scheduler = scheduler_module(flags).OptimizerParamScheduler(optimizer, **kwargs)
    steps = _boundaries(prog, kwargs, flags)
    assert prog.step_at(samples=flags["train_samples"]) < steps[-1]
    compared = 0
    for k in steps:
        before = prog.samples_at(k)
        # the real calculator's batch at the closed form's S_k is the step's batch
        assert real_batch_at(calculator, before) == prog.batch_at(k) == prog.samples_at(k + 1) - before
        scheduler.step(increment=before - scheduler.num_steps)  # the loop's increments, summed
        assert prog["lr"](k) == pytest.approx(optimizer.param_groups[0]["lr"], **REL), k
        assert prog["weight_decay"](k) == pytest.approx(optimizer.param_groups[0]["weight_decay"], **REL), k
        compared += 1
    assert compared >= 7 * len(prog.clock.stages)


def test_version_option_decides_the_ramp(tmp_path):
    flags = dict(SMALL["ramp-seq"])
    text, _ = imported(tmp_path, flags, {"megatron": "0.17"})
    assert "batch = megatron.rampup_batch_size(16, 16, 2000, global_batch_size=64)" in text
    assert "IGNORE it" in text and "--option megatron=main" in text
    # Megatron-LM main ignores the flag: a constant --global-batch-size, the per-iteration output
    text, prog = imported(tmp_path, flags, {"megatron": "main"})
    assert "batch =" not in text and "--rampup-batch-size is ignored" in text
    optimizer = SimpleNamespace(param_groups=[{}])
    scheduler = scheduler_019().OptimizerParamScheduler(optimizer, **megatron_kwargs(flags))
    expected = []
    for _ in range(120):
        expected.append(optimizer.param_groups[0]["lr"])
        scheduler.step(increment=64)
    assert prog["lr"].values(range(120)) == pytest.approx(expected, **REL)
    # ... and accepts it with --train-iters, which megatron-core 0.17 refuses
    iters = dict(lr=1e-3, train_iters=100, rampup_batch_size=(16, 16, 2000), global_batch_size=64)
    imported(tmp_path, iters, {"megatron": "main"})
    with pytest.raises(schedlang.SchedlangError, match="no batch-size rampup") as info:
        imported(tmp_path, iters)
    assert "--train-samples" in info.value.hint


@pytest.mark.parametrize("flags, options, message", [
    (dict(lr=1e-3, train_samples=100, step_batch_size_schedule="0:16 1K:32"), {"megatron": "0.17"},
     "megatron-core 0.17 and earlier have no such flag"),
    (dict(lr=1e-3, train_samples=100, rampup_batch_size=(16, 16, 50)), None, "not given"),
    (dict(lr=1e-3, train_samples=100, rampup_batch_size=(16, 16, 50), global_batch_size=40), None,
     "not a whole number of increments"),
    (dict(lr=1e-3, train_samples=100, seq_length=2048, step_batch_size_schedule="0:32 1000:64"), None,
     "within one sample"),
    (dict(lr=1e-3, train_samples=100, step_batch_size_schedule="0:64 100:32"), None, "decreases"),
    (dict(lr=1e-3, train_samples=100), {"megatron": "0.18"}, "unknown Megatron version"),
    (dict(lr=1e-3, train_samples=100), {"version": "main"}, "no option 'version'"),
])
def test_batch_flags_refused_at_the_flag(tmp_path, flags, options, message):
    with pytest.raises(schedlang.SchedlangError, match=message) as info:
        imported(tmp_path, flags, options)
    if options is None:
        assert "run.sh:1:" in str(info.value) and "^" in str(info.value)


def test_rampup_needs_three_values(tmp_path):
    path = tmp_path / "run.sh"
    path.write_text("python pretrain_gpt.py --lr 1e-3 --train-samples 100 --rampup-batch-size 16 16 "
                    "--global-batch-size 64\n")
    with pytest.raises(schedlang.SchedlangError, match="needs three values"):
        import_file(path, "megatron-args")


def test_double_quoted_schedule_is_one_value(tmp_path):
    path = tmp_path / "run.sh"
    path.write_text('python pretrain_gpt.py --lr 1e-3 --train-samples 100000 --seq-length 4 '
                    '--step-batch-size-schedule "0:16 1K:32, 2K:48" --lr-decay-style cosine\n')
    text = import_file(path, "megatron-args")
    assert 'batch = megatron.step_batch_size_schedule("0:16 1K:32, 2K:48")' in text
    assert 'lr_decay_style="cosine"' in text


# -- export and back (runs whose batch changes) ------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SMALL))
def test_export_writes_the_batch_flags_back(tmp_path, name):
    """import -> export (which proves its own read-back equal) -> import: the same flags' meaning,
    Megatron's values at every step."""
    flags = SMALL[name]
    text, prog = imported(tmp_path, flags)
    written = export(text, "run.sched", format="megatron-args")
    if "step_batch_size_schedule" in flags:
        assert f"--step-batch-size-schedule '{flags['step_batch_size_schedule']}'" in written
    else:
        start, increment, samples = flags["rampup_batch_size"]
        assert f"--rampup-batch-size {start} {increment} {samples}" in written
        assert f"--global-batch-size {flags['global_batch_size']}" in written
    if flags.get("seq_length"):
        assert f"--seq-length {flags['seq_length']}" in written
    assert f"--train-samples {flags['train_samples']}" in written
    back_path = tmp_path / "back.sh"
    back_path.write_text(written)
    back = schedlang.compile(import_file(back_path, "megatron-args"))
    assert back.clock.table == prog.clock.table
    for schedule in ("lr", "weight_decay"):
        assert schedlang.equivalent(prog[schedule], back[schedule])
    steps = prog.step_at(samples=flags["train_samples"]) + 20
    lr, wd, _, _ = real_run(flags, steps)
    assert back["lr"].values(range(steps)) == pytest.approx(lr, **REL)
    assert back["weight_decay"].values(range(steps)) == pytest.approx(wd, **REL)


@pytest.mark.parametrize("name", ["deepseek-v3-469B", "megatron-docs-wsd", "ramp-469B-0.17"])
def test_export_round_trip_at_production_size(tmp_path, name):
    flags = PRODUCTION[name]
    text, prog = imported(tmp_path, flags)
    path = tmp_path / "back.sh"
    path.write_text(export(text, "run.sched", format="megatron-args"))
    back = schedlang.compile(import_file(path, "megatron-args"))
    assert back.clock.stages == prog.clock.stages
    steps = _boundaries(prog, megatron_kwargs(flags), flags)
    assert back["lr"].values(steps) == prog["lr"].values(steps)
    assert back["weight_decay"].values(steps) == prog["weight_decay"].values(steps)


def test_export_of_a_constant_batch_on_samples(tmp_path):
    source = ("batch = 64\nschedule lr = on_samples(megatron.OptimizerParamScheduler(max_lr=1e-3, "
              'min_lr=1e-4, lr_warmup_steps=640, lr_decay_steps=6400, lr_decay_style="cosine"))\n')
    written = export(source, format="megatron-args")
    assert "--global-batch-size 64" in written and "--lr-warmup-samples 640" in written
    path = tmp_path / "back.sh"
    path.write_text(written)
    back = schedlang.compile(import_file(path, "megatron-args"))
    assert back["lr"].values(range(150)) == pytest.approx(schedlang.compile(source)["lr"].values(range(150)),
                                                          **REL)


@pytest.mark.parametrize("source, message", [
    ("param seq_len: int = 4\nbatch = stages(8, [16], [100tok])\n"
     "schedule lr = on_samples(megatron.OptimizerParamScheduler(max_lr=1, lr_warmup_steps=10, "
     "lr_decay_steps=100))", "--step-batch-size-schedule"),
    ('batch = megatron.step_batch_size_schedule("0:8 100:16")\n'
     "schedule lr = megatron.OptimizerParamScheduler(max_lr=1, lr_warmup_steps=10, lr_decay_steps=100)",
     "counts samples"),
    ('batch = megatron.step_batch_size_schedule("0:8 100:16")\n'
     "schedule lr = on_samples(megatron.OptimizerParamScheduler(max_lr=1, lr_warmup_steps=10, "
     "lr_decay_steps=100))\nschedule weight_decay = megatron.OptimizerParamScheduler.get_wd(start_wd=0.1, "
     'end_wd=0.1, wd_incr_steps=100, wd_incr_style="constant")', "count different things"),
])
def test_export_refusals(source, message):
    with pytest.raises(schedlang.SchedlangError, match=message) as info:
        export(source, "run.sched", format="megatron-args")
    assert "run.sched:" in str(info.value)


# -- export of every Megatron lr row ---------------------------------------------------------------

LR_ROWS = [c for c in MEGATRON if c.options.get("read", "lr") == "lr"]


@pytest.mark.parametrize("case", LR_ROWS, ids=lambda c: c.source[33:100])
def test_exported_flags_give_megatrons_values(case):
    try:
        flags = export(case.source, "m.sched", format="megatron-args")
    except SchedlangError as exc:
        # a fractional warmup length, or inverse-square-root's clamps in samples under a warmup of
        # less than one iteration (Megatron's only at a batch of 1)
        assert "whole numbers" in str(exc) or "clamps max(W, 1)" in str(exc)
        return
    back = schedlang.compile(from_megatron_args(flags, "flags.sh"))["lr"]
    assert back.values(case.compared) == pytest.approx(case.reference(), rel=1e-12, abs=1e-18)


def test_only_the_lr_scheduler_exports():
    with pytest.raises(SchedlangError, match="no megatron scheduler"):
        export("exp(1, 0.9, 1)", format="megatron-args")
    with pytest.raises(SchedlangError, match="not a scheduler Megatron-LM configures"):
        export("megatron.OptimizerParamScheduler.get_wd(start_wd=0.01, end_wd=0.1, wd_incr_steps=100, "
               'wd_incr_style="linear")', format="megatron-args")


# -- export --into the run's own command (issue 36) ---------------------------------------------------

#: The issue's command: iterations, with the --global-batch-size that scales them in Megatron-LM.
USERS_COMMAND = ("python pretrain_gpt.py --train-iters 100000 --lr-warmup-iters 2000 --lr-decay-style cosine "
                 "--lr 3e-4 --min-lr 3e-5 --global-batch-size 512\n")


def scheduler_kwargs(flags: dict) -> tuple[dict, int]:
    """What Megatron-LM's ``validate_args`` and ``get_optimizer_param_scheduler`` pass the class for
    these flags (underscored names -> text, as argparse keeps the last of each), and the batch the
    loop steps it by (mirrored by hand: iteration lengths times --global-batch-size)."""
    batch = int(flags.get("global_batch_size", 1))
    unit, scale = ("iters", batch) if "train_iters" in flags else ("samples", 1)
    train = int(flags[f"train_{unit}"]) * scale
    decay = int(flags.get(f"lr_decay_{unit}") or flags[f"train_{unit}"]) * scale
    if flags.get("lr_warmup_fraction") is not None:
        warmup = float(flags["lr_warmup_fraction"]) * decay
    else:
        warmup = int(flags.get(f"lr_warmup_{unit}", 0)) * scale
    wd = float(flags.get("weight_decay", 0.01))
    wsd = flags.get(f"lr_wsd_decay_{unit}")
    return dict(init_lr=float(flags.get("lr_warmup_init", 0)), max_lr=float(flags["lr"]),
                min_lr=float(flags.get("min_lr", 0)), lr_warmup_steps=warmup, lr_decay_steps=decay,
                lr_decay_style=flags.get("lr_decay_style", "linear"),
                start_wd=float(flags.get("start_weight_decay", wd)),
                end_wd=float(flags.get("end_weight_decay", wd)),
                wd_incr_steps=train, wd_incr_style=flags.get("weight_decay_incr_style", "constant"),
                wsd_decay_steps=None if wsd is None else int(wsd) * scale,
                lr_wsd_decay_style=flags.get("lr_wsd_decay_style", "exponential")), batch


def flag_values(path: Path, text: str | None = None) -> dict:
    """The command's flags as argparse keeps them (the last of each), ``$VAR`` resolved."""
    from schedlang.formats.megatron_args import read

    args = read(text if text is not None else path.read_text(), str(path))
    out = {}
    for key, flag in args.flags.items():
        value = flag.text
        if flag.ref is not None:
            value = flag.ref.default or args.assignments[flag.ref.name][-1]
        out[key] = value
    return out


def appended(original: Path, written: str) -> dict:
    """The original's flags with the exported ones put at the end of its command: argparse keeps
    the last of a flag given twice, so every flag the export writes replaces the original's."""
    words = " ".join(line.rstrip("\\").strip() for line in written.splitlines()
                     if line.strip() and not line.startswith("#")).split()
    exported = {words[i][2:].replace("-", "_"): words[i + 1] for i in range(0, len(words), 2)}
    return {**flag_values(original), **exported}


@pytest.mark.parametrize("name", ["users_command.sh", "gpt_345m.sh", "t5_samples.sh", "llama_wsd.sh",
                                  "bert_isr.yaml"])
def test_export_into_the_original_command_trains_as_the_original(tmp_path, name):
    """import -> export --into the original -> the exported flags in the original command: the real
    OptimizerParamScheduler, built and stepped as Megatron-LM does, gives the original's lr and
    weight decay at every iteration (the issue's command: a warmup of 2000 iterations, not 3.9)."""
    if name == "users_command.sh":
        original = tmp_path / name
        original.write_text(USERS_COMMAND)
    else:
        original = CONFIGS / "megatron" / name
    sched = import_file(original, "megatron-args")
    written = export(sched, "run.sched", format="megatron-args", into=original)
    assert "Proved merged into" in written
    kwargs, batch = scheduler_kwargs(flag_values(original))
    merged_kwargs, merged_batch = scheduler_kwargs(appended(original, written))
    assert merged_batch == batch
    iterations = kwargs["wd_incr_steps"] // batch + 20
    lr, wd = _megatron_lm(kwargs, batch, iterations)
    assert _megatron_lm(merged_kwargs, batch, iterations) == (pytest.approx(lr, rel=1e-12, abs=1e-18),
                                                              pytest.approx(wd, rel=1e-12, abs=1e-18))
    if name == "users_command.sh":
        assert "--lr-warmup-iters 2000" in written and "--train-iters 100000" in written
        assert "samples" not in written.split("\n", 3)[-1]  # no sample flag at all
        assert "(--global-batch-size 512)" in written


def test_export_into_a_sample_based_command_writes_samples_times_its_batch(tmp_path):
    """A per-iteration file written into a command that trains by samples: its lengths times the
    command's --global-batch-size, as --*-samples (Megatron refuses --*-iters with --train-samples)."""
    original = tmp_path / "samples.sh"
    original.write_text("python pretrain_gpt.py --train-samples 1280000 --lr-warmup-samples 64000 "
                        "--lr 3e-4 --min-lr 3e-5 --lr-decay-style cosine --global-batch-size 128\n")
    sched = ('schedule lr = megatron.OptimizerParamScheduler(max_lr=6e-4, min_lr=6e-5, lr_warmup_steps=250, '
             'lr_decay_steps=9000, lr_decay_style="linear")\n')
    written = export(sched, "run.sched", format="megatron-args", into=original, schedules=["lr"])
    assert "--lr-warmup-samples 32000" in written and "--lr-decay-samples 1152000" in written
    assert "--train-samples" not in written.split("\n", 6)[-1]  # the command's own is kept
    kwargs, batch = scheduler_kwargs(appended(original, written))
    lr, _ = _megatron_lm(kwargs, batch, 10_020)
    assert schedlang.compile(sched)["lr"].values(range(10_020)) == pytest.approx(lr, rel=1e-12, abs=1e-18)


@pytest.mark.parametrize("command, sched, where, message", [
    ("python pretrain_gpt.py --train-samples 3000 --lr 1e-3 --seq-length 7 "
     "--step-batch-size-schedule '0:16 1.5K:48'\n",
     "schedule lr = megatron.OptimizerParamScheduler(max_lr=1e-3, lr_warmup_steps=10, lr_decay_steps=100)\n",
     "run.sched:1:15:", "changes its batch (--step-batch-size-schedule at 1:97)"),
    ("python pretrain_gpt.py --train-iters 300 --lr 1e-4 --global-batch-size 32\n",
     'schedule lr = megatron.OptimizerParamScheduler(max_lr=1e-4, min_lr=1e-6, lr_warmup_steps=0.5, '
     'lr_decay_steps=250, lr_decay_style="inverse-square-root")\n',
     "run.sched:1:90:", "clamps max(W, 1) and max(n, 1) in samples, so at --global-batch-size 32"),
])
def test_export_that_cannot_be_written_for_the_run_is_refused_at_the_reason(tmp_path, command, sched, where,
                                                                            message):
    original = tmp_path / "run.sh"
    original.write_text(command)
    with pytest.raises(SchedlangError) as info:
        export(sched, "run.sched", format="megatron-args", into=original, schedules=["lr"])
    assert where in str(info.value) and message in str(info.value) and "^" in str(info.value)


def test_export_alone_says_it_is_proved_on_megatrons_defaults():
    written = export('schedule lr = megatron.OptimizerParamScheduler(max_lr=3e-4, '
                     'lr_warmup_steps=2000, lr_decay_steps=100000)\n', "run.sched", format="megatron-args")
    assert "Proved alone, every other flag at Megatron-LM's default" in written
    assert "--lr-warmup-iters 2000" in written and "--train-iters 100000" in written


def test_cli_export_into_the_users_command(tmp_path):
    """The issue's steps from the command line: import, export --into the command (exit 0, the
    iteration flags, the proof's statement on stderr); a refusal is exit 2 with the reason located."""
    from helpers import run_cli

    command = tmp_path / "run.sh"
    command.write_text(USERS_COMMAND)
    sched = tmp_path / "run.sched"
    sched.write_text(import_file(command, "megatron-args"))
    done = run_cli("export", sched, "--format", "megatron-args", "--into", command)
    assert done.returncode == 0, done.stderr
    assert "--lr-warmup-iters 2000" in done.stdout and "-samples" not in done.stdout
    assert f"note: proved merged into {command}" in done.stderr
    alone = run_cli("export", sched, "--format", "megatron-args")
    assert "note: proved alone" in alone.stderr
    other = tmp_path / "ramp.sh"
    other.write_text("python pretrain_gpt.py --train-samples 3000 --lr 1e-3 "
                     "--step-batch-size-schedule '0:16 1K:32'\n")
    refused = run_cli("export", sched, "--format", "megatron-args", "--into", other)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "changes its batch" in refused.stderr and "run.sched:7:15:" in refused.stderr
