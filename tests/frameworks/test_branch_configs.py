"""``schedlang branch --format``: each configuration driven through the framework's real scheduler
code from the trunk's checkpoint to the run's end, equal to the branch at every step (SPEC §14).

The trunk is run by the framework itself up to the branch point and its state saved; a new
scheduler is built from the written configuration and loaded with that state, as the framework
resumes (Megatron: ``--override-opt_param-scheduler``, the flags' values over the saved ones,
``num_steps`` restored; HF: the Trainer's scheduler rebuilt from the arguments, then the saved
optimizer and scheduler states loaded), and stepped to the end.
"""

from __future__ import annotations

import json
import math
import shlex
import warnings
from types import SimpleNamespace

import pytest
import tomllib

import schedlang

from .real import real

PEAK, WARMUP, C, N, RUN0 = 3e-4, 100, 1200, 300, 2000
TRUNK = f"run = {RUN0}\nschedule lr = warmup(linear, {WARMUP}) >> constant({PEAK})\n"


def _trunk(tmp_path):
    path = tmp_path / "trunk.sched"
    path.write_text(TRUNK)
    return path


def _close(k: int, ours: float, theirs: float, what: str) -> None:
    if not math.isclose(ours, theirs, rel_tol=1e-12, abs_tol=1e-18):
        pytest.fail(f"{what}: step {k}: branch {ours!r}, framework {theirs!r}")


# -- Megatron: OptimizerParamScheduler, stepped by the global batch as Megatron-LM steps it ---------

GBS = 8  # Megatron-LM's get_optimizer_param_scheduler multiplies every *-iters by the global batch


def _flags(text: str) -> dict:
    words = shlex.split(" ".join(line.rstrip("\\") for line in text.splitlines() if not line.startswith("#")))
    flags, i = {}, 0
    while i < len(words):
        if words[i].startswith("--"):
            value = words[i + 1] if i + 1 < len(words) and not words[i + 1].startswith("--") else True
            flags[words[i]] = value
            i += 1 if value is True else 2
        else:
            i += 1
    return flags


def _megatron(module, optimizer, *, max_lr, min_lr, warmup, decay, style, wsd=None, wsd_style="exponential",
              override=False):
    return module.OptimizerParamScheduler(
        optimizer, init_lr=0.0, max_lr=max_lr, min_lr=min_lr, lr_warmup_steps=warmup * GBS,
        lr_decay_steps=decay * GBS, lr_decay_style=style, start_wd=0.0, end_wd=0.0, wd_incr_steps=1,
        wd_incr_style="constant", override_opt_param_scheduler=override,
        use_checkpoint_opt_param_scheduler=False,  # Megatron-LM's default for the flag
        wsd_decay_steps=None if wsd is None else wsd * GBS, lr_wsd_decay_style=wsd_style)


@pytest.mark.parametrize("shape", ["linear", "cosine", "sqrt", "megatron_exponential"])
def test_megatron_resumes_the_branch_from_the_checkpoint(tmp_path, shape):
    module = real("megatron.core.optimizer_param_scheduler")
    b = schedlang.branch(_trunk(tmp_path), C, shape, N, "3e-5", format="megatron-args")
    assert b.proven, [str(c.verdict) for c in b.claims + b.config_claims]
    flags = _flags(b.config)
    assert flags["--override-opt_param-scheduler"] is True and flags["--lr-decay-style"] == "WSD"
    assert int(flags["--train-iters"]) == b.run == C + N
    # the trunk, run by Megatron to the checkpoint at iteration C
    optimizer = SimpleNamespace(param_groups=[{}])
    trunk = _megatron(module, optimizer, max_lr=PEAK, min_lr=0.0, warmup=WARMUP, decay=RUN0, style="constant")
    for _ in range(C):
        trunk.step(GBS)
    state = trunk.state_dict()
    # resumed with the branch's flags
    optimizer = SimpleNamespace(param_groups=[{}])
    resumed = _megatron(module, optimizer, max_lr=float(flags["--lr"]), min_lr=float(flags["--min-lr"]),
                        warmup=int(flags["--lr-warmup-iters"]), decay=int(flags["--lr-decay-iters"]),
                        style=flags["--lr-decay-style"], wsd=int(flags["--lr-wsd-decay-iters"]),
                        wsd_style=flags["--lr-wsd-decay-style"], override=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        resumed.load_state_dict(state)
    lr = schedlang.compile(b.source)["lr"]
    for k in range(C, b.run + 1):
        _close(k, lr(k), float(optimizer.param_groups[0]["lr"]), f"megatron {shape}")
        resumed.step(GBS)
    assert lr(b.run) == 3e-5


# -- HF: get_scheduler("warmup_stable_decay"), the Trainer's resume ----------------------------------


@pytest.mark.parametrize("shape", ["linear", "cosine", "sqrt"])
def test_hf_resumes_the_branch_from_the_checkpoint(tmp_path, shape):
    transformers = real("transformers")
    torch = real("torch")
    b = schedlang.branch(_trunk(tmp_path), C, shape, N, "3e-5", format="hf-args")
    args = json.loads(b.config)
    assert args["lr_scheduler_type"] == "warmup_stable_decay" and args["max_steps"] == C + N
    assert b.proven, [str(c.verdict) for c in b.claims + b.config_claims]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=PEAK)
        trunk = transformers.get_scheduler("constant_with_warmup", opt, num_warmup_steps=WARMUP,
                                           num_training_steps=RUN0)
        for _ in range(C):
            opt.step()
            trunk.step()
        saved_opt, saved = opt.state_dict(), trunk.state_dict()
        opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=args["learning_rate"])
        resumed = transformers.get_scheduler(args["lr_scheduler_type"], opt,
                                             num_warmup_steps=args.get("warmup_steps", 0),
                                             num_training_steps=args["max_steps"],
                                             scheduler_specific_kwargs=args["lr_scheduler_kwargs"])
        opt.load_state_dict(saved_opt)
        resumed.load_state_dict(saved)
        lr = schedlang.compile(b.source)["lr"]
        for k in range(C, b.run + 1):
            _close(k, lr(k), float(opt.param_groups[0]["lr"]), f"hf {shape}")
            opt.step()
            resumed.step()


