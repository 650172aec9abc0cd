"""The picture of an audit: ``schedlang plot FILE --logged LOG`` and ``schedlang audit FILE LOG
--plot OUT`` draw the logged points over the file's schedule, aligned as the audit aligns them,
and mark the first deviation with both values and the cause (SPEC §15, docs/audit.md).

The logs are written by Accelerate's own gradient accumulation on CPU, once with the scheduler
stepped when the optimizer steps (clean) and once on every micro-batch (the bug: 4 steps per
update).  ``docs/img/audit-hf-horizon.svg`` is regenerated from the real HF Trainer's log and
must be the committed bytes (``SCHEDLANG_UPDATE_GOLDEN=1`` rewrites it).
"""

from __future__ import annotations

import os
import shutil

import pytest
from helpers import ROOT, run_cli

import schedlang
from schedlang.audit.check import Thinned
from schedlang.cli import plot as plot_module

FILE = "schedule lr = warmup(linear, 3) >> cosine(1e-3, 1e-4, 9)\n"


def _accelerate_log(path, *, per_micro_batch: bool):
    """A loop under ``accelerator.accumulate`` (4 micro-batches an update) logging
    ``get_last_lr()`` at each update; the scheduler stepped on every micro-batch when
    ``per_micro_batch`` (not passed to ``prepare``: nothing skips its steps), else only when the
    optimizer stepped."""
    torch = pytest.importorskip("torch")
    accelerate = pytest.importorskip("accelerate")
    program = schedlang.compile(FILE)
    accelerator = accelerate.Accelerator(gradient_accumulation_steps=4, cpu=True)
    model = torch.nn.Linear(2, 1)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scheduler = program.scheduler_class("Run")(optimizer)
    model, optimizer = accelerator.prepare(model, optimizer)
    rows, update = ["step,lr"], 0
    for batch in torch.randn(96 if not per_micro_batch else 64, 2).split(2):
        with accelerator.accumulate(model):
            if accelerator.sync_gradients:
                rows.append(f"{update},{scheduler.get_last_lr()[0]!r}")
                update += 1
            accelerator.backward(model(batch).pow(2).mean())
            optimizer.step()
            if per_micro_batch or accelerator.sync_gradients:
                scheduler.step()
            optimizer.zero_grad()
    path.write_text("\n".join(rows) + "\n")
    return path


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    root = tmp_path_factory.mktemp("overlay")
    (root / "run.sched").write_text(FILE)
    _accelerate_log(root / "clean.csv", per_micro_batch=False)
    _accelerate_log(root / "bug.csv", per_micro_batch=True)
    return root


def _panel(root, log):
    program = schedlang.load(root / "run.sched")
    report = schedlang.audit(program, root / log, keep=plot_module.OVERLAY_POINTS)
    steps = plot_module.overlay_steps(program, report, range(0, 14))
    return report, plot_module.overlay(program, "run.sched", report, list(steps))


def test_overlay_of_a_clean_log_marks_nothing(logs):
    report, (panel, heading) = _panel(logs, "clean.csv")
    assert report.followed and report.matched == 12
    assert panel.logged.deviation is None and len(panel.logged.points) == 12
    assert "followed the file at every logged update (12 points)" in heading
    planned = dict(zip(range(0, 14), panel.lines[0][1]))
    assert all(abs(v - planned[int(u)]) < 1e-12 for u, v in panel.logged.points if u < 14)


def test_overlay_of_accelerate_stepping_per_micro_batch_marks_update_0(logs):
    """The first update already reads the lr after 3 scheduler steps (the 4th micro-batch's):
    the deviation is at update 0, the file's lr at step 3 where it planned 0."""
    report, (panel, heading) = _panel(logs, "bug.csv")
    assert (report.cause.kind, report.cause.k, report.cause.phase) == ("stepped", 4, 3)
    step, logged, planned = panel.logged.deviation
    assert (step, planned) == (0, 0.0) and logged == pytest.approx(schedlang.compile(FILE)["lr"](3))
    assert "left the file at update 0: logged 0.001, planned 0" in heading
    assert "cause: the scheduler stepped 4 times per update" in heading
    assert len(panel.logged.points) == 8 and panel.logged.points[1] == (1.0, pytest.approx(
        schedlang.compile(FILE)["lr"](7)))


def test_terminal_overlay_puts_the_deviation_at_its_update(logs):
    result = run_cli("plot", "run.sched", "--logged", "bug.csv", cwd=logs)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "cause: the scheduler stepped 4 times per update" in out
    assert "X first deviation (update 0)" in out and "o logged: lr (step convention)" in out
    rows = [line.split("|", 1)[1] for line in out.splitlines() if "|" in line]
    assert sum(row.count("X") for row in rows) == 1
    assert rows[0][0] == "X"  # update 0 (the left edge), at the top: 0.001, the peak


def test_audit_plot_and_plot_logged_write_the_same_deterministic_svg(logs, tmp_path):
    pytest.importorskip("matplotlib")
    result = run_cli("audit", "run.sched", "bug.csv", "--plot", tmp_path / "a.svg", cwd=logs)
    assert result.returncode == 1 and "cause:      the scheduler stepped 4 times" in result.stdout
    assert "wrote" in result.stderr
    again = run_cli("plot", "run.sched", "--logged", "bug.csv", "-o", tmp_path / "b.svg", cwd=logs)
    assert again.returncode == 0, again.stderr
    first, second = (tmp_path / "a.svg").read_bytes(), (tmp_path / "b.svg").read_bytes()
    assert first == second  # no date, no random ids: the same picture twice
    text = first.decode()
    assert "<dc:date>" not in text
    clean = run_cli("audit", "run.sched", "clean.csv", "--plot", tmp_path / "c.png", "--json", cwd=logs)
    assert clean.returncode == 0 and (tmp_path / "c.png").stat().st_size > 1000


