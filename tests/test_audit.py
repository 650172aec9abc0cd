"""``schedlang audit FILE LOG`` (SPEC §15): readers, alignment, comparison and causes.

Each cause is reproduced by its real mechanism: a torch training loop whose scheduler (the
class schedlang generates from the file, or torch's own) is stepped the wrong way, logging
``get_last_lr()`` as a training script does, to a CSV or through torch's ``SummaryWriter``;
the audit must exit 1 at the right update with the right cause, and the clean loop must
exit 0.  Hostile logs end in a located error (exit 2), in bounded time and memory.
"""

from __future__ import annotations

import csv
import json
import math
import time
import tracemalloc

import pytest
from helpers import run_cli

import schedlang
from schedlang import SchedlangError

torch = pytest.importorskip("torch")

FILE = """\
param peak: float = 1e-3 where peak > 0
param total: int = 60 where total > 8
schedule lr = warmup(linear, 8) >> cosine(peak, 0.1 * peak, total - 8)
schedule lr__head = warmup(linear, 4) >> cosine(2 * peak, 0, total - 4)
"""
UPDATES = 80  # past the end of the schedule (60): the held end value is audited too


@pytest.fixture
def sched_file(tmp_path):
    path = tmp_path / "run.sched"
    path.write_text(FILE)
    return path


def train(kind: str = "clean", *, updates: int = UPDATES, s: int = 25, k: int = 2, params=None,
          group: int = 0):
    """A real torch loop: AdamW on a tiny model, the file's scheduler class, ``kind`` the way
    it is (mis)stepped.  Returns [(step, lr logged at it)] as a script logs: get_last_lr()
    before the update, at the update's index."""
    program = schedlang.compile(FILE, params=params)
    model = torch.nn.Linear(2, 1)
    head = torch.nn.Linear(1, 1)
    peak_factor = 2.0 if kind == "scaled" else 1.0
    optimizer = torch.optim.AdamW([{"params": model.parameters(), "tags": "body"},
                                   {"params": head.parameters(), "tags": "head"}],
                                  lr=1e-3 * peak_factor)
    build = program.scheduler_class("Run")
    if kind == "scaled":  # a LambdaLR of the file's shape on an optimizer given another peak lr
        def build(optimizer):
            return torch.optim.lr_scheduler.LambdaLR(optimizer, lambda u: program["lr"](u) / 1e-3)
    scheduler = build(optimizer)
    logged = []
    for update in range(updates):
        if kind == "restart" and update == s:  # a resume that rebuilt the scheduler without its state
            scheduler = build(optimizer)
        lr = scheduler.get_last_lr()[group]
        loss = (model(torch.ones(2)) + head(torch.ones(1))).pow(2).sum()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if kind == "early":
            scheduler.step()
            lr = scheduler.get_last_lr()[group]  # logged after the scheduler stepped
            logged.append((update, lr))
            continue
        logged.append((update, lr))
        if kind == "never":
            continue
        for _ in range(k if kind == "stepped" else 1):
            scheduler.step()
    return logged


def write_csv(path, rows, header=("step", "lr")):
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def audited(sched_file, log, **options):
    return schedlang.audit(sched_file, log, **options)


# -- the causes, each from a real mis-stepped loop ---------------------------------------------


def test_a_clean_loop_follows_the_file(sched_file, tmp_path):
    report = audited(sched_file, write_csv(tmp_path / "log.csv", train()))
    assert report.followed and report.cause is None
    assert report.matched == UPDATES and report.max_diff < 1e-12


