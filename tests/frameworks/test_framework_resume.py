"""``schedlang resume`` by the rules of the framework that wrote the state (SPEC §14, issue 37 item 5).

Each test trains with the real framework, saves a checkpoint the framework's own way, resumes
it with the real framework and a changed configuration, and records the lr the resumed run
trains with at every later step.  ``resume``'s verdict must be what the framework ran: its
restored run (``restored_lr``) equal to the framework's lr at every step, the saved value it
names as winning the one that did, and its exit status 1 whenever the run does not follow NEW:

* torch: a ``CosineAnnealingLR`` saved with ``T_max=40``, constructed anew with ``T_max=80`` and
  loaded, runs ``T_max=40`` (and the fix ``resume`` prints does run NEW);
* the HF Trainer: resumed with another ``learning_rate`` and ``max_steps``, the new ``max_steps``
  takes effect, the saved learning rate wins, and the first resumed step trains with the
  checkpoint's lr (and the fix ``resume`` prints does run NEW's learning rate);
* Lightning: ``configure_optimizers`` builds ``T_max=80``, the checkpoint's ``T_max=40`` runs;
* Megatron (megatron-core 0.19.2's ``OptimizerParamScheduler``): ``--override-opt_param-scheduler``
  runs the new decay, ``--use-checkpoint-opt_param-scheduler`` the saved one, neither stops at load
  with megatron-core's own AssertionError message.
"""

from __future__ import annotations

import argparse
import json
import math
import warnings

import pytest
from helpers import run_cli
from installs import DEV, needs_install

import schedlang
from schedlang.formats import import_file

from .test_megatron_batch import scheduler_019

torch = pytest.importorskip("torch")


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-18)


def _assert_run(verdict, ran: dict) -> None:
    """``resume``'s restored run is the framework's lr at every step it trained."""
    assert ran and min(ran) == verdict.step
    for step, lr in sorted(ran.items()):
        assert _close(verdict.restored_lr(step), lr), (step, verdict.restored_lr(step), lr)


def _first_difference(ran: dict, new) -> int | None:
    return next((k for k, lr in sorted(ran.items()) if not _close(lr, float(new(k)))), None)


# -- torch -------------------------------------------------------------------------------------


def _torch_run(t_max: int, state=None, optimizer_state=None, steps=40):
    """SGD with CosineAnnealingLR(T_max): trained 10 steps from scratch, or from the states (the
    optimizer's loaded, then the scheduler's); the lr of each step it trained."""
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=t_max)
    if state is not None:
        optimizer.load_state_dict(optimizer_state)
        scheduler.load_state_dict(state)
    ran = {}
    for _ in range(steps):
        ran[scheduler.last_epoch] = optimizer.param_groups[0]["lr"]
        optimizer.step()
        scheduler.step()
    return ran, scheduler, optimizer


@pytest.fixture(scope="module")
def torch_checkpoint(tmp_path_factory):
    folder = tmp_path_factory.mktemp("torch")
    _, scheduler, optimizer = _torch_run(40, steps=10)
    torch.save(scheduler.state_dict(), folder / "scheduler.pt")
    (folder / "new.sched").write_text("schedule lr = torch.CosineAnnealingLR(T_max=80, lr=0.1)\n")
    (folder / "same.sched").write_text("schedule lr = torch.CosineAnnealingLR(T_max=40, lr=0.1)\n")
    return folder, scheduler.state_dict(), optimizer.state_dict()


def test_torch_saved_t_max_wins_over_the_constructor(torch_checkpoint):
    folder, state, optimizer_state = torch_checkpoint
    ran, scheduler, _ = _torch_run(80, state, optimizer_state)
    assert scheduler.T_max == 40  # what torch really does
    verdict = schedlang.resume_check(folder / "scheduler.pt", folder / "new.sched")
    assert verdict.different and verdict.follows == "different"
    assert verdict.restored.framework == "torch" and verdict.restored.run == "saved"
    assert [(w.name, w.saved, w.new) for w in verdict.restored.wins] == [("T_max", "40", "80")]
    _assert_run(verdict, ran)
    new = schedlang.compile((folder / "new.sched").read_text())["lr"]
    assert verdict.run_counterexample.step == _first_difference(ran, new) == 10
    result = run_cli("resume", folder / "scheduler.pt", folder / "new.sched")
    assert result.returncode == 1, result.stderr
    assert "rule:     torch: torch's LRScheduler.load_state_dict replaces" in result.stdout
    assert "wins:     saved T_max = 40 (NEW: 80)" in result.stdout
    assert "fix:      to run NEW:" in result.stdout


