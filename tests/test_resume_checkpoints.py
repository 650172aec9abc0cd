"""``schedlang resume`` on the checkpoints users save (issue 27 part 5, issue 28): the scheduler's
state found by its shape under any key, DeepSpeed and Megatron folders, OLMo-core's trainer
state, the counts kept beside the step, labels saying where each number came from, and hostile
inputs (a FIFO, a device, a tag naming a path out) refused in bounded time with exit 2.

Every checkpoint here is written by ``torch.save`` from real objects: a schedlang scheduler
class and torch's schedulers trained a few steps, DeepSpeed's engine (in a subprocess: it sets
up torch.distributed), megatron-core's ``OptimizerParamScheduler``.  OLMo-core is not installed:
its trainer state is written with the keys its ``Trainer.state_dict`` has.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import textwrap
import time
import warnings

import numpy as np
import pytest
import torch
from frameworks.real import real
from torch.optim import lr_scheduler as tl

import schedlang
from schedlang.cli import main
from schedlang.resume import state as resume_state

SCHEDLANG = """
param peak: float = 0.01 where peak > 0
param total: int = 40 where total > 5

schedule lr = warmup(linear, 5) >> cosine(peak, 0.1 * peak, total - 5)
"""
SAVE_AT = 17


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def _train(model, opt, sched, steps):
    for k in range(steps):
        x = torch.randn(8, 4, generator=torch.Generator().manual_seed(k))
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()


def _guide_checkpoint(path, make_scheduler=None, steps=SAVE_AT, **extra):
    """The checkpoint docs/guides.md tells users to save: model, optimizer and scheduler in one
    file (a schedlang class by default), after ``steps`` real training steps."""
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.AdamW(model.parameters(), lr=torch.tensor(0.0, dtype=torch.float64))
    sched = (make_scheduler or schedlang.compile(SCHEDLANG).scheduler_class("Schedule"))(opt)
    _train(model, opt, sched, steps)
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(),
                "scheduler": sched.state_dict(), "step": steps, **extra}, path)
    return path, opt.param_groups[0]["lr"]


# -- the combined checkpoint ------------------------------------------------------------------


def test_the_guides_checkpoint_is_read_and_labelled(tmp_path, capsys):
    ckpt, lr = _guide_checkpoint(tmp_path / "ckpt.pt")
    old = _write(tmp_path, "old.sched", SCHEDLANG)
    code, out, err = _run(capsys, "resume", ckpt, old, "--was", old)
    assert code == 0, err
    assert "key:      scheduler " in out
    assert f"step:     {SAVE_AT} " in out
    assert "params:   peak=1/100, total=40 (saved in the state; the original's values)" in out
    assert "(the optimizer's lr at optimizer.param_groups[0].lr" in out
    new = _write(tmp_path, "new.sched", SCHEDLANG.replace("total: int = 40", "total: int = 60"))
    code, out, _ = _run(capsys, "resume", ckpt, new, "--was", old, "--json")
    doc = json.loads(out)
    assert code == 1 and doc["key"] == "scheduler" and doc["kind"] == "checkpoint"
    assert doc["last_lr"] == pytest.approx(float(lr), rel=1e-12)
    assert doc["last_lr_from"] == "the optimizer's lr at optimizer.param_groups[0].lr"
    assert doc["state_params"] == {"peak": "1/100", "total": "40"}
    assert doc["checkpoint"]["step"] == SAVE_AT and doc["counterexample"]["step"] == SAVE_AT
    assert doc["samples"] is None and doc["tokens"] is None


def test_a_schedlang_class_trains_its_first_resumed_step_at_new_s_lr(tmp_path):
    """The class sets the param groups at load (after the optimizer's state, as the guide loads
    it): the first resumed step trains with NEW's lr, which is the restored run's there."""
    ckpt, saved_lr = _guide_checkpoint(tmp_path / "ckpt.pt")
    old = _write(tmp_path, "old.sched", SCHEDLANG)
    new = _write(tmp_path, "new.sched", SCHEDLANG.replace("total: int = 40", "total: int = 60"))
    verdict = schedlang.resume_check(ckpt, new, was=old)
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.AdamW(model.parameters(), lr=torch.tensor(0.0, dtype=torch.float64))
    sched = schedlang.compile(new.read_text()).scheduler_class("Schedule")(opt)
    state = torch.load(ckpt, weights_only=True)
    opt.load_state_dict(state["optimizer"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the class names the parameters that differ
        sched.load_state_dict(state["scheduler"])
    trained = float(opt.param_groups[0]["lr"])  # what step SAVE_AT trains with
    assert trained != pytest.approx(float(saved_lr), rel=1e-6)  # not the checkpoint's
    assert verdict.new_lr == pytest.approx(trained, rel=1e-12)
    assert verdict.restored_lr(SAVE_AT) == pytest.approx(trained, rel=1e-12)
    assert verdict.follows == "equivalent"


def test_the_guides_command_runs_end_to_end(tmp_path):
    """The command docs/guides.md shows, as a new process, on the file the guide saves."""
    ckpt, _ = _guide_checkpoint(tmp_path / "ckpt.pt")
    _write(tmp_path, "old.sched", SCHEDLANG)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-m", "schedlang", "resume", ckpt.name, "old.sched",
                           "--was", "old.sched"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "continues exactly" in done.stdout and "key:      scheduler" in done.stdout


def test_a_mismatch_names_the_file_and_the_key(tmp_path, capsys):
    ckpt, _ = _guide_checkpoint(tmp_path / "ckpt.pt")
    other = _write(tmp_path, "other.sched", SCHEDLANG.replace("warmup(linear, 5)", "warmup(linear, 7)"))
    code, _, err = _run(capsys, "resume", ckpt, other, "--was", other)
    assert code == 2 and f"'{ckpt}': scheduler is at step {SAVE_AT}" in err
    assert "optimizer.param_groups[0].lr" in err and "not the schedule that wrote this state" in err


def test_torch_scheduler_nested_under_any_key_is_recovered(tmp_path, capsys):
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
    sched = tl.StepLR(opt, step_size=3, gamma=0.5)
    for _ in range(7):
        opt.step()
        sched.step()
    path = tmp_path / "run.pt"
    torch.save({"state": {"training": {"lr_sched": sched.state_dict()}, "optim": opt.state_dict()},
                "weights": {f"layer{i}": torch.zeros(3) for i in range(50)}}, path)
    new = _write(tmp_path, "n.sched", "schedule lr = torch.StepLR(lr=0.1, step_size=3, gamma=0.5)\n")
    code, out, err = _run(capsys, "resume", path, new)
    assert code == 0, err
    assert "key:      state.training.lr_sched" in out and "(the state's _last_lr: the lr last set)" in out


def _stepped(make, steps=4):
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
    sched = make(opt)
    for _ in range(steps):
        opt.step()
        sched.step()
    return sched.state_dict()


def test_several_states_prefer_the_one_named_scheduler_else_refused(tmp_path, capsys):
    step = _stepped(lambda o: tl.StepLR(o, 3, 0.5))
    other = _stepped(lambda o: tl.ExponentialLR(o, 0.9))
    new = _write(tmp_path, "n.sched", "schedule lr = torch.StepLR(lr=0.1, step_size=3, gamma=0.5)\n")
    named = tmp_path / "named.pt"
    torch.save({"lr_scheduler": step, "ema": {"decay": other}}, named)
    code, out, err = _run(capsys, "resume", named, new)
    assert code == 0 and "key:      lr_scheduler" in out, err
    ambiguous = tmp_path / "two.pt"
    torch.save({"first": step, "second": other}, ambiguous)
    code, _, err = _run(capsys, "resume", ambiguous, new)
    assert code == 2 and "holds 2 scheduler states (at first, second)" in err
    assert "hint:" in err and "Traceback" not in err
    none = tmp_path / "none.pt"
    torch.save({"model": {"w": torch.zeros(2)}, "step": 3}, none)
    code, _, err = _run(capsys, "resume", none, new)
    assert code == 2 and "holds no scheduler state" in err and "model, step" in err


def test_search_is_bounded(tmp_path, capsys, monkeypatch):
    nested = _stepped(lambda o: tl.StepLR(o, 3, 0.5))
    for _ in range(resume_state.MAX_STATE_DEPTH + 1):
        nested = {"x": nested}
    path = tmp_path / "deep.pt"
    torch.save(nested, path)
    new = _write(tmp_path, "n.sched", "schedule lr = constant(1)\n")
    code, _, err = _run(capsys, "resume", path, new)
    assert code == 2 and "holds no scheduler state" in err
    monkeypatch.setattr(resume_state, "MAX_STATE_VALUES", 10)
    wide = tmp_path / "wide.pt"
    torch.save({"model": {str(i): {"w": 1} for i in range(20)}}, wide)
    code, _, err = _run(capsys, "resume", wide, new)
    assert code == 2 and "more than 10 values" in err


def test_last_lr_is_printed_only_when_the_state_holds_one(tmp_path, capsys):
    program = schedlang.compile(SCHEDLANG)
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
    sched = program.scheduler_class("Schedule")(opt)
    for _ in range(9):
        opt.step()
        sched.step()
    bare = tmp_path / "bare.pt"
    torch.save(sched.state_dict(), bare)  # a schedlang class's state: no lr in it
    old = _write(tmp_path, "old.sched", SCHEDLANG)
    code, out, _ = _run(capsys, "resume", bare, old, "--was", old)
    assert code == 0 and "last lr:" not in out
    assert "old lr:   " in out and "the state records no lr" in out
    assert "key:" not in out  # the file is the state


def test_a_difference_after_the_run_is_said_to_be_after_it(tmp_path, capsys):
    ckpt, _ = _guide_checkpoint(tmp_path / "ckpt.pt")
    old = _write(tmp_path, "old.sched", SCHEDLANG)
    tail = _write(tmp_path, "tail.sched", SCHEDLANG.rstrip() + " >> constant(0.0005)\n")
    code, out, _ = _run(capsys, "resume", ckpt, tail, "--was", old)
    assert code == 1
    assert ("first difference at step 40, after the run's last step (39: the original schedule's "
            "length is 40)") in out
    inside = _write(tmp_path, "inside.sched", SCHEDLANG.replace("0.1 * peak", "0.2 * peak"))
    code, out, _ = _run(capsys, "resume", ckpt, inside, "--was", old, "--json")
    doc = json.loads(out)
    assert code == 1 and doc["total"] == 40 and doc["after_end"] is False


# -- DeepSpeed ----------------------------------------------------------------------------------

DS_CONFIG = {"train_batch_size": 2, "optimizer": {"type": "SGD", "params": {"lr": 0.1}},
             "scheduler": {"type": "WarmupDecayLR", "params": {
                 "warmup_min_lr": 0, "warmup_max_lr": 0.1, "warmup_num_steps": 3,
                 "total_num_steps": 10}}}
DS_SCRIPT = """
import json, os, sys, torch
os.environ.update(DS_ACCELERATOR="cpu", MASTER_ADDR="127.0.0.1", MASTER_PORT=sys.argv[2], RANK="0",
                  WORLD_SIZE="1", LOCAL_RANK="0")
