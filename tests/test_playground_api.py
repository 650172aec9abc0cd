"""``schedlang.cli.playground`` and ``plot_svg`` without a browser: what the playground page shows is
what the command line prints (tests/test_playground.py drives the page itself)."""

import json
import os
import re
import sys

import pytest
from helpers import ROOT

from schedlang.cli import commands as cli
from schedlang.cli import playground
from schedlang.cli.plot import Panel
from schedlang.cli.plot_svg import step_label, svg, ticks
from schedlang.errors import SchedlangError
from schedlang.program import compile as compile_program

sys.path.insert(0, str(ROOT / "tools"))
import mkdocs_hooks  # noqa: E402

WSD = (ROOT / "examples" / "wsd.sched").read_text(encoding="utf-8")


def _cli_output(capsys, monkeypatch, tmp_path, *argv_and_files):
    *argv, files = argv_and_files
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_analyse_shows_what_show_and_check_print(capsys, monkeypatch, tmp_path):
    doc = playground.analyse(WSD)
    assert doc["ok"] and doc["diagnostics"] == []
    files = {playground.FILE_A: WSD}
    _, show, _ = _cli_output(capsys, monkeypatch, tmp_path, "show", playground.FILE_A, files)
    assert doc["show"] == show
    _, check, _ = _cli_output(capsys, monkeypatch, tmp_path, "check", playground.FILE_A, files)
    assert playground.check(WSD)["check"] + "\n" == check
    assert re.findall(r'<g class="panel" data-title="([^"]*)"', doc["plot"]) == ["lr", "weight_decay"]
    assert doc["plot"] == playground.analyse(WSD)["plot"]  # deterministic
    json.loads(playground.run_json(WSD))


def test_plot_draws_the_values(tmp_path):
    doc = playground.analyse("schedule lr = linear(0, 1, 100)")
    points = re.search(r'<polyline[^>]* points="([^"]*)"', doc["plot"]).group(1).split()
    xy = [tuple(map(float, p.split(","))) for p in points]
    assert len(xy) == 106  # plot_steps: 0 to 5% past the end, one step apart
    ys = [y for _, y in xy]
    assert ys[:101] == sorted(ys[:101], reverse=True)  # rising values are falling y
    assert len(set(ys[100:])) == 1  # held after the end


def test_two_boxes_overlay_and_difference():
    doc = playground.analyse("schedule lr = linear(0, 1, 100)", "schedule lr = linear(0, 2, 100)")
    assert re.findall(r'data-title="([^"]*)"', doc["plot"]) == ["lr", "lr: A - B"]
    assert "A: schedule.sched   B: other.sched" in doc["plot"]


def test_a_typo_is_the_error_the_cli_renders():
    source = "schedule lr = warmup(linear, 100) >> cosinus(0.001, 1e-4, 400)"
    doc = playground.analyse(source)
    assert not doc["ok"] and doc["plot"] is None and doc["show"] is None
    assert playground.check(source)["diagnostics"] == doc["diagnostics"]
    (error,) = doc["diagnostics"]
    with pytest.raises(SchedlangError) as raised:
        compile_program(source, {}, playground.FILE_A)
    assert error["text"] == str(raised.value)
    assert (error["kind"], error["file"], error["line"], error["col"]) == ("error", "schedule.sched", 1, 38)
    assert "^^^^^^^" in error["text"] and "did you mean 'cosine'" in error["text"]


def test_warnings_come_with_their_carets():
    source = "schedule lr = linear(0, 1e-3, 100) >> cosine(5e-4, 0, 100)"
    assert playground.analyse(source)["diagnostics"] == []  # the quick part: no scan, no warning
    (warning,) = playground.check(source)["diagnostics"]
    assert playground.run(source)["diagnostics"] == [warning]
    assert warning["kind"] == "warning" and (warning["line"], warning["col"]) == (1, 39)
    assert "jumps at step 100" in warning["text"] and "^" in warning["text"]


def test_the_playground_knows_the_run():
    source = "run = 10\nschedule lr = warmup(linear, 2000) >> cosine(1e-3, 1e-4, 100_000)"
    doc = playground.run(source, "run = 10\nschedule lr = linear(0, 1e-3, 2000)")
    assert doc["show"].startswith("run: 10 steps (the last update is step 9)\n")
    assert "run: 10 steps" in doc["check"] and "at the last update (step 9): lr 4.5e-06" in doc["check"]
    (warning,) = doc["diagnostics"]  # a smoke run shorter than its warmup
    assert (warning["line"], warning["col"]) == (1, 1) and "the run ends at step 10" in warning["text"]
    steps = [float(p.split(",")[0]) for p in re.search(r'<polyline[^>]* points="([^"]*)"',
                                                       doc["plot"]).group(1).split()]
    assert len(steps) == 11  # the plot shows the run's steps 0..10, not the 102,000 of the schedule
    assert doc["verify"]["verdict"] == "equivalent" and "within the run (steps 0..9)" in doc["verify"]["text"]
    completions = [i["label"] for i in playground.complete("", 1, 1)["items"]]
    assert "run" in completions
    assert "the run's length" in playground.hover(source, 1, 2)["hover"]["text"]