def test_torch_fix_printed_runs_new(torch_checkpoint):
    """The fix ``resume`` prints, done with torch: NEW's lr at every step from the checkpoint."""
    folder, state, optimizer_state = torch_checkpoint
    verdict = schedlang.resume_check(folder / "scheduler.pt", folder / "new.sched")
    assert "set each param group's lr and initial_lr to NEW's lr" in verdict.restored.fix
    assert f"call its step() {verdict.step} times" in verdict.restored.fix
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
    optimizer.load_state_dict(optimizer_state)
    for group in optimizer.param_groups:
        group["lr"] = group["initial_lr"] = 0.1
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=80)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # stepped before optimizer.step(): on purpose
        for _ in range(verdict.step):
            scheduler.step()
    new = schedlang.compile((folder / "new.sched").read_text())["lr"]
    for step in range(verdict.step, 60):
        assert math.isclose(optimizer.param_groups[0]["lr"], float(new(step)), rel_tol=1e-12), step
        optimizer.step()
        scheduler.step()


def test_torch_unchanged_constructor_follows_and_continues(torch_checkpoint):
    folder, state, optimizer_state = torch_checkpoint
    ran, _, _ = _torch_run(40, state, optimizer_state)
    verdict = schedlang.resume_check(folder / "scheduler.pt", folder / "same.sched")
    assert verdict.equivalent and verdict.follows == "equivalent" and not verdict.restored.wins
    _assert_run(verdict, ran)
    assert run_cli("resume", folder / "scheduler.pt", folder / "same.sched").returncode == 0


# -- the HF Trainer ------------------------------------------------------------------------------

OLD_ARGS = {"learning_rate": 1e-3, "max_steps": 20, "warmup_steps": 4, "lr_scheduler_type": "cosine"}


def _transformers():
    try:
        import accelerate  # noqa: F401 - the Trainer needs it
        import transformers  # noqa: F401 - the real Trainer
    except ImportError as exc:
        needs_install(f"transformers is not installed ({exc})", DEV)
    return transformers


def _hf_train(folder, resume=None, fix=None, **arguments):
    """The real Trainer on a two-weight model, saving at step 10; the lr of each step."""
    transformers = _transformers()

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Linear(2, 1)

        def forward(self, x, labels=None):
            out = self.w(x).squeeze(-1)
            return {"loss": ((out - labels) ** 2).mean(), "logits": out}

    class Data(torch.utils.data.Dataset):
        def __len__(self):
            return 64

        def __getitem__(self, i):
            return {"x": torch.tensor([float(i % 3), 1.0]), "labels": torch.tensor(float(i % 2))}

    ran = {}

    class Record(transformers.TrainerCallback):
        def on_train_begin(self, args, state, control, optimizer=None, lr_scheduler=None, **kw):
            if fix is not None:
                fix(optimizer, lr_scheduler)

        def on_step_begin(self, args, state, control, optimizer=None, **kw):
            ran[state.global_step] = optimizer.param_groups[0]["lr"]

    args = transformers.TrainingArguments(
        output_dir=str(folder), per_device_train_batch_size=2, use_cpu=True, report_to=[],
        save_strategy="steps", save_steps=10, logging_strategy="no", disable_tqdm=True,
        dataloader_num_workers=0, **arguments)
    transformers.Trainer(model=Model(), args=args, train_dataset=Data(), callbacks=[Record()]).train(
        resume_from_checkpoint=resume)
    return ran


