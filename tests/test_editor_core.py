"""The editor's feature core (schedlang/cli/editor/), as tables: text and a cursor in, plain data out.

The language server (tests/test_lsp_server.py) only converts these to the protocol; what an
editor shows is decided here, where it is tested without a client.
"""

import asyncio

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
    ("r|un = 4e12tok\nschedule lr = 1", ["the run's length", "run = 4e12tok"]),
    ("bat|ch = 8\nschedule lr = 1", ["samples in each optimizer step"]),
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
    ("|", ["run", "batch"], []),  # the statements that start with a word that stays a name elsewhere
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


def test_a_run_that_cuts_its_warmup_is_a_warning_at_the_run():
    [problem] = diagnostics.problems(Document("run = 10\nschedule lr = warmup(linear, 2000) >> constant(1)"))
    assert (problem.severity, problem.code, problem.span.line) == ("warning", "run-cuts-phase", 1)
    assert "it got 10 of its 2,000 steps" in problem.message


def test_run_is_a_statement_of_the_outline_and_stays_a_name_elsewhere():
    doc = Document("param run: int = 10\nrun = run\nschedule lr = cosine(1, 0, run)")
    assert [(d.kind, d.name) for d in symbols.definitions(doc)] == [
        ("param", "run"), ("run", "run"), ("schedule", "lr")]
    assert symbols.at(doc, 3, 28).name == "run" and symbols.at(doc, 3, 28).kind == "param"
    assert hover.hover(doc, 1, 8).markdown.startswith("```schedlang\nparam run: int = 10")
    assert "the run's length" not in hover.hover(doc, 3, 28).markdown  # a name there, not the keyword


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
    proofs = lenses.Proofs()
    assert asyncio.run(proofs.verify(text, "lr", halves))["verdict"] == "equivalent"
    assert asyncio.run(proofs.verify(text, "lr", text, budget=0.01))["verdict"] == "timeout"
    assert not proofs.running


def test_an_incremental_change_lands_at_the_client_s_offset():
    """``Lines.offset``: where a client's range (in its encoding) starts in the text, clamped."""
    text = 'let s = "😀"\r\nschedule lr = x\n'
    assert Lines(text, UTF16).offset(0, 11) == text.index('"', 9)  # 😀 is 2 UTF-16 units
    assert Lines(text, UTF8).offset(0, 13) == text.index('"', 9)   # and 4 UTF-8 bytes
    assert Lines(text, UTF32).offset(1, 9) == text.index("lr")     # after a CRLF
    assert Lines(text, UTF16).offset(1, 999) == text.index("x") + 1  # clamped to the line
    assert Lines(text, UTF16).offset(99, 0) == len(text)             # and to the text
    assert Lines(text, UTF16).offset(0, 10) == text.index("😀")      # inside a character: its start


def test_a_statement_ending_in_a_call_or_list_is_spanned_to_its_bracket():
    """The outline's and a hover's range covers the closing ``)`` (it stopped one short)."""
    doc = Document(GPT + "let f = [1, 2]\nlet g = min(max(0.1, peak), 1)\n")
    spans = {d.name: d.span for d in symbols.definitions(doc)}
    written = {name: doc.line(s.line)[s.column - 1:s.end_column - 1] for name, s in spans.items()}
    assert written["decay"] == "decay = cosine(peak, 0.1 * peak, total - warmup)"
    assert written["lr"] == "lr = warmup(linear, warmup) >> decay"
    assert written["f"] == "f = [1, 2]" and written["g"] == "g = min(max(0.1, peak), 1)"


def test_a_version_is_parsed_once_for_its_outline_and_its_compile(monkeypatch):
    from schedlang.syntax import parser

    calls = []
    real = parser.parse
    monkeypatch.setattr(parser, "parse", lambda *args: calls.append(1) or real(*args))
    from schedlang.cli.editor import document

    monkeypatch.setattr(document, "parse", parser.parse)
    doc = Document(GPT)
    assert symbols.definitions(doc) and doc.program is not None and len(calls) == 1


