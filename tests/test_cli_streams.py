"""Every exit status is true (issue 28): 0 and 1 are verdicts, so a crash, or an output that was
never written (standard output closed with ``>&-``, or on ``/dev/full``), ends with 2 and one
line on standard error, never a traceback; a reader that went away ends with 141, quietly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from schedlang.cli import commands, main

ROOT = Path(__file__).resolve().parents[1]
LINEAR = "schedule lr = linear(1, 0, 100)\n"


def _commands(tmp: Path) -> dict[str, list[str]]:
    """One command line per subcommand (and the parser's own output), each writing to stdout."""
    sched, other = tmp / "a.sched", tmp / "b.sched"
    state = tmp / "state.json"  # not a checkpoint: resume's error goes through --json output
    config = tmp / "c.json"
    return {
        "check": ["check", sched], "check --json": ["check", "--json", sched],
        "eval": ["eval", sched], "eval --csv": ["eval", "--csv", sched],
        "eval --json": ["eval", "--json", sched], "plot": ["plot", sched],
        "fmt -": ["fmt", "-"], "fmt --diff": ["fmt", "--diff", tmp / "u.sched"],
        "compile": ["compile", sched], "verify equal": ["verify", sched, sched],
        "verify different": ["verify", sched, other],
        "verify --json": ["verify", "--json", sched, other], "show": ["show", sched],
        "import": ["import", config, "--format", "deepspeed-json"],
        "import --json": ["import", "--json", config, "--format", "deepspeed-json"],
        "resume --json": ["resume", "--json", state, sched],
        "audit": ["audit", sched, tmp / "lr.csv"], "audit --json": ["audit", "--json", sched, tmp / "lr.csv"],
        "export": ["export", sched],
        "error --json": ["check", "--json", tmp / "missing.sched"],
        "--help": ["--help"], "--version": ["--version"],
    }


def _run(args, stdout, stdin_text=LINEAR):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "schedlang", *map(str, args)], stdout=stdout,
                          input=stdin_text, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT,
                          timeout=120)


def _closed_stdout(args):
    """The command started with file descriptor 1 closed, as ``schedlang ... >&-`` does."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    shell = " ".join(_quote(a) for a in [sys.executable, "-m", "schedlang", *map(str, args)])
    return subprocess.run(["bash", "-c", f"{shell} >&-"], input=LINEAR, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT, timeout=120)


def _quote(text) -> str:
    return "'" + str(text).replace("'", "'\\''") + "'"


@pytest.fixture(scope="module")
def command_lines(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("streams")
    (tmp / "a.sched").write_text(LINEAR)
    (tmp / "b.sched").write_text("schedule lr = linear(1, 0, 200)\n")
    (tmp / "u.sched").write_text("schedule   lr=linear(1,0,100)\n")  # not in the canonical layout
    (tmp / "state.json").write_text("{}")
    (tmp / "lr.csv").write_text("step,lr\n0,1.0\n50,0.5\n")  # a run that followed a.sched
    (tmp / "c.json").write_text('{"scheduler": {"type": "WarmupLR", "params": {"warmup_num_steps": 10, '
                                '"warmup_max_lr": 0.1}}}')
    return _commands(tmp)


@pytest.mark.parametrize("name", list(_commands(Path("/nonexistent"))))
@pytest.mark.parametrize("where", ["closed", "/dev/full"])
def test_every_command_with_stdout_lost_exits_2_without_a_traceback(command_lines, name, where):
    if where == "/dev/full" and not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    args = command_lines[name]
    if where == "closed":
        result = _closed_stdout(args)
    else:
        with open("/dev/full", "w") as full:
            result = _run(args, full)
    assert "Traceback" not in result.stderr and "Exception ignored" not in result.stderr, result.stderr
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert "cannot write to standard output" in result.stderr.splitlines()[-1]


def test_a_reader_that_went_away_ends_quietly_with_141(tmp_path):
    sched = tmp_path / "a.sched"
    sched.write_text(LINEAR)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(["bash", "-c", f"{_quote(sys.executable)} -m schedlang eval {_quote(sched)} "
                             "--steps 0:1000000 | head -1; exit ${PIPESTATUS[0]}"],
                            capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert result.returncode == 141 and result.stderr == "", (result.returncode, result.stderr)


def test_a_closed_stdin_is_a_located_error_not_a_traceback():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(["bash", "-c", f"{_quote(sys.executable)} -m schedlang fmt - <&-"],
                            capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert result.returncode == 2 and "standard input is closed" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("error", [MemoryError(), RuntimeError("boom\nsecond line"), RecursionError()])
@pytest.mark.parametrize("as_json", [False, True])
def test_an_unexpected_exception_is_exit_2_with_one_line(monkeypatch, capsys, tmp_path, error, as_json):
    sched = tmp_path / "a.sched"
    sched.write_text(LINEAR)

    def explode(*args, **kwargs):
        raise error

    monkeypatch.setattr(commands, "load", explode)
    code = main(["check", *(["--json"] if as_json else []), str(sched)])
    out, err = capsys.readouterr()
    assert code == 2
    assert err.count("\n") == 1 and "internal error" in err and type(error).__name__ in err
    assert "Traceback" not in err
    assert ('"schema": "schedlang.error/1"' in out) == as_json


def test_a_crash_in_the_prover_is_never_a_verdict(monkeypatch, capsys, tmp_path):
    """``verify`` exits 0 or 1 only for a verdict: a MemoryError while proving is exit 2."""
    import schedlang.verify as verify_package

    a, b = tmp_path / "a.sched", tmp_path / "b.sched"
    a.write_text(LINEAR)
    b.write_text("schedule lr = linear(1, 0, 200)\n")

    def explode(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(verify_package, "equivalent", explode)
    assert main(["verify", str(a), str(b)]) == 2
    assert "internal error: MemoryError" in capsys.readouterr().err


UNBOUND = "param total: int\nbatch = 32\nschedule lr = cosine(1e-3, 0, total)\n"


@pytest.mark.parametrize("args", [
    ["eval"], ["eval", "--csv"], ["eval", "--json"], ["eval", "--steps", "0:10"],
    ["eval", "--axis", "samples"], ["eval", "--axis", "samples", "--csv"],
    ["eval", "--axis", "samples", "--json"], ["plot"], ["plot", "-o", "{tmp}/p.svg"],
    ["plot", "-o", "{tmp}/p.png"], ["export", "--format", "hf-args"]],
    ids=" ".join)
def test_an_error_leaves_stdout_empty(tmp_path, capsys, args):
    """An unbound parameter is an error before the first byte: no table header, CSV header or
    half a JSON document above it (with --json, standard output is the error document alone)."""
    sched = tmp_path / "u.sched"
    sched.write_text(UNBOUND)
    argv = [a.replace("{tmp}", str(tmp_path)) for a in args]
    code = main([argv[0], str(sched), *argv[1:]])
    out, err = capsys.readouterr()
    assert code == 2 and "Traceback" not in err, (code, err)
    if "--json" in argv:
        import json

        assert json.loads(out)["schema"] == "schedlang.error/1", out
    else:
        assert out == "", out