import deepspeed
import deepspeed.comm.torch
# One process needs no CPU shared-memory all-reduce: DeepSpeed JIT-compiles that C++ op under a file
# lock on first use, and a compile killed mid-way (a loaded machine, a timeout) leaves the lock behind,
# where every later run waits forever.
deepspeed.comm.torch.build_shm_op = lambda: None
torch.manual_seed(0)
model = torch.nn.Linear(4, 1)
engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(),
                                       config=json.loads(sys.argv[3]))
for _ in range(5):
    engine.backward(engine(torch.randn(2, 4)).pow(2).mean())
    engine.step()
engine.save_checkpoint(sys.argv[1])
"""


@pytest.fixture(scope="module")
def deepspeed_checkpoint(tmp_path_factory):
    """A real DeepSpeed engine (CPU accelerator, one rank) trained 5 steps and saved."""
    real("deepspeed")
    out = tmp_path_factory.mktemp("ds") / "ckpt"
    port = str(29500 + os.getpid() % 400)
    done = subprocess.run([sys.executable, "-c", DS_SCRIPT, str(out), port, json.dumps(DS_CONFIG)],
                          capture_output=True, text=True, timeout=300)
    if done.returncode != 0 or not (out / "latest").exists():
        pytest.skip(f"DeepSpeed could not run on this machine: {done.stderr[-500:]}")
    return out


def _deepspeed_lrs(total_num_steps=10, steps=30):
    """What DeepSpeed's own WarmupDecayLR sets at optimizer steps 0..steps-1 (the engine steps
    the scheduler after each optimizer step)."""
    from deepspeed.runtime.lr_schedules import WarmupDecayLR

    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
    params = {**DS_CONFIG["scheduler"]["params"], "total_num_steps": total_num_steps}
    sched, out = WarmupDecayLR(opt, **params), []
    for _ in range(steps):
        out.append(opt.param_groups[0]["lr"])
        sched.step()
    return out


def _ds_sched(total=10):
    return (f"schedule lr = deepspeed.WarmupDecayLR(warmup_min_lr=0, warmup_max_lr=0.1, "
            f"warmup_num_steps=3, total_num_steps={total})\n")


def test_deepspeed_folder_recovers_the_schedule_from_its_config(deepspeed_checkpoint, tmp_path, capsys):
    same = _write(tmp_path, "same.sched", _ds_sched())
    code, out, err = _run(capsys, "resume", deepspeed_checkpoint, same, "--json")
    doc = json.loads(out)
    assert code == 0, err
    assert doc["kind"] == "deepspeed" and doc["key"] == "lr_scheduler" and doc["step"] == 5
    assert doc["samples"] == 10 and doc["checkpoint"]["global_steps"] == 5
    assert doc["original_from"] == "state" and "deepspeed.WarmupDecayLR" in doc["original"]
    assert doc["last_lr"] == pytest.approx(_deepspeed_lrs()[5], rel=1e-12)
    assert doc["framework"] == "DeepSpeed" and doc["restored_run"] == "new" and doc["follows"] == "equivalent"
    longer = _write(tmp_path, "longer.sched", _ds_sched(20))
    code, out, _ = _run(capsys, "resume", deepspeed_checkpoint / "global_step5", longer, "--json")
    doc = json.loads(out)
    old, new = _deepspeed_lrs(), _deepspeed_lrs(20)
    first = next(k for k in range(5, 30) if not np.isclose(old[k], new[k], rtol=1e-12))
    assert code == 1 and doc["counterexample"]["step"] == first
    assert doc["counterexample"]["new"] == pytest.approx(new[first], rel=1e-12)
    code, out, _ = _run(capsys, "resume", deepspeed_checkpoint, same)
    assert "samples:  10 (consumed before step 5" in out and "key:      lr_scheduler" in out


def test_deepspeed_latest_naming_a_path_out_is_refused(deepspeed_checkpoint, tmp_path, capsys):
    import shutil

    folder = tmp_path / "ds"
    shutil.copytree(deepspeed_checkpoint, folder)
    (folder / "latest").write_text("../../etc")
    code, _, err = _run(capsys, "resume", folder, _write(tmp_path, "n.sched", _ds_sched()))
    assert code == 2 and "does not name a checkpoint folder" in err


@pytest.mark.parametrize("name, tag, message", [
    # 4000 digits: `iter_<4000 digits>` was looked up, OSError: File name too long (issue 39 item 14)
    ("latest_checkpointed_iteration.txt", "9" * 4000, r"names iteration 9{20}\.\.\. \(4000 digits\), beyond"),
    ("latest_checkpointed_iteration.txt", str(2**62 + 1), "beyond the largest step"),
    ("latest_checkpointed_iteration.txt", "x" * 300, "300 characters long, and a folder name at most 255"),
    ("latest", "a" * 300, "300 characters long, and a folder name at most 255"),
])
def test_a_tracker_file_naming_no_possible_folder_is_refused(tmp_path, capsys, name, tag, message):
    folder = tmp_path / "ckpt"
    folder.mkdir()
    (folder / name).write_text(tag + "\n")
    code, _, err = _run(capsys, "resume", folder, _write(tmp_path, "n.sched", "schedule lr = 1e-3\n"))
    assert code == 2 and re.search(message, err), err
    assert "internal error" not in err and "Traceback" not in err


# -- Megatron -----------------------------------------------------------------------------------

MEGATRON = dict(init_lr=0.0, max_lr=3e-4, min_lr=3e-5, lr_warmup_steps=8, lr_decay_steps=80,
                lr_decay_style="cosine", start_wd=0.1, end_wd=0.1, wd_incr_steps=80,
                wd_incr_style="constant")
GBS = 4


def _megatron_sched(decay_iters=20):
    return (f"schedule lr = megatron.OptimizerParamScheduler(init_lr=0, max_lr=3e-4, min_lr=3e-5, "
            f"lr_warmup_steps=2, lr_decay_steps={decay_iters}, lr_decay_style=\"cosine\")\n")


@pytest.fixture
def megatron_checkpoint(tmp_path):
    """megatron-core's scheduler stepped by the global batch (Megatron-LM's loop) 10 iterations,
    saved with Megatron-LM's layout: args as a Namespace, numpy rng state, folder names."""
    real("megatron.core.optimizer_param_scheduler")
    from megatron.core.optimizer_param_scheduler import OptimizerParamScheduler

    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.0)
    sched = OptimizerParamScheduler(opt, **MEGATRON)
    for _ in range(10):
        opt.step()
        sched.step(increment=GBS)
    folder = tmp_path / "megatron"
    file = folder / "iter_0000010" / "mp_rank_00" / "model_optim_rng.pt"
    file.parent.mkdir(parents=True)
    args = argparse.Namespace(global_batch_size=GBS, consumed_train_samples=10 * GBS, lr=3e-4)
    torch.save({"args": args, "checkpoint_version": 3.0, "iteration": 10,
                "model": {"w": torch.zeros(2)}, "optimizer": {"optimizer": opt.state_dict()},
                "opt_param_scheduler": sched.state_dict(),
                "rng_state": [{"random_rng_state": random.getstate(), "np_rng_state": np.random.get_state(),
                               "torch_rng_state": torch.get_rng_state()}]}, file)
    (folder / "latest_checkpointed_iteration.txt").write_text("10")
    return folder, opt.param_groups[0]["lr"]


