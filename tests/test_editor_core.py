"""The editor's feature core (schedlang/cli/editor/), as tables: text and a cursor in, plain data out.

The language server (tests/test_lsp_server.py) only converts these to the protocol; what an
editor shows is decided here, where it is tested without a client.
"""

import pytest

from schedlang.cli.editor import actions, completion, diagnostics, hints, hover, lenses, symbols
from schedlang.cli.editor.document import Document
from schedlang.cli.editor.positions import UTF8, UTF16, UTF32, Lines
from schedlang.errors import SchedlangError, Span

GPT = """\
param peak: float = 6e-4 where peak > 0
param warmup: int = 2000 where warmup >= 0
param total: int = 100_000 where total > warmup

let decay = cosine(peak, 0.1 * peak, total - warmup)

schedule lr = warmup(linear, warmup) >> decay
schedule weight_decay = constant(0.1)
"""


def _cursor(text: str):
    """The text with ``|`` removed and the (line, column) where it stood."""
    before = text[:text.index("|")]
    line = before.count("\n") + 1
    return text.replace("|", "", 1), line, len(before) - (before.rfind("\n") + 1) + 1


# -- diagnostics -----------------------------------------------------------------------

@pytest.mark.parametrize("text, code, where, fix", [
    ("schedule lr = cosin(1e-3, 1e-4, 100)", "unknown-name", (1, 15, 1, 20), "cosine"),
    ('schedule lr = cyclic(0, 1, 10, mode="triangle")', "invalid-option", (1, 37, 1, 47), '"triangular"'),
    ("schedule lr = cosine(1, 0, n=10, v11=2)", "unknown-argument", (1, 34, 1, 37), "v1"),
    ("schedule lr = cosine(1, 0", "syntax", None, None),
    ("# nothing", "empty-file", (1, 1, 1, 2), None),
    ("schedule lr = linear(1, 0, 10.5)", "error", None, None),
])
def test_the_error_has_a_code_a_span_and_its_fix(text, code, where, fix):
    [problem] = diagnostics.errors(Document(text))
    assert problem.severity == "error" and problem.code == code
    if fix is not None:
        span = problem.fix.span
        assert (span.line, span.column, span.end_line, span.end_column) == where
        assert problem.fix.text == fix
        [action] = actions.quick_fixes(Document(text), 1, 1)
        assert action.text == fix and fix.strip('"') in action.title
    else:
        assert problem.fix is None


def test_warnings_come_with_codes_and_clear_when_fixed():
    jumpy = "schedule lr = linear(1, 0.5, 100) >> constant(0.1)"
    [warning] = diagnostics.problems(Document(jumpy))
    assert warning.severity == "warning" and warning.code == "jump" and warning.span.column == 38
    assert diagnostics.problems(Document("schedule lr = linear(1, 0.5, 100) >> constant(0.5)")) == []


# -- hover -----------------------------------------------------------------------------

@pytest.mark.parametrize("cursor, expected", [
    ("schedule lr = cos|ine(1, 0, 10)", ["cosine(v0, v1, n)", "cos(pi * t / n)"]),
    ("schedule lr = torch.Step|LR(1, 10)", ["torch.StepLR(", "step_size"]),
    ("schedule lr = tor|ch.StepLR(1, 10)", ["presets of torch"]),
    ('schedule lr = cyclic(0, 1, 10, mo|de="exp_range")', ['"triangular2"', "default"]),
    ("sched|ule lr = 1", ["one of the file's outputs"]),
    ("schedule lr = sin|(t)", ["math function"]),
    ("schedule lr = |t", ["the step"]),
])
def test_hover_explains_built_ins(cursor, expected):
    text, line, column = _cursor(cursor)
    found = hover.hover(Document(text), line, column)
    assert found is not None
    for part in expected:
        assert part in found.markdown, found.markdown


def test_hover_on_the_file_s_names():
    doc = Document(GPT)
    param = hover.hover(doc, 2, 9)
    assert "param warmup: int = 2000 where warmup >= 0" in param.markdown and "`2000`" in param.markdown
    schedule = hover.hover(doc, 7, 10)
    assert "100000 steps: start 0, end 6e-05, min 0, max 0.0006" in schedule.markdown
    let = hover.hover(doc, 5, 6)
    assert "lasts 98000 steps" in let.markdown
    assert "warmup(shape, n, start=0)" in hover.hover(doc, 7, 17).markdown  # the built-in, not the param


# -- completion and signature help -----------------------------------------------------

