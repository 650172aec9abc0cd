"""``schedlang resume`` (SPEC §10) on states that real runs wrote: torch, HF Trainer, Lightning.

Each run is checkpointed mid-way, then checked against the schedule unchanged (exit 0) and
changed (exit 1 at the step the real framework's values first differ, with both values), and
hostile or broken files are refused (exit 2) with nothing in them run.
"""

from __future__ import annotations

import json
import math
import os
import pickle
import subprocess
import sys
import warnings
import zipfile
from collections import Counter
from pathlib import Path

import pytest
import torch
from torch.optim import lr_scheduler as tl

import schedlang
from schedlang.cli import main
from schedlang.resume import state as resume_state
from schedlang.resume.check import Call, preset_source


def _optimizer(lr=0.1):
    return torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=lr)


def _lrs(make, steps: int, lr=0.1) -> list[float]:
    """The lr a torch scheduler sets at steps 0..steps-1, run from the start."""
    opt = _optimizer(lr)
    sched, out = make(opt), []
    for _ in range(steps):
        out.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return out


def _save_state(path, make, steps: int, lr=0.1):
    opt = _optimizer(lr)
    sched = make(opt)
    for _ in range(steps):
        opt.step()
        sched.step()
    torch.save(sched.state_dict(), path)
    return path


def _first_difference(a: list[float], b: list[float], start: int) -> int:
    return next(k for k in range(start, len(a)) if not math.isclose(a[k], b[k], rel_tol=1e-9))


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


# -- torch: the state holds the schedule -------------------------------------------------------

STEP = lambda opt: tl.StepLR(opt, step_size=3, gamma=0.5)  # noqa: E731
COSINE = lambda opt: tl.CosineAnnealingLR(opt, T_max=20, eta_min=0.001)  # noqa: E731


def _sequential(warm=5, total=15):
    return lambda opt: tl.SequentialLR(
        opt, [tl.LinearLR(opt, start_factor=0.1, total_iters=warm), tl.CosineAnnealingLR(opt, T_max=total)],
        milestones=[warm])


def test_step_lr_unchanged_continues(tmp_path, capsys):
    state = _save_state(tmp_path / "s.pt", STEP, 7)
    new = _write(tmp_path, "new.sched", "schedule lr = torch.StepLR(lr=0.1, step_size=3, gamma=0.5)\n")
    code, out, _ = _run(capsys, "resume", state, new)
    assert code == 0, out
    assert "step:     7" in out and "continues exactly" in out
    verdict = schedlang.resume_check(state, new)
    assert verdict and verdict.step == 7
    assert verdict.last_lr == _lrs(STEP, 8)[7] == verdict.new_lr


def test_step_lr_changed_step_size_differs_where_torch_does(tmp_path, capsys):
    state = _save_state(tmp_path / "s.pt", STEP, 7)
    new = _write(tmp_path, "new.sched", "schedule lr = torch.StepLR(lr=0.1, step_size=4, gamma=0.5)\n")
    old_lrs, new_lrs = _lrs(STEP, 40), _lrs(lambda o: tl.StepLR(o, 4, 0.5), 40)
    verdict = schedlang.resume_check(state, new)
    assert not verdict and verdict.different
    ce = verdict.counterexample
    assert ce.step == _first_difference(old_lrs, new_lrs, 7) == 7
    assert ce.a == pytest.approx(old_lrs[ce.step]) and ce.b == pytest.approx(new_lrs[ce.step])
    code, out, _ = _run(capsys, "resume", state, new)
    assert code == 1 and "first difference at step 7" in out