# -- torchtitan: LRSchedulersContainer built from the TOML, its state loaded ------------------------

TITAN_TRUNK = ('schedule lr = torchtitan.lr_scheduler(lr=3e-4, training_steps=10000, warmup_steps=100, '
               'decay_ratio=0.1, decay_type="linear")\n')


@pytest.mark.parametrize("shape", ["linear", "cosine", "sqrt"])
def test_torchtitan_resumes_the_branch_from_the_checkpoint(tmp_path, shape):
    module = real("torchtitan.components.optimizer.lr_scheduler")
    torch = real("torch")
    trunk_path = tmp_path / "titan.sched"
    trunk_path.write_text(TITAN_TRUNK)
    b = schedlang.branch(trunk_path, C, shape, N, "3e-5", format="torchtitan-toml")
    assert b.proven, [str(c.verdict) for c in b.claims + b.config_claims]
    job = tomllib.loads(b.config)
    assert job["training"]["steps"] == C + N and job["lr_scheduler"]["decay_type"] == shape

    def sgd(lr):
        return torch.optim.SGD([torch.nn.Parameter(torch.zeros(1, dtype=torch.float64))], lr=lr)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt = sgd(3e-4)
        trunk = module.LRSchedulersContainer.Config(warmup_steps=100, decay_ratio=0.1, decay_type="linear",
                                                    min_lr_factor=0.0).build(optimizers=[opt],
                                                                             training_steps=10000)
        for _ in range(C):
            opt.step()
            trunk.step()
        saved_opt, saved = opt.state_dict(), trunk.state_dict()
        opt = sgd(job["optimizer"]["lr"])
        resumed = module.LRSchedulersContainer.Config(**job["lr_scheduler"]).build(
            optimizers=[opt], training_steps=job["training"]["steps"])
        opt.load_state_dict(saved_opt)
        resumed.load_state_dict(saved)
        lr = schedlang.compile(b.source)["lr"]
        for k in range(C, b.run + 1):
            _close(k, lr(k), float(opt.param_groups[0]["lr"]), f"torchtitan {shape}")
            opt.step()
            resumed.step()


# -- OLMo-core: the scheduler rebuilt from config.json, the trainer state restored -------------------


@pytest.mark.parametrize("shape", ["linear", "cosine"])
def test_olmo_core_resumes_the_branch_from_the_checkpoint(tmp_path, shape):
    """The trunk run by OLMo-core's trainer loop (ConstantWithWarmup at PEAK) to its checkpoint at
    step C; resumed with the branch's config.json keys: the trainer's steps and tokens restored,
    the optimizer's group loaded and its ``initial_lr`` reset to the config's lr, the scheduler
    built from the config (OLMo-core saves no scheduler state), stepped to the run's end."""
    from .olmo_core_cases import olmo_config
    from .test_olmo_core_json import _from_json, olmo_lrs

    n = olmo_config()
    b = schedlang.branch(_trunk(tmp_path), C, shape, N, "3e-5", format="olmo-core-json")
    assert b.proven, [str(c.verdict) for c in b.claims + b.config_claims]
    data = json.loads(b.config)
    assert data["trainer"]["hard_stop"]["value"] == b.run == C + N
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trunk = olmo_lrs(n.scheduler.ConstantWithWarmup(warmup=WARMUP), n.Duration.steps(RUN0),
                         n.Duration.steps(C), lr=PEAK)  # the trunk, stopped at its checkpoint
        scheduler, max_duration, stop, lr = _from_json(data)
        resumed = olmo_lrs(scheduler, max_duration, stop, lr=lr, start=C,
                           saved={"lr": trunk[-1], "initial_lr": PEAK})
    assert len(trunk) == C and len(resumed) == b.run - C
    branch_lr = schedlang.compile(b.source)["lr"]
    for k, value in zip(range(C, b.run), resumed):
        _close(k, branch_lr(k), value, f"olmo-core {shape}")
    assert branch_lr(b.run) == 3e-5 and math.isclose(resumed[-1], branch_lr(b.run - 1), rel_tol=1e-12)


