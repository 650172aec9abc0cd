"""``--format olmo-core-json``: OLMo-core's ``config.json`` imported, run against OLMo-core's own code.

Each config is written by OLMo-core 3.0.0's ``Config.as_config_dict`` (the code its
``ConfigSaverCallback`` saves into every checkpoint), from the real scheduler dataclasses and
``Duration``.  The reference run is OLMo-core's trainer loop as ``trainer.py`` writes it: while
neither ``max_duration`` nor ``hard_stop`` is ``due``, ``global_step += 1`` and
``global_train_tokens_seen += global_batch_size``, then the train module's ``scheduler.set_lr``
(the real method, with ``Trainer._get_max_steps`` / ``_get_max_tokens`` taken from ``trainer.py``
as written).  The imported file must train as many updates (``prog.run``) with the same lr at
every one of them: every boundary and the end are passed.
"""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys
import warnings
from pathlib import Path
from types import SimpleNamespace

import pytest

import schedlang
from schedlang.errors import SchedlangError
from schedlang.formats import guess_format, import_file
from schedlang.formats.export import export

from .olmo_core_cases import PACKAGE, olmo_config
from .test_run_length import _function

CONFIGS = Path(__file__).parent / "configs"
GBS, SEQ, LR = 64, 8, 3e-4  # tokens a step (data_loader.global_batch_size), tokens a sample


def config_json(scheduler, duration, hard_stop=None, lr=LR, gbs=GBS, seq=SEQ, indent=None) -> str:
    """The config.json OLMo-core writes for these parts (its own ``as_config_dict``)."""
    n = olmo_config()

    @dataclasses.dataclass
    class ExperimentConfig(n.Config):
        run_name: str
        dataset: dict
        data_loader: dict
        train_module: dict
        trainer: dict

    train_module = {"rank_microbatch_size": gbs, "max_sequence_length": seq,
                    "optim": {"lr": lr, "betas": [0.9, 0.95], "weight_decay": 0.1}}
    if scheduler is not None:
        train_module["scheduler"] = scheduler
    trainer = {"save_folder": "/checkpoints/run", "max_duration": duration}
    if hard_stop is not None:
        trainer["hard_stop"] = hard_stop
    config = ExperimentConfig("run", {"sequence_length": seq}, {"global_batch_size": gbs, "seed": 34521},
                              train_module, trainer)
    return json.dumps(config.as_config_dict(), indent=indent)


def olmo_lrs(scheduler, duration, hard_stop=None, lr=LR, gbs=GBS, start=0, saved=None) -> list[float]:
    """The lr of every update of OLMo-core's run (``Trainer.fit``'s loop, the real ``set_lr``).

    ``start``, ``saved``: a run resumed from a checkpoint at step ``start`` (its trainer state,
    steps and tokens seen, restored) whose optimizer param group was ``saved``; the optimizer
    ``OptimConfig.build`` makes resets its fixed field ``initial_lr`` to the config's ``lr`` after
    loading the state (``reset_fixed_fields``, a ``load_state_dict`` post hook)."""
    n = olmo_config()
    names = {"DurationUnit": n.DurationUnit, "math": math}
    trainer_py = PACKAGE / "train" / "trainer.py"
    steps_of = _function(trainer_py, "_get_max_steps", dict(names), cls="Trainer")
    tokens_of = _function(trainer_py, "_get_max_tokens", dict(names), cls="Trainer")

    class Trainer:
        global_step, global_train_tokens_seen, epoch = 0, 0, 1
        tokens_per_batch = gbs
        data_loader = SimpleNamespace(total_batches=None, batches_processed=0)
        _get_max_steps = steps_of
        _get_max_tokens = tokens_of
        max_steps = property(lambda self: self._get_max_steps(duration))
        max_tokens = property(lambda self: self._get_max_tokens(duration))

    trainer, group, out = Trainer(), {"lr": lr, "params": []}, []
    if saved is not None:
        trainer.global_step, trainer.global_train_tokens_seen = start, start * gbs
        group = {**saved, "params": []}
        group["initial_lr"] = lr  # reset_fixed_fields (olmo_core/optim/config.py)

    def due(d):
        return d is not None and d.due(step=trainer.global_step, tokens=trainer.global_train_tokens_seen,
                                       epoch=trainer.epoch)

    while not (due(duration) or due(hard_stop)):
        trainer.global_step += 1
        trainer.global_train_tokens_seen += gbs
        out.append(float(scheduler.set_lr(group, trainer)) if scheduler is not None else lr)
    return out


def _imported(tmp_path, text: str, name: str = "config.json", **kw):
    path = tmp_path / name
    path.write_text(text)
    return schedlang.compile(import_file(path, format="olmo-core-json", **kw))