def test_an_unbound_parameter_has_a_formula_and_says_why_there_is_no_plot():
    doc = playground.analyse("param total: int\nschedule lr = linear(1, 0, total)")
    assert doc["ok"] and doc["plot"] is None and "total" in doc["show"]
    assert "bound" in doc["plot_error"]["text"]


@pytest.mark.parametrize("other, verdict, found", [
    ("warmup(linear, 100) >> cosine(1e-3, 0.0001, 400)", "equivalent", "equivalent (proven"),
    ("warmup(linear, 100) >> cosine(1e-3, 1e-5, 400)", "different", "first difference at step 101"),
    ("floor(t * t / 2)", None, None),
    ("warmup(linear, 100) >> cosine(1e-3, 1e-5,, 400)", "error", "other.sched:1:"),
])
def test_verify_is_what_the_cli_prints(capsys, monkeypatch, tmp_path, other, verdict, found):
    source = "schedule lr = warmup(linear, 100) >> cosine(0.001, 1e-4, 400)"
    if verdict is None:  # the prover's unknown (tests/test_verify_api.py)
        source, verdict, found = "t * t / 2 - (1 - cos(pi * t)) / 4", "unknown", "unknown:"
    cwd = os.getcwd()
    doc = playground.verify(source, other)
    assert os.getcwd() == cwd
    assert doc["verdict"] == verdict
    files = {playground.FILE_A: source, playground.FILE_B: other}
    _, out, err = _cli_output(capsys, monkeypatch, tmp_path, "verify", *files, files)
    assert (doc["text"], doc["diagnostics"]) == (out, err)
    assert found in out + err


def test_svg_escapes_every_text():
    panel = Panel('<script>"&', [("a<b>", [0.0, 1.0])], [1.0])
    text = svg([panel], range(2), "</svg><script>")
    assert "<script>" not in text and "&lt;script&gt;" in text and "&quot;&amp;" in text


def test_the_examples_menu_is_the_examples_folder():
    script = mkdocs_hooks.examples_script()
    assert "<" not in script.split(">", 1)[1].rsplit("<", 1)[0]  # nothing in it can close the element
    data = json.loads(script.split(">", 1)[1].rsplit("<", 1)[0])
    assert data == {p.stem: p.read_text(encoding="utf-8") for p in (ROOT / "examples").glob("*.sched")}
    assert "warmup_cosine" in data  # the page's first example


def test_the_step_axis_is_labelled_at_round_steps():
    plot = playground.analyse("schedule lr = linear(1, 0, 100_000)")["plot"]
    labels = re.findall(r'<text class="x-tick"[^>]*>([^<]*)</text>', plot)
    assert labels == ["0", "20k", "40k", "60k", "80k", "100k"]
    assert [step_label(s) for s in ticks(0, 1_575_000)] == ["0", "500k", "1M", "1.5M"]
    assert ticks(0, 0) == [0] and ticks(0, 7) == [0, 2, 4, 6] and ticks(3, 9) == [3, 4, 5, 6, 7, 8, 9]


def test_hover_and_completion_are_the_editor_core_s():
    source = "param n: int = 400\nschedule lr = cosine(1, 0, n)\n"
    found = json.loads(playground.editor_json("hover", source, 2, 16))["hover"]
    assert found["text"].startswith("cosine(v0, v1, n)\n\n") and "`" not in found["text"]
    assert (found["line"], found["col"], found["end_col"]) == (2, 15, 21)
    assert "value: 400" in playground.hover(source, 1, 7)["hover"]["text"]
    assert playground.hover(source, 2, 2)["hover"]["text"].startswith("schedule name = expr: one of")
    assert playground.hover("", 1, 1)["hover"] is None
    items = playground.complete("schedule lr = torch.Ste", 1, 24)
    assert [i["label"] for i in items["items"]] == ["StepLR"] and items["col"] == 21
    items = playground.complete("schedule lr = cos", 1, 18)
    assert {i["label"] for i in items["items"]} == {"cosine", "cosine_restarts"} and items["col"] == 15


def test_no_verdict_when_the_first_box_does_not_compile():
    doc = playground.run("schedule lr = cosinus(1, 0, 10)", "schedule lr = cosine(1, 0, 10)")
    assert [d["text"].count("cosinus") > 0 for d in doc["diagnostics"]] == [True] and doc["verify"] is None
