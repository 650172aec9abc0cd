"""``import --format megatron-args`` of runs whose batch changes, against the real code.

A Megatron-LM run with ``--step-batch-size-schedule`` (Megatron-LM main; megatron-core 0.19.2's
``StepBatchsizeNumMicroBatchesCalculator``, loaded from ``.frameworks``) or ``--rampup-batch-size``
(megatron-core <= 0.17; the installed 0.16.1's ``RampupBatchsizeNumMicroBatchesCalculator``) is
imported per optimizer step: ``batch = megatron.<its table>`` and ``on_samples(
megatron.OptimizerParamScheduler(...))``.  The reference is the installed megatron-core 0.16.1
``OptimizerParamScheduler`` for the ramp, and megatron-core 0.19.2's (loaded from ``.frameworks``) for
the step schedule and for Megatron-LM main ignoring the ramp, each built with the
arguments Megatron-LM's ``get_optimizer_param_scheduler`` passes for ``--train-samples`` (mirrored
in :func:`megatron_kwargs`) and driven as Megatron-LM's training loop drives it: the constructor's
``step(0)``, then after each iteration ``step(increment=batch)`` with the batch the real calculator
gives (:class:`test_megatron_batch.Loop`).  The lr and weight decay the optimizer holds before
update ``k`` must be ``prog["lr"](k)`` and ``prog["weight_decay"](k)``.

Small runs are compared at every step past the last switch, the warmup end and the decay end;
production sizes (a ramp over 469B tokens at seq 4096, 10**13-token runs) at every batch switch and
every lr boundary, +-3 steps, with the real calculator's batch at the closed form's ``S_k``.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import schedlang
from schedlang.formats import import_file
from schedlang.formats.export import export

from .real import real
from .test_megatron_batch import Loop, ramp_calculator, real_batch_at, scheduler_019, step_calculator

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
    assert "batch = megatron." in text and "on_samples(megatron.OptimizerParamScheduler(" in text
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


# --------------------------------------------------------------------------- export and back


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