def _cases():
    n = olmo_config()
    s, d = n.scheduler, n.Duration
    tok = GBS  # tokens a step
    return [
        ("CosWithWarmup", lambda: s.CosWithWarmup(warmup=20), d.steps(200), None),
        ("WSD steps, run in tokens", lambda: s.WSD(warmup=10, decay=30, decay_fraction=None),
         d.tokens(200 * tok + 5), None),
        ("WSD tokens", lambda: s.WSD(units="tokens", warmup_fraction=0.1, decay_fraction=0.2,
                                     decay_min_lr=1e-5), d.tokens(150 * tok - 10), None),
        ("WSD tokens, run in steps", lambda: s.WSD(units="tokens", warmup=10 * tok, decay=40 * tok + 3,
                                                    decay_fraction=None), d.steps(120), None),
        ("LinearWithWarmup own t_max", lambda: s.LinearWithWarmup(warmup=10, alpha_f=0.0, t_max=150),
         d.steps(200), None),
        ("CosWithWarmup cut by hard_stop (OLMo#887)",
         lambda: s.CosWithWarmup(units="tokens", warmup=20 * tok), d.tokens(250 * tok), d.tokens(200 * tok)),
        ("ConstantWithWarmup", lambda: s.ConstantWithWarmup(warmup_fraction=0.1), d.steps(100), None),
        ("PowerLR", lambda: s.PowerLR(warmup=20, b=-0.51, decay=30, decay_fraction=None), d.steps(200), None),
        ("InvSqrtWithWarmup", lambda: s.InvSqrtWithWarmup(warmup=20), d.steps(150), None),
        ("HalfCosWithWarmup", lambda: s.HalfCosWithWarmup(warmup=20, alpha_f=0.0), d.steps(150), None),
        ("CosWithWarmupAndLinearDecay", lambda: s.CosWithWarmupAndLinearDecay(warmup=20), d.steps(200), None),
        ("ExponentialScheduler", lambda: s.ExponentialScheduler(lr_min=1e-6), d.steps(100), None),
        ("WSDS", lambda: s.WSDS(period_lengths=[100, 60, 80], warmup=10, decay_fraction=0.2,
                                period_lr_multipliers=[1.0, 0.7, 0.5]), d.steps(240), None),
        ("ConstantScheduler", lambda: s.ConstantScheduler(), d.steps(30), None),
        ("no scheduler", lambda: None, d.steps(30), None),
        # schedulers of schedulers (issue 41 item 2): every child's end, the override's start and
        # end, and the run's end passed
        ("SequentialScheduler", lambda: s.SequentialScheduler(
            schedulers=[s.InvSqrtWithWarmup(alpha_f=0.5, warmup=20), s.CosWithWarmup(warmup=0),
                        s.LinearWithWarmup(t_max=60, warmup=0)], schedulers_max=[50, 80]),
         d.steps(300), None),
        ("SequentialScheduler, OverrideDecay", lambda: s.SequentialScheduler(
            schedulers=[s.ConstantWithWarmup(warmup=30), s.CosWithWarmup(warmup=0, alpha_f=0.1)],
            schedulers_max=[100], override_decay=s.OverrideDecay(
                start=250, duration=80, shape=s.ComposableSchedulerStageType.cosine, end_lr_fraction=0.05)),
         d.steps(400), None),
        ("SequentialScheduler tokens, cut by hard_stop", lambda: s.SequentialScheduler(
            units="tokens", schedulers=[s.ConstantWithWarmup(warmup=10 * tok), s.WSD(warmup=0, decay=40 * tok,
                                                                                      decay_fraction=None)],
            schedulers_max=[60 * tok + 5]), d.tokens(200 * tok), d.tokens(180 * tok)),
        ("ComposableScheduler, OverrideDecay", lambda: s.ComposableScheduler(
            stages=[s.ComposableSchedulerStage(duration=40, start_lr_fraction=0.0, end_lr_fraction=1.0),
                    s.ComposableSchedulerStage(duration=200, end_lr_fraction=0.1,
                                               shape=s.ComposableSchedulerStageType.cosine),
                    s.ComposableSchedulerStage(duration=60, start_lr=0.0002, end_lr=0.0)],
            override_decay=s.OverrideDecay(start=150, duration=50, end_lr=0.0001)), d.steps(350), None),
        ("ComposableScheduler tokens, run past the stages", lambda: s.ComposableScheduler(
            units="tokens", stages=[s.ComposableSchedulerStage(duration=20 * tok, start_lr=0.0, end_lr=3e-4),
                                    s.ComposableSchedulerStage(duration=100 * tok + 7, end_lr_fraction=0.1,
                                                               shape=s.ComposableSchedulerStageType.cosine)]),
         d.tokens(150 * tok), None),
        ("SequentialScheduler of one", lambda: s.SequentialScheduler(schedulers=[s.CosWithWarmup(warmup=10)],
                                                                     schedulers_max=[]), d.steps(60), None),
    ]


CASE_IDS = ["CosWithWarmup", "WSD steps, run in tokens", "WSD tokens", "WSD tokens, run in steps",
            "LinearWithWarmup own t_max", "CosWithWarmup cut by hard_stop (OLMo#887)", "ConstantWithWarmup",
            "PowerLR", "InvSqrtWithWarmup", "HalfCosWithWarmup", "CosWithWarmupAndLinearDecay",
            "ExponentialScheduler", "WSDS", "ConstantScheduler", "no scheduler", "SequentialScheduler",
            "SequentialScheduler, OverrideDecay", "SequentialScheduler tokens, cut by hard_stop",
            "ComposableScheduler, OverrideDecay", "ComposableScheduler tokens, run past the stages",
            "SequentialScheduler of one"]