def test_cosine_changed_total_and_torch_periodic_tail(tmp_path):
    state = _save_state(tmp_path / "c.pt", COSINE, 9)
    same = _write(tmp_path, "same.sched",
                  "schedule lr = torch.CosineAnnealingLR(lr=0.1, T_max=20, eta_min=0.001)\n")
    assert schedlang.resume_check(state, same)
    longer = _write(tmp_path, "longer.sched",
                    "schedule lr = torch.CosineAnnealingLR(lr=0.1, T_max=25, eta_min=0.001)\n")
    verdict = schedlang.resume_check(state, longer)
    old_lrs, new_lrs = _lrs(COSINE, 60), _lrs(lambda o: tl.CosineAnnealingLR(o, 25, 0.001), 60)
    assert verdict.counterexample.step == _first_difference(old_lrs, new_lrs, 9) == 9
    assert verdict.new_lr == pytest.approx(new_lrs[9], rel=1e-12)
    # schedlang's cosine holds its end value; torch's climbs back after T_max: they part at 21
    held = _write(tmp_path, "held.sched", "schedule lr = cosine(0.1, 0.001, 20)\n")
    verdict = schedlang.resume_check(state, held)
    assert verdict.step == 9 and verdict.new_lr == pytest.approx(verdict.last_lr, rel=1e-12)
    assert verdict.counterexample.step == 21
    assert verdict.counterexample.a == pytest.approx(old_lrs[21], rel=1e-9)


def test_sequential_linear_cosine(tmp_path, capsys):
    state = _save_state(tmp_path / "q.pt", _sequential(), 9)
    same = _write(tmp_path, "same.sched",
                  "schedule lr = torch.SequentialLR(schedulers=[torch.LinearLR(start_factor=0.1, "
                  "total_iters=5), torch.CosineAnnealingLR(T_max=15)], milestones=[5], lr=0.1)\n")
    code, out, _ = _run(capsys, "resume", state, same)
    assert code == 0, out
    assert "torch SequentialLR of LinearLR, CosineAnnealingLR" in out
    # a longer warmup moves the cosine: the lr differs at the resume step already
    warm = _write(tmp_path, "warm.sched",
                  "schedule lr = torch.SequentialLR(schedulers=[torch.LinearLR(start_factor=0.1, "
                  "total_iters=6), torch.CosineAnnealingLR(T_max=15)], milestones=[6], lr=0.1)\n")
    verdict = schedlang.resume_check(state, warm)
    old_lrs, new_lrs = _lrs(_sequential(), 40), _lrs(_sequential(warm=6), 40)
    assert verdict.counterexample.step == _first_difference(old_lrs, new_lrs, 9) == 9
    assert verdict.counterexample.b == pytest.approx(new_lrs[9], rel=1e-12)
    # the same schedule written in the core language: equal until torch's cosine climbs back
    core = _write(tmp_path, "core.sched",
                  "schedule lr = linear(0.01, 0.1, 5) >> cosine(0.1, 0, 15)\n")
    verdict = schedlang.resume_check(state, core)
    assert verdict.new_lr == pytest.approx(old_lrs[9], rel=1e-12)
    assert verdict.counterexample.step == 21


def test_chained_scheduler(tmp_path):
    make = lambda o: tl.ChainedScheduler([tl.StepLR(o, 4, 0.5), tl.ExponentialLR(o, 0.9)])  # noqa: E731
    state = _save_state(tmp_path / "ch.pt", make, 6)
    same = _write(tmp_path, "same.sched", "schedule lr = torch.ChainedScheduler(schedulers=["
                  "torch.StepLR(step_size=4, gamma=0.5), torch.ExponentialLR(gamma=0.9)], lr=0.1)\n")
    verdict = schedlang.resume_check(state, same)
    assert verdict and verdict.step == 6
    assert verdict.last_lr == pytest.approx(_lrs(make, 7)[6], rel=1e-12)


def test_multistep_counter(tmp_path):
    make = lambda o: tl.MultiStepLR(o, [3, 8, 8], gamma=0.5)  # noqa: E731  8 twice: decays twice
    state = _save_state(tmp_path / "m.pt", make, 5)
    same = _write(tmp_path, "s.sched",
                  "schedule lr = torch.MultiStepLR(lr=0.1, milestones=[3, 8, 8], gamma=0.5)\n")
    assert schedlang.resume_check(state, same)
    once = _write(tmp_path, "o.sched",
                  "schedule lr = torch.MultiStepLR(lr=0.1, milestones=[3, 8], gamma=0.5)\n")
    verdict = schedlang.resume_check(state, once)
    assert verdict.counterexample.step == 8
    assert verdict.counterexample.a == pytest.approx(_lrs(make, 9)[8])