def test_megatron_checkpoint_counts_samples(megatron_checkpoint, tmp_path, capsys):
    folder, lr = megatron_checkpoint
    was = _write(tmp_path, "was.sched", _megatron_sched())
    code, out, err = _run(capsys, "resume", folder, was, "--was", was, "--json")
    doc = json.loads(out)
    assert code == 0, err
    assert doc["kind"] == "megatron" and doc["key"] == "opt_param_scheduler"
    assert doc["step"] == 10 and doc["samples"] == 40 and doc["last_lr"] == pytest.approx(lr, rel=1e-12)
    assert doc["last_lr_from"] == "the optimizer's lr at optimizer.optimizer.param_groups[0].lr"
    code, out, _ = _run(capsys, "resume", folder, _write(tmp_path, "n.sched", _megatron_sched(25)),
                        "--was", was)
    assert code == 1 and "samples:  40" in out and "first difference at step 10" in out
    code, _, err = _run(capsys, "resume", folder, was)
    assert code == 2 and "counts samples" in err and "init_lr" in err and "--was" in err


def test_megatron_file_never_imports_what_it_names(megatron_checkpoint, tmp_path):
    """The Namespace and numpy arrays are read as inert stand-ins: no class of theirs runs."""
    folder, _ = megatron_checkpoint
    state = resume_state.read_state(folder)
    assert state.samples == 40 and state.step == 10 and state.key == "opt_param_scheduler"