@pytest.fixture(scope="module")
def hf_checkpoint(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hf")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _hf_train(folder / "run", **OLD_ARGS)
    (folder / "old.json").write_text(json.dumps(OLD_ARGS))
    return folder


def _hf_resume(folder, name: str, fix=None, **changes):
    arguments = {**OLD_ARGS, **changes}
    (folder / f"{name}.json").write_text(json.dumps(arguments))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ran = _hf_train(folder / name, resume=str(folder / "run" / "checkpoint-10"), fix=fix, **arguments)
    return ran, folder / f"{name}.json"


def test_hf_trainer_new_max_steps_survives_but_the_saved_learning_rate_wins(hf_checkpoint):
    folder = hf_checkpoint
    ran, new = _hf_resume(folder, "new", learning_rate=5e-3, max_steps=30)
    assert sorted(ran) == list(range(10, 30))
    state = folder / "run" / "checkpoint-10"
    verdict = schedlang.resume_check(state, new, was=folder / "old.json")
    assert verdict.restored.framework == "HF Trainer"
    assert [(w.name, w.saved, w.new) for w in verdict.restored.wins] == \
        [("learning_rate (base_lrs)", "0.001", "0.005")]
    _assert_run(verdict, ran)  # step 10 at the checkpoint's lr, then 1e-3 times NEW's curve
    assert ran[17] == pytest.approx(0.5e-3, rel=1e-12)  # NEW's cosine (30 steps) at its middle
    assert verdict.different and verdict.follows == "different"
    lr = schedlang.compile(import_file(new))["lr"]
    assert verdict.run_counterexample.step == _first_difference(ran, lr) == 10
    result = run_cli("resume", state, new, "--was", folder / "old.json")
    assert result.returncode == 1, result.stderr
    assert "rule:     HF Trainer: the HF Trainer rebuilds its LambdaLR" in result.stdout
    assert "wins:     saved learning_rate (base_lrs) = 0.001 (NEW: 0.005)" in result.stdout


def test_hf_trainer_first_resumed_step_trains_with_the_checkpoints_lr(hf_checkpoint):
    """Only ``max_steps`` changed: no saved value wins, yet step 10 trains with OLD's lr and
    the curve is NEW's from step 11 on: the run does not follow NEW at step 10."""
    folder = hf_checkpoint
    ran, new = _hf_resume(folder, "longer", max_steps=30)
    verdict = schedlang.resume_check(folder / "run" / "checkpoint-10", new, was=folder / "old.json")
    assert not verdict.restored.wins
    _assert_run(verdict, ran)
    lr = schedlang.compile(import_file(new))["lr"]
    assert _first_difference(ran, lr) == 10 and all(_close(ran[k], float(lr(k))) for k in range(11, 30))
    assert verdict.follows == "different" and verdict.run_counterexample.step == 10
    assert "on_train_begin" in verdict.restored.fix and "step 10" in verdict.restored.fix

    def fix(optimizer, scheduler):  # the fix resume prints
        for group in optimizer.param_groups:
            group["lr"] = float(lr(verdict.step))

    fixed, _ = _hf_resume(folder, "longer_fixed", fix=fix, max_steps=30)
    assert _first_difference(fixed, lr) is None


def test_hf_trainer_fix_printed_runs_the_new_learning_rate(hf_checkpoint):
    folder = hf_checkpoint
    new_json = folder / "fixed.json"
    new_json.write_text(json.dumps({**OLD_ARGS, "learning_rate": 5e-3, "max_steps": 30}))
    verdict = schedlang.resume_check(folder / "run" / "checkpoint-10", new_json, was=folder / "old.json")
    assert "on_train_begin" in verdict.restored.fix and "[0.005]" in verdict.restored.fix
    lr = schedlang.compile(import_file(new_json))["lr"]

    def fix(optimizer, scheduler):
        scheduler.base_lrs = [5e-3] * len(scheduler.base_lrs)
        for group in optimizer.param_groups:
            group["lr"] = float(lr(verdict.step))

    ran, _ = _hf_resume(folder, "fixed", fix=fix, learning_rate=5e-3, max_steps=30)
    assert _first_difference(ran, lr) is None


# -- Lightning -------------------------------------------------------------------------------------


def _lightning():
    try:
        import lightning
    except ImportError as exc:
        needs_install(f"lightning is not installed ({exc})", DEV)
    return lightning


def _lightning_fit(folder, t_max: int, steps: int, ckpt=None, fix=None) -> dict:
    L = _lightning()

    class Module(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Linear(2, 1)
            self.ran = {}

        def training_step(self, batch, index):
            return self.w(batch).pow(2).mean()

        def on_train_batch_start(self, batch, index):
            self.ran[self.trainer.global_step] = self.trainer.optimizers[0].param_groups[0]["lr"]

        def on_train_start(self):
            if fix is not None:
                fix(self.trainer)

        def configure_optimizers(self):
            optimizer = torch.optim.SGD(self.parameters(), lr=0.1)
            scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=t_max)
            return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}

    module = Module()
    trainer = L.Trainer(max_steps=steps, accelerator="cpu", logger=False, enable_checkpointing=False,
                        enable_progress_bar=False, enable_model_summary=False, default_root_dir=str(folder))
    data = torch.utils.data.DataLoader(torch.randn(64, 2), batch_size=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer.fit(module, data, ckpt_path=ckpt)
    if ckpt is None:
        trainer.save_checkpoint(str(folder / "last.ckpt"))
    return module.ran


def test_lightning_loads_the_saved_t_max_into_configure_optimizers_scheduler(tmp_path):
    _lightning_fit(tmp_path, 40, 10)
    ran = _lightning_fit(tmp_path, 80, 30, ckpt=str(tmp_path / "last.ckpt"))
    assert ran[20] == pytest.approx(0.05, rel=1e-12)  # T_max=40's middle: the saved T_max ran
    new = tmp_path / "new.sched"
    new.write_text("schedule lr = torch.CosineAnnealingLR(T_max=80, lr=0.1)\n")
    verdict = schedlang.resume_check(tmp_path / "last.ckpt", new)
    assert verdict.restored.framework == "Lightning" and verdict.restored.run == "saved"
    assert [(w.name, w.saved, w.new) for w in verdict.restored.wins] == [("T_max", "40", "80")]
    _assert_run(verdict, ran)
    assert verdict.follows == "different" and verdict.run_counterexample.step == 10
    result = run_cli("resume", tmp_path / "last.ckpt", new)
    assert result.returncode == 1 and "rule:     Lightning: Lightning builds the scheduler" in result.stdout

    def fix(trainer):  # the fix resume prints, done in on_train_start
        optimizer = trainer.optimizers[0]
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"] = 0.1
        scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=80)
        for _ in range(verdict.step):
            scheduler.step()
        trainer.lr_scheduler_configs[0].scheduler = scheduler

    assert "on_train_start" in verdict.restored.fix and "lr_scheduler_configs[0]" in verdict.restored.fix
    fixed = _lightning_fit(tmp_path, 80, 30, ckpt=str(tmp_path / "last.ckpt"), fix=fix)
    assert _first_difference(fixed, schedlang.compile(new.read_text())["lr"]) is None