def test_plot_log_scale_still_works_with_and_without_logged(logs, tmp_path):
    pytest.importorskip("matplotlib")
    plain = run_cli("plot", "run.sched", "--log")
    assert plain.returncode == 2  # run.sched is not in ROOT: a located error, not a crash
    plain = run_cli("plot", "run.sched", "--log", cwd=logs)
    assert plain.returncode == 0 and "(log scale)" in plain.stdout
    assert "--log leaves out 1 of" in plain.stderr  # the warmup's 0
    both = run_cli("plot", "run.sched", "--log", "--logged", "bug.csv", cwd=logs)
    assert both.returncode == 0 and "(log scale)" in both.stdout
    assert "X first deviation (update 0)" in both.stdout


def test_plot_log_followed_by_a_log_is_the_overlay_as_the_issue_spells_it(logs, tmp_path):
    """``plot FILE --log LOG`` (issue 38's spelling) is ``--logged LOG`` on a linear scale when LOG
    is not a .sched file; two .sched files with ``--log`` stay two files on a log scale."""
    pytest.importorskip("matplotlib")
    spelled = run_cli("plot", "run.sched", "--log", "bug.csv", "-o", tmp_path / "a.svg", cwd=logs)
    assert spelled.returncode == 0, spelled.stderr
    logged = run_cli("plot", "run.sched", "--logged", "bug.csv", "-o", tmp_path / "b.svg", cwd=logs)
    assert (tmp_path / "a.svg").read_bytes() == (tmp_path / "b.svg").read_bytes()
    shutil.copy(logs / "run.sched", tmp_path / "other.sched")
    two = run_cli("plot", "run.sched", str(tmp_path / "other.sched"), "--log", cwd=logs)
    assert two.returncode == 0 and "(log scale)" in two.stdout, two.stderr
    assert logged.returncode == 0


@pytest.mark.parametrize(("args", "message", "caret"), [
    (["plot", "run.sched", "run.sched", "--logged", "bug.csv"], "--logged draws one file's schedule", True),
    (["plot", "run.sched", "--tag", "lr"], "--tag picks the series of a log: it needs --logged", True),
    (["plot", "run.sched", "--logged", "missing.csv"], "missing.csv: no such file or folder", False),
    (["plot", "run.sched", "--logged", "bug.csv", "--tag", "loss"], "no series 'loss'", False),
    (["plot", "run.sched", "--logged", "bug.csv", "--schedule", "lr", "--schedule", "wd"],
     "--logged compares one schedule", True),
    (["plot", "run.sched", "--logged", "bug.csv", "--axis", "samples"], "--axis steps only", True),
    (["plot", "run.sched", "--logged", "bug.csv", "--convention", "hff"], "not a logger convention", False),
    (["audit", "run.sched", "bug.csv", "--plot", "."], "is a directory", True),
    (["audit", "run.sched", "bug.csv", "--plot", "bug.csv"], "would replace the input", True),
])
def test_bad_overlay_input_exits_2_located(logs, args, message, caret):
    result = run_cli(*args, cwd=logs)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert message in result.stderr and "Traceback" not in result.stderr
    if caret:
        assert "<command line>" in result.stderr and "^" in result.stderr


def test_thinned_keeps_a_bounded_even_spread():
    thin = Thinned(100)
    for u in range(100_003):
        thin.add(u, float(u))
    updates = [u for u, _ in thin.kept]
    assert 100 <= len(updates) < 200 and updates[0] == 0
    gaps = {b - a for a, b in zip(updates, updates[1:])}
    assert len(gaps) == 1 and updates[-1] > 100_003 - 2 * gaps.pop()
    assert thin.points() == (*thin.kept, (100_002, 100_002.0))  # the log's end, always


# -- the docs' picture: one real bug found end to end --------------------------------------

DOCS_PICTURE = ROOT / "docs" / "img" / "audit-hf-horizon.svg"
HF_FILE = """\
param total: int = 10 where total > 2
schedule lr = hf.linear(lr=1e-3, num_warmup_steps=2, num_training_steps=total)
"""


def test_docs_picture_is_the_real_trainers_bug_regenerated(tmp_path):
    """docs/audit.md's picture: the HF Trainer given a scheduler built for 40 steps (the total
    not divided by the accumulation, 4), audited with the CLI from its checkpoint folder."""
    matplotlib = pytest.importorskip("matplotlib")
    from test_audit_frameworks import _hf_train

    _hf_train(tmp_path / "out", accumulation=4, scheduler_total=40)
    (tmp_path / "run.sched").write_text(HF_FILE)
    result = run_cli("audit", "run.sched", "out/checkpoint-10", "--plot", "audit.svg", cwd=tmp_path)
    assert result.returncode == 1 and "total = 40 fits the whole log" in result.stdout, result.stdout
    fresh = (tmp_path / "audit.svg").read_bytes()
    assert b"left the file at update 3" in fresh or "update 3" in result.stdout
    if os.environ.get("SCHEDLANG_UPDATE_GOLDEN") == "1":
        shutil.copyfile(tmp_path / "audit.svg", DOCS_PICTURE)
    pinned = next(line for line in (ROOT / "constraints.txt").read_text().splitlines()
                  if line.startswith("matplotlib=="))
    if pinned != f"matplotlib=={matplotlib.__version__}" and not os.environ.get("CI"):
        pytest.skip(f"the picture is drawn with {pinned}, this has {matplotlib.__version__}")
    assert fresh == DOCS_PICTURE.read_bytes(), \
        "docs/img/audit-hf-horizon.svg is stale: SCHEDLANG_UPDATE_GOLDEN=1 pytest tests/test_audit_plot.py"