@pytest.mark.parametrize("index", range(len(CASE_IDS)), ids=CASE_IDS)
def test_every_update_is_olmo_core_s(tmp_path, index):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the deprecated aliases, none used here
        what, make, duration, hard_stop = _cases()[index]
        theirs = olmo_lrs(make(), duration, hard_stop)
        text = config_json(make(), duration, hard_stop)
    prog = _imported(tmp_path, text)
    assert prog.run == len(theirs), what
    lr = prog["lr"]
    for k, value in enumerate(theirs):
        assert math.isclose(lr(k), value, rel_tol=1e-12, abs_tol=1e-18), f"{what}: update {k}: {lr(k)!r} " \
                                                                          f"vs OLMo-core {value!r}"


@pytest.mark.parametrize("index", range(len(CASE_IDS)), ids=CASE_IDS)
def test_lower_writes_the_same_run(tmp_path, index):
    """``import --lower`` (core calls, no preset) is proven equal to the preset import."""
    import warnings

    from schedlang.verify import equivalent

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, make, duration, hard_stop = _cases()[index]
        text = config_json(make(), duration, hard_stop)
    presets, core = _imported(tmp_path, text), _imported(tmp_path, text, style="core")
    assert core.run == presets.run
    assert equivalent(presets["lr"], core["lr"], stop=presets.run + 1)


def test_the_cut_run_warns_on_check(tmp_path):
    """OLMo#887: a cosine set for 250 steps' tokens, stopped by hard_stop at 200: check names the cut."""
    n = olmo_config()
    text = config_json(n.scheduler.CosWithWarmup(units="tokens", warmup=20 * GBS),
                       n.Duration.tokens(250 * GBS), n.Duration.tokens(200 * GBS))
    path = tmp_path / "config.json"
    path.write_text(text)
    sched = tmp_path / "run.sched"
    sched.write_text(import_file(path, format="olmo-core-json"))
    done = subprocess.run([sys.executable, "-m", "schedlang", "check", str(sched)], capture_output=True,
                          text=True)
    assert done.returncode == 0 and "inside the phase" in done.stderr, done.stderr


def test_the_class_as_olmo_core_optim_exports_it():
    """``from_dict`` imports ``_CLASS_``'s module and takes the class: ``olmo_core.optim.WSD`` is the
    same class (the package re-exports its schedulers)."""
    data = _base()
    data["train_module"]["scheduler"]["_CLASS_"] = "olmo_core.optim.WSD"
    via_package = schedlang.formats.from_olmo_core_json(json.dumps(data), "config.json")
    direct = schedlang.formats.from_olmo_core_json(json.dumps(_base()), "config.json")
    assert via_package == direct


def test_config_json_is_recognized():
    text = (CONFIGS / "olmo_core_wsd_steps.json").read_text()
    assert guess_format(Path("config.json"), text) == "olmo-core-json"


# -- a BatchSizeSchedulerCallback: the batch (and the lr's sqrt factor) of every step ---------------

CALLBACK = "olmo_core.train.callbacks.batch_size_scheduler.BatchSizeSchedulerCallback"


def _with_callback(text: str, sizes, points, units) -> str:
    data = json.loads(text)
    data["train_module"]["optim"]["_CLASS_"] = "olmo_core.optim.adamw.SkipStepAdamWConfig"
    n = olmo_config()
    duration = n.Duration.tokens if units == "tokens" else n.Duration.steps
    data["trainer"]["callbacks"] = {"batchwup": {
        "batch_sizes": list(sizes), "enabled": True, "_CLASS_": CALLBACK,
        "schedule": [dataclasses.asdict(duration(p)) | {"_CLASS_": "olmo_core.train.common.Duration"}
                     for p in points]}}
    return json.dumps(data)


@pytest.mark.parametrize("make, duration, sizes, points, units", [
    (lambda s: s.WSD(units="tokens", warmup=640, decay=6400, decay_fraction=None), ("tokens", 64000),
     (64, 128, 256), (0, 3200, 12800), "tokens"),
    (lambda s: s.CosWithWarmup(warmup=20), ("steps", 150), (64, 128, 64), (0, 41, 90), "steps"),
    (lambda s: s.ComposableScheduler(stages=[
        s.ComposableSchedulerStage(duration=20, start_lr_fraction=0.0, end_lr_fraction=1.0),
        s.ComposableSchedulerStage(duration=100, shape=s.ComposableSchedulerStageType.cosine,
                                   end_lr_fraction=0.1)]),
     ("steps", 150), (64, 128, 64), (0, 41, 90), "steps"),
    # stages of their own lr: the callback's factor scales the initial lr, which they never read
    (lambda s: s.ComposableScheduler(units="tokens", stages=[
        s.ComposableSchedulerStage(duration=640, start_lr=0.0, end_lr=3e-4),
        s.ComposableSchedulerStage(duration=30000, end_lr=3e-5, shape=s.ComposableSchedulerStageType.cosine),
        s.ComposableSchedulerStage(duration=6400, end_lr_fraction=0.0)]),
     ("tokens", 64000), (64, 128, 256), (0, 3200, 12800), "tokens"),
], ids=["WSD in tokens", "CosWithWarmup in steps", "ComposableScheduler in steps",
        "ComposableScheduler of its own lr"])