# -- Megatron ------------------------------------------------------------------------------------

GBS, SAVE_AT, TRAIN = 8, 40, 100
OLD_LAUNCH = (f"python pretrain_gpt.py --train-iters {TRAIN} --global-batch-size {GBS} --lr 3e-4 "
              "--min-lr 3e-5 --lr-warmup-iters 10 --lr-decay-style cosine --lr-decay-iters {decay} "
              "--weight-decay 0.1 {flag}\n")


def _megatron_scheduler(decay: int, flag: str = ""):
    """What Megatron-LM's get_optimizer_param_scheduler builds for the launch (lengths times
    the global batch size; constant weight decay), and the optimizer."""
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.0)
    scheduler = scheduler_019().OptimizerParamScheduler(
        optimizer, init_lr=0.0, max_lr=3e-4, min_lr=3e-5, lr_warmup_steps=10 * GBS,
        lr_decay_steps=decay * GBS, lr_decay_style="cosine", start_wd=0.1, end_wd=0.1,
        wd_incr_steps=TRAIN * GBS, wd_incr_style="constant",
        use_checkpoint_opt_param_scheduler=flag == "--use-checkpoint-opt_param-scheduler",
        override_opt_param_scheduler=flag == "--override-opt_param-scheduler")
    return scheduler, optimizer


def _megatron_train(scheduler, optimizer, start: int) -> dict:
    ran = {}
    for iteration in range(start, TRAIN):
        ran[iteration] = optimizer.param_groups[0]["lr"]
        optimizer.step()
        scheduler.step(increment=GBS)
    return ran


@pytest.fixture(scope="module")
def megatron_checkpoint(tmp_path_factory):
    folder = tmp_path_factory.mktemp("megatron")
    scheduler, optimizer = _megatron_scheduler(80)
    for _ in range(SAVE_AT):
        optimizer.step()
        scheduler.step(increment=GBS)
    file = folder / "ckpt" / f"iter_{SAVE_AT:07d}" / "mp_rank_00" / "model_optim_rng.pt"
    file.parent.mkdir(parents=True)
    torch.save({"args": argparse.Namespace(consumed_train_samples=SAVE_AT * GBS), "checkpoint_version": 3.0,
                "iteration": SAVE_AT, "optimizer": {"optimizer": optimizer.state_dict()},
                "opt_param_scheduler": scheduler.state_dict()}, file)
    (folder / "ckpt" / "latest_checkpointed_iteration.txt").write_text(str(SAVE_AT))
    (folder / "old.sh").write_text(OLD_LAUNCH.format(decay=80, flag=""))
    return folder, scheduler.state_dict()


