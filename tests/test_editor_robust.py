"""Half-typed text never brings the editor's features down (issue 30, "never down").

Every prefix of every example (what an editor sees while the file is typed, character by
character) and every file of tests/diagnostics/ (each one a mistake) goes through every
feature of the core: no exception, every error located, the compiler's own errors only
(no "internal" ones), and each call within a bounded time.
"""

import time
from pathlib import Path

import pytest

from schedlang.cli.editor import actions, completion, diagnostics, hints, hover, lenses, symbols
from schedlang.cli.editor.document import Document
from schedlang.cli.editor.positions import ENCODINGS, Lines
from schedlang.errors import SchedlangError

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.sched"))
MISTAKES = sorted((ROOT / "tests" / "diagnostics").glob("*.sched"))
BUDGET = 5.0  # seconds for one feature on one text


def _end(doc: Document) -> tuple[int, int]:
    lines = doc.lines or [""]
    return len(lines), len(lines[-1]) + 1


def _answered(command, *args):
    """A lens command's answer: text, or a located ``SchedlangError`` (an unbound parameter)."""
    try:
        assert command(*args)
    except SchedlangError as exc:
        assert exc.message, exc


def _every_feature(text: str, warnings: bool = False) -> None:
    doc = Document(text)
    line, column = _end(doc)
    calls = [lambda: diagnostics.errors(doc), lambda: hover.hover(doc, line, column),
             lambda: completion.complete(doc, line, column), lambda: completion.signature(doc, line, column),
             lambda: symbols.definitions(doc), lambda: symbols.at(doc, line, column),
             lambda: hints.hints(doc), lambda: actions.quick_fixes(doc, 1, line),
             lambda: actions.formatted(doc), lambda: lenses.lenses(doc)]
    if warnings:
        calls.append(lambda: diagnostics.warnings(doc))
        for name in {lens.name for lens in lenses.lenses(doc)}:
            calls += [lambda name=name: _answered(lenses.summary, doc, name),
                      lambda name=name: _answered(lenses.plot, doc, name)]
    for call in calls:
        start = time.perf_counter()
        call()
        assert time.perf_counter() - start < BUDGET, (text[-80:], call)
    for problem in diagnostics.errors(doc):
        assert problem.span is not None and problem.code != "internal", (text[-80:], problem)
        for encoding in ENCODINGS:
            (l0, c0), (l1, c1) = Lines(text, encoding).range(problem.span)
            assert 0 <= l0 <= l1 and c0 >= 0 and c1 >= 0


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_prefix_of_every_example(path):
    text = path.read_text(encoding="utf-8")
    for end in range(len(text) + 1):
        _every_feature(text[:end])
    _every_feature(text, warnings=True)


@pytest.mark.parametrize("path", MISTAKES, ids=lambda p: p.name)
def test_every_mistake_file(path):
    text = path.read_bytes().decode("utf-8", errors="replace")
    _every_feature(text, warnings=True)
    for word in range(0, len(text), max(len(text) // 20, 1)):  # and hovering all over it
        doc = Document(text)
        for line in range(1, len(doc.lines) + 1):
            hover.hover(doc, line, word % (len(doc.line(line)) + 1) + 1)
