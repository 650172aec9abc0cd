"""The everyday command line (issue 12): --version, plot overlays, default ranges, progress,
and each friction a new user hit, answered by a fix or a diagnostic that points at it."""

import os
import pty
import subprocess
import sys

import pytest
import tomllib
from helpers import ROOT, run_cli

import schedlang
from schedlang.cli import main
from schedlang.cli.analysis import summarise
from schedlang.cli.ranges import eval_steps, horizon, plot_steps


def compiled(source, name="lr"):
    return schedlang.compile(source)[name]


# -- --version ---------------------------------------------------------------------------


def test_version_has_one_place(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out == f"schedlang {schedlang.__version__}\n"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and project["project"]["dynamic"] == ["version"]
    assert project["tool"]["hatch"]["version"]["path"] == "schedlang/__init__.py"


# -- default ranges ----------------------------------------------------------------------


@pytest.mark.parametrize("source, end", [
    ("linear(1, 0, 700)", 700),                                    # finite: its duration
    ("noam(512, 4000)", 39_990),                                   # warmup and a long decay
    ("warmup(linear, 4000) >> rsqrt_decay(7e-4, 4000)", 40_000),
    ("cosine_restarts(0.05, 1e-5, 1000, mult=2)", 15_000),         # four cycles
    ("cosine_restarts(0.05, 1e-5, 1000)", 4000),
    ("cyclic(0.1, 1, 50, 150)", 800),
    ("step(0.1, 0.5, 1000)", 4500),                                # five levels, the last half
    ("warmup(linear, 100) >> step(1, 0.1, 1000)", 4600),
    ("multistep(1, 0.1, [30, 60, 80])", 100),                      # the last level a quarter
    ("constant(3)", None),
])
def test_horizon(source, end):
    assert horizon(compiled(source)) == end


def test_default_ranges_show_the_shape():
    noam = compiled("noam(512, 4000)").program
    assert len(eval_steps(noam)) == 11 and eval_steps(noam)[-1] >= 39_990
    steps = plot_steps(noam)
    assert steps[-1] >= 1.05 * 39_990 - steps.step and len(steps) <= 801
    # a step decay's last level is many plot points, not one
    program = schedlang.load(ROOT / "examples" / "step_decay.sched")
    lr = program["lr"]
    steps = plot_steps(program)
    last_level = [s for s in steps if s >= 40_000]
    assert len(last_level) > len(steps) // 5
    assert len(set(lr.values(last_level))) == 1
    # SGDR shows several cycles: the restarts at 1000, 3000, 7000 are all in range
    sgdr = schedlang.load(ROOT / "examples" / "sgdr.sched")
    values = sgdr["lr"].values(plot_steps(sgdr))
    restarts = sum(1 for a, b in zip(values, values[1:]) if b > a + 0.01)
    assert restarts >= 4


def test_eval_prints_what_its_help_says(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    with pytest.raises(SystemExit):
        main(["eval", "--help"])
    assert "default: 11 evenly spaced steps" in " ".join(capsys.readouterr().out.split())
    for example in ("examples/wsd.sched", "examples/sgdr.sched", "examples/step_decay.sched"):
        assert main(["eval", example]) == 0
        assert len(capsys.readouterr().out.splitlines()) == 1 + 11


# -- plot --------------------------------------------------------------------------------


def test_terminal_plot_has_a_panel_and_axis_per_schedule(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(["plot", "examples/wsd.sched"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "examples/wsd.sched"
    assert "lr" in out and "weight_decay" in out
    lr_panel = out[out.index("lr") + 1:out.index("weight_decay")]
    assert lr_panel[0].split("|")[0].strip() == "0.001"  # lr's own axis, not weight_decay's 0.1
    assert sum(row.count("*") for row in lr_panel) > 60  # drawn across, not flattened


def test_overlay_two_files_with_difference(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(["plot", "examples/warmup_cosine.sched", "examples/sgdr.sched"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "A: examples/warmup_cosine.sched   B: examples/sgdr.sched"
    assert "* examples/warmup_cosine.sched   o examples/sgdr.sched" in out
    assert "lr: A - B" in out


def test_schedule_choice_and_unknown_schedule(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(["plot", "examples/wsd.sched", "examples/gpt_pretrain.sched", "--schedule",
                 "weight_decay"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "weight_decay" in out and "lr" not in out and "weight_decay: A - B" in out
    assert main(["plot", "examples/wsd.sched", "--schedule", "momentum"]) == 2
    assert "no schedule named 'momentum' in examples/wsd.sched" in capsys.readouterr().err


def test_log_skips_non_positive_values_with_a_note(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(["plot", "examples/warmup_cosine.sched", "--log"]) == 0
    captured = capsys.readouterr()
    assert "(log scale)" in captured.out
    assert captured.err.startswith("note: --log leaves out 1 of ")
    assert "where lr of examples/warmup_cosine.sched is <= 0 (the first at step 0)" in captured.err


def test_plot_file_overlay_with_title(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    monkeypatch.chdir(ROOT)
    out = tmp_path / "compare.png"
    result = run_cli("plot", "examples/warmup_cosine.sched", "examples/sgdr.sched", "-o", out, "--log")
    assert result.returncode == 0, result.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "note: --log leaves out" in result.stderr


def test_plot_panels_values_and_difference():
    from schedlang.cli.plot import panels

    a, b = schedlang.compile("linear(1, 0, 10)"), schedlang.compile("constant(0.5)")
    found = panels([("a", a), ("b", b)], range(0, 11, 5))
    assert [p.title for p in found] == ["lr", "lr: A - B"]
    assert found[1].lines[0][1] == pytest.approx([0.5, 0.0, -0.5])


# -- progress ----------------------------------------------------------------------------


def _run_with_terminal_stderr(*args):
    """Run the CLI with standard error on a pseudo-terminal; returns (code, stdout, terminal text)."""
    master, slave = pty.openpty()
    env = dict(os.environ, PYTHONPATH=str(ROOT), SCHEDLANG_PROGRESS_DELAY="0")
    env.pop("SCHEDLANG_NO_PROGRESS", None)
    process = subprocess.Popen([sys.executable, "-m", "schedlang", *args], cwd=ROOT, env=env,
                               stdout=subprocess.PIPE, stderr=slave, text=True)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    stdout = process.stdout.read()
    code = process.wait(timeout=120)
    os.close(master)
    return code, stdout, b"".join(chunks).decode(errors="replace")


def test_progress_on_a_terminal_only():
    code, stdout, terminal = _run_with_terminal_stderr(
        "verify", "examples/wsd.sched", "-e", "warmup(linear, 1000) >> constant(1e-3, 39000) "
        ">> linear(1e-3, 0, 10000)")
    assert code == 0 and "equivalent" in stdout
    assert "verifying examples/wsd.sched" in terminal or "proving examples/wsd.sched" in terminal
    assert terminal.endswith("\r\x1b[K")  # erased when done
    result = run_cli("verify", "examples/wsd.sched", "-e", "warmup(linear, 1000) >> constant(1e-3, 39000) "
                     ">> linear(1e-3, 0, 10000)")
    assert result.returncode == 0 and result.stderr == ""


# -- the frictions of issue 12 -----------------------------------------------------------


def test_noam_spelled_with_inverse_sqrt_warns_at_the_segment(capsys, tmp_path):
    path = tmp_path / "noam.sched"
    path.write_text("warmup(linear, 4000) >> inverse_sqrt(7e-4, 4000)\n")
    assert main(["check", str(path)]) == 0
    err = capsys.readouterr().err
    assert f"{path}:1:25: warning: schedule 'lr' holds 0.0007 for 4000 steps after its warmup ends" in err
    assert "rsqrt_decay(v0, n)" in err and "noam(d_model, n)" in err
    assert main(["check", str(path), "--strict"]) == 2


@pytest.mark.parametrize("source", [
    "warmup(linear, 4000) >> rsqrt_decay(7e-4, 4000)",
    "noam(512, 4000)",
    "warmup(linear, 100) >> constant(1e-3, 1000) >> cosine(1e-3, 0, 1000)",  # WSD: flat by design
    "warmup(linear, 100) >> step(1e-3, 0.5, 1000)",                          # flat between drops
    "warmup(linear, 100) >> multistep(1e-3, 0.5, [1000, 2000])",
    "warmup(linear, 100) >> cosine(1e-3, 0, 1000)",
])
def test_natural_spellings_are_quiet(source):
    assert summarise(schedlang.compile(source)).warnings == []


def test_rsqrt_decay_is_the_noam_decay_in_the_global_step():
    lr = compiled("warmup(linear, 4000) >> rsqrt_decay(7e-4, 4000)")
    for step in (4000, 4001, 9000, 160_000):
        assert lr(step) == pytest.approx(7e-4 * (4000 / step) ** 0.5, rel=1e-12)
    assert schedlang.equivalent(lr, "warmup(linear, 4000) >> 7e-4 * sqrt(4000 / (t + 4000))")


def test_verify_says_which_side_a_define_binds(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    code = main(["verify", "examples/gpt_pretrain.sched", "-e",
                 "warmup(linear, 2000) >> cosine(6e-4, 6e-5, 8000)", "-D", "total=10000"])
    captured = capsys.readouterr()
    assert code == 0
    assert "-D total=10000: binds 'total' in A only" in captured.out
    assert "<command line>:1:" in captured.err and "warning: -D total=10000 binds 'total' in A only: B" in \
        captured.err
    code = main(["verify", "examples/gpt_pretrain.sched", "examples/gpt_pretrain.sched", "-D", "total=10000"])
    captured = capsys.readouterr()
    assert code == 0 and "binds 'total' in A and B\n" in captured.out and "warning" not in captured.err
    assert main(["verify", "examples/gpt_pretrain.sched", "-e", "linear(1, 0, 5)", "-D", "totl=5"]) == 2
    assert "neither schedule has a parameter 'totl'" in capsys.readouterr().err


def test_show_latex_ends_with_a_newline(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(["show", "--latex", "examples/wsd.sched"]) == 0
    out = capsys.readouterr().out
    assert out.endswith("\n") and not out.endswith("\n\n")


def test_lr_budget_is_defined_in_the_docs(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(["check", "examples/gpt_pretrain.sched"]) == 0
    assert ", lr budget " in capsys.readouterr().out
    docs = (ROOT / "docs" / "cli.md").read_text()
    assert "**`lr budget`**" in docs and "f(0) + f(1) + ... + f(n-1)" in docs
    lr = schedlang.load(ROOT / "examples" / "warmup_cosine.sched")["lr"]
    summary = summarise(lr.program).summaries[0]
    assert summary.budget == pytest.approx(sum(lr.values(range(1000))), rel=1e-12)


def test_check_json_and_fmt_stay_light():
    code = ("import sys; from schedlang.cli import main;"
            "rc = main(['check', 'examples/gpt_pretrain.sched', '--json']);"
            "rc |= main(['fmt', '--check', 'examples']);"
            "bad = [m for m in ('torch', 'jax', 'yaml', 'matplotlib', 'pygls', 'lsprotocol', 'regex')"
            " if m in sys.modules];"
            "assert not bad, bad; raise SystemExit(rc)")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert result.returncode == 0, result.stderr