OLMO_TOKENS = ("param seq_len: int = 8\nbatch = 8\nrun = 128000tok\n"
               "schedule lr = warmup(linear, 100) >> constant(3e-4)\n")


@pytest.mark.parametrize("shape", ["linear", "cosine"])
@pytest.mark.parametrize("at", ["76800tok", "76810tok"])
def test_olmo_core_resumes_a_token_branch(tmp_path, shape, at):
    """units="tokens": the trunk (64 tokens a step) run by OLMo-core to the branch step (the first
    whose tokens seen reach ``at``), resumed with the branch's keys, its tokens seen restored; the
    cooldown of 300 batches (19200 tokens) read at the tokens seen through each update."""
    from .olmo_core_cases import olmo_config
    from .test_olmo_core_json import _from_json, olmo_lrs

    n = olmo_config()
    path = tmp_path / "trunk.sched"
    path.write_text(OLMO_TOKENS)
    b = schedlang.branch(path, at, shape, "19200tok", "3e-5", format="olmo-core-json")
    assert b.proven, [str(c.verdict) for c in b.claims + b.config_claims]
    data = json.loads(b.config)
    assert data["train_module"]["scheduler"]["units"] == "tokens"
    assert data["data_loader"]["global_batch_size"] == 64 and b.tokens == 64 * b.step
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trunk = olmo_lrs(n.scheduler.ConstantWithWarmup(units="tokens", warmup=6400),
                         n.Duration.tokens(128000), n.Duration.steps(b.step), lr=PEAK, gbs=64)
        scheduler, max_duration, stop, lr = _from_json(data)
        resumed = olmo_lrs(scheduler, max_duration, stop, lr=lr, gbs=64, start=b.step,
                           saved={"lr": trunk[-1], "initial_lr": PEAK})
    assert len(resumed) == b.run - b.step == 300
    branch_lr = schedlang.compile(b.source)["lr"]
    for k, value in zip(range(b.step, b.run), resumed):
        _close(k, branch_lr(k), value, f"olmo-core tokens {shape}")


def test_olmo_core_token_cooldown_of_part_of_a_batch_is_refused(tmp_path):
    path = tmp_path / "trunk.sched"
    path.write_text(OLMO_TOKENS)
    with pytest.raises(schedlang.SchedlangError, match="19200tok or 19264tok"):
        schedlang.branch(path, "76800tok", "linear", "19210tok", "3e-5", format="olmo-core-json")


def test_olmo_core_has_no_sqrt_cooldown(tmp_path):
    with pytest.raises(schedlang.SchedlangError, match="olmo-core-json has no cooldown shape 'sqrt'"):
        schedlang.branch(_trunk(tmp_path), C, "sqrt", N, "3e-5", format="olmo-core-json")


# -- Megatron on the sample clock: a token branch under a batch ramp --------------------------------

RAMP_TRUNK = ("param seq_len: int = 4\nbatch = megatron.rampup_batch_size(2, 2, 200, global_batch_size=8)\n"
              "schedule lr = on_samples(megatron.OptimizerParamScheduler(max_lr=3e-4, min_lr=0, "
              'lr_warmup_steps=20, lr_decay_steps=100000, lr_decay_style="constant"))\n')