# -- OLMo-core ----------------------------------------------------------------------------------


def test_olmo_core_trainer_state_gives_step_and_tokens(tmp_path, capsys):
    """OLMo-core's ``Trainer.state_dict()`` keys (not installed here: written by hand)."""
    path = tmp_path / "rank0.pt"
    torch.save({"global_step": 12, "global_train_tokens_seen": 12 * 8 * 4096, "max_steps": 100,
                "data_loader": {"dataset_fingerprint": "abc", "batches_processed": 12}, "epoch": 1,
                "world_size": 1, "rng": {"python": random.getstate()}, "callbacks": {}}, path)
    was = _write(tmp_path, "was.sched", "schedule lr = warmup(linear, 10) >> cosine(1e-3, 1e-4, 90)\n")
    code, out, err = _run(capsys, "resume", path, was, "--was", was)
    assert code == 0, err
    assert "step:     12" in out and f"tokens:   {12 * 8 * 4096} (consumed before step 12" in out
    assert "last lr:" not in out
    assert "rule:     OLMo-core: OLMo-core's schedulers keep no state" in out
    code, _, err = _run(capsys, "resume", path, was)
    assert code == 2 and "OLMo-core" in err


# -- hostile inputs -----------------------------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifo_and_devices_are_refused_without_reading(tmp_path, capsys):
    new = _write(tmp_path, "n.sched", "schedule lr = constant(1)\n")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    start = time.monotonic()
    code, _, err = _run(capsys, "resume", fifo, new)
    assert code == 2 and "FIFO" in err and time.monotonic() - start < 30
    if os.path.exists("/dev/zero"):
        code, _, err = _run(capsys, "resume", "/dev/zero", new)
        assert code == 2 and "a device" in err
    folder = tmp_path / "checkpoint-3"
    folder.mkdir()
    os.mkfifo(folder / "scheduler.pt")
    (folder / "trainer_state.json").write_text('{"global_step": 3}')
    code, _, err = _run(capsys, "resume", folder, new)
    assert code == 2 and "FIFO" in err and "scheduler.pt" in err
    ds = tmp_path / "ds"
    ds.mkdir()
    os.mkfifo(ds / "latest")
    code, _, err = _run(capsys, "resume", ds, new)
    assert code == 2 and "FIFO" in err