def test_the_batch_size_schedule_callback_every_step(tmp_path, make, duration, sizes, points, units):
    """OLMo-core's real ``BatchSizeSchedulerCallback`` (``test_olmo_core_batch.olmo_run``: it
    waits for ``batches_processed % ratio == 0`` to grow the batch and scales ``initial_lr`` by
    ``sqrt(new / old)``): the imported file's batch and lr at every step of the run, and the run."""
    from .test_olmo_core_batch import olmo_run

    n = olmo_config()
    unit, value = duration
    horizon = n.Duration.tokens(value) if unit == "tokens" else n.Duration.steps(value)
    text = _with_callback(config_json(make(n.scheduler), horizon), sizes, points, units)
    prog = _imported(tmp_path, text)
    steps = run = value if unit == "steps" else None
    if run is None:  # the trainer stops at the first step whose tokens seen reach max_duration
        seen, run, batches = 0, 0, [b for b, _ in olmo_run(sizes, points, units, value // sizes[0], None)]
        while seen < value:
            seen, run = seen + batches[run], run + 1
        steps = run
    theirs = olmo_run(sizes, points, units, steps, make(olmo_core_cases_module()), value)
    assert prog.run == run
    assert [prog.batch_at(k) * SEQ for k in range(run)] == [b for b, _ in theirs]
    assert len({b for b, _ in theirs}) == len(set(sizes))
    for k, (_, value_k) in enumerate(theirs):
        assert math.isclose(prog["lr"](k), value_k, rel_tol=1e-12, abs_tol=1e-18), k


@pytest.mark.parametrize("units", ["tokens", "steps"])
def test_a_callback_config_exports_back_into_itself(tmp_path, units):
    """import, then export --into: the callback written back (batch sizes, schedule) with the
    scheduler, and the merged config read back equal (the writer's proof) and run the same by the
    real callback."""
    from .test_olmo_core_batch import olmo_run

    n = olmo_config()
    if units == "tokens":
        make, horizon, sizes, points = (lambda s: s.WSD(units="tokens", warmup=640, decay=6400,
                                                        decay_fraction=None)), n.Duration.tokens(64000), \
            (64, 128, 256), (0, 3200, 12800)
    else:
        make, horizon, sizes, points = (lambda s: s.CosWithWarmup(warmup=20)), n.Duration.steps(150), \
            (64, 128, 64), (0, 41, 90)
    original = tmp_path / "config.json"
    original.write_text(_with_callback(config_json(make(n.scheduler), horizon), sizes, points, units))
    source = import_file(original, format="olmo-core-json")
    merged = json.loads(export(source, "run.sched", format="olmo-core-json", into=original))
    [callback] = merged["trainer"]["callbacks"].values()
    assert callback["batch_sizes"] == list(sizes)
    assert [p["value"] for p in callback["schedule"]] == list(points)
    alone = json.loads(export(source, "run.sched", format="olmo-core-json"))
    assert alone["data_loader"]["global_batch_size"] == sizes[0]
    steps = 150 if units == "steps" else schedlang.compile(source).run
    block = merged["train_module"]["scheduler"]
    fields = {k: v for k, v in block.items() if k not in ("_CLASS_", "type")}
    scheduler = getattr(olmo_core_cases_module(), block["_CLASS_"].rsplit(".", 1)[1])(**{
        **{f.name: None for f in dataclasses.fields(getattr(olmo_config().scheduler, block["_CLASS_"].rsplit(
            ".", 1)[1])) if f.init and f.name not in fields}, **fields})
    assert olmo_run(sizes, points, units, steps, scheduler, horizon.value) == \
        olmo_run(sizes, points, units, steps, make(olmo_core_cases_module()), horizon.value)


@pytest.mark.parametrize("make, key", [
    (lambda s: s.WSD(units="tokens", warmup=640, decay=6400, decay_fraction=None, decay_min_lr=1e-4),
     "decay_min_lr"),
    (lambda s: s.ComposableScheduler(units="tokens", stages=[
        s.ComposableSchedulerStage(duration=640, start_lr_fraction=0.0, end_lr_fraction=1.0),
        s.ComposableSchedulerStage(duration=6400, end_lr=1e-5)]), "end_lr"),
    (lambda s: s.ExponentialScheduler(units="tokens", lr_min=1e-6), "lr_min"),
], ids=["WSD floor", "ComposableScheduler absolute end", "ExponentialScheduler"])
def test_a_callback_with_an_lr_that_does_not_scale_is_refused(tmp_path, make, key):
    """OLMo-core's callback scales the initial lr by sqrt(new / old); an absolute floor does not
    scale, so the real run is not the scheduler times the factor (the callback's own loop differs
    from the product at the decay's end): refused at the field."""
    from .test_olmo_core_batch import olmo_run

    n = olmo_config()
    sizes, points = (64, 128, 256), (0, 3200, 12800)
    text = _with_callback(config_json(make(n.scheduler), n.Duration.tokens(64000)), sizes, points, "tokens")
    with pytest.raises(SchedlangError) as caught:
        _imported(tmp_path, text)
    assert caught.value.message.startswith(key) and "does not scale" in caught.value.message
    line = text.splitlines()[caught.value.span.line - 1]
    assert line[:caught.value.span.column - 1].endswith(f'"{key}": ')
    if key == "decay_min_lr":  # the product the import would have written, against the real loop
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            real = olmo_run(sizes, points, "tokens", 324, make(olmo_core_cases_module()), 64000)
        scheduler = make(olmo_core_cases_module())
        product = [scheduler.get_lr(LR, sum(b for b, _ in real[:k + 1]), 64000) * math.sqrt(real[k][0] / 64)
                   for k in range(324)]
        assert not math.isclose(product[-1], real[-1][1], rel_tol=1e-6)


def test_a_ramp_without_its_lr_factor_is_refused():
    source = ("param seq_len: int = 8\nbatch = olmo_core.batch_size_schedule(batch_sizes=[64, 128], "
              "schedule=[0, 3200], units=\"tokens\")\nrun = 6400tok\n"
              "schedule lr = olmo_core.WSD(lr=3e-4, units=\"tokens\", t_max=6400, warmup=64, decay=640)\n")
    with pytest.raises(SchedlangError, match="not multiplied by that factor") as caught:
        export(source, "x.sched", format="olmo-core-json")
    assert caught.value.span.line == 2 and "ComposableScheduler whose every stage" in caught.value.hint
    factor_alone = ("param seq_len: int = 8\nbatch = 8\nrun = 6400tok\nschedule lr = olmo_core.WSD("
                    "lr=3e-4, units=\"tokens\", t_max=6400, warmup=64, decay=640) * "
                    "olmo_core.batch_size_lr_factor()\n")
    with pytest.raises(SchedlangError, match="batch_size_schedule"):
        export(factor_alone, "x.sched", format="olmo-core-json")


def olmo_core_cases_module():
    """The scheduler module ``olmo_run``'s callback was loaded with (``olmo_core_cases.olmo``)."""
    from .olmo_core_cases import olmo

    return olmo()


def test_the_callback_with_a_moving_t_max_is_refused(tmp_path):
    n = olmo_config()
    text = _with_callback(config_json(n.scheduler.CosWithWarmup(warmup=20), n.Duration.tokens(64000)),
                          (64, 128), (0, 3200), "tokens")
    with pytest.raises(SchedlangError, match="changes with every batch change"):
        _imported(tmp_path, text)


# -- export: config.json keys written back, merged into the original, run by OLMo-core -------------


def _from_json(data: dict):
    """The scheduler and durations OLMo-core builds from a config.json (a field left out: None)."""
    n = olmo_config()
    trainer = data["trainer"]
    block = data["train_module"].get("scheduler")

    def duration(d):
        return None if d is None else n.Duration(value=d["value"], unit=n.DurationUnit(d["unit"]))

    return (_real_scheduler(block) if block else None, duration(trainer["max_duration"]),
            duration(trainer.get("hard_stop")), data["train_module"]["optim"]["lr"])


@pytest.mark.parametrize("index", range(len(CASE_IDS)), ids=CASE_IDS)
def test_export_into_the_original_runs_the_same_in_olmo_core(tmp_path, index):
    """import, then ``export --format olmo-core-json --into`` the original: OLMo-core built from
    the merged config trains the same updates with the same lr (and the writer proved the text,
    read back, equal to the file)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        what, make, duration, hard_stop = _cases()[index]
        theirs = olmo_lrs(make(), duration, hard_stop)
        original = tmp_path / "config.json"
        original.write_text(config_json(make(), duration, hard_stop))
    source = import_file(original, format="olmo-core-json")
    merged = json.loads(export(source, "run.sched", format="olmo-core-json", into=original))
    kept = json.loads(original.read_text())
    assert (merged["run_name"], merged["dataset"], merged["data_loader"]) == \
        (kept["run_name"], kept["dataset"], kept["data_loader"])  # the rest of the config kept
    scheduler, max_duration, stop, lr = _from_json(merged)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert olmo_lrs(scheduler, max_duration, stop, lr=lr) == theirs, what


def test_export_alone_writes_the_batch_for_the_token_clock():
    source = ("param seq_len: int = 8\nbatch = 8\nrun = 12800tok\n"
              "schedule lr = olmo_core.WSD(lr=3e-4, units=\"tokens\", t_max=16000, warmup=640, decay=3200)\n")
    data = json.loads(export(source, "wsd.sched", format="olmo-core-json"))
    assert data["data_loader"]["global_batch_size"] == 64 and data["dataset"]["sequence_length"] == 8
    assert data["trainer"]["max_duration"] == {"value": 16000, "unit": "tokens",
                                               "_CLASS_": "olmo_core.train.common.Duration"}
    assert data["trainer"]["hard_stop"]["value"] == 12800
    scheduler, max_duration, stop, lr = _from_json(data)
    prog = schedlang.compile(source)
    lrs = olmo_lrs(scheduler, max_duration, stop, lr=lr)
    assert len(lrs) == prog.run == 200
    assert all(math.isclose(prog["lr"](k), v, rel_tol=1e-12, abs_tol=1e-18) for k, v in enumerate(lrs))


@pytest.mark.parametrize("source", [
    ("run = 120\nschedule lr = olmo_core.SequentialScheduler(lr=3e-4, t_max=120, schedulers=["
     "olmo_core.ConstantWithWarmup(warmup=10), olmo_core.CosWithWarmup(warmup=0, alpha_f=0.1)], "
     "schedulers_max_steps=[50, 7], override_decay=olmo_core.OverrideDecay(start=80, duration=20, "
     "shape=\"cosine\", end_lr_fraction=0.05))\n"),
    ("param seq_len: int = 8\nbatch = 8\nrun = 6400tok\nschedule lr = olmo_core.ComposableScheduler(lr=3e-4, "
     "units=\"tokens\", stages=[olmo_core.ComposableSchedulerStage(duration=640, start_lr=0, "
     "end_lr_fraction=1), olmo_core.ComposableSchedulerStage(duration=5000, "
     "shape=\"cosine\", end_lr=1e-5)])\n"),
], ids=["SequentialScheduler", "ComposableScheduler"])
def test_export_alone_writes_a_scheduler_of_schedulers(source):
    """A hand-written composite exported alone: OLMo-core built from the keys (children, stages and
    override as config.json nests them) trains the file's run with its lr at every step."""
    import warnings

    data = json.loads(export(source, "x.sched", format="olmo-core-json"))
    block = data["train_module"]["scheduler"]
    if "schedulers" in block:  # the last scheduler's maximum dropped, as __post_init__ drops it
        assert block["schedulers_max"] == [50] and "schedulers_max_steps" not in block
    scheduler, max_duration, stop, lr = _from_json(data)
    prog = schedlang.compile(source)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lrs = olmo_lrs(scheduler, max_duration, stop, lr=lr, gbs=data.get("data_loader", {}).get(
            "global_batch_size", GBS))
    assert len(lrs) == prog.run
    for k, value in enumerate(lrs):
        assert math.isclose(prog["lr"](k), value, rel_tol=1e-12, abs_tol=1e-18), k


@pytest.mark.parametrize("source, message", [
    ("run = 1200\nschedule lr = olmo_core.WSD(lr=3e-4, t_max=1000, warmup=10, decay=100)\n",
     "longer than the horizon"),
    ("schedule lr = olmo_core.WSDS(lr=3e-4, period_lengths=[100], warmup=10, decay=20)\n",
     "needs the run's length"),
    ("run = 100\nschedule lr = warmup(linear, 10) >> constant(3e-4)\n",
     "no olmo_core scheduler equals this lr schedule"),
    ("param seq_len: int = 8\nbatch = stages(8, [16], [800tok])\nrun = 100\n"
     "schedule lr = olmo_core.WSD(lr=3e-4, units=\"tokens\", t_max=16000, warmup=64, decay=320)\n",
     "constant"),
])
def test_export_refuses_what_config_json_cannot_say(source, message):
    with pytest.raises(SchedlangError, match=message):
        export(source, "x.sched", format="olmo-core-json")


def test_a_batch_that_is_not_the_callback_s_says_how_to_write_it():
    source = ("param seq_len: int = 8\nbatch = stages(8, [16], [800tok])\nrun = 100\n"
              "schedule lr = olmo_core.WSD(lr=3e-4, units=\"tokens\", t_max=16000, warmup=64, decay=320)\n")
    with pytest.raises(SchedlangError, match="constant") as caught:
        export(source, "x.sched", format="olmo-core-json")
    assert "olmo_core.batch_size_schedule" in caught.value.hint and "does not write" not in caught.value.hint
    assert caught.value.span is not None


def test_export_into_a_config_of_another_batch_is_refused(tmp_path):
    source = ("param seq_len: int = 8\nbatch = 4\nrun = 100\n"
              "schedule lr = olmo_core.CosWithWarmup(lr=3e-4, units=\"tokens\", t_max=3200, warmup=64)\n")
    with pytest.raises(SchedlangError, match="global_batch_size"):
        export(source, "x.sched", format="olmo-core-json", into=CONFIGS / "olmo_core_7b_stage1.json")


# -- real-shaped fixtures ------------------------------------------------------------------------


def _real_scheduler(block: dict):
    """The real scheduler the run had: the block's fields, and None for each field it leaves out
    (``as_config_dict`` leaves out exactly the fields that were None)."""
    import warnings

    cls = getattr(olmo_config().scheduler, block["_CLASS_"].rsplit(".", 1)[1])
    fields = {k: v for k, v in block.items() if k not in ("_CLASS_", "type")}
    for key in ("schedulers", "stages"):  # a scheduler of schedulers: its children built so too
        if key in fields:
            fields[key] = [_real_scheduler(child) for child in fields[key]]
    if "override_decay" in fields:
        fields["override_decay"] = _real_scheduler(fields["override_decay"])
    fields.update({f.name: None for f in dataclasses.fields(cls) if f.init and f.name not in fields})
    if cls.__name__ in ("ComposableSchedulerStage", "OverrideDecay"):
        fields["shape"] = olmo_config().scheduler.ComposableSchedulerStageType(fields["shape"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cls(**fields)


def test_a_left_out_field_was_none():
    """The WSD of a run with ``decay=300, decay_fraction=None``: config.json leaves the None out, so
    building the class from the written fields alone (the defaults filling the rest, as
    ``from_dict`` does) refuses it (decay_fraction's default 0.1 beside decay); the import reads
    the left-out field as the None it was, and trains the run's schedule."""
    block = json.loads((CONFIGS / "olmo_core_wsd_steps.json").read_text())["train_module"]["scheduler"]
    assert "decay" in block and "decay_fraction" not in block
    n = olmo_config()
    with pytest.raises(Exception, match="Never both"):
        n.scheduler.WSD(**{k: v for k, v in block.items() if k not in ("_CLASS_", "type")})
    assert _real_scheduler(block).decay == 300


def test_fixture_7b_stage1_cut_by_hard_stop():
    """An OLMo-2-7B-stage-1-shaped config.json (CosWithWarmup in tokens, 5e12-token horizon,
    hard_stop at 4e12): the run and the lr around the warmup's end, at the cut and at the end."""
    data = json.loads((CONFIGS / "olmo_core_7b_stage1.json").read_text())
    prog = schedlang.compile(import_file(CONFIGS / "olmo_core_7b_stage1.json", format="olmo-core-json"))
    gbs = data["data_loader"]["global_batch_size"]
    horizon, stop = data["trainer"]["max_duration"]["value"], data["trainer"]["hard_stop"]["value"]
    assert prog.run == -(-stop // gbs) and prog.run_tokens == prog.run * gbs
    scheduler = _real_scheduler(data["train_module"]["scheduler"])
    warm = data["train_module"]["scheduler"]["warmup"] // gbs
    lr0 = data["train_module"]["optim"]["lr"]
    for k in (0, 1, warm - 2, warm - 1, warm, warm + 1, prog.run // 2, prog.run - 2, prog.run - 1):
        theirs = scheduler.get_lr(lr0, (k + 1) * gbs, horizon)
        assert math.isclose(prog["lr"](k), theirs, rel_tol=1e-12), k
    assert prog["lr"](prog.run - 1) > 1.8 * lr0 * 0.1  # the cut: 5.6e-5, not the floor 3e-5


def test_fixture_wsd_steps_one_line():
    """config.json as ConfigSaverCallback writes it (json.dumps: one line): WSD in steps."""
    data = json.loads((CONFIGS / "olmo_core_wsd_steps.json").read_text())
    prog = schedlang.compile(import_file(CONFIGS / "olmo_core_wsd_steps.json", format="olmo-core-json"))
    steps = data["trainer"]["max_duration"]["value"]
    assert prog.run == steps
    scheduler = _real_scheduler(data["train_module"]["scheduler"])
    lr0 = data["train_module"]["optim"]["lr"]
    for k in range(steps):
        theirs = scheduler.get_lr(lr0, k + 1, steps)
        assert math.isclose(prog["lr"](k), theirs, rel_tol=1e-12, abs_tol=1e-18), k


# -- hostile input: located errors, exit 2 ----------------------------------------------------------


def _base() -> dict:
    return json.loads((CONFIGS / "olmo_core_wsd_steps.json").read_text())


def _broken(change) -> str:
    data = _base()
    change(data)
    return json.dumps(data, indent=2)


HOSTILE = [
    ("unknown _CLASS_", lambda d: d["train_module"]["scheduler"].update(
        {"_CLASS_": "olmo_core.optim.scheduler.CosineWithWarmup"}), "not an OLMo-core 3.0.0 scheduler",
     "\"olmo_core.optim.scheduler.CosineWithWarmup\""),
    ("foreign _CLASS_", lambda d: d["train_module"]["scheduler"].update({"_CLASS_": "os.system"}),
     "not a class of olmo_core.optim.scheduler", "\"os.system\""),
    ("missing lr", lambda d: d["train_module"]["optim"].pop("lr"), "the optimizer has no lr", "{"),
    ("negative duration", lambda d: d["trainer"]["max_duration"].update({"value": -5}),
     "must be a whole number >= 1", "-5"),
    ("string as number", lambda d: d["train_module"]["scheduler"].update({"warmup": "2000"}),
     "warmup must be a number", "\"2000\""),
    ("string lr", lambda d: d["train_module"]["optim"].update({"lr": "3e-4"}), "lr must be a number",
     "\"3e-4\""),
    ("unknown field", lambda d: d["train_module"]["scheduler"].update({"warmup_ratio": 0.1}),
     "WSD has no field 'warmup_ratio'", "\"warmup_ratio\""),
    ("epochs", lambda d: d["trainer"]["max_duration"].update({"unit": "epochs"}), "is in epochs",
     "\"epochs\""),
    ("both decay and fraction", lambda d: d["train_module"]["scheduler"].update({"decay_fraction": 0.1}),
     "not both", "0.1"),
    ("a zero decay", lambda d: d["train_module"]["scheduler"].update({"decay": 0}), "a decay of 0", "0"),
    ("a negative warmup", lambda d: d["train_module"]["scheduler"].update({"warmup": -1}), "whole number",
     "-1"),
    ("an empty sequence", lambda d: d["train_module"].update({"scheduler": {
        "_CLASS_": "olmo_core.optim.scheduler.SequentialScheduler", "schedulers": [], "schedulers_max": []}}),
     "schedulers is empty", "[]"),
    ("a sequence in a sequence", lambda d: d["train_module"].update({"scheduler": {
        "_CLASS_": "olmo_core.optim.scheduler.SequentialScheduler", "schedulers_max": [10],
        "schedulers": [{"_CLASS_": "olmo_core.optim.scheduler.ConstantScheduler"},
                       {"_CLASS_": "olmo_core.optim.scheduler.SequentialScheduler"}]}}),
     "inside a SequentialScheduler", "\"olmo_core.optim.scheduler.SequentialScheduler\""),
    ("a stage's unknown field", lambda d: d["train_module"].update({"scheduler": {
        "_CLASS_": "olmo_core.optim.scheduler.ComposableScheduler",
        "stages": [{"duration": 10, "end_lr": 0.0, "warmup": 3}]}}),
     "ComposableSchedulerStage has no field 'warmup'", "\"warmup\""),
    ("a stage's shape", lambda d: d["train_module"].update({"scheduler": {
        "_CLASS_": "olmo_core.optim.scheduler.ComposableScheduler",
        "stages": [{"duration": 10, "end_lr": 0.0, "shape": "sqrt"}]}}), "shape must be one of", "\"sqrt\""),
    ("an override of another class", lambda d: d["train_module"].update({"scheduler": {
        "_CLASS_": "olmo_core.optim.scheduler.ComposableScheduler",
        "stages": [{"duration": 10, "end_lr": 0.0}],
        "override_decay": {"_CLASS_": "olmo_core.optim.scheduler.ComposableSchedulerStage", "start": 3,
                           "duration": 2, "end_lr": 0.0}}}), "must be an OverrideDecay",
     "\"olmo_core.optim.scheduler.ComposableSchedulerStage\""),
    ("an override without its end", lambda d: d["train_module"].update({"scheduler": {
        "_CLASS_": "olmo_core.optim.scheduler.SequentialScheduler", "schedulers_max": [],
        "schedulers": [{"_CLASS_": "olmo_core.optim.scheduler.ConstantScheduler"}],
        "override_decay": {"start": 3, "duration": 2}}}), "exactly one of 'end_lr' or 'end_lr_fraction'",
     "{"),  # the override's record, which lacks it (its preset call is at the record)
]


@pytest.mark.parametrize("what, change, message, at", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_configs_are_located(tmp_path, what, change, message, at):
    text = _broken(change)
    with pytest.raises(SchedlangError) as caught:
        schedlang.formats.from_olmo_core_json(text, "config.json")
    error = caught.value
    assert message in error.message, error.message
    assert error.span is not None, what
    line = text.splitlines()[error.span.line - 1]
    assert line[error.span.column - 1:].startswith(at), (what, line, error.span.column)


def test_cli_exit_2_with_caret(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(_broken(lambda d: d["train_module"]["scheduler"].update({"warmup": "2000"})))
    done = subprocess.run([sys.executable, "-m", "schedlang", "import", str(path)], capture_output=True,
                          text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"{path}:" in done.stderr and "^" in done.stderr, done.stderr


@pytest.mark.parametrize("where", ["max_duration", "hard_stop"])
def test_a_run_in_epochs_is_refused_at_its_unit_saying_what_to_write(tmp_path, where):
    """OLMo-core's steps of an epoch are ``data_loader.total_batches``, from the dataset's size,
    which config.json (ConfigSaverCallback's) does not hold: refused at the unit, exit 2, the hint
    naming ``run = N`` and the trainer's own log line of N."""
    def change(data):
        data["trainer"][where] = {"value": 2, "unit": "epochs", "_CLASS_": "olmo_core.train.common.Duration"}

    path = tmp_path / "config.json"
    path.write_text(_broken(change))
    done = subprocess.run([sys.executable, "-m", "schedlang", "import", str(path), "--format",
                           "olmo-core-json"], capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "is in epochs" in done.stderr and "`run = N`" in done.stderr
    assert "Training for N steps" in done.stderr
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if '"epochs"' in text)
    assert f"{path}:{line}:" in done.stderr and "^" in done.stderr, done.stderr
