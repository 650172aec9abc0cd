"""``schedlang branch`` and ``resume --branch`` (SPEC §14, "Branches"; docs/runs.md).

The certificate's claims are proofs; these tests check each against the branch's own values
step by step (so a claim that were proven wrongly would fail here), on the step clock and on
the token clock under a batch ramp with a branch point that is not a whole number of batches;
the refusals; the command line; and ``resume --branch`` on a real torch checkpoint.
"""

from __future__ import annotations

import json
import math

import pytest
import torch
from torch.optim import lr_scheduler as tl

import schedlang
from schedlang.cli import main

WSD = "examples/wsd.sched"
TOKENS = """param seq_len: int = 4
batch = stages(3, [6], [300tok])
run = 5000tok
schedule lr = warmup(linear, 10) >> constant(1e-3)
"""


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_step_branch_is_certified_and_is_what_it_claims():
    trunk = schedlang.load(WSD)["lr"]
    b = schedlang.branch(WSD, 20000, "sqrt", 5000, "0")
    assert b.proven and [c.verdict.status for c in b.claims] == ["equivalent"] * 3
    assert (b.step, b.run) == (20000, 25000)
    lr = schedlang.compile(b.source)["lr"]
    assert schedlang.compile(b.source).run == 25000
    assert lr.values(range(0, 20001, 97)) == trunk.values(range(0, 20001, 97))
    assert lr(20000) == trunk(20000) == 1e-3
    assert lr(20001) < 1e-3 and lr(24999) > 0
    assert lr(25000) == 0 and lr(30000) == 0
    assert "run = 25000" in b.source and "for 20000" in b.source and "cooldown(sqrt, 5000, 0)" in b.source
    # the other schedule of the file follows the branch (weight_decay = 0.1 * lr / peak)
    assert schedlang.compile(b.source)["weight_decay"](25000) == 0


def test_a_token_branch_is_made_at_the_first_step_reaching_the_count():
    """1000 tokens is not a whole number of batches: the first step whose consumed-before count
    reaches it is 55 (1020 tokens before it); the branch is cut there, no jump, and cools down
    over 500 tokens to the run's end."""
    prog = schedlang.compile(TOKENS)
    b = schedlang.branch(_source_file(TOKENS), "1000tok", "linear", "500tok", "1e-4")
    assert b.proven
    assert b.step == prog.step_at(tokens=1000) == 55 and b.tokens == prog.tokens_at(55) == 1020
    branched = schedlang.compile(b.source)
    assert branched.run == b.run == branched.step_at(tokens=1020 + 500) == 76
    assert b.run_tokens == branched.tokens_at(76)
    lr, trunk = branched["lr"], prog["lr"]
    assert lr.values(range(56)) == trunk.values(range(56))
    assert lr(55) == trunk(55) == 1e-3 and lr(75) > 1e-4 and lr(76) == 1e-4
    # written on the clock as the file counts it: the cut at the tokens before the step
    assert "for 1020tok" in b.source and "run = 1520tok" in b.source


JUMP = "schedule lr = constant(1e-3) for 100 >> constant(5e-4) for 100 >> constant(2e-4)\n"


@pytest.mark.parametrize("at, start", [(99, 1e-3), (100, 5e-4), (101, 5e-4)])
def test_a_branch_at_the_trunks_own_jump_starts_from_the_trunks_value_there(tmp_path, at, start):
    """The trunk jumps from 1e-3 to 5e-4 at step 100.  Branched at 100 the branch makes that jump
    too (it is the trunk's, between 99 and 100) and cools down from 5e-4, the lr the trunk's run
    gives at 100; at 99 it leaves the trunk before the jump and cools down from 1e-3."""
    trunk = schedlang.compile(JUMP)["lr"]
    b = schedlang.branch(_write(tmp_path, "jump.sched", JUMP), at, "linear", 50, "0")
    assert b.proven and [c.verdict.status for c in b.claims] == ["equivalent"] * 3
    lr = schedlang.compile(b.source)["lr"]
    assert lr.values(range(at)) == trunk.values(range(at))
    assert lr(at) == trunk(at) == start and lr(at + 25) == pytest.approx(start / 2, rel=1e-12)
    assert lr(at + 50) == 0 and "for 0" not in b.source  # the cut holds the trunk's value at the branch point


# OLMo-core's scheduler and batch-size factor in tokens are read after the step (update k reads the
# tokens through it); the batch goes 64 -> 128 -> 256 tokens at 3200 and 12800 tokens
OLMO_AFTER = ("param seq_len: int = 8\nbatch = olmo_core.batch_size_schedule(batch_sizes=[64, 128, 256], "
              "schedule=[0, 3200, 12800], units=\"tokens\")\nrun = 64000tok\n"
              "schedule lr = olmo_core.WSD(lr=3e-4, units=\"tokens\", t_max=64000, warmup=640, decay=6400) "
              "* olmo_core.batch_size_lr_factor(units=\"tokens\")\n")