def _resumed_on_samples(scheduler, optimizer, flags: dict, state: dict):
    """megatron-core's scheduler of ``optimizer`` built from the branch's sample flags, as
    Megatron-LM resumes with ``--override-opt_param-scheduler``, then given the trunk's saved state."""
    resumed = scheduler(optimizer, True, max_lr=float(flags["--lr"]), min_lr=float(flags["--min-lr"]),
                        lr_warmup_steps=int(flags["--lr-warmup-samples"]),
                        lr_decay_steps=int(flags["--lr-decay-samples"]),
                        lr_decay_style=flags["--lr-decay-style"],
                        wsd_decay_steps=int(flags["--lr-wsd-decay-samples"]),
                        lr_wsd_decay_style=flags["--lr-wsd-decay-style"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        resumed.load_state_dict(state)
    return resumed


@pytest.mark.parametrize("shape", ["linear", "sqrt"])
def test_megatron_resumes_a_token_branch_in_samples(tmp_path, shape):
    """Megatron-LM steps its scheduler by each iteration's global batch (2, 4, 6, 8 over the first
    200 samples): the branch at 1000 tokens (250 samples: past the ramp) cooling down over 800
    tokens is written in samples and resumed from the trunk's state at the branch step."""
    module = real("megatron.core.optimizer_param_scheduler")
    from .test_megatron_batch import Loop, ramp_calculator

    path = tmp_path / "ramp.sched"
    path.write_text(RAMP_TRUNK)
    b = schedlang.branch(path, "1000tok", shape, "800tok", "3e-5", format="megatron-args")
    assert b.proven, [str(c.verdict) for c in b.claims + b.config_claims]
    flags = _flags(b.config)
    assert flags["--rampup-batch-size"] and int(flags["--lr-wsd-decay-samples"]) == 200
    assert int(flags["--train-samples"]) == b.run_samples == b.samples + 200

    def scheduler(optimizer, override, **kw):
        return module.OptimizerParamScheduler(
            optimizer, init_lr=0.0, start_wd=0.0, end_wd=0.0, wd_incr_steps=1, wd_incr_style="constant",
            override_opt_param_scheduler=override, use_checkpoint_opt_param_scheduler=False, **kw)

    loop = Loop(ramp_calculator(2, 2, 200, 8))
    optimizer = SimpleNamespace(param_groups=[{}])
    trunk = scheduler(optimizer, False, max_lr=3e-4, min_lr=0.0, lr_warmup_steps=20, lr_decay_steps=100000,
                      lr_decay_style="constant")
    for _ in range(b.step):
        trunk.step(loop.step()[1])
    state = trunk.state_dict()
    optimizer = SimpleNamespace(param_groups=[{}])
    resumed = _resumed_on_samples(scheduler, optimizer, flags, state)
    lr = schedlang.compile(b.source)["lr"]
    for k in range(b.step, b.run + 1):
        _close(k, lr(k), float(optimizer.param_groups[0]["lr"]), f"megatron {shape} in samples")
        resumed.step(loop.step()[1])
    assert lr(b.run) == 3e-5


# -- OLMo-core with its BatchSizeSchedulerCallback: the trunk run, saved, resumed, every step ----------

FSL_RESUME = "self.batches_processed = self.tokens_processed // self.global_batch_size"


def _olmo_loop(callback, trainer, scheduler, group, stop):
    """OLMo-core's ``Trainer._fit_epoch`` with the callback: before each batch ``pre_load_batch``;
    the data loader counts the batch (``batches_processed``, ``tokens_processed``); the trainer
    counts the step and its tokens; the train module's ``scheduler.set_lr`` (the real method) sets
    the lr; until ``stop(trainer)``.  ``(batch tokens, lr)`` per update."""
    out = []
    loader = trainer.data_loader
    while not stop(trainer):
        callback.pre_load_batch()
        batch = loader.global_batch_size
        loader.batches_processed += 1
        loader.tokens_processed += batch
        trainer.global_step += 1
        trainer.global_train_tokens_seen += batch
        out.append((batch, float(scheduler.set_lr(group, trainer))))
    return out


def _olmo_trainer(callback, scheduler, batch, duration, optim):
    """A trainer holding what the callback and ``set_lr`` read: the data loader (OLMo-core's own
    ``global_batch_size`` setter), the train module with its optimizer and scheduler, and the real
    ``Trainer._get_max_steps`` / ``_get_max_tokens`` of ``max_duration``."""
    from .olmo_core_cases import PACKAGE, olmo_config
    from .test_olmo_core_batch import loader_class, sys_train_module
    from .test_run_length import _function

    n = olmo_config()
    names = {"DurationUnit": n.DurationUnit, "math": math}
    trainer_py = PACKAGE / "train" / "trainer.py"
    steps_of = _function(trainer_py, "_get_max_steps", dict(names), cls="Trainer")
    tokens_of = _function(trainer_py, "_get_max_tokens", dict(names), cls="Trainer")
    loader = loader_class()(batch)
    loader.tokens_processed = 0
    loader.total_batches = None
    train_module = sys_train_module()()
    train_module.optim, train_module.scheduler = optim, scheduler
    class Trainer:  # what the callback and set_lr read of OLMo-core's Trainer
        global_step, global_train_tokens_seen, epoch, callbacks = 0, 0, 1, {}
        max_steps = property(lambda self: steps_of(self, self.max_duration))
        max_tokens = property(lambda self: tokens_of(self, self.max_duration))

        def record_metric(self, *args):
            pass

    trainer = Trainer()
    trainer.data_loader, trainer.train_module, trainer.max_duration = loader, train_module, duration
    trainer.tokens_per_batch = batch
    callback.trainer = trainer
    return trainer


def _olmo_scheduler(m, block):
    """The OLMo-core scheduler config.json's block builds (a field it leaves out: None)."""
    import dataclasses

    def record(cls, fields):
        fields = {k: v for k, v in fields.items() if k not in ("_CLASS_", "type")}
        if "stages" in fields:
            fields["stages"] = [record(m.ComposableSchedulerStage, s) for s in fields["stages"]]
        if "shape" in fields:
            fields["shape"] = m.ComposableSchedulerStageType(fields["shape"])
        names = [f.name for f in dataclasses.fields(cls) if f.init]
        return cls(**{**{k: None for k in names if k not in fields and k in (
            "start_lr", "start_lr_fraction", "end_lr", "end_lr_fraction")}, **fields})

    return record(getattr(m, block["_CLASS_"].rsplit(".", 1)[1]), block)


def _olmo_branch_run(trunk_scheduler, sizes, points, units, branch, trunk_duration):
    """The trunk trained by OLMo-core (its scheduler, the callback's factor on its initial lr) to the
    branch point and checkpointed; then a new trainer built from the branch's config.json (its
    data loader at the config's global_batch_size, the callback's ``post_attach``), the checkpoint
    loaded as OLMo-core loads it (each group's ``initial_lr`` reset to the config's lr; the trainer
    state: step, tokens seen, and the FSL data loader's ``batches_processed = tokens_processed //
    global_batch_size``), ``post_checkpoint_loaded``, and trained to the end.  Returns the trunk's
    and the branch's ``(batch tokens, lr)`` of every update."""
    torch = real("torch")
    from .olmo_core_cases import PACKAGE, batch_callback, olmo

    assert FSL_RESUME in (PACKAGE / "data" / "data_loader.py").read_text(encoding="utf-8")
    m = olmo()
    module, common = batch_callback()

    def duration(d):
        return common.Duration(value=d["value"], unit=common.DurationUnit(d["unit"]))

    data = json.loads(branch.config)
    cb = data["trainer"]["callbacks"]["batchwup"]
    assert (cb["batch_sizes"], [p["value"] for p in cb["schedule"]]) == (list(sizes), list(points))

    def callback():
        return module.BatchSizeSchedulerCallback(batch_sizes=list(sizes), schedule=[
            getattr(common.Duration, units)(p) for p in points])

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        optim = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))], lr=PEAK)
        first = callback()
        trainer = _olmo_trainer(first, trunk_scheduler, sizes[0], duration(trunk_duration), optim)
        first.post_attach()
        group = optim.param_groups[0]
        trunk = _olmo_loop(first, trainer, trunk_scheduler, group, lambda t: t.global_step == branch.step)
        saved = (trainer.global_step, trainer.global_train_tokens_seen, trainer.data_loader.tokens_processed,
                 dict(group))
        # resumed with the branch's config.json
        lr = data["train_module"]["optim"]["lr"]
        optim = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))], lr=lr)
        second = callback()
        scheduler = _olmo_scheduler(m, data["train_module"]["scheduler"])
        resumed = _olmo_trainer(second, scheduler, data["data_loader"]["global_batch_size"],
                                duration(data["trainer"]["max_duration"]), optim)
        second.post_attach()  # Trainer.__post_init__, before the checkpoint is loaded
        group = optim.param_groups[0]
        group.update({k: v for k, v in saved[3].items() if k != "params"})
        group["initial_lr"] = lr  # reset_fixed_fields
        resumed.global_step, resumed.global_train_tokens_seen = saved[0], saved[1]
        loader = resumed.data_loader
        loader.tokens_processed = saved[2]
        loader.batches_processed = loader.tokens_processed // loader.global_batch_size  # FSL_RESUME
        second.post_checkpoint_loaded(None)
        stop = duration(data["trainer"]["hard_stop"])
        out = _olmo_loop(second, resumed, scheduler, group, lambda t: stop.due(
            step=t.global_step, tokens=t.global_train_tokens_seen, epoch=t.epoch))
    return trunk, out


