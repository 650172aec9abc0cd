"""Errors in command-line arguments point at the argument: a ``<command line>`` caret.

Each case runs ``schedlang.cli.main`` in process and checks the exit status 2, no
traceback, and that the caret sits under exactly the bad part of the argument.
"""

from __future__ import annotations

import time

import pytest
from helpers import ROOT, run_cli

from schedlang import limits
from schedlang.cli import main

FILE = "examples/warmup_cosine.sched"


def caret_under(stderr: str) -> str:
    """The text of the shown command line above the carets."""
    lines = stderr.splitlines()
    assert lines[0].startswith("<command line>:1:"), stderr
    shown, marks = lines[1], lines[2]
    assert shown.startswith("   1 | ") and marks.startswith("     | ")
    start = marks.index("^")
    return shown[start:start + marks.count("^")]


def run(capsys, monkeypatch, *argv):
    monkeypatch.chdir(ROOT)
    start = time.process_time()
    code = main(list(argv))
    assert time.process_time() - start < 10
    captured = capsys.readouterr()
    assert code == 2, captured
    assert "Traceback" not in captured.err
    return captured.err


@pytest.mark.parametrize("argv, underlined, message", [
    (("check", FILE, "-D", "peak=abc"), "abc", "-D peak must be a number, not 'abc'"),
    (("check", FILE, "-Dpeak=abc"), "abc", "must be a number"),
    (("check", FILE, "-D", "nosuch=1"), "nosuch", "the file has no parameter 'nosuch'"),
    (("check", FILE, "-D", "=3"), "=3", "-D expects NAME=VALUE"),
    (("check", FILE, "-D", "peak=" + "9" * 5000), "9" * 10, f"reads at most {limits.MAX_DIGITS}"),
    (("eval", FILE, "--steps", "0:x:5"), "x", "--steps expects whole numbers, got 'x'"),
    (("eval", FILE, "--steps=0:10:0"), "0", "STEP > 0"),
    (("eval", FILE, "--steps", "0:1e12"), "0:1e12", f"at most {limits.MAX_EVAL_POINTS}"),
    (("eval", FILE, "--steps", "0:1000000000000"), "0:1000000000000", "1000000000000 steps"),
    (("eval", FILE, "--steps", "0:" + "9" * 30), "9" * 30, "beyond the largest step"),
    (("plot", FILE, "--steps", "0:1e12"), "0:1e12", "at most"),
    (("compile", FILE, "--target", "torch", "--class-name", "1x"), "1x", "--class-name '1x'"),
    (("verify", FILE, FILE, "--rtol", "abc"), "abc", "--rtol expects a number"),
    (("verify", FILE, FILE, "-D", "zz=3"), "zz", "neither schedule has a parameter 'zz'"),
    (("check", "no/such/file.sched"), "no/such/file.sched", "cannot read no/such/file.sched"),
    (("import", "no_such.yaml"), "no_such.yaml", "cannot read"),
    (("import", "notes.unknown"), "notes.unknown", "cannot tell the format"),
])
def test_bad_argument_is_underlined(capsys, monkeypatch, argv, underlined, message):
    err = run(capsys, monkeypatch, *argv)
    assert message in err
    assert caret_under(err).startswith(underlined)


def test_digit_limit_message_says_too_long_not_not_a_number(capsys, monkeypatch):
    err = run(capsys, monkeypatch, "check", FILE, "-D", "peak=" + "9" * 5000)
    assert "not a number" not in err and "5000 digits" in err


def test_quoted_argument_keeps_the_caret_aligned(capsys, monkeypatch):
    err = run(capsys, monkeypatch, "check", FILE, "-D", "peak=a b")
    assert caret_under(err) == "a b"


def test_valid_steps_forms_still_work(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(["eval", FILE, "--steps", "0:1e3:250", "--csv"]) == 0
    rows = capsys.readouterr().out.splitlines()[1:]
    assert [row.split(",")[0] for row in rows] == ["0", "250", "500", "750"]
    assert main(["eval", FILE, "--steps", "1_000"]) == 0


def test_cli_subprocess_exits_2_with_caret_for_a_bad_define():
    result = run_cli("check", FILE, "-D", "peak=" + "9" * 5000)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "<command line>:1:" in result.stderr and "^" in result.stderr