@pytest.mark.parametrize(("kind", "options", "first", "cause"), [
    ("stepped", {"k": 2}, 1, {"kind": "stepped", "k": 2}),
    ("stepped", {"k": 8}, 1, {"kind": "stepped", "k": 8}),  # Accelerate on 8 processes
    ("restart", {"s": 25}, 25, {"kind": "restarted", "step": 25}),
    ("never", {}, 1, {"kind": "never-stepped"}),
    ("early", {}, 0, {"kind": "early"}),
    ("scaled", {}, 1, {"kind": "scaled", "factor": 2.0}),
])
def test_each_mis_stepped_loop_is_diagnosed(sched_file, tmp_path, kind, options, first, cause):
    report = audited(sched_file, write_csv(tmp_path / "log.csv", train(kind, **options)))
    assert not report.followed
    assert report.first_deviation.step == first
    assert report.cause is not None
    doc = report.cause.to_json()
    assert {key: doc.get(key) for key in cause} == cause, doc


def test_a_scheduler_built_for_another_horizon_is_found_with_its_total(sched_file, tmp_path):
    """The total not divided by the gradient accumulation (4): the run lasts 4x longer."""
    report = audited(sched_file, write_csv(tmp_path / "log.csv", train(params={"total": 240})))
    assert report.first_deviation.step == 9  # the warmup (8 updates) does not depend on it
    assert (report.cause.kind, report.cause.param, report.cause.total) == ("horizon", "total", 240)


def test_another_param_groups_series_is_named(sched_file, tmp_path):
    report = audited(sched_file, write_csv(tmp_path / "log.csv", train(group=1)))
    assert (report.cause.kind, report.cause.schedule) == ("group", "lr__head")
    assert audited(sched_file, tmp_path / "log.csv", schedule="lr__head").followed


def test_a_deviation_no_cause_explains_is_none_of_these(sched_file, tmp_path):
    rows = train()
    rows[40] = (40, rows[40][1] * 1.5)  # one point off: no hypothesis fits every point
    report = audited(sched_file, write_csv(tmp_path / "log.csv", rows))
    assert report.first_deviation.step == 40 and report.cause is None
    assert report.to_json()["cause"] == {"kind": "none"}


def test_a_cause_that_fits_only_part_of_the_log_is_not_claimed(sched_file, tmp_path):
    """Stepped twice for 30 updates, then once: k=2 fits the start, not the whole log."""
    twice, once = train("stepped"), train()
    rows = twice[:30] + [(u, lr) for u, lr in once[30:]]
    report = audited(sched_file, write_csv(tmp_path / "log.csv", rows))
    assert not report.followed and (report.cause is None or report.cause.kind != "stepped")


# -- readers --------------------------------------------------------------------------------


def test_tensorboard_events_from_torchs_summary_writer(sched_file, tmp_path):
    from torch.utils.tensorboard import SummaryWriter

    for kind in ("clean", "stepped"):
        folder = tmp_path / kind
        with SummaryWriter(str(folder)) as writer:
            for step, lr in train(kind):
                writer.add_scalar("train/lr", lr, step)
                writer.add_scalar("loss", 1.0 / (step + 1), step)
        report = audited(sched_file, folder)
        assert report.format == "tensorboard" and report.series == "train/lr"
        assert report.followed == (kind == "clean"), report.to_json()
        if kind == "stepped":
            assert (report.cause.kind, report.cause.k) == ("stepped", 2)
        event_file = next(folder.glob("*tfevents*"))
        assert audited(sched_file, event_file).matched == UPDATES


def test_tensorboard_events_from_tensorboards_own_writer(sched_file, tmp_path):
    """TensorBoard's ``Writer`` writes v2 summaries: a float32 scalar tensor, not a
    ``simple_value``."""
    summary = pytest.importorskip("tensorboard.summary")
    for kind in ("clean", "never"):
        writer = summary.Writer(str(tmp_path / kind))
        for step, lr in train(kind):
            writer.add_scalar("learning_rate", lr, step=step)
        writer.flush()
        writer.close()
        report = audited(sched_file, tmp_path / kind)
        assert report.matched == UPDATES and report.followed == (kind == "clean")
        assert kind == "clean" or report.cause.kind == "never-stepped"