OLMO_RAMP = ("param seq_len: int = 8\nbatch = olmo_core.batch_size_schedule(batch_sizes=[64, 128, 256], "
             "schedule=[0, 3200, 12800], units=\"tokens\")\nrun = 64000tok\n"
             "schedule lr = olmo_core.WSD(lr=3e-4, units=\"tokens\", t_max=64000, warmup=640, decay=6400) "
             "* olmo_core.batch_size_lr_factor(units=\"tokens\")\n")
OLMO_RAMP_STEPS = OLMO_RAMP.replace(
    "olmo_core.WSD(lr=3e-4, units=\"tokens\", t_max=64000, warmup=640, decay=6400)",
    "olmo_core.ConstantWithWarmup(lr=3e-4, t_max=1000, warmup=10)").replace(
    "run = 64000tok", "run = 1000").replace('"tokens"', '"steps"').replace("[0, 3200, 12800]", "[0, 50, 125]")
RAMP_SIZES, RAMP_POINTS = (64, 128, 256), (0, 3200, 12800)


@pytest.mark.parametrize("at, shape, n, to", [
    ("1000tok", "linear", "19200tok", "3e-5"),  # 64 -> 128 -> 256 tokens a step during the cooldown
    ("1000tok", "linear", "19250tok", "3e-5"),  # ending inside a batch
    # (F - lr) / N with a 3 in its denominator: the stage ends on the grid of exact decimals
    ("1000tok", "linear", "19200tok", "1e-5"),
    ("1000tok", "linear", "62500tok", "3e-5"),  # the last batch change far inside the cooldown
    ("25600tok", "linear", "19200tok", "3e-5"),  # after the ramp: one batch, the lr scaled by 2 in the trunk
    # at the batch change to 256 (the trunk's lr 3e-4 * sqrt(2) -> 6e-4 at step 125): from 6e-4
    ("12800tok", "linear", "19200tok", "3e-5"),
    ("12800tok", "cosine", "19200tok", "3e-5"),
    ("25600tok", "cosine", "19200tok", "3e-5"),
    ("30", "linear", "200", "3e-5"),  # in steps, the batch ramping under it
    ("30", "cosine", "200", "3e-5"),
])
def test_olmo_core_resumes_a_branch_under_its_batch_size_callback(tmp_path, at, shape, n, to):
    """A trunk whose batch is OLMo-core's BatchSizeSchedulerCallback (its lr the scheduler times the
    callback's sqrt factor): the branch is a ComposableScheduler of absolute stages, which the
    factor does not touch; OLMo-core resumed with it trains the branch's batch and lr at every
    update from the branch point to the run's end, passing each batch change."""
    from .olmo_core_cases import olmo

    tokens = at.endswith("tok")
    path = tmp_path / "ramp.sched"
    path.write_text(OLMO_RAMP if tokens else OLMO_RAMP_STEPS)
    b = schedlang.branch(path, at, shape, n, to, format="olmo-core-json")
    assert b.proven, [str(c.verdict) for c in b.claims + b.config_claims]
    block = json.loads(b.config)["train_module"]["scheduler"]
    unit = "tokens" if tokens else "steps"
    assert block["_CLASS_"].endswith("ComposableScheduler") and block["units"] == unit
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = olmo()
        trunk_scheduler = m.WSD(units="tokens", warmup=640, decay=6400, decay_fraction=None) if tokens else \
            m.ConstantWithWarmup(warmup=10)
    points, units = (RAMP_POINTS, "tokens") if tokens else ((0, 50, 125), "steps")
    trunk, resumed = _olmo_branch_run(trunk_scheduler, RAMP_SIZES, points, units, b,
                                      {"value": 64000 if tokens else 1000, "unit": unit})
    prog = b.program
    lr = prog[b.schedule]
    assert len(resumed) == b.run - b.step
    assert trunk[-1][1] == pytest.approx(lr(b.step - 1), rel=1e-12)  # the trunk's run is the file's
    if at in ("1000tok", "30"):
        assert {batch for batch, _ in resumed} == {64, 128, 256}
    for k, (batch, value) in zip(range(b.step, b.run), resumed):
        assert batch == prog.batch_at(k) * 8, k
        _close(k, lr(k), value, f"olmo-core callback {at} {shape} {n} {to}")
    if at in ("25600tok", "12800tok"):  # the trunk's lr at the branch point: 3e-4 times sqrt(256 / 64)
        assert lr(b.step) == 6e-4 and resumed[0][1] == pytest.approx(6e-4, rel=1e-12)
    if at == "12800tok":  # the trunk's own jump at the branch step, kept: its last update was at sqrt(2)
        assert trunk[-1][1] == pytest.approx(3e-4 * math.sqrt(2), rel=1e-12) and resumed[0][0] == 256