SQRT2 = math.sqrt(2)


@pytest.mark.parametrize("at, step, before, start, held", [
    ("12800tok", 125, 3e-4 * SQRT2, 6e-4, "constant(0.0006) for 0tok"),  # the factor doubles at the change
    ("3200tok", 50, 3e-4, 3e-4 * SQRT2, "constant(3 * sqrt(2) / 10000) for 0tok"),
    ("320tok", 5, 1.5e-4, 1.8e-4, "constant(0.00018) for 0tok"),  # inside the warmup
])
def test_a_branch_of_a_trunk_read_after_its_step_starts_from_the_trunks_value_at_the_branch_step(
        tmp_path, at, step, before, start, held):
    """Cut at the tokens before the branch step, a trunk read after its step ends with the value
    of the update before it; where the trunk's lr changes at the branch step the cooldown would
    start from that and jump (the claim was disproven).  The branch holds the trunk's exact
    value at the branch step for no step before the cooldown: proven, no jump, and its values
    are the trunk's before and at the branch step and the cooldown's from it after."""
    prog = schedlang.compile(OLMO_AFTER)
    trunk = prog["lr"]
    b = schedlang.branch(_write(tmp_path, "olmo.sched", OLMO_AFTER), at, "linear", "19200tok", "3e-5")
    assert b.proven and [c.verdict.status for c in b.claims] == ["equivalent"] * 3, \
        [str(c.verdict) for c in b.claims]
    assert b.step == step and held in b.source and "cooldown(linear, 19200tok, 3e-5)" in b.source
    assert f"# branch of olmo.sched at {at}: cooldown(linear, 19200tok, 3e-5) (schedlang branch)" in b.source
    branched = schedlang.compile(b.source)
    lr = branched["lr"]
    assert lr.values(range(step)) == trunk.values(range(step))
    assert trunk(step - 1) == pytest.approx(before, rel=1e-15) != trunk(step)
    assert lr(step) == trunk(step) == pytest.approx(start, rel=1e-15)
    a, tokens = start, branched.tokens_at(step + 1) - branched.tokens_at(step)
    assert lr(step + 1) == pytest.approx(a + (3e-5 - a) * tokens / 19200, rel=1e-12)
    assert lr(b.run) == 3e-5 and b.run == branched.step_at(tokens=b.tokens + 19200)


def _source_file(text):
    import tempfile
    from pathlib import Path

    path = Path(tempfile.mkdtemp()) / "trunk.sched"
    path.write_text(text)
    return path


def test_a_step_branch_point_in_a_token_file_with_a_token_cooldown():
    b = schedlang.branch(_source_file(TOKENS), 40, "cosine", "500tok", "1e-4")
    prog = schedlang.compile(TOKENS)
    assert b.proven and b.step == 40 and b.tokens == prog.tokens_at(40)
    assert schedlang.compile(b.source).run == prog.step_at(tokens=prog.tokens_at(40) + 500)


def test_refused_past_the_trunks_run(capsys):
    with pytest.raises(schedlang.SchedlangError, match="past the trunk's run, which ends at step 221"):
        schedlang.branch(_source_file(TOKENS), 300, "linear", 10, "0")
    code, out, err = _run(capsys, "branch", _source_file(TOKENS), "--at", "6000tok", "--cooldown",
                          "linear:10", "--to", "0")
    assert code == 2 and "past the trunk's run" in err and "Traceback" not in err


def test_refused_when_the_trunks_value_is_not_known_exactly(tmp_path):
    path = _write(tmp_path, "free.sched",
                  "param peak: float\nschedule lr = warmup(linear, 10) >> constant(peak)\n")
    with pytest.raises(schedlang.SchedlangError, match="cannot be known exactly.*'peak'"):
        schedlang.branch(path, 100, "linear", 10, "0")
    assert schedlang.branch(path, 100, "linear", 10, "0", params={"peak": "1e-3"}).proven


def test_refused_bad_arguments(tmp_path, capsys):
    with pytest.raises(schedlang.SchedlangError, match="unknown cooldown shape 'minus_sqrt'.*") as err:
        schedlang.branch(WSD, 100, "minus_sqrt", 10, "0")
    assert "'sqrt'" in err.value.hint
    with pytest.raises(schedlang.SchedlangError, match="whole"):
        schedlang.branch(WSD, "10.5", "sqrt", 10, "0")
    code, _, err = _run(capsys, "branch", WSD, "--at", "100", "--cooldown", "sqrt", "--to", "0")
    assert code == 2 and "SHAPE:N" in err