def test_float32_values_compare_within_a_float32_ulp(sched_file, tmp_path):
    """TensorBoard stores float32: a float64 comparison would call every value a deviation."""
    from torch.utils.tensorboard import SummaryWriter

    with SummaryWriter(str(tmp_path)) as writer:
        for step, lr in train():
            writer.add_scalar("lr", lr, step)
    report = audited(sched_file, tmp_path)
    assert report.followed and 0 < report.max_diff < 2 ** -23


def test_a_plain_csv_without_header(sched_file, tmp_path):
    path = tmp_path / "lr.csv"
    path.write_text("".join(f"{u},{lr!r}\n" for u, lr in train()))
    assert audited(sched_file, path).followed


def test_a_csv_printed_with_few_digits_compares_at_those_digits(sched_file, tmp_path):
    path = tmp_path / "lr.csv"
    path.write_text("step,lr\n" + "".join(f"{u},{lr:.4e}\n" for u, lr in train()))
    report = audited(sched_file, path)
    assert report.followed and report.max_diff > 1e-9
    path.write_text("step,lr\n" + "".join(f"{u},{lr:.4e}\n" for u, lr in train("stepped")))
    assert audited(sched_file, path).cause.k == 2


def test_wandb_history_export_uses_the_trainers_step(sched_file, tmp_path):
    """W&B's ``_step`` counts wandb.log calls (twice per update here); transformers'
    WandbCallback logs ``train/global_step`` beside ``train/learning_rate``: the HF convention."""
    rows = []
    for update, lr in train():
        rows.append((2 * update, "", "", 0.5))
        rows.append((2 * update + 1, update + 1, lr, ""))
    path = write_csv(tmp_path / "wandb_export.csv", rows,
                     ("_step", "train/global_step", "train/learning_rate", "train/loss"))
    report = audited(sched_file, path)
    assert (report.format, report.series, report.convention.name) == \
        ("wandb-csv", "train/learning_rate", "hf")
    assert report.followed and report.matched == UPDATES


def test_an_mlflow_run_folder(sched_file, tmp_path):
    """The file store's layout (``metrics/<key>``: ``timestamp value step`` lines), written here
    as MLflow's FileStore writes it (mlflow itself is not installed in the test env)."""
    run = tmp_path / "mlruns" / "0" / "abc123"
    (run / "metrics" / "train").mkdir(parents=True)
    (run / "meta.yaml").write_text("run_id: abc123\n")
    (run / "metrics" / "train" / "lr").write_text(
        "".join(f"{1700000000000 + u} {lr} {u}\n" for u, lr in train("never")))
    (run / "metrics" / "loss").write_text("1700000000000 0.5 0\n")
    report = audited(sched_file, run)
    assert (report.format, report.series) == ("mlflow", "train/lr")
    assert report.cause.kind == "never-stepped"


def test_a_trainer_state_json_streams_its_log_history(sched_file, tmp_path):
    history = [{"epoch": 0.1, "learning_rate": lr, "loss": 1.0, "step": u + 1} for u, lr in train()]
    history.append({"epoch": 1.0, "step": UPDATES, "train_runtime": 1.5})
    state = {"best_metric": None, "global_step": UPDATES, "log_history": history, "max_steps": UPDATES}
    checkpoint = tmp_path / f"checkpoint-{UPDATES}"
    checkpoint.mkdir()
    (checkpoint / "trainer_state.json").write_text(json.dumps(state, indent=2, sort_keys=True))
    for path in (checkpoint, tmp_path, checkpoint / "trainer_state.json"):
        report = audited(sched_file, path)
        assert (report.format, report.series, report.convention.name) == \
            ("hf-trainer-state", "learning_rate", "hf")
        assert report.followed and report.matched == UPDATES
    older = audited(sched_file, checkpoint, convention="hf-before-4.51")
    assert older.cause.kind == "late"