PENDING = ("param seq_len: int = 8\nbatch = olmo_core.batch_size_schedule(batch_sizes=[64, 128, 512], "
           "schedule=[0, 640, 3300], units=\"tokens\")\nrun = 64000tok\n"
           "schedule lr = warmup(linear, 10) >> constant(3e-4)\n")


def test_olmo_core_a_pending_batch_increase_resumes_otherwise_and_is_refused(tmp_path):
    """At step 31 (3328 tokens) the event to 512 tokens is due and waits (``batches_processed`` 26 at
    128 tokens is no multiple of 4): OLMo-core's run trains at 128.  Resumed there, the callback
    looks at the latest due event only, from the config's first batch (64, ``batches_processed``
    52, no multiple of 8): the resumed run trains at 64.  ``branch`` refuses the branch point at the
    trunk's batch, and each branch point its hint names resumes as the trunk does."""
    torch = real("torch")
    from .olmo_core_cases import batch_callback, olmo

    module, common = batch_callback()
    sizes, points = [64, 128, 512], [0, 640, 3300]

    def run(step, resume):
        cb = module.BatchSizeSchedulerCallback(batch_sizes=sizes, schedule=[common.Duration.tokens(p)
                                                                            for p in points])
        optim = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))], lr=3e-4)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scheduler = olmo().ConstantWithWarmup(units="tokens", warmup=640)
        trainer = _olmo_trainer(cb, scheduler, 64, common.Duration.tokens(64000), optim)
        cb.post_attach()
        group = optim.param_groups[0]
        trunk = _olmo_loop(cb, trainer, scheduler, group, lambda t: t.global_step == step)
        if resume:  # a new trainer at the config's batch, the state loaded as OLMo-core loads it
            tokens = trainer.data_loader.tokens_processed
            cb = module.BatchSizeSchedulerCallback(batch_sizes=sizes, schedule=[common.Duration.tokens(p)
                                                                                for p in points])
            trainer = _olmo_trainer(cb, scheduler, 64, common.Duration.tokens(64000), optim)
            cb.post_attach()
            trainer.global_step, trainer.global_train_tokens_seen = step, tokens
            trainer.data_loader.tokens_processed = tokens
            trainer.data_loader.batches_processed = tokens // trainer.data_loader.global_batch_size
            cb.post_checkpoint_loaded(None)
        return trunk + _olmo_loop(cb, trainer, scheduler, group, lambda t: t.global_step == step + 3)

    path = tmp_path / "pending.sched"
    path.write_text(PENDING)
    prog = schedlang.compile(PENDING)
    straight, resumed = run(31, False), run(31, True)
    assert [b for b, _ in straight[31:]] == [prog.batch_at(k) * 8 for k in range(31, 34)] == [128, 128, 512]
    assert [b for b, _ in resumed[31:]] == [64, 64, 64]
    with pytest.raises(schedlang.SchedlangError) as caught:
        schedlang.branch(path, "3328tok", "linear", "19200tok", "3e-5", format="olmo-core-json")
    error = caught.value
    assert "latest due event only" in error.message and error.span.line == 2 and error.span.column == 9
    assert "--at 3200tok (step 30) or --at 3584tok (step 33)" in error.hint
    for at, step in (("3200tok", 30), ("3584tok", 33)):
        assert [b for b, _ in run(step, True)[step:]] == [b for b, _ in run(step, False)[step:]]
        assert schedlang.branch(path, at, "linear", "19200tok", "3e-5", format="olmo-core-json").proven