# -- schedlang's own classes: the state holds the parameters, --was the schedule ---------------

SCHEDLANG = ("param total: int = 100\nparam peak: float = 0.001\n"
             "schedule lr = warmup(linear, 10) >> cosine(peak, 0, total - 10)\n")


def test_schedlang_class_with_was(tmp_path, capsys):
    old = _write(tmp_path, "old.sched", SCHEDLANG)
    cls = schedlang.compile(SCHEDLANG).scheduler_class("S")
    opt = _optimizer()
    sched = cls(opt, total=50)
    for _ in range(12):
        opt.step()
        sched.step()
    state = tmp_path / "s.pt"
    torch.save(sched.state_dict(), state)
    # the state's params (total=50) bind --was; -D binds the new run
    verdict = schedlang.resume_check(state, old, was=old, params={"total": 50})
    assert verdict and verdict.step == 12
    assert verdict.last_lr == pytest.approx(opt.param_groups[0]["lr"], rel=1e-12)
    code, out, _ = _run(capsys, "resume", state, old, "--was", old, "-D", "total=60")
    assert code == 1 and "first difference at step 12" in out
    verdict = schedlang.resume_check(state, old, was=old, params={"total": 60})
    new = schedlang.compile(SCHEDLANG, params={"total": 60})["lr"]
    assert verdict.counterexample.b == pytest.approx(new(12)) and verdict.new_lr == pytest.approx(new(12))
    code, _, err = _run(capsys, "resume", state, old)
    assert code == 2 and "--was" in err and "Traceback" not in err
    other = _write(tmp_path, "other.sched", "schedule lr = cosine(0.001, 0, 50)\n")
    code, _, err = _run(capsys, "resume", state, old, "--was", other)
    assert code == 2 and "does not declare" in err


def test_schedlang_class_keeps_the_constructors_parameters(tmp_path, capsys):
    """SPEC §14: a schedlang class's load_state_dict restores the clock and keeps NEW's
    parameters; resume names that rule and the parameters whose saved values NEW replaces."""
    old = _write(tmp_path, "old.sched", SCHEDLANG)
    opt = _optimizer()
    sched = schedlang.compile(SCHEDLANG).scheduler_class("S")(opt, total=50)
    for _ in range(12):
        opt.step()
        sched.step()
    state = tmp_path / "s.pt"
    torch.save(sched.state_dict(), state)
    verdict = schedlang.resume_check(state, old, was=old, params={"total": 60})
    rule = verdict.restored
    assert rule.framework == "schedlang class" and rule.run == "new" and not rule.wins
    assert verdict.follows == "equivalent" and verdict.different  # NEW runs, and leaves OLD
    assert any("total=50, NEW's constructor 60: NEW's is used" in n and 'params="saved"' in n
               for n in verdict.notes)
    code, out, err = _run(capsys, "resume", state, old, "--was", old, "-D", "total=60", "--json")
    doc = json.loads(out)
    assert code == 1 and doc["framework"] == "schedlang class" and doc["restored_run"] == "new"
    assert doc["follows"] == "equivalent" and doc["continues"] == "different"
    assert "NEW's is used" in err


def test_was_that_did_not_write_the_state_is_refused(tmp_path, capsys):
    state = _save_state(tmp_path / "s.pt", STEP, 7)
    wrong = _write(tmp_path, "wrong.sched", "schedule lr = constant(0.3)\n")
    code, _, err = _run(capsys, "resume", state, wrong, "--was", wrong)
    assert code == 2 and "not the schedule that wrote this state" in err


# -- HF Trainer ---------------------------------------------------------------------------------

HF_ARGS = {"learning_rate": 1e-3, "warmup_steps": 4, "lr_scheduler_type": "cosine", "max_steps": 20}