def test_a_crash_exits_2_never_0_or_1(tmp_path, capsys, monkeypatch):
    from schedlang.cli import resume as cli_resume

    def crash(*args, **kwargs):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(cli_resume, "resume_check", crash)
    code, out, err = _run(capsys, "resume", tmp_path / "x.pt", tmp_path / "n.sched", "--json")
    assert code == 2 and "internal error" in err and "ZeroDivisionError: boom" in err
    assert json.loads(out)["schema"] == "schedlang.error/1"


def test_hostile_pickle_inside_a_combined_checkpoint_is_refused(tmp_path, capsys):
    """A stand-in exists only for data classes: any other import is still refused, unrun."""
    script = textwrap.dedent("""
        import pickle, sys
        class Evil:
            def __reduce__(self):
                return (open, (sys.argv[1], "w"))
        data = {"scheduler": {"last_epoch": 1, "base_lrs": [0.1]}, "x": Evil()}
        open(sys.argv[2], "wb").write(pickle.dumps(data))
    """)
    target, path = tmp_path / "created", tmp_path / "evil.pt"
    subprocess.run([sys.executable, "-c", script, str(target), str(path)], check=True)
    code, _, err = _run(capsys, "resume", path, _write(tmp_path, "n.sched", "schedule lr = constant(1)\n"))
    assert code == 2 and "refused" in err and not target.exists()