@pytest.mark.parametrize("cursor, present, absent", [
    ("schedule lr = torch.|", ["StepLR", "CosineAnnealingLR"], ["cosine"]),
    ("schedule lr = optax.war|", ["warmup_cosine_decay_schedule"], []),
    ('schedule lr = cyclic(0, 1, 10, mode="|', ["triangular", "exp_range"], ["cosine"]),
    ("schedule lr = cyclic(0, 1, 10, mode=|", ["triangular"], []),
    ("schedule lr = warmup(|", ["linear", "exp"], ["torch", "sqrt"]),
    ("schedule lr = constant(1, 9) >> cooldown(|", ["sqrt", "megatron_exponential"], ["torch"]),
    ("schedule lr = cyclic(0, 1, |", ["mode=", "gamma=", "cosine", "torch"], []),
    ("param peak: float = 1\nschedule lr = p|", ["peak", "poly", "schedule"][:2], []),
    ("|", ["schedule", "param", "let", "def", "cosine"], []),
    ("schedule lr = 1  # cos|", [], ["cosine"]),
])
def test_completion(cursor, present, absent):
    text, line, column = _cursor(cursor)
    labels = [item.label for item in completion.complete(Document(text), line, column)]
    for label in present:
        assert label in labels, (label, labels[:20])
    for label in absent:
        assert label not in labels


def test_a_shape_completes_bare_after_the_equals_sign():
    text, line, column = _cursor("schedule lr = constant(1, 9) >> cooldown(shape=|")
    items = completion.complete(Document(text), line, column)
    assert [i.insert for i in items][:2] == ["linear", "cosine"]


def test_an_option_completes_quoted_after_the_equals_sign():
    text, line, column = _cursor("schedule lr = cyclic(0, 1, 10, mode=|")
    items = completion.complete(Document(text), line, column)
    assert items[0].insert == '"triangular"'


@pytest.mark.parametrize("cursor, label, active", [
    ("schedule lr = cosine(1, |", "cosine(v0, v1, n)", 1),
    ("schedule lr = cyclic(0, 1, 10, mode=|", 'cyclic(lo, hi, up, down=none, mode="triangular", gamma=1)', 4),
    ("schedule lr = cosine(1, max(2, |", "max(a, b, ...)", 1),
    ("schedule lr = sin(|", "sin(x)", 0),
    ("def f(a, b) = a * b\nschedule lr = f(1, |", "f(a, b)", 1),
    ("schedule lr = multistep(1, 0.1, [10, 20|", "multistep(v0, gamma, milestones)", 2),
])
def test_signature_help(cursor, label, active):
    text, line, column = _cursor(cursor)
    found = completion.signature(Document(text), line, column)
    assert found.label == label and found.active == active


# -- symbols -----------------------------------------------------------------------------

def test_outline_definition_references_and_rename():
    doc = Document(GPT)
    outline = [(d.kind, d.name) for d in symbols.definitions(doc)]
    assert outline == [("param", "peak"), ("param", "warmup"), ("param", "total"), ("let", "decay"),
                       ("schedule", "lr"), ("schedule", "weight_decay")]
    uses = [(s.line, s.column) for s in symbols.references(doc, "warmup")]
    assert uses == [(2, 7), (2, 32), (3, 42), (5, 46), (7, 30)]  # not the built-in call at 7:15
    assert symbols.at(doc, 7, 31).name == "warmup"
    edits = symbols.rename(doc, 5, 46, "ramp")
    assert sorted((s.line, s.column) for s, _ in edits) == uses
    assert "already" in symbols.rename(doc, 5, 46, "total")
    assert "word of the language" in symbols.rename(doc, 5, 46, "for")
    assert "only a name" in symbols.rename(doc, 7, 17, "x")


def test_def_parameters_shadow_the_file_s_names():
    doc = Document("param a: float = 1\ndef f(a) = 2 * a\nschedule lr = f(a) * constant(1)")
    assert [(s.line, s.column) for s in symbols.references(doc, "a")] == [(1, 7), (3, 17)]
    assert [(s.line, s.column) for s in symbols.references(doc, "f")] == [(2, 5), (3, 15)]


# -- inlay hints ---------------------------------------------------------------------------

def test_inlay_hints_say_where_segments_start_and_computed_durations():
    found = {(h.line, h.column, h.label) for h in hints.hints(Document(GPT))}
    assert (7, 41, "step 2_000:") in found
    assert (5, 52, "= 98_000 steps") in found
    assert not any(h.label == "= 100 steps" for h in hints.hints(Document("schedule lr = linear(1, 0, 100)")))


# -- formatting ------------------------------------------------------------------------------

def test_formatting_is_fmt_and_leaves_broken_text_alone():
    assert actions.formatted(Document("schedule lr=linear(1,0,100)")) == "schedule lr = linear(1, 0, 100)\n"
    assert actions.formatted(Document("schedule lr = linear(1, 0, 100)\n")) is None
    assert actions.formatted(Document("schedule lr = linear(1,")) is None