@pytest.fixture(scope="module")
def hf_checkpoint(tmp_path_factory):
    """A real Trainer run (tiny model, CPU, no downloads) saved at step 10 of 20."""
    transformers = pytest.importorskip("transformers")

    class Tiny(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.net = torch.nn.Linear(4, 1)

        def forward(self, x, labels=None):
            out = self.net(x)
            return {"loss": torch.nn.functional.mse_loss(out, labels), "logits": out}

    out = tmp_path_factory.mktemp("hf")
    torch.manual_seed(0)
    data = [{"x": x, "labels": x.sum(dim=0, keepdim=True)} for x in torch.randn(64, 4)]
    args = transformers.TrainingArguments(
        output_dir=str(out), save_steps=10, per_device_train_batch_size=4, use_cpu=True,
        report_to=[], logging_strategy="no", disable_tqdm=True, dataloader_num_workers=0, seed=0,
        **HF_ARGS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        transformers.Trainer(model=Tiny(), args=args, train_dataset=data).train()
    return out / "checkpoint-10"


def _hf_lrs(**changes) -> list[float]:
    """What HF's own ``get_scheduler`` sets at every step for these TrainingArguments."""
    from transformers import get_scheduler

    args = {**HF_ARGS, **changes}
    return _lrs(lambda o: get_scheduler(args["lr_scheduler_type"], o, num_warmup_steps=args["warmup_steps"],
                                        num_training_steps=args["max_steps"]), 40, lr=args["learning_rate"])


@pytest.mark.parametrize("changes", [{}, {"max_steps": 30}, {"learning_rate": 2e-3}, {"warmup_steps": 6}],
                         ids=["unchanged", "total", "peak", "warmup"])
def test_hf_trainer_checkpoint(hf_checkpoint, tmp_path, capsys, changes):
    was = _write(tmp_path, "was.json", json.dumps(HF_ARGS))
    new = _write(tmp_path, "new.json", json.dumps({**HF_ARGS, **changes}))
    code, out, err = _run(capsys, "resume", hf_checkpoint, new, "--was", was, "--json")
    doc = json.loads(out)
    assert doc["schema"] == "schedlang.resume/1" and doc["kind"] == "hf" and doc["step"] == 10
    assert doc["checkpoint"]["global_step"] == 10
    old_lrs, new_lrs = _hf_lrs(), _hf_lrs(**changes)
    assert doc["last_lr"] == pytest.approx(old_lrs[10], rel=1e-12)
    assert doc["new_lr"] == pytest.approx(new_lrs[10], rel=1e-12)
    if not changes:
        assert code == 0 and doc["verdict"] == "equivalent", err
        return
    assert code == 1 and doc["verdict"] == "different"
    ce = doc["counterexample"]
    assert ce["step"] == _first_difference(old_lrs, new_lrs, 10)
    assert ce["original"] == pytest.approx(old_lrs[ce["step"]], rel=1e-12)
    assert ce["new"] == pytest.approx(new_lrs[ce["step"]], rel=1e-12)


def test_hf_trainer_needs_was(hf_checkpoint, tmp_path, capsys):
    new = _write(tmp_path, "new.json", json.dumps(HF_ARGS))
    code, _, err = _run(capsys, "resume", hf_checkpoint, new)
    assert code == 2 and "LambdaLR" in err and "--was" in err


# -- Lightning ----------------------------------------------------------------------------------


def _lightning_run(directory, make_scheduler):
    """A real Lightning run (tiny module, CPU) with this scheduler, saved at step 10."""
    L = pytest.importorskip("lightning")  # noqa: N806

    class Module(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = torch.nn.Linear(4, 1)

        def training_step(self, batch, batch_idx):
            x, y = batch
            return torch.nn.functional.mse_loss(self.net(x), y)

        def configure_optimizers(self):
            opt = torch.optim.SGD(self.parameters(), lr=0.1)
            sched = make_scheduler(opt)
            return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}

    torch.manual_seed(0)
    xs = torch.randn(64, 4)
    data = torch.utils.data.TensorDataset(xs, xs.sum(1, keepdim=True))
    loader = torch.utils.data.DataLoader(data, batch_size=4)
    trainer = L.Trainer(max_steps=10, accelerator="cpu", devices=1, logger=False, enable_checkpointing=False,
                        enable_progress_bar=False, enable_model_summary=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer.fit(Module(), loader)
    path = directory / "mid.ckpt"
    trainer.save_checkpoint(path)
    return path


@pytest.fixture(scope="module")
def lightning_checkpoint(tmp_path_factory):
    """SequentialLR(LinearLR, CosineAnnealingLR) under Lightning, saved at step 10."""
    return _lightning_run(tmp_path_factory.mktemp("pl"), _sequential(4, 16))


def _seq_text(warm=4, total=16):
    return ("schedule lr = torch.SequentialLR(schedulers=[torch.LinearLR(start_factor=0.1, "
            f"total_iters={warm}), torch.CosineAnnealingLR(T_max={total})], milestones=[{warm}], lr=0.1)\n")


@pytest.mark.parametrize("warm,total", [(4, 16), (4, 20), (6, 16)], ids=["unchanged", "total", "warmup"])
def test_lightning_checkpoint(lightning_checkpoint, tmp_path, capsys, warm, total):
    new = _write(tmp_path, "new.sched", _seq_text(warm, total))
    code, out, err = _run(capsys, "resume", lightning_checkpoint, new, "--json")
    doc = json.loads(out)
    assert doc["kind"] == "lightning" and doc["step"] == 10 and doc["original_from"] == "state"
    old_lrs, new_lrs = _lrs(_sequential(4, 16), 40), _lrs(_sequential(warm, total), 40)
    assert doc["last_lr"] == pytest.approx(old_lrs[10], rel=1e-12)
    if (warm, total) == (4, 16):
        assert code == 0, err
        return
    assert code == 1
    assert doc["counterexample"]["step"] == _first_difference(old_lrs, new_lrs, 10)
    assert doc["counterexample"]["new"] == pytest.approx(new_lrs[doc["counterexample"]["step"]], rel=1e-12)


# -- hostile and broken input: refused, exit 2, nothing run --------------------------------------


class _Creates:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):  # unpickling this would create the file
        return (open, (str(self.path), "w"))


def test_hostile_pickle_is_refused_and_not_run(tmp_path, capsys):
    target = tmp_path / "created-by-the-pickle"
    state = tmp_path / "evil.pt"
    state.write_bytes(pickle.dumps({"last_epoch": 3, "x": _Creates(target)}))
    new = _write(tmp_path, "n.sched", "schedule lr = constant(1)\n")
    code, out, err = _run(capsys, "resume", state, new, "--json")
    assert code == 2 and "refused" in err and "open" in err and "Traceback" not in err
    assert json.loads(out)["schema"] == "schedlang.error/1"
    assert not target.exists()
    # torch's zip format, hostile inside: the same
    zipped = tmp_path / "evil-zip.pt"
    torch.save({"x": 1}, zipped)
    with zipfile.ZipFile(zipped) as archive:
        entries = {i.filename: archive.read(i) for i in archive.infolist()}
    data_pkl = next(n for n in entries if n.endswith("/data.pkl"))
    entries[data_pkl] = pickle.dumps(_Creates(target), protocol=2)
    with zipfile.ZipFile(zipped, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    with pytest.raises(schedlang.SchedlangError, match="refused"):
        schedlang.resume_check(zipped, new)
    assert not target.exists()


DATA_STATES = [
    {"params": {}, "_measured": None, "_drivers": [{"lr": "lr"}], "_group_values": [{}],
     "_cuda": False, "base_lrs": [0.001], "_step_count": 101, "last_epoch": 100},
    {"base_lrs": [0.1, 0.2], "last_epoch": 7, "lr_lambdas": [None], "_last_lr": [1e-300, -0.0],
     "verbose": False, "big": 2**70, "neg": -(2**40), "text": "é ∞ \U0001f600", "t": (1, (2,)),
     "shared": [[1]] * 3, "empty": ((), [], {})},
]


@pytest.mark.parametrize("value", DATA_STATES, ids=["class", "mixed"])
def test_a_state_of_data_alone_is_read_without_torch(tmp_path, value):
    """A zip checkpoint whose pickle holds only data (no import, no tensor) is read by the
    plain-data unpickler, not torch (importing torch is most of ``resume``'s time), and gives
    what ``torch.load(weights_only=True)`` gives."""
    path = tmp_path / "state.pt"
    torch.save(value, path)
    read = resume_state._plain_data(resume_state._pickle_bytes(path, "'state.pt'"))
    assert read is not resume_state._NOT_PLAIN
    assert read == torch.load(path, weights_only=True) == value
    assert resume_state.load(path) == value
    code = ("import sys; from pathlib import Path; from schedlang.resume.state import load; "
            f"assert load(Path({str(path)!r})) == {value!r}; print('torch' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(Path(schedlang.__file__).parent.parent)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_a_state_with_an_import_or_a_tensor_is_read_by_torch(tmp_path):
    """Counter (an import) and a tensor are not data alone: torch reads them, after the scan."""
    for value in ({"last_epoch": 1, "milestones": Counter({3: 1})},
                  {"last_epoch": 1, "base_lrs": [torch.tensor(0.5)]}):
        path = tmp_path / "state.pt"
        torch.save(value, path)
        assert resume_state._plain_data(resume_state._pickle_bytes(path, "x")) is resume_state._NOT_PLAIN
        assert resume_state.load(path) == value
    # a pickle protocol torch.save does not write (FRAME, MEMOIZE): torch's reading decides
    path = tmp_path / "p5.pt"
    torch.save({"last_epoch": 1}, path)
    with zipfile.ZipFile(path) as archive:
        entries = {i.filename: archive.read(i) for i in archive.infolist()}
    data_pkl = next(n for n in entries if n.endswith("/data.pkl"))
    entries[data_pkl] = pickle.dumps({"last_epoch": 1}, protocol=5)
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    assert resume_state._plain_data(entries[data_pkl]) is resume_state._NOT_PLAIN


def test_broken_inputs(tmp_path, capsys, monkeypatch):
    good = _save_state(tmp_path / "good.pt", STEP, 3)
    new = _write(tmp_path, "n.sched", "schedule lr = constant(1)\n")
    truncated = tmp_path / "trunc.pt"
    truncated.write_bytes(good.read_bytes()[:300])
    folder = tmp_path / "checkpoint-5"
    folder.mkdir()
    not_dict = tmp_path / "list.pt"
    torch.save([1, 2], not_dict)
    cases = [(truncated, "damaged or truncated"), (folder, "without scheduler.pt"),
             (not_dict, "not a scheduler state dict"), (tmp_path / "missing.pt", "cannot read")]
    for path, message in cases:
        code, _, err = _run(capsys, "resume", path, new)
        assert code == 2 and message in err and "Traceback" not in err, (path, err)
    monkeypatch.setattr(resume_state, "MAX_STATE_BYTES", 100)
    code, _, err = _run(capsys, "resume", good, new)
    assert code == 2 and "read only up to 100 bytes" in err


def test_swapped_arguments_say_the_order(tmp_path, capsys):
    """``resume new.sched ckpt.pt`` (a new user's order) is told the order, with the command
    as it should have been typed, not "not a readable pickle"."""
    good = _save_state(tmp_path / "ckpt.pt", STEP, 3)
    new = _write(tmp_path, "new.sched", "schedule lr = constant(1)\n")
    code, out, err = _run(capsys, "resume", new, good)
    assert code == 2 and out == "" and "Traceback" not in err, err
    assert "pickle" not in err and "STATE first, then NEW" in err, err
    assert f"schedlang resume {good} {new}" in err, err
    config = _write(tmp_path, "new.yaml", "optimizer:\n  learning_rate: 0.1\n")
    code, _, err = _run(capsys, "resume", config, new)  # no checkpoint given at all
    assert code == 2 and "STATE first, then NEW" in err and "schedlang resume STATE NEW" in err, err


def test_state_values_never_become_code(tmp_path, capsys):
    new = _write(tmp_path, "n.sched", "schedule lr = constant(1)\n")
    base = {"base_lrs": [0.1], "last_epoch": 2, "_step_count": 3, "_last_lr": [0.1]}
    for bad, message in [({"step_size": 3, "gamma": "0.1) >> constant(9"}, "not a finite number"),
                         ({"step_size": 2.5, "gamma": 0.1}, "not a whole number of steps"),
                         ({"step_size": 3, "gamma": float("nan")}, "not a finite number"),
                         ({"foo": 1}, "keys"),
                         ({"lr_lambdas": [None]}, "LambdaLR")]:
        path = tmp_path / "s.pt"
        torch.save({**bad, **base}, path)
        code, _, err = _run(capsys, "resume", path, new)
        assert code == 2 and message in err, (bad, err)
    with pytest.raises(ValueError):
        preset_source(Call("StepLR", (("gamma", "0.1"),)))
    with pytest.raises(ValueError):
        preset_source(Call("os.system", ()))


def test_unbound_new_schedule_asks_for_d(tmp_path, capsys):
    state = _save_state(tmp_path / "s.pt", STEP, 3)
    new = _write(tmp_path, "n.sched", "param total: int\nschedule lr = cosine(0.1, 0, total)\n")
    code, _, err = _run(capsys, "resume", state, new)
    assert code == 2 and "-D total=" in err
    code, _, err = _run(capsys, "resume", state, new, "-D", "total=9", "-D", "totl=9")
    assert code == 2 and "parameter 'totl'" in err and "<command line>" in err


RECOVERABLE = {
    "StepLR": lambda o: tl.StepLR(o, step_size=3, gamma=0.7),
    "MultiStepLR": lambda o: tl.MultiStepLR(o, [2, 9], gamma=0.3),
    "ConstantLR": lambda o: tl.ConstantLR(o, factor=0.25, total_iters=6),
    "LinearLR": lambda o: tl.LinearLR(o, start_factor=0.2, end_factor=0.9, total_iters=7),
    "ExponentialLR": lambda o: tl.ExponentialLR(o, gamma=0.95),
    "PolynomialLR": lambda o: tl.PolynomialLR(o, total_iters=12, power=2.0),
    "CosineAnnealingLR": lambda o: tl.CosineAnnealingLR(o, T_max=10, eta_min=0.01),
    "CosineAnnealingWarmRestarts": lambda o: tl.CosineAnnealingWarmRestarts(o, T_0=5, T_mult=2, eta_min=0.01),
    "SequentialLR": lambda o: tl.SequentialLR(
        o, [tl.ConstantLR(o, factor=0.5, total_iters=3), tl.ExponentialLR(o, gamma=0.9)], milestones=[3]),
}


@pytest.mark.parametrize("name", sorted(RECOVERABLE))
def test_recovered_schedule_is_torchs_at_every_step(tmp_path, name):
    """The schedule rebuilt from a state gives torch's own lr at every step of the run."""
    from schedlang.resume.check import original_of

    make = RECOVERABLE[name]
    state = torch.load(_save_state(tmp_path / "s.pt", make, 4), weights_only=True)
    original = original_of(state, "state")
    assert original.step == 4 and original.described.startswith(f"torch {name}")
    recovered = schedlang.compile(original.source)["lr"]
    for step, lr in enumerate(_lrs(make, 40)):
        assert recovered(step) == pytest.approx(lr, rel=1e-9, abs=1e-15), (name, step)


def test_hf_scheduler_stepped_twice_is_noted(hf_checkpoint, tmp_path, capsys):
    import shutil

    folder = tmp_path / "checkpoint-10"
    shutil.copytree(hf_checkpoint, folder)
    state = torch.load(folder / "scheduler.pt", weights_only=True)
    state["last_epoch"] += 1
    state["_last_lr"] = [_hf_lrs()[11]]
    torch.save(state, folder / "scheduler.pt")
    was = _write(tmp_path, "was.json", json.dumps(HF_ARGS))
    code, out, err = _run(capsys, "resume", folder, was, "--was", was)
    assert code == 0 and "step:     11" in out
    assert "warning: the scheduler has stepped 11 times but the Trainer's global_step is 10" in err


def test_python_api_takes_schedules_programs_and_source(tmp_path):
    state = _save_state(tmp_path / "s.pt", STEP, 7)
    text = "schedule lr = torch.StepLR(lr=0.1, step_size=3, gamma=0.5)\n"
    assert schedlang.resume_check(state, text)
    assert schedlang.resume_check(str(state), schedlang.compile(text))
    assert schedlang.resume_check(state, schedlang.compile(text)["lr"], was=text)
    changed = "param size: int = 3\nschedule lr = torch.StepLR(lr=0.1, step_size=size, gamma=0.5)\n"
    verdict = schedlang.resume_check(state, changed, params={"size": 5})
    assert verdict.different and verdict.counterexample.step == 7  # 0.1 * 0.5**2 vs 0.1 * 0.5
    assert (verdict.counterexample.a, verdict.counterexample.b) == pytest.approx((0.025, 0.05))


def test_state_parameters_bind_a_program_given_as_was(tmp_path):
    """A schedlang class's saved parameters bind ``was`` given as a compiled Program too."""
    program = schedlang.compile(SCHEDLANG)
    opt = _optimizer()
    sched = program.scheduler_class("S")(opt, total=40)
    for _ in range(15):
        opt.step()
        sched.step()
    state = tmp_path / "s.pt"
    torch.save(sched.state_dict(), state)
    verdict = schedlang.resume_check(state, program, was=program, params={"total": 40})
    assert verdict and verdict.last_lr == pytest.approx(opt.param_groups[0]["lr"], rel=1e-12)
    verdict = schedlang.resume_check(state, program, was=program)  # new: total = 100 (its default)
    assert verdict.different and verdict.counterexample.step == 15
    assert verdict.counterexample.b == pytest.approx(program["lr"](15))


def test_lightning_schedlang_class_checked_against_the_optimizers_lr(tmp_path, capsys):
    """A schedlang class's state has no last lr: the checkpoint's optimizer lr stands for it."""
    program = schedlang.compile(SCHEDLANG)
    ckpt = _lightning_run(tmp_path, lambda opt: program.scheduler_class("S")(opt, total=30))
    old = _write(tmp_path, "old.sched", SCHEDLANG)
    code, out, err = _run(capsys, "resume", ckpt, old, "--was", old, "-D", "total=30", "--json")
    doc = json.loads(out)
    assert code == 0, err
    expected = schedlang.compile(SCHEDLANG, params={"total": 30})["lr"](10)
    assert doc["step"] == 10 and doc["last_lr"] == pytest.approx(expected, rel=1e-6)
    assert doc["checkpoint"]["optimizer_lr"] == doc["last_lr"]
    # a --was that declares the same parameters but is another schedule: refused
    other = _write(tmp_path, "other.sched", SCHEDLANG.replace("warmup(linear, 10)", "warmup(linear, 5)"))
    code, _, err = _run(capsys, "resume", ckpt, old, "--was", other)
    assert code == 2 and "not the schedule that wrote this state" in err


def test_tensor_lr_is_read_at_its_precision(tmp_path):
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=torch.tensor(0.1, dtype=torch.float64))
    sched = tl.StepLR(opt, 3, 0.5)
    for _ in range(4):
        opt.step()
        sched.step()
    torch.save(sched.state_dict(), tmp_path / "t.pt")
    new = "schedule lr = torch.StepLR(lr=0.1, step_size=3, gamma=0.5)\n"
    verdict = schedlang.resume_check(tmp_path / "t.pt", new)
    assert verdict and verdict.last_lr == 0.05
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=torch.tensor(0.1))  # float32
    sched = tl.StepLR(opt, 3, 0.5)
    torch.save(sched.state_dict(), tmp_path / "f.pt")
    verdict = schedlang.resume_check(tmp_path / "f.pt", new)
    assert verdict.different and verdict.counterexample.a == float(torch.tensor(0.1))