def test_olmo_core_a_cosine_across_a_batch_change_is_refused_saying_where_it_can_start(tmp_path):
    path = tmp_path / "ramp.sched"
    path.write_text(OLMO_RAMP)
    with pytest.raises(schedlang.SchedlangError) as caught:
        schedlang.branch(path, "1000tok", "cosine", "19200tok", "3e-5", format="olmo-core-json")
    error = caught.value
    assert "across a batch change" in error.message and error.span.line == 2
    assert "a linear cooldown" in error.hint and "--at 13056tok (step 126) or later" in error.hint
    assert schedlang.branch(path, "13056tok", "cosine", "19200tok", "3e-5", format="olmo-core-json").proven
    assert schedlang.branch(path, "1000tok", "linear", "19200tok", "3e-5", format="olmo-core-json").proven


def test_olmo_core_a_token_branch_of_a_batch_it_cannot_train_is_refused_at_the_batch(tmp_path):
    path = tmp_path / "stages.sched"
    path.write_text("param seq_len: int = 8\nbatch = stages(8, [16], [3200tok])\nrun = 64000tok\n"
                    "schedule lr = warmup(linear, 10) >> constant(3e-4)\n")
    with pytest.raises(schedlang.SchedlangError) as caught:
        schedlang.branch(path, "25600tok", "linear", "19200tok", "3e-5", format="olmo-core-json")
    error = caught.value
    assert "only with its BatchSizeSchedulerCallback" in error.message and error.span.line == 2
    assert "olmo_core.batch_size_schedule" in error.hint
    assert schedlang.branch(path, 300, "linear", 200, "3e-5", format="olmo-core-json").proven  # in steps


STEP_TRUNK = ('param seq_len: int = 4\nbatch = megatron.step_batch_size_schedule("0:2 200:8", seq_length=4)\n'
              "schedule lr = on_samples(megatron.OptimizerParamScheduler(max_lr=3e-4, min_lr=0, "
              'lr_warmup_steps=20, lr_decay_steps=100000, lr_decay_style="constant"))\n')