def test_a_step_count_that_disagrees_with_the_scheduler_is_warned_about(tmp_path, capsys):
    ckpt, _ = _guide_checkpoint(tmp_path / "ckpt.pt")
    data = torch.load(ckpt, weights_only=True)
    data["step"] = SAVE_AT - 1
    torch.save(data, ckpt)
    old = _write(tmp_path, "old.sched", SCHEDLANG)
    code, _, err = _run(capsys, "resume", ckpt, old, "--was", old)
    assert code == 0
    assert (f"warning: the scheduler has stepped {SAVE_AT} times but the checkpoint's step is "
            f"{SAVE_AT - 1}") in err


# -- damaged counts beside the step (issue 39 item 1) -------------------------------------------


def _hf_folder(tmp_path, **trainer_state):
    """An HF Trainer checkpoint folder: a StepLR's state and trainer_state.json (written by hand)."""
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
    sched = tl.StepLR(opt, step_size=5, gamma=0.5)
    for _ in range(10):
        opt.step()
        sched.step()
    folder = tmp_path / "checkpoint-10"
    folder.mkdir(parents=True)
    torch.save(sched.state_dict(), folder / "scheduler.pt")
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": 10, **trainer_state}))
    return folder


def test_hf_damaged_tokens_seen_is_refused_and_zero_is_not_counted(tmp_path, capsys):
    new = _write(tmp_path, "n.sched", "schedule lr = torch.StepLR(lr=0.1, step_size=5, gamma=0.5)\n")
    code, out, err = _run(capsys, "resume", _hf_folder(tmp_path, num_input_tokens_seen=-960), new)
    assert code == 2 and "num_input_tokens_seen (trainer_state.json) is -960, not a count" in err
    assert "continues" not in out
    # HF writes 0 when include_num_input_tokens_seen is off: no count, not a damaged one
    code, out, err = _run(capsys, "resume", _hf_folder(tmp_path / "b", num_input_tokens_seen=0), new)
    assert code == 0, err
    assert "tokens:" not in out
    code, out, err = _run(capsys, "resume", _hf_folder(tmp_path / "c", num_input_tokens_seen=640), new)
    assert code == 0 and "tokens:   640 (consumed before step 10" in out, err
    code, out, err = _run(capsys, "resume", _hf_folder(tmp_path / "d", num_input_tokens_seen=7), new)
    assert code == 2 and "is 7 at step 10, but each of 10 steps takes at least one token" in err