# -- positions ---------------------------------------------------------------------------

@pytest.mark.parametrize("encoding, start, end", [(UTF16, 36, 42), (UTF8, 36, 46), (UTF32, 36, 40)])
def test_columns_in_each_encoding(encoding, start, end):
    # the prototype's case (docs/research): mode="😀😀" is 4 UTF-16 units, 8 bytes, 2 code points
    text = 'schedule lr = cyclic(0, 1, 10, mode="😀😀")'
    [problem] = diagnostics.errors(Document(text))
    (line0, s), (_, e) = Lines(text, encoding).range(problem.span)
    assert (line0, s, e) == (0, start, end)
    assert Lines(text, encoding).from_lsp(0, s) == (1, problem.span.column)


def test_a_form_feed_is_not_a_line_break():
    text = "# page one\f still the comment\nschedule lr = cosin(1, 0, 10)\n"
    [problem] = diagnostics.errors(Document(text))
    assert Lines(text, UTF16).range(problem.span) == ((1, 14), (1, 19))


def test_a_byte_order_mark_shifts_the_first_line_only():
    text = "\ufeffschedule lr = cosin(1, 0, 10)"
    [problem] = diagnostics.errors(Document(text))
    assert Lines(text, UTF16).range(problem.span) == ((0, 15), (0, 20))
    assert Lines(text, UTF16).from_lsp(0, 15) == (1, 15)


def test_positions_past_the_end_are_clamped():
    lines = Lines("ab\ncd", UTF16)
    assert lines.to_lsp(9, 9) == (1, 2)
    assert lines.from_lsp(7, 100) == (2, 3)
    assert lines.range(Span.at_offset(Document("ab").source, 2)) == ((0, 2), (0, 2))


# -- the command ---------------------------------------------------------------------------

def test_lsp_without_pygls_says_how_to_install_it():
    import os
    import subprocess
    import sys

    from helpers import ROOT

    code = ("import sys; sys.modules['pygls'] = None; from schedlang.cli import main;"
            "raise SystemExit(main(['lsp']))")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert result.returncode == 2 and 'pip install "schedlang[lsp]"' in result.stderr
    assert result.stdout == ""


# -- code lenses -----------------------------------------------------------------------

def test_lenses_sit_on_each_schedule_s_name():
    found = lenses.lenses(Document(GPT))
    assert [(lens.name, lens.title, lens.command) for lens in found] == [
        (name, title, command) for name in ("lr", "weight_decay")
        for title, command in (("Plot", "schedlang.plot"), ("Summary", "schedlang.summary"),
                               ("Verify against…", "schedlang.verify"))]
    assert [(lens.span.line, lens.span.column, lens.span.end_column) for lens in found[:1]] == [(7, 10, 12)]
    assert lenses.lenses(Document("schedule lr = cosine(1, 0")) == []


def test_the_summary_and_the_plot_of_a_schedule():
    doc = Document(GPT)
    summary = lenses.summary(doc, "lr")
    assert summary.startswith("lr: 100000 steps: start 0, end 6e-05, min 0, max 0.0006")
    assert "`" not in summary and "▁" in summary  # plain text for a message, with its sparkline
    picture = lenses.plot(doc, "weight_decay", "a<b>.sched")
    assert picture.startswith("<svg") and "weight_decay (a&lt;b&gt;.sched)" in picture
    with pytest.raises(SchedlangError, match="no schedule named 'momentum'"):
        lenses.plot(doc, "momentum")
    with pytest.raises(SchedlangError, match="unknown name 'cosin'"):
        lenses.summary(Document("schedule lr = cosin(1, 0, 10)"), "lr")


def test_verify_against_another_text():
    same = "schedule lr = linear(1, 0, 100)\nschedule weight_decay = constant(0.1)\n"
    assert lenses.verify(GPT, "weight_decay", same)["verdict"] == "equivalent"
    different = lenses.verify("schedule lr = linear(1, 0, 100)", "lr", "schedule lr = linear(1, 0, 99)")
    assert different["verdict"] == "different" and "A:lr vs B:lr: different at" in different["message"]
    assert lenses.verify(GPT, "lr", "schedule lr = cosin(1, 0, 10)")["verdict"] == "error"


def test_verify_runs_in_a_child_process_that_is_stopped_past_its_budget():
    text = "schedule lr = linear(1, 0, 100)"
    halves = "schedule lr = linear(1, 0.5, 50) >> linear(0.5, 0, 50)"
    assert lenses.verify_isolated(text, "lr", halves)["verdict"] == "equivalent"
    assert lenses.verify_isolated(text, "lr", text, budget=0.01)["verdict"] == "timeout"
