"""``--json`` on check, eval, verify and import: the documented schema, parsed back.

Key order is part of the contract (tools may diff outputs), so each test compares the
keys as a list; errors are JSON on standard output too, with exit status 2.
"""

import json
import re

import pytest
from helpers import ROOT

import schedlang
from schedlang.cli import main

DOCS = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")


def run_json(capsys, *args):
    code = main([*map(str, args), "--json"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out), captured.err


def test_check(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, doc, _ = run_json(capsys, "check", "examples/gpt_pretrain.sched", "-D", "total=10000")
    assert code == 0
    assert list(doc) == ["schema", "file", "params", "schedules", "warnings"]
    assert doc["schema"] == "schedlang.check/1" and doc["file"] == "examples/gpt_pretrain.sched"
    assert doc["params"][2] == {"name": "total", "type": "int", "value": 10000, "required": False}
    lr, wd = doc["schedules"]
    assert list(lr) == ["name", "duration", "bound", "start", "end", "min", "max", "sum", "sum_exact",
                        "horizon", "breakpoints", "unbound"]
    assert lr["duration"] == 10000 and lr["end"] == pytest.approx(6e-5) and lr["breakpoints"] == [2000, 10000]
    assert wd["duration"] is None and wd["max"] == 0.1
    assert doc["warnings"] == []


def test_check_warnings_and_unbound(capsys, tmp_path):
    path = tmp_path / "w.sched"
    path.write_text("param total: int\nschedule lr = linear(0, 1e-3, 100) >> cosine(5e-4, 0, total)\n")
    code, doc, _ = run_json(capsys, "check", path)
    assert code == 0
    assert doc["schedules"][0]["bound"] is False and doc["schedules"][0]["unbound"] == ["total"]
    code, doc, err = run_json(capsys, "check", path, "-D", "total=100")
    (warning,) = doc["warnings"]
    assert list(warning) == ["file", "line", "col", "end_line", "end_col", "message", "hint"]
    assert (warning["file"], warning["line"], warning["col"]) == (str(path), 2, 39)
    assert "jumps at step 100" in warning["message"] and "jumps at step 100" in err


def test_eval(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, doc, _ = run_json(capsys, "eval", "examples/warmup_cosine.sched", "--steps", "0:1001:250")
    assert code == 0
    assert list(doc) == ["schema", "file", "steps", "values"]
    assert doc["steps"] == [0, 250, 500, 750, 1000]
    assert doc["values"]["lr"] == pytest.approx([0.0, 5e-4, 1e-3, 5.5e-4, 1e-4], rel=1e-12)


def test_verify_equivalent_and_different(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, doc, _ = run_json(capsys, "verify", "examples/warmup_cosine.sched", "-e",
                            "warmup(linear, 500) >> cosine(1e-3, 1e-4, 500)")
    assert code == 0
    assert list(doc) == ["schema", "a", "b", "verdict", "method", "reason", "counterexample", "bindings",
                         "warnings", "steps", "after_run", "axis"]
    assert doc["verdict"] == "equivalent" and doc["counterexample"] is None
    assert (doc["steps"], doc["after_run"], doc["axis"]) == (None, None, "steps")  # no run: every step
    assert doc["a"] == {"kind": "file", "text": "examples/warmup_cosine.sched", "schedule": "lr"}
    code, doc, _ = run_json(capsys, "verify", "-e", "linear(1, 0, 100)", "-e", "linear(1, 0, 101)")
    assert code == 1 and doc["verdict"] == "different"
    ce = doc["counterexample"]
    assert list(ce) == ["step", "a", "b", "a_exact", "b_exact", "difference", "earliest", "params"]
    assert ce["step"] == 1 and ce["earliest"] is True


def test_import(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, doc, _ = run_json(capsys, "import", "examples/cerebras_sequential.yaml")
    assert code == 0
    assert list(doc) == ["schema", "file", "format", "style", "output", "params", "schedules", "source"]
    assert doc["format"] == "cerebras-yaml" and doc["schedules"] == ["lr"]
    assert schedlang.compile(doc["source"])["lr"](0) == pytest.approx(0.01)


@pytest.mark.parametrize("args, message", [
    (["check", "no/such.sched"], "cannot read no/such.sched"),
    (["eval", "tests/diagnostics/unknown_name_typo.sched"], "unknown name 'cosin'"),
    (["verify", "-e", "linear(1, 0, 10)"], "verify compares two schedules"),
    (["check", "examples/gpt_pretrain.sched", "--bogus"], "unrecognized arguments: --bogus"),
])
def test_errors_are_json_with_exit_2(capsys, monkeypatch, args, message):
    monkeypatch.chdir(ROOT)
    try:
        code, doc, err = run_json(capsys, *args)
    except SystemExit as exc:  # argparse's usage errors leave through SystemExit
        code, captured = exc.code, capsys.readouterr()
        doc, err = json.loads(captured.out), captured.err
    assert code == 2
    assert list(doc) == ["schema", "error"] and doc["schema"] == "schedlang.error/1"
    assert list(doc["error"]) == ["file", "line", "col", "end_line", "end_col", "message", "hint"]
    assert message in doc["error"]["message"] and message in err


def test_error_in_a_file_points_into_it(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, doc, _ = run_json(capsys, "check", "tests/diagnostics/unknown_name_typo.sched")
    error = doc["error"]
    assert (error["file"], error["line"], error["col"], error["end_col"]) == (
        "tests/diagnostics/unknown_name_typo.sched", 2, 15, 20)
    assert error["hint"] == "did you mean 'cosine'?"


def test_every_key_is_documented():
    section = DOCS[DOCS.index("## Machine-readable output"):]
    keys = {"schema", "file", "params", "schedules", "warnings", "name", "type", "value", "required",
            "duration", "bound", "start", "end", "min", "max", "sum", "sum_exact", "horizon", "breakpoints",
            "unbound", "steps", "values", "a", "b", "verdict", "method", "reason", "counterexample",
            "bindings", "sides", "kind", "text", "schedule", "a_exact", "b_exact", "difference", "earliest",
            "format", "style", "output", "default", "source", "error", "line", "col", "end_line", "end_col",
            "message", "hint", "step", "run", "samples", "tokens", "last_update", "after_run", "axis", "stop",
            "from"}
    documented = set(re.findall(r"`([a-z_]+)`", section))
    assert keys <= documented, sorted(keys - documented)