def test_olmo_core_damaged_tokens_seen_is_refused(tmp_path, capsys):
    was = _write(tmp_path, "was.sched", "schedule lr = warmup(linear, 10) >> cosine(1e-3, 1e-4, 90)\n")
    for value, said in ((-1, "-1"), (float("nan"), "nan"), ("98304", "'98304' (a str)")):
        path = tmp_path / "rank0.pt"
        torch.save({"global_step": 12, "global_train_tokens_seen": value, "max_steps": 100}, path)
        code, out, err = _run(capsys, "resume", path, was, "--was", was)
        assert code == 2 and f"global_train_tokens_seen is {said}" in err and "not a count" in err
        assert "continues" not in out


def test_megatron_damaged_consumed_samples_is_refused(megatron_checkpoint, tmp_path, capsys):
    folder, _ = megatron_checkpoint
    file = folder / "iter_0000010" / "mp_rank_00" / "model_optim_rng.pt"
    was = _write(tmp_path, "was.sched", _megatron_sched())
    for value, said in ((-40, "-40"), (3, "3 at step 10, but each of 10 steps takes at least one sample")):
        data = torch.load(file, weights_only=False)
        data["args"].consumed_train_samples = value
        torch.save(data, file)
        code, out, err = _run(capsys, "resume", folder, was, "--was", was)
        assert code == 2 and f"args.consumed_train_samples is {said}" in err, err
        assert "continues" not in out