def test_a_trainer_state_json_read_in_tiny_chunks(sched_file, tmp_path, monkeypatch):
    """Chunks of 7 characters: a chunk ends inside every kind of token (numbers like
    ``9.9e-`` included) somewhere in the file, and the reading is the same."""
    from schedlang.audit import hf_state

    history = [{"learning_rate": lr, "loss": 1.0, "step": u + 1} for u, lr in train("stepped")]
    path = tmp_path / "trainer_state.json"
    path.write_text(json.dumps({"global_step": UPDATES, "log_history": history}, indent=2, sort_keys=True))
    whole = audited(sched_file, path).to_json()
    monkeypatch.setattr(hf_state, "CHUNK", 7)
    assert audited(sched_file, path).to_json() == whole
    assert whole["cause"]["kind"] == "stepped"

    text = '{"log_history": [{"learning_rate": 9.913181543675333e-05, "step": 1}, {"step": 2}]}'
    for cut in range(1, len(text)):  # a read that ends at every position (once inside "e-")

        class Pieces:
            parts = [text[:cut], text[cut:]]

            def read(self, size):
                return self.parts.pop(0) if self.parts else ""

        entries = [entry for _, entry in hf_state._JsonStream(Pieces(), "t.json").log_history()]
        assert entries == [{"learning_rate": 9.913181543675333e-05, "step": 1}, {"step": 2}], cut


# -- choosing the series ------------------------------------------------------------------


def test_several_lr_series_stop_and_are_listed(sched_file, tmp_path):
    rows = [(u, lr, head) for (u, lr), (_, head) in zip(train(), train(group=1))]
    path = write_csv(tmp_path / "metrics.csv", rows, ("step", "lr-AdamW/pg1", "lr-AdamW/pg2"))
    with pytest.raises(SchedlangError, match=r"2 series say lr: lr-AdamW/pg1, lr-AdamW/pg2"):
        audited(sched_file, path)
    assert audited(sched_file, path, group=0).followed
    assert audited(sched_file, path, group=1, schedule="lr__head").followed
    assert audited(sched_file, path, tag="lr-AdamW/pg2").cause.schedule == "lr__head"
    with pytest.raises(SchedlangError, match="no series 'lr-Adam/pg1'") as info:
        audited(sched_file, path, tag="lr-Adam/pg1")
    assert "lr-AdamW/pg1" in info.value.hint


def test_a_log_with_another_tag_only(sched_file, tmp_path):
    path = write_csv(tmp_path / "log.csv", [(0, 1.0), (1, 0.5)], ("step", "loss"))
    with pytest.raises(SchedlangError, match="no series whose name says lr"):
        audited(sched_file, path)


# -- hostile logs ---------------------------------------------------------------------------


def test_a_malformed_line_is_located(sched_file, tmp_path):
    path = tmp_path / "log.csv"
    path.write_text("step,lr\n0,0.0\n1,1.25e-4\n2,0.000x\n")
    with pytest.raises(SchedlangError, match="'0.000x' is not a number") as info:
        audited(sched_file, path)
    assert (info.value.line, info.value.column) == (4, 3)
    assert str(info.value).startswith(f"{path}:4:3: error")


def test_nan_and_inf_are_deviations(sched_file, tmp_path):
    rows = train()
    for bad in ("nan", "inf", "-inf", "1e999"):
        changed = rows[:30] + [(30, bad)] + rows[31:]
        report = audited(sched_file, write_csv(tmp_path / "log.csv", changed))
        assert report.first_deviation.step == 30 and math.isinf(report.max_diff)
        assert json.dumps(report.to_json(), allow_nan=False)


def test_huge_values_and_steps(sched_file, tmp_path):
    report = audited(sched_file, write_csv(tmp_path / "log.csv", [(0, 0.0), (1, 1e308), (2**40, 1e-4)]))
    assert report.first_deviation.step == 1 and report.deviations == 1  # 2**40: the held end value
    with pytest.raises(SchedlangError, match="a step is a whole number"):
        audited(sched_file, write_csv(tmp_path / "log.csv", [(0, 0.0), (-3, 0.0)]))
    with pytest.raises(SchedlangError, match="a step is a whole number"):
        audited(sched_file, write_csv(tmp_path / "log.csv", [(0, 0.0), (2**70, 0.0)]))