def _megatron_resume(folder, saved: dict, decay: int, flag: str):
    """megatron-core resuming the launch: the scheduler from its flags, the state loaded (its
    _check_and_set), then Megatron-LM's loop; the lr of each iteration, or the AssertionError."""
    launch = folder / f"new_{decay}_{flag.strip('-') or 'neither'}.sh"
    launch.write_text(OLD_LAUNCH.format(decay=decay, flag=flag))
    scheduler, optimizer = _megatron_scheduler(decay, flag)
    try:
        scheduler.load_state_dict(dict(saved))
    except AssertionError as exc:
        return str(exc), launch
    return _megatron_train(scheduler, optimizer, SAVE_AT), launch


@pytest.mark.parametrize("flag, run", [("--override-opt_param-scheduler", "new"),
                                       ("--use-checkpoint-opt_param-scheduler", "mixed"),
                                       ("", "refused")])
def test_megatron_each_flag_is_what_megatron_core_runs(megatron_checkpoint, flag, run):
    folder, saved = megatron_checkpoint
    ran, launch = _megatron_resume(folder, saved, 60, flag)
    verdict = schedlang.resume_check(folder / "ckpt", launch, was=folder / "old.sh")
    rule = verdict.restored
    assert rule.framework == "Megatron-LM" and rule.run == run
    assert rule.flag == (flag.strip("-").replace("-opt_param-scheduler", "") or "neither")
    assert verdict.different  # NEW's decay does not continue OLD's, whatever runs
    new = schedlang.compile(import_file(launch))["lr"]
    if run == "refused":  # megatron-core stopped at load, with the message resume quotes
        assert isinstance(ran, str) and rule.refused == f"AssertionError: {ran}"
        assert verdict.follows == "refused" and verdict.restored_lr is None
        assert "--override-opt_param-scheduler" in rule.fix
    else:
        _assert_run(verdict, ran)
        first = _first_difference(ran, new)
        if run == "new":
            assert verdict.follows == "equivalent" and first is None and not rule.wins
        else:
            assert verdict.follows == "different" and verdict.run_counterexample.step == first
            assert [(w.name.split(" ")[0], w.saved, w.new) for w in rule.wins] == \
                [("lr_decay_steps", str(80 * GBS), str(60 * GBS))]
    result = run_cli("resume", folder / "ckpt", launch, "--was", folder / "old.sh")
    assert result.returncode == 1, result.stderr
    assert "rule:     Megatron-LM (" in result.stdout


def test_megatron_unchanged_launch_without_flags_loads_and_continues(megatron_checkpoint):
    folder, saved = megatron_checkpoint
    ran, launch = _megatron_resume(folder, saved, 80, "")
    assert isinstance(ran, dict)  # megatron-core's checks pass
    verdict = schedlang.resume_check(folder / "ckpt", launch, was=folder / "old.sh")
    assert verdict.equivalent and verdict.follows == "equivalent", verdict
    _assert_run(verdict, ran)
    assert run_cli("resume", folder / "ckpt", launch, "--was", folder / "old.sh").returncode == 0


def test_megatron_both_flags_are_refused_as_megatron_core_refuses(megatron_checkpoint):
    folder, _ = megatron_checkpoint
    both = "--override-opt_param-scheduler --use-checkpoint-opt_param-scheduler"
    with pytest.raises(AssertionError, match="both override and use-checkpoint are set"):
        scheduler_019().OptimizerParamScheduler(
            torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.0), init_lr=0.0, max_lr=3e-4,
            min_lr=3e-5, lr_warmup_steps=80, lr_decay_steps=640, lr_decay_style="cosine", start_wd=0.1,
            end_wd=0.1, wd_incr_steps=800, wd_incr_style="constant",
            use_checkpoint_opt_param_scheduler=True, override_opt_param_scheduler=True)
    launch = folder / "both.sh"
    launch.write_text(OLD_LAUNCH.format(decay=80, flag=both))
    result = run_cli("resume", folder / "ckpt", launch, "--was", folder / "old.sh")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "both --override-opt_param-scheduler and --use-checkpoint-opt_param-scheduler" in result.stderr
    assert "^" in result.stderr
