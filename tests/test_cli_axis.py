"""``eval`` and ``plot`` with ``--axis samples|tokens`` (cli/axis.py): positions on the count
axis, each read at the step that trains it, so runs with other batch schedules line up."""

from __future__ import annotations

import json

import pytest
from helpers import run_cli

import schedlang
from schedlang.cli import main
from schedlang.cli.plot import panels

CONSTANT = """\
param seq_len: int = 1000
batch = 8
schedule lr = linear(0, 1e-3, 80000tok) >> cosine(1e-3, 1e-4, 800000tok)
"""
RAMP = CONSTANT.replace("batch = 8", "batch = stages(4, [16], [200000tok])")
STEPS = RAMP.replace("80000tok", "10").replace("800000tok", "100")  # the #2609 trap


@pytest.fixture
def files(tmp_path):
    out = {}
    for name, text in (("constant", CONSTANT), ("ramp", RAMP), ("steps", STEPS)):
        out[name] = tmp_path / f"{name}.sched"
        out[name].write_text(text)
    return out


def test_eval_on_the_token_axis_reads_the_step_that_trains_each_token(files, capsys):
    assert main(["eval", str(files["ramp"]), "--axis", "tokens", "--steps", "0:400001:3999", "--csv"]) == 0
    rows = [line.split(",") for line in capsys.readouterr().out.splitlines()]
    assert rows[0] == ["tokens", "step", "lr"]
    prog = schedlang.compile(RAMP)
    for x, k, value in rows[1:]:
        x, k = int(x), int(k)
        assert prog.tokens_at(k) <= x < prog.tokens_at(k + 1)  # step k trains token x
        assert float(value) == prog["lr"](k)
    assert len({int(k) for _, k, _ in rows[1:]}) > 50


def test_token_schedules_of_two_batch_schedules_agree_on_the_token_axis(files):
    """The same token-clock text under a constant batch and a ramp: equal wherever both runs
    have a step starting at the same token; the step-counted twin is not."""
    constant, ramp, steps = (schedlang.load(files[n]) for n in ("constant", "ramp", "steps"))
    starts = [ramp.tokens_at(k) for k in range(90)]  # tokens where both runs start a step:
    both = [x for x in starts if constant.tokens_at(constant.step_at(tokens=x)) == x]
    assert len(both) > 20
    [a, b] = panels([("c", constant), ("r", ramp)], both, axis="tokens")[:1][0].lines
    assert a[1] == pytest.approx(b[1], rel=1e-12, abs=1e-15)
    [a, c] = panels([("c", constant), ("s", steps)], both, axis="tokens")[:1][0].lines
    assert max(abs(x - y) for x, y in zip(a[1], c[1])) > 1e-4


def test_eval_json_and_the_default_range_on_the_sample_axis(files):
    result = run_cli("eval", files["constant"], "--axis", "samples", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["axis"] == "samples" and len(data["samples"]) == len(data["steps"]) == 11
    prog = schedlang.load(files["constant"])
    assert data["samples"][-1] >= prog.samples_at(prog["lr"].duration) - 8
    assert data["steps"] == [x // 8 for x in data["samples"]]


def test_plot_on_the_token_axis_labels_and_overlays(files, tmp_path):
    result = run_cli("plot", files["constant"], files["steps"], "--axis", "tokens")
    assert result.returncode == 0, result.stderr
    assert "(x: tokens consumed)" in result.stdout and "lr: A - B" in result.stdout
    out = tmp_path / "p.svg"
    result = run_cli("plot", files["constant"], files["ramp"], "--axis", "tokens", "-o", out)
    assert result.returncode == 0 and "tokens consumed" in out.read_text()


@pytest.mark.parametrize("text, axis, message", [
    ("schedule lr = 1e-3\n", "tokens", "has no batch schedule"),
    ("batch = 8\nschedule lr = 1e-3\n", "tokens", "how many tokens a sample holds"),
])
def test_a_count_axis_needs_the_run_s_batch(tmp_path, text, axis, message):
    path = tmp_path / "a.sched"
    path.write_text(text)
    for command in ("eval", "plot"):
        result = run_cli(command, path, "--axis", axis)
        assert result.returncode == 2 and message in result.stderr and "hint:" in result.stderr
        assert "Traceback" not in result.stderr
        # located at the --axis argument, with a caret (issue 39 item 14: no file:line:col)
        head, shown, caret = result.stderr.splitlines()[:3]
        at = shown.index(axis, shown.index("--axis"))  # where the value was typed
        text = shown[shown.index("| ") + 2:]
        assert head.startswith(f"<command line>:1:{text.index(axis, text.index('--axis')) + 1}: error:")
        assert caret.index("^") == at and caret.rstrip().endswith("^" * len(axis)), result.stderr