def test_a_hover_answers_from_the_last_compile_while_the_next_one_runs(monkeypatch):
    """A hover on a version still compiling (in another thread) answers at once from the last
    compiled one, and a compile of one version holds up no other (Python 3.11's
    ``cached_property`` took one lock for every instance)."""
    import threading

    from schedlang.cli.editor import document

    first = Document(GPT)
    assert first.program is not None
    second = first.next_version(GPT + "# a keystroke\n")
    entered, release = threading.Event(), threading.Event()
    real = document.compile_parsed

    def slow(module, params):
        if module is second.parsed:
            entered.set()
            release.wait(20)
        return real(module, params)

    monkeypatch.setattr(document, "compile_parsed", slow)
    worker = threading.Thread(target=lambda: second.compiled)
    worker.start()
    try:
        assert entered.wait(20)
        found = hover.hover(second, 1, 8)  # `param peak`: its value, from the first version
        assert "value: `0.0006`" in found.markdown and not second.is_compiled
        assert Document("schedule lr = cosine(1, 0, 10)").program is not None  # not held up
    finally:
        release.set()
        worker.join(20)
    assert second.is_compiled and second.latest() is second and second.before is first
    assert second.next_version("x").before is second and second.before is None  # one long


def test_keystrokes_during_a_check_start_no_second_compile(monkeypatch):
    """The server checks one version of a file at a time: what is typed while a compile runs is
    not compiled beside it (nor queued behind it, version by version); the newest comes next."""
    import threading

    server = pytest.importorskip("schedlang.cli.editor.server")
    compiled, release = [], threading.Event()

    def errors(doc):
        compiled.append(doc.text)
        release.wait(20)
        return []

    published = []
    monkeypatch.setattr(server.diagnostics, "errors", errors)
    monkeypatch.setattr(server.diagnostics, "warnings", lambda doc: [])
    monkeypatch.setattr(server, "_publish", lambda uri, version, found: published.append(version))
    monkeypatch.setattr(server, "DEBOUNCE", 0)
    monkeypatch.setattr(server.server, "documents", {})
    monkeypatch.setattr(server.server, "pending", {})
    monkeypatch.setattr(type(server.server), "encoding", property(lambda self: "utf-16"))

    async def typing():
        server._changed("file:///a.sched", 1, "v1")
        while not compiled:
            await asyncio.sleep(0.01)
        for version in range(2, 12):  # keystrokes 20 ms apart, each past the (zero) debounce
            server._changed("file:///a.sched", version, f"v{version}")
            await asyncio.sleep(0.02)
        release.set()
        await asyncio.wait_for(server.server.pending["file:///a.sched"], 20)

    asyncio.run(typing())
    assert compiled == ["v1", "v11"] and published == [1, 11]


def test_a_question_about_an_unchanged_line_reads_the_compiled_version():
    first = Document(GPT)
    assert first.program is not None
    second = first.next_version(GPT + "# a keystroke\n")
    assert second.settled(1) is first            # line 1 reads the same: no second parse
    assert second.settled(len(second.lines)) is second  # the changed line: this version's own
    assert second.module is not None and second.settled(1) is second  # once parsed, its own


def test_a_completion_on_a_long_file_lists_the_last_compiled_names_instead_of_parsing_again(monkeypatch):
    """Issue 39 item 12: a completion sent while a long file is checked answers from the last
    compiled version (its names a keystroke old) instead of parsing the new one beside the
    check or waiting for it; a file that parses quickly is parsed for its own names."""
    from schedlang.cli.editor import document

    def names(doc):
        return {i.label for i in completion.complete(doc, len(doc.lines), 1) if i.kind == "variable"}

    first = Document(GPT)
    assert first.program is not None
    second = first.next_version(GPT + "let fresh = 1\n")
    assert first.parse_seconds < document.SLOW_PARSE  # a short file: its own parse, its own names
    assert "fresh" in names(second) and "parsed" in second._cache

    monkeypatch.setattr(document, "SLOW_PARSE", 0.0)  # as if GPT took long to parse
    third = second.next_version(GPT + "let fresh = 1\nlet newer = 2\n")
    assert third.before is first  # the second was parsed, never compiled
    found = names(third)
    assert "parsed" not in third._cache and "decay" in found and not {"fresh", "newer"} & found
    assert third.module is not None and "newer" in names(third)  # once parsed, its own names