@pytest.mark.parametrize("at, n", [("1000tok", "800tok"), ("400tok", "1600tok")])
def test_megatron_resumes_a_token_branch_under_a_step_batch_size_schedule(tmp_path, at, n):
    """megatron-core 0.19.2's StepBatchsizeNumMicroBatchesCalculator: the trunk trained to the branch
    step; resumed, the calculator is built from the written ``--step-batch-size-schedule`` and
    ``--seq-length`` (the consumed samples restored from the checkpoint), the scheduler from the
    flags, both stepped as Megatron-LM steps them to ``--train-samples`` (the second branch's
    cooldown passes the batch change at 200 samples)."""
    module = real("megatron.core.optimizer_param_scheduler")
    from .test_megatron_batch import Loop, step_calculator

    path = tmp_path / "step.sched"
    path.write_text(STEP_TRUNK)
    b = schedlang.branch(path, at, "linear", n, "3e-5", format="megatron-args")
    assert b.proven, [str(c.verdict) for c in b.claims + b.config_claims]
    flags = _flags(b.config)

    def scheduler(optimizer, override, **kw):
        return module.OptimizerParamScheduler(
            optimizer, init_lr=0.0, start_wd=0.0, end_wd=0.0, wd_incr_steps=1, wd_incr_style="constant",
            override_opt_param_scheduler=override, use_checkpoint_opt_param_scheduler=False, **kw)

    loop = Loop(step_calculator("0:2 200:8", 4))
    optimizer = SimpleNamespace(param_groups=[{}])
    trunk = scheduler(optimizer, False, max_lr=3e-4, min_lr=0.0, lr_warmup_steps=20, lr_decay_steps=100000,
                      lr_decay_style="constant")
    for _ in range(b.step):
        trunk.step(loop.step()[1])
    state, consumed = trunk.state_dict(), loop.consumed
    assert consumed == b.samples
    loop = Loop(step_calculator(flags["--step-batch-size-schedule"], int(flags["--seq-length"])),
                consumed=consumed, iteration=b.step)
    optimizer = SimpleNamespace(param_groups=[{}])
    resumed = _resumed_on_samples(scheduler, optimizer, flags, state)
    prog, k = schedlang.compile(b.source), b.step
    lr = prog["lr"]
    while loop.consumed < int(flags["--train-samples"]):  # Megatron-LM's loop condition in samples
        _close(k, lr(k), float(optimizer.param_groups[0]["lr"]), "megatron step schedule")
        before, batch = loop.step()
        assert (before, batch) == (prog.samples_at(k), prog.batch_at(k)), k
        resumed.step(batch)
        k += 1
    assert k == b.run and lr(b.run) == 3e-5


# -- HF and torchtitan count steps: a token branch at one batch, in the steps it trains --------------

TOKEN_TRUNK = ("param seq_len: int = 8\nbatch = 8\nrun = 128000tok\n"
               "schedule lr = warmup(linear, 100) >> constant(3e-4)\n")


@pytest.mark.parametrize("fmt", ["hf-args", "torchtitan-toml"])
@pytest.mark.parametrize("at", ["76800tok", "76810tok"])
def test_a_token_branch_resumes_in_the_steps_hf_and_torchtitan_count(tmp_path, fmt, at):
    """The trunk (64 tokens a step) at the first step reaching ``at``; the cooldown of 19200 tokens is
    300 steps; HF's ``get_scheduler("warmup_stable_decay")`` / torchtitan's ``LRSchedulersContainer``
    built from the written configuration, the trunk's saved states loaded, stepped to the end."""
    torch = real("torch")
    path = tmp_path / "tokens.sched"
    path.write_text(TOKEN_TRUNK)
    b = schedlang.branch(path, at, "cosine", "19200tok", "3e-5", format=fmt)
    assert b.proven, [str(c.verdict) for c in b.claims + b.config_claims]
    assert b.run - b.step == 300 and b.tokens == 64 * b.step
    lr = schedlang.compile(b.source)["lr"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1, dtype=torch.float64))], lr=PEAK)
        trunk = torch.optim.lr_scheduler.LambdaLR(opt, lambda k: min(1.0, k / 100))  # the trunk's lr
        for k in range(b.step):
            _close(k, lr(k), float(opt.param_groups[0]["lr"]), "trunk")
            opt.step()
            trunk.step()
        saved_opt, saved = opt.state_dict(), trunk.state_dict()
        def sgd(lr):
            return torch.optim.SGD([torch.nn.Parameter(torch.zeros(1, dtype=torch.float64))], lr=lr)

        if fmt == "hf-args":
            transformers = real("transformers")
            args = json.loads(b.config)
            opt = sgd(args["learning_rate"])
            resumed = transformers.get_scheduler(args["lr_scheduler_type"], opt, num_warmup_steps=0,
                                                 num_training_steps=args["max_steps"],
                                                 scheduler_specific_kwargs=args["lr_scheduler_kwargs"])
        else:
            module = real("torchtitan.components.optimizer.lr_scheduler")
            job = tomllib.loads(b.config)
            opt = sgd(job["optimizer"]["lr"])
            resumed = module.LRSchedulersContainer.Config(**job["lr_scheduler"]).build(
                optimizers=[opt], training_steps=job["training"]["steps"]).schedulers[0]  # one optimizer's
        opt.load_state_dict(saved_opt)
        resumed.load_state_dict(saved)
        for k in range(b.step, b.run):
            _close(k, lr(k), float(opt.param_groups[0]["lr"]), f"{fmt} token branch")
            opt.step()
            resumed.step()
