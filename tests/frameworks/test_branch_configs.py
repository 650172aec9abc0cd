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
    resumed = scheduler(optimizer, True, max_lr=float(flags["--lr"]), min_lr=float(flags["--min-lr"]),
                        lr_warmup_steps=int(flags["--lr-warmup-samples"]),
                        lr_decay_steps=int(flags["--lr-decay-samples"]),
                        lr_decay_style=flags["--lr-decay-style"],
                        wsd_decay_steps=int(flags["--lr-wsd-decay-samples"]),
                        lr_wsd_decay_style=flags["--lr-wsd-decay-style"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        resumed.load_state_dict(state)
    lr = schedlang.compile(b.source)["lr"]
    for k in range(b.step, b.run + 1):
        _close(k, lr(k), float(optimizer.param_groups[0]["lr"]), f"megatron {shape} in samples")
        resumed.step(loop.step()[1])
    assert lr(b.run) == 3e-5
