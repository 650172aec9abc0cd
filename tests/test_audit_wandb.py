"""``schedlang audit`` of W&B offline run folders (``wandb/offline-run-*/run-*.wandb``), read
with W&B's own ``DataStore`` (wandb < 0.30; docs/audit.md).  The runs are written by a real
``wandb.init(mode="offline")`` on CPU, in a subprocess (W&B starts its service there): a torch
loop logging ``get_last_lr()`` each update, once stepped right, once twice per update.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from helpers import ROOT, run_cli

import schedlang

pytest.importorskip("torch")
wandb_datastore = pytest.importorskip("wandb.sdk.internal.datastore")

FILE = "schedule lr = warmup(linear, 4) >> cosine(1e-3, 1e-4, 16)\n"

LOOP = textwrap.dedent("""\
    import sys, torch, wandb, schedlang
    program = schedlang.compile(open(sys.argv[1]).read())
    model = torch.nn.Linear(2, 1)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scheduler = program.scheduler_class("Run")(optimizer)
    run = wandb.init(mode="offline", project="audit", dir=sys.argv[2])
    for update in range(24):
        wandb.log({"lr": scheduler.get_last_lr()[0], "loss": float(update)}, step=update)
        model(torch.ones(2)).sum().backward()
        optimizer.step()
        optimizer.zero_grad()
        for _ in range(int(sys.argv[3])):
            scheduler.step()
    run.finish()
""")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("wandb")
    (root / "run.sched").write_text(FILE)
    (root / "loop.py").write_text(LOOP)
    env = dict(os.environ, PYTHONPATH=str(ROOT), WANDB_SILENT="true", WANDB_MODE="offline")
    for name, steps in (("clean", 1), ("twice", 2)):
        (root / name).mkdir()
        result = subprocess.run([sys.executable, "loop.py", "run.sched", name, str(steps)], cwd=root,
                                env=env, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr[-2000:]
    return root


def test_offline_run_of_a_clean_loop_follows_the_file(runs):
    (run_file,) = (runs / "clean" / "wandb").glob("offline-run-*/run-*.wandb")
    for log in (runs / "clean" / "wandb", run_file.parent, run_file):
        report = schedlang.audit(runs / "run.sched", log)
        assert (report.format, report.series, report.convention.name) == ("wandb-offline", "lr", "step")
        assert report.followed and report.matched == 24 and report.max_diff == 0.0


def test_offline_run_stepped_twice_per_update(runs):
    result = run_cli("audit", "run.sched", "twice/wandb", "--json", cwd=runs)
    assert result.returncode == 1, result.stderr
    import json

    doc = json.loads(result.stdout)
    assert doc["first_deviation"]["step"] == 1 and doc["cause"]["kind"] == "stepped"
    assert doc["cause"]["k"] == 2


def test_a_folder_of_two_runs_is_refused_with_both_named(runs, tmp_path):
    import shutil

    for name in ("clean", "twice"):
        (run,) = (runs / name / "wandb").glob("offline-run-*")
        shutil.copytree(run, tmp_path / "wandb" / run.name)
    result = run_cli("audit", runs / "run.sched", tmp_path / "wandb")
    assert result.returncode == 2 and "2 W&B runs in this folder" in result.stderr
    assert "give one run's folder" in result.stderr


@pytest.mark.parametrize("damage", ["truncated", "garbage"])
def test_a_damaged_run_file_exits_2(runs, tmp_path, damage):
    (run_file,) = (runs / "clean" / "wandb").glob("offline-run-*/run-*.wandb")
    data = run_file.read_bytes()
    bad = tmp_path / "run-x.wandb"
    bad.write_bytes(data[: len(data) // 2] if damage == "truncated" else b"not a run file at all" * 10)
    result = run_cli("audit", runs / "run.sched", bad)
    if damage == "truncated" and result.returncode == 0:  # cut between records: what is there matches
        return
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "W&B could not read this run file" in result.stderr and "Traceback" not in result.stderr


def test_wandb_without_its_datastore_is_refused_with_what_to_do(runs, monkeypatch):
    """wandb >= 0.30 has no ``wandb.sdk.internal.datastore``: the audit says so and names the
    ways out (wandb < 0.30, or the history CSV)."""
    monkeypatch.setitem(sys.modules, "wandb.sdk.internal.datastore", None)  # import raises
    with pytest.raises(schedlang.SchedlangError) as error:
        schedlang.audit(runs / "run.sched", runs / "clean" / "wandb")
    assert "has no reader of .wandb files" in str(error.value)
    assert "export the run's history as CSV" in (error.value.hint or "")
