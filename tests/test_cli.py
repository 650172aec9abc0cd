"""The command line as a user runs it: output, exit codes, no tracebacks."""

import subprocess
import sys

import pytest
from helpers import ROOT, run_cli


def test_eval_issue_example():
    result = run_cli("eval", "examples/warmup_cosine.sched", "--steps", "0:1001:250", "--csv")
    assert result.returncode == 0, result.stderr
    rows = [line.split(",") for line in result.stdout.strip().splitlines()]
    assert rows[0] == ["step", "lr"]
    got = {int(s): float(v) for s, v in rows[1:]}
    assert got == pytest.approx({0: 0.0, 250: 5e-4, 500: 1e-3, 750: 5.5e-4, 1000: 1e-4}, rel=1e-12)


def test_eval_table_and_defines():
    result = run_cli("eval", "examples/gpt_pretrain.sched", "-D", "total=4000", "-D", "warmup=1000",
                     "--steps", "0:5000:1000")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["step", "lr", "weight_decay"]
    assert [line.split()[0] for line in lines[1:]] == ["0", "1000", "2000", "3000", "4000"]
    assert float(lines[2].split()[1]) == pytest.approx(6e-4)
    assert float(lines[5].split()[1]) == pytest.approx(6e-5)


def test_check_summary():
    result = run_cli("check", "examples/gpt_pretrain.sched")
    assert result.returncode == 0, result.stderr
    assert "schedule lr: 100000 steps, start 0, end 6e-05, min 0, max 0.0006" in result.stdout
    assert "param total: int = 100000" in result.stdout


@pytest.mark.parametrize("args, message", [
    (["check", "no/such/file.sched"], "cannot read"),
    (["eval", "examples/gpt_pretrain.sched", "-D", "totl=5"], "no parameter 'totl'"),
    (["eval", "examples/gpt_pretrain.sched", "-D", "total=abc"], "must be a number"),
    (["eval", "examples/gpt_pretrain.sched", "-D", "total"], "NAME=VALUE"),
    (["eval", "examples/gpt_pretrain.sched", "-D", "warmup=10.5"], "is an int"),
    (["eval", "examples/warmup_cosine.sched", "--steps", "a:b"], "--steps"),
    (["eval", "examples/warmup_cosine.sched", "--schedule", "wd"], "no schedule named 'wd'"),
    (["frobnicate"], "invalid choice"),
])
def test_bad_usage_exits_2_without_traceback(args, message):
    result = run_cli(*args)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_required_parameter_unbound(tmp_path):
    path = tmp_path / "p.sched"
    path.write_text("param total: int\nschedule lr = cosine(1, 0, total)\n")
    result = run_cli("check", path)
    assert result.returncode == 0
    assert "symbolic (bind total" in result.stdout
    result = run_cli("eval", path)
    assert result.returncode == 2
    assert "needs a value for parameter 'total'" in result.stderr
    assert "-D total=" in result.stderr
    assert run_cli("eval", path, "-D", "total=10", "--steps", "10").stdout.split()[-1] == "0"


def test_plot_terminal_and_file(tmp_path):
    result = run_cli("plot", "examples/wsd.sched")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "examples/wsd.sched" and "lr" in lines and "weight_decay" in lines
    out = tmp_path / "wsd.png"
    result = run_cli("plot", "examples/wsd.sched", "-o", out, "--log", "--steps", "1:50000:50")
    assert result.returncode == 0, result.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_check_does_not_import_torch():
    code = ("import sys; from schedlang.cli import main; rc = main(['check', 'examples/gpt_pretrain.sched']);"
            "assert 'torch' not in sys.modules, 'torch imported'; raise SystemExit(rc)")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_eval_prints_the_reference_digits_at_any_length(tmp_path):
    # 100,000 steps once switched eval to the torch path, which printed other last digits
    import schedlang

    path = tmp_path / "w.sched"
    path.write_text("warmup(linear, 1000) >> cosine(1.5e-6, 1e-7, 99_000)\n")
    result = run_cli("eval", path, "--steps", "0:100000:1", "--csv")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()[1:]
    lr = schedlang.load(path)["lr"]
    assert len(lines) == 100_000
    for k in (0, 999, 1000, 1001, 50_000, 99_999):
        assert lines[k] == f"{k},{lr(k)!r}"