def test_steps_that_go_back_are_compared_each_at_its_step(sched_file, tmp_path):
    rows = train()
    report = audited(sched_file, write_csv(tmp_path / "log.csv", rows[:50] + rows[20:]))
    assert report.followed and report.matched == UPDATES + 30
    assert "go back 1 time" in report.notes[0]


def test_empty_and_truncated_logs(sched_file, tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(SchedlangError, match="not a log"):
        audited(sched_file, empty)
    header = tmp_path / "header.csv"
    header.write_text("step,lr\n")
    with pytest.raises(SchedlangError, match="no logged point"):
        audited(sched_file, header)
    state = tmp_path / "trainer_state.json"
    state.write_text('{\n  "global_step": 3,\n  "log_history": [\n    {"learning_rate": 0.0, "step": 1},\n'
                     '    {"learning_rate": 0.000')
    with pytest.raises(SchedlangError, match="not JSON|ends") as info:
        audited(sched_file, state)
    assert info.value.line == 5


def test_a_truncated_event_file_reads_what_it_holds(sched_file, tmp_path):
    from torch.utils.tensorboard import SummaryWriter

    with SummaryWriter(str(tmp_path / "tb")) as writer:
        for step, lr in train():
            writer.add_scalar("lr", lr, step)
    event_file = next((tmp_path / "tb").glob("*tfevents*"))
    data = event_file.read_bytes()
    event_file.write_bytes(data[: len(data) - 7])  # a run killed while writing
    report = audited(sched_file, event_file)
    assert report.followed and 0 < report.matched < UPDATES
    garbage = tmp_path / "events.out.tfevents.1.host"
    garbage.write_bytes(b"\x00" * 5 + b"not an event file" * 10)
    with pytest.raises(SchedlangError):
        audited(sched_file, garbage)


def test_a_line_without_end_is_refused_not_read_whole(sched_file, tmp_path):
    path = tmp_path / "log.csv"
    path.write_text("step,lr\n0," + "1" * (2 << 20))
    with pytest.raises(SchedlangError, match="longer than"):
        audited(sched_file, path)


def test_a_long_log_is_read_in_bounded_memory(sched_file, tmp_path):
    """200,000 points: the audit holds a bounded sample, never the log (a list of the points
    alone would be tens of MiB)."""
    schedule = schedlang.compile(FILE, params={"total": 200_000})["lr"]
    path = tmp_path / "big.csv"
    with open(path, "w") as handle:
        handle.write("step,lr\n")
        handle.writelines(f"{u},{schedule(u)!r}\n" for u in range(200_000))
    tracemalloc.start()
    try:
        report = audited(sched_file, path, params={"total": 200_000})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert report.followed and report.matched == 200_000
    assert peak < 8 * 2**20, f"peak {peak / 2**20:.1f} MiB"


@pytest.mark.slow
def test_two_million_rows(sched_file, tmp_path):
    schedule = schedlang.compile(FILE, params={"total": 2_000_000})["lr"]
    path = tmp_path / "big.csv"
    with open(path, "w") as handle:
        handle.write("step,lr\n")
        handle.writelines(f"{u},{schedule(2 * u)!r}\n" for u in range(2_000_000))
    start = time.process_time()
    tracemalloc.start()
    try:
        report = audited(sched_file, path, params={"total": 2_000_000})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (report.cause.kind, report.cause.k) == ("stepped", 2)
    assert peak < 16 * 2**20 and time.process_time() - start < 300


# -- the command line ---------------------------------------------------------------------


def test_cli_exit_codes_text_and_json(sched_file, tmp_path):
    clean = write_csv(tmp_path / "clean.csv", train())
    result = run_cli("audit", sched_file, clean)
    assert result.returncode == 0 and "followed the file at every logged update" in result.stdout
    bad = write_csv(tmp_path / "bad.csv", train("restart"))
    result = run_cli("audit", sched_file, bad)
    assert result.returncode == 1
    assert "left the file at update 25" in result.stdout and "restarted at update 25" in result.stdout
    result = run_cli("audit", sched_file, bad, "--json")
    doc = json.loads(result.stdout)
    assert result.returncode == 1 and doc["schema"] == "schedlang.audit/1"
    assert doc["first_deviation"]["step"] == 25 and doc["cause"]["kind"] == "restarted"
    assert set(doc) >= {"matched", "max_diff", "first_deviation", "cause"}


def test_cli_bad_input_is_exit_2_without_traceback(sched_file, tmp_path):
    for args in (["audit", sched_file, tmp_path / "missing.csv"],
                 ["audit", sched_file, write_csv(tmp_path / "l.csv", train()), "--convention", "hff"],
                 ["audit", sched_file, tmp_path / "l.csv", "--group", "x"],
                 ["audit", sched_file, tmp_path / "l.csv", "--format", "nope"]):
        result = run_cli(*args)
        assert result.returncode == 2, result
        assert "Traceback" not in result.stderr and "error" in result.stderr
    result = run_cli("audit", sched_file, tmp_path / "l.csv", "--convention", "hff", "--json")
    assert json.loads(result.stdout)["schema"] == "schedlang.error/1"


# -- the docs say what the code does -------------------------------------------------------


def test_the_convention_and_reader_tables_are_the_codes():
    from helpers import ROOT

    from schedlang.audit import CONVENTIONS, FORMATS
    from schedlang.audit.causes import KINDS

    text = (ROOT / "docs" / "audit.md").read_text(encoding="utf-8")
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`") and cells[1].lstrip("-").isdigit():
            rows[cells[0].strip("`")] = (int(cells[1]), cells[2])
    assert rows == {c.name: (c.offset, c.what) for c in CONVENTIONS.values()}
    readers = [line.split("|")[1].strip().strip("`") for line in text.splitlines()
               if line.startswith("| `") and line.split("|")[1].strip().strip("`") in FORMATS]
    assert readers == list(FORMATS)  # every reader, in the order they are guessed
    kinds = [line.split("|")[1].strip().strip("`") for line in text.splitlines()
             if line.startswith("| `") and line.split("|")[1].strip().strip("`") in KINDS]
    assert kinds == list(KINDS)  # the catalogue, in the order it is searched


def test_every_json_key_is_documented(sched_file, tmp_path):
    import re

    from helpers import ROOT

    docs = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    section = docs[docs.index("**`audit`**"):]
    documented = set(re.findall(r"`([a-z_]+)`", section))
    doc = audited(sched_file, write_csv(tmp_path / "log.csv", train("stepped", k=4))).to_json()
    keys = set(doc) | set(doc["first_deviation"]) | set(doc["cause"])
    assert keys <= documented, sorted(keys - documented)


def test_progress_on_a_terminal_counts_points(sched_file, tmp_path):
    """On a terminal (a pty here) a long audit shows the points read so far on standard error;
    a pipe gets none (``test_cli_exit_codes_text_and_json`` reads a clean stderr)."""
    import os
    import pty
    import subprocess
    import sys

    from helpers import ROOT

    schedule = schedlang.compile(FILE, params={"total": 100_000})["lr"]
    path = tmp_path / "big.csv"
    path.write_text("step,lr\n" + "".join(f"{u},{schedule(u)!r}\n" for u in range(100_000)))
    leader, follower = pty.openpty()
    env = dict(os.environ, PYTHONPATH=str(ROOT), SCHEDLANG_PROGRESS_DELAY="0")
    env.pop("SCHEDLANG_NO_PROGRESS", None)
    process = subprocess.Popen([sys.executable, "-m", "schedlang", "audit", str(sched_file), str(path),
                                "-D", "total=100000"], stdout=subprocess.PIPE, stderr=follower, env=env)
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    process.wait(timeout=120)
    os.close(leader)
    assert process.returncode == 0
    assert b"auditing" in shown and b" points" in shown, shown[-300:]