def test_the_command_line(tmp_path, capsys):
    out_file = tmp_path / "branch.sched"
    code, out, err = _run(capsys, "branch", WSD, "--at", "20000", "--cooldown", "sqrt:5000", "--to", "0",
                          "-o", out_file)
    assert code == 0, err
    assert "ok equal to the trunk at every step before 20000" in out and "ok no jump at step 20000" in out
    assert "ok reaches 0 at step 25000, the run's end" in out
    assert schedlang.load(out_file).run == 25000
    code, out, _ = _run(capsys, "branch", _source_file(TOKENS), "--at", "1000tok", "--cooldown",
                        "linear:500tok", "--to", "1e-4", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["schema"] == "schedlang.branch/1" and doc["proven"]
    assert (doc["step"], doc["tokens"], doc["run"]) == (55, 1020, 76)
    assert [c["verdict"] for c in doc["claims"]] == ["equivalent"] * 3


# -- resume --branch on a real torch checkpoint ------------------------------------------------

OLD = "schedule lr = warmup(linear, 10, 0.01) >> constant(0.1)\n"


def _checkpoint(tmp_path, steps=30):
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
    sched = tl.LinearLR(opt, start_factor=0.1, total_iters=10)
    for _ in range(steps):
        opt.step()
        sched.step()
    path = tmp_path / "state.pt"
    torch.save(sched.state_dict(), path)
    return path


@pytest.mark.parametrize("new, code, words", [
    ("(warmup(linear, 10, 0.01) >> constant(0.1)) for 50 >> cooldown(sqrt, 20, 0)", 0,
     "branch:   at step 50"),
    (OLD, 0, "branch:   none"),
    ("(warmup(linear, 10, 0.01) >> constant(0.1)) for 50 >> constant(0.01)", 1, "jump:     at step 50"),
    ("(warmup(linear, 10, 0.01) >> constant(0.1)) for 20 >> cooldown(linear, 40, 0)", 1,
     "jump:     at step 30: NEW leaves OLD at step 20, before the checkpoint"),
], ids=["cooldown", "same", "jump", "before-checkpoint"])
def test_resume_branch(tmp_path, capsys, new, code, words):
    state = _checkpoint(tmp_path)
    old = _write(tmp_path, "old.sched", OLD)
    new_path = _write(tmp_path, "new.sched", f"schedule lr = {new}\n" if "schedule" not in new else new)
    got, out, err = _run(capsys, "resume", state, new_path, "--was", old, "--branch")
    assert got == code, out + err
    assert words in out
    got, out, _ = _run(capsys, "resume", state, new_path, "--was", old, "--branch", "--json")
    doc = json.loads(out)
    assert got == code and doc["branch"]["verdict"] == {0: ("branch", "continues"), 1: ("jump",)}[code][
        0 if "none" not in words else 1]


@pytest.mark.parametrize("trunk, at, shape, n, to", [
    ("examples/wsd_trunk.sched", 80000, "sqrt", 20000, "0"),          # Hägele et al. 2024
    ("examples/wsd_trunk.sched", 90000, "exp", 10000, "1e-4"),        # MiniCPM
    ("examples/olmo2_trunk.sched", "4e12tok", "linear", "50e9tok", "0"),  # OLMo 2
], ids=["hagele", "minicpm", "olmo2"])
def test_the_recipes_of_docs_runs_are_certified(trunk, at, shape, n, to):
    b = schedlang.branch(trunk, at, shape, n, to)
    assert b.proven
    page = open("docs/runs.md", encoding="utf-8").read()
    assert f"at step {b.run}, the run's end" in page or f"step {b.run}, the run's end" in page


def test_the_command_lines_formats_are_the_writers():
    from schedlang.branches.configs import FORMATS
    from schedlang.cli.commands import _parser

    parser = _parser()
    sub = parser._subparsers._group_actions[0].choices["branch"]
    choices = next(a.choices for a in sub._actions if a.dest == "format")
    assert tuple(choices) == FORMATS == ("megatron-args", "hf-args", "torchtitan-toml", "olmo-core-json")


def test_format_refusals_on_the_token_clock():
    trunk = "examples/olmo2_trunk.sched"
    with pytest.raises(schedlang.SchedlangError, match="inside a batch of 4194304tok: hf-args counts") as err:
        schedlang.branch(trunk, "4e12tok", "linear", "50e9tok", "0", format="hf-args")
    assert "49996103680tok or 50000297984tok" in err.value.hint
    assert schedlang.branch(trunk, "4e12tok", "linear", "49996103680tok", "0", format="hf-args").proven
    with pytest.raises(schedlang.SchedlangError, match="the cooldown's length in tok"):
        schedlang.branch(trunk, "4e12tok", "linear", "500", "0", format="torchtitan-toml")
    with pytest.raises(schedlang.SchedlangError, match="not a whole number of 4096-token samples"):
        schedlang.branch("examples/olmo2_trunk.sched", "4e12tok", "linear", "50e9tok", "0",
                         format="megatron-args")
    with pytest.raises(schedlang.SchedlangError, match="end inside the batch") as err:
        schedlang.branch("examples/olmo2_trunk.sched", "4e12tok", "linear", "12207031sp", "0",
                         format="megatron-args")
    assert "12206080sp or 12207104sp" in err.value.hint
    b = schedlang.branch("examples/olmo2_trunk.sched", "4e12tok", "linear", "12206080sp", "0",
                         format="megatron-args")
    assert b.proven and "--lr-wsd-decay-samples 12206080" in b.config


def test_a_trunk_read_from_another_frameworks_config(tmp_path):
    """An HF run's arguments as the trunk: read as `schedlang import` reads them."""
    config = _write(tmp_path, "trunk.json", json.dumps({
        "lr_scheduler_type": "constant_with_warmup", "learning_rate": 3e-4, "warmup_steps": 100,
        "max_steps": 5000}))
    b = schedlang.branch(config, 4000, "sqrt", 1000, "0")
    assert b.proven and b.run == 5000
    from schedlang.importers import import_file

    trunk = schedlang.compile(import_file(config))["lr"]
    lr = schedlang.compile(b.source)["lr"]
    assert lr.values(range(0, 4000, 50)) == trunk.values(range(0, 4000, 50))
    # equal exactly at 4000 (the claim); the generated float code's cancellation-free form of
    # a - c * sqrt(t) is within an ulp there
    assert lr(4000) == pytest.approx(trunk(4000), rel=1e-15)


def test_a_branch_at_step_0_and_at_the_trunks_end():
    b = schedlang.branch("examples/wsd_trunk.sched", 0, "linear", 10, "0")
    assert b.proven and b.claims[0].verdict.method == "no step before 0" and b.run == 10
    assert schedlang.branch("examples/wsd_trunk.sched", 200_000, "linear", 10, "0").proven


OLMO_CALLBACK = ("param seq_len: int = 8\nbatch = olmo_core.batch_size_schedule(batch_sizes=[64, 128, 256], "
                 "schedule=[0, 3200, 12800], units=\"tokens\")\nrun = 64000tok\n"
                 "schedule lr = olmo_core.WSD(lr=3e-4, units=\"tokens\", t_max=64000, warmup=640, "
                 "decay=6400) * olmo_core.batch_size_lr_factor(units=\"tokens\")\n")


def test_olmo_core_refusals_under_its_batch_callback_are_located(tmp_path, capsys):
    """What OLMo-core cannot resume under its batch-size callback is refused at the trunk's line,
    exit 2, each hint a branch that is written (tests/frameworks/test_branch_configs.py runs them)."""
    path = _write(tmp_path, "ramp.sched", OLMO_CALLBACK)
    code, _, err = _run(capsys, "branch", path, "--at", "1000tok", "--cooldown", "cosine:19200tok", "--to",
                        "3e-5", "--format", "olmo-core-json")
    assert code == 2 and f"{path}:2:9: error: a cosine cooldown across a batch change" in err and "^" in err
    assert "--at 13056tok (step 126) or later" in err
    code, _, err = _run(capsys, "branch", path, "--at", "6400tok", "--cooldown", "linear:19200tok", "--to",
                        "3e-5", "--format", "olmo-core-json")
    assert code == 2 and f"{path}:4:15: error: the lr at the branch point is 3*sqrt(2)/10000" in err
    assert "square ratios" in err
    code, _, err = _run(capsys, "branch", path, "--at", "1000tok", "--cooldown", "linear:64576tok", "--to",
                        "3e-5", "--format", "olmo-core-json")  # 64576 = 64 * 1009: no grid of decimals
    assert code == 2 and f"{path}:2:9: error: the linear cooldown's values" in err
    assert "64000tok or 65536tok" in err
    for n in ("64000tok", "65536tok"):
        assert schedlang.branch(path, "1000tok", "linear", n, "3e-5", format="olmo-core-json").proven
    for at, shape in (("1000tok", "linear"), ("13056tok", "cosine"), ("25600tok", "linear")):
        b = schedlang.branch(path, at, shape, "19200tok", "3e-5", format="olmo-core-json")
        callback = json.loads(b.config)["trainer"]["callbacks"]["batchwup"]
        assert b.proven and callback["batch_sizes"] == [64, 128, 256]
