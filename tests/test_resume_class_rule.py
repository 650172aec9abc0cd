"""schedlang's classes restore the clock and keep the constructor's parameters (SPEC §14, issue 36
item 3), and ``schedlang resume`` says exactly what such a class will do.

Each case trains a class compiled from ``old.sched`` for 17 real steps, saves model, optimizer
and scheduler in one ``torch.save`` dict (the guide's checkpoint), then resumes as a new
process would: a class compiled from ``NEW`` built with its defaults, the optimizer's state
loaded, then the scheduler's.  The lr the resumed run uses at every later step is compared
with what ``schedlang resume ckpt.pt NEW --was old.sched`` reports: the new lr at the step, the
verdict, and the first differing step with both values.
"""

from __future__ import annotations

import json
import warnings

import pytest

import schedlang
from schedlang.cli import main

torch = pytest.importorskip("torch")

OLD = """
param peak: float = 0.01 where peak > 0
param total: int = 40 where total > 5

schedule lr = warmup(linear, 5) >> cosine(peak, 0.1 * peak, total - 5)
"""
SAVE_AT, END = 17, 90

NEW = {
    "unchanged": OLD,
    "total": OLD.replace("total: int = 40", "total: int = 80"),  # the new_longer.sched
    "peak": OLD.replace("peak: float = 0.01", "peak: float = 0.02"),
}


def _train(model, opt, sched, steps, lrs=None):
    for k in steps:
        if lrs is not None:
            lrs.append(float(opt.param_groups[0]["lr"]))
        x = torch.randn(8, 4, generator=torch.Generator().manual_seed(k))
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()


def _build(text):
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.AdamW(model.parameters(), lr=torch.tensor(0.0, dtype=torch.float64))
    return model, opt, schedlang.compile(text).scheduler_class("Schedule")(opt)


def _checkpoint(path):
    model, opt, sched = _build(OLD)
    _train(model, opt, sched, range(SAVE_AT))
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(),
                "scheduler": sched.state_dict(), "step": SAVE_AT}, path)
    return path


def _resumed(path, text, params="constructor"):
    """The lr the resumed run uses at each step SAVE_AT..END-1, and the warnings of the load."""
    ckpt = torch.load(path, weights_only=True)
    model, opt, sched = _build(text)
    model.load_state_dict(ckpt["model"])
    opt.load_state_dict(ckpt["optimizer"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sched.load_state_dict(ckpt["scheduler"], params=params)
    lrs = []
    _train(model, opt, sched, range(SAVE_AT, END), lrs)
    return lrs, caught


def _resume_json(capsys, ckpt, new, old, *extra):
    code = main(["resume", str(ckpt), str(new), "--was", str(old), "--json", *extra])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("case", list(NEW))
def test_the_class_runs_what_resume_reports(case, tmp_path, capsys):
    ckpt = _checkpoint(tmp_path / "ckpt.pt")
    old, new = tmp_path / "old.sched", tmp_path / "new.sched"
    old.write_text(OLD)
    new.write_text(NEW[case])
    lrs, caught = _resumed(ckpt, NEW[case])
    code, doc = _resume_json(capsys, ckpt, new, old)

    # the class follows NEW (built with NEW's defaults) from the saved step on, step for step
    want = schedlang.compile(NEW[case])["lr"]
    assert lrs == pytest.approx([want(k) for k in range(SAVE_AT, END)], rel=1e-12, abs=0)
    # and resume says so: the new lr at the step, then the verdict and its first difference
    assert doc["step"] == SAVE_AT and doc["new_lr"] == pytest.approx(lrs[0], rel=1e-12)
    original = schedlang.compile(OLD)["lr"]
    differs = [SAVE_AT + i for i, lr in enumerate(lrs)
               if lr != pytest.approx(original(SAVE_AT + i), rel=1e-12)]
    if case == "unchanged":
        assert code == 0 and doc["verdict"] == "equivalent" and not differs
        assert not [w for w in caught if issubclass(w.category, schedlang.SchedlangWarning)]
    else:
        ce = doc["counterexample"]
        assert code == 1 and ce["step"] == differs[0]
        assert ce["new"] == pytest.approx(lrs[ce["step"] - SAVE_AT], rel=1e-12)
        assert ce["original"] == pytest.approx(original(ce["step"]), rel=1e-12)
        named = [str(w.message) for w in caught if issubclass(w.category, schedlang.SchedlangWarning)]
        assert len(named) == 1 and case in named[0] and "constructor's are kept" in named[0]
        assert caught[0].filename == __file__


def test_params_saved_keeps_the_checkpoints_values(tmp_path, capsys):
    """``params="saved"``: the resumed class runs NEW's formula with the saved values, which is
    what ``resume`` reports when given them with ``-D``."""
    ckpt = _checkpoint(tmp_path / "ckpt.pt")
    old, new = tmp_path / "old.sched", tmp_path / "new.sched"
    old.write_text(OLD)
    new.write_text(NEW["total"])
    lrs, caught = _resumed(ckpt, NEW["total"], params="saved")
    assert not caught
    original = schedlang.compile(OLD)["lr"]
    assert lrs == pytest.approx([original(k) for k in range(SAVE_AT, END)], rel=1e-12, abs=0)
    code, doc = _resume_json(capsys, ckpt, new, old, "-D", "total=40")
    assert code == 0 and doc["new_lr"] == pytest.approx(lrs[0], rel=1e-12)


def test_the_text_report_says_which_values_the_class_keeps(tmp_path, capsys):
    ckpt = _checkpoint(tmp_path / "ckpt.pt")
    old, new = tmp_path / "old.sched", tmp_path / "new.sched"
    old.write_text(OLD)
    new.write_text(NEW["total"])
    assert main(["resume", str(ckpt), str(new), "--was", str(old)]) == 1
    out = capsys.readouterr().out
    assert "params:   peak=1/100, total=40 (saved in the state; the original's values)" in out
    assert f"a schedlang class built from {new} keeps its constructor's values" in out


def test_a_bad_rule_is_refused(tmp_path):
    ckpt = torch.load(_checkpoint(tmp_path / "ckpt.pt"), weights_only=True)
    _, _, sched = _build(OLD)
    with pytest.raises(ValueError, match="'constructor' or 'saved'"):
        sched.load_state_dict(ckpt["scheduler"], params="checkpoint")
