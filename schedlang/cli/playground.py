"""What the docs site's playground (``docs/playground/``) shows, as JSON-able dicts.

The page runs schedlang itself in the browser (Pyodide, in a Web Worker) and calls
this module with the text of its two boxes.  Nothing here is a second
implementation: the diagnostics are ``SchedlangError`` / warning renderings (the
caret text the CLI prints) with ``json_output``'s locations, the summary is
``analysis.summarise``'s, the plot is ``plot.panels`` drawn by ``plot_svg``, and the
formula table and the verdict are what ``schedlang show`` and ``schedlang verify``
print, run in process on the boxes' text (``_cli``).

The editor box asks the language server's feature core (``editor``) what the name under the
pointer means (``hover``) and what may be typed at the cursor (``complete``), so the page and
an editor say the same things.

``analyse(source, other)`` is the quick part (parse, show, plot, A and B overlaid
when the second box holds a schedule); ``check(source)`` (the summary and the
warnings: a scan of every step) and ``verify(source, other)`` (the proof) can take
longer, so the page shows each part as it comes.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import tempfile

from ..errors import SchedlangError
from ..program import compile as compile_program
from . import commands as cli
from . import json_output
from .analysis import summarise
from .editor import completion
from .editor import hover as editor_hover
from .editor.document import NAME_AT, Document
from .plot import panels, title
from .plot_svg import svg
from .ranges import plot_steps

SCHEMA = "schedlang.playground/1"
FILE_A, FILE_B = "schedule.sched", "other.sched"  # the names diagnostics show for the two boxes


def _diagnostic(kind: str, message: str, span, hint, rendered: str) -> dict:
    return {"kind": kind, **json_output.diagnostic(message, span, hint), "text": rendered}


def _error(exc: SchedlangError) -> dict:
    return _diagnostic("error", exc.message, exc.span, exc.hint, str(exc))


def _compile(source: str, filename: str):
    return compile_program(source, {}, filename)


def analyse(source: str, other: str | None = None) -> dict:
    """The first box's error (if it does not compile), ``show`` table and plot (the second
    box's schedules overlaid, with their difference, when it compiles): the quick part."""
    doc = {"schema": SCHEMA, "ok": False, "diagnostics": [], "show": None, "plot": None, "plot_error": None}
    try:
        program = _compile(source, FILE_A)
    except SchedlangError as exc:
        doc["diagnostics"].append(_error(exc))
        return doc
    doc["ok"] = True
    code, out, err = _cli(["show", FILE_A], {FILE_A: source})
    doc["show"] = out if code == 0 else err
    sources = [(FILE_A, program)]
    if other is not None and other.strip():
        with contextlib.suppress(SchedlangError):  # the verify panel reports B's errors
            sources.append((FILE_B, _compile(other, FILE_B)))
    try:
        doc["plot"] = _svg(sources)
    except SchedlangError as exc:
        doc["plot_error"] = _error(exc)
    return doc


def check(source: str, other: str | None = None) -> dict:
    """``schedlang check``: its summary and its warnings with their carets (it scans every
    step of a finite schedule, so it comes after ``analyse``); ``other`` is not used."""
    doc = {"schema": SCHEMA, "ok": False, "diagnostics": [], "check": None}
    try:
        report = summarise(_compile(source, FILE_A))
    except SchedlangError as exc:
        doc["diagnostics"].append(_error(exc))
        return doc
    doc["ok"] = True
    doc["diagnostics"] = [_diagnostic("warning", w.message, w.span, w.hint, w.render())
                          for w in report.warnings]
    doc["check"] = report.text
    return doc


def _svg(sources) -> str:
    steps = plot_steps(*(program for _, program in sources))
    return svg(panels(sources, steps), steps, title([label for label, _ in sources]))


def verify(source: str, other: str) -> dict:
    """``schedlang verify schedule.sched other.sched``: its verdict and its text (the first
    differing step and the values around it), or the caret diagnostic of either box."""
    code, out, err = _cli(["verify", FILE_A, FILE_B], {FILE_A: source, FILE_B: other})
    verdict = {0: "equivalent", 1: "different"}.get(code)
    if verdict is None:
        verdict = "unknown" if any(line.startswith("unknown:") for line in out.splitlines()) else "error"
    return {"schema": SCHEMA, "verdict": verdict, "text": out, "diagnostics": err}


def run(source: str, other: str | None = None) -> dict:
    """Every part at once (for Python callers and tests): ``analyse``, ``check`` (its
    diagnostics after ``analyse``'s), and ``verify`` when the second box holds text and the
    first compiles (else ``verify`` would only repeat the first box's error)."""
    doc = analyse(source, other)
    checked = check(source)
    if doc["ok"]:
        doc["diagnostics"] += checked["diagnostics"]
    doc["check"] = checked["check"]
    wanted = doc["ok"] and other is not None and other.strip()
    doc["verify"] = verify(source, other) if wanted else None
    return doc


_last: list[Document] = []  # the editor's newest text: hovers and completions reuse its compile


def _document(source: str) -> Document:
    if not _last or _last[0].text != source:
        _last[:] = [Document(source, FILE_A)]
    return _last[0]


def _plain(markdown: str) -> str:
    """The hover's Markdown as the page shows it (text, never HTML): code fences and backticks off."""
    text = re.sub(r"```[a-z]*\n?", "", markdown)
    return text.replace("`", "").strip()


def hover(source: str, line: int, column: int) -> dict:
    """What the name at (line, column) (1-based; column in code points) means, as plain text with
    the span it is about, or ``hover: None`` where there is nothing to say."""
    found = editor_hover.hover(_document(source), line, column)
    if found is None:
        return {"schema": SCHEMA, "hover": None}
    span = found.span
    return {"schema": SCHEMA, "hover": {"text": _plain(found.markdown), "line": span.line, "col": span.column,
                                        "end_line": span.end_line, "end_col": span.end_column}}


MAX_ITEMS = 50


def complete(source: str, line: int, column: int) -> dict:
    """What may be typed at (line, column): the items whose label starts with the word before the
    cursor (after its last dot), and the column where that word starts (what an item replaces)."""
    doc = _document(source)
    before = doc.line(line)[:max(column - 1, 0)]
    word = re.search(NAME_AT.pattern + r"\.?\Z", before)
    typed = word.group().rsplit(".", 1)[-1] if word else ""
    start = column - len(typed)
    items = [{"label": i.label, "kind": i.kind, "detail": _plain(i.detail), "insert": i.insert or i.label}
             for i in completion.complete(doc, line, column)
             if i.label.startswith(typed) and i.label != typed]
    return {"schema": SCHEMA, "items": items[:MAX_ITEMS], "line": line, "col": start}


def editor_json(part: str, source: str, line: int, column: int) -> str:
    """``hover`` or ``complete`` as a JSON string (what the Web Worker posts)."""
    return json.dumps({"hover": hover, "complete": complete}[part](source, int(line), int(column)),
                      ensure_ascii=False)


def run_json(source: str, other: str | None = None, part: str = "run") -> str:
    """``run``/``analyse``/``check``/``verify`` as a JSON string (what the Web Worker posts)."""
    parts = {"run": run, "analyse": analyse, "check": check, "verify": verify}
    return json.dumps(parts[part](source, other), ensure_ascii=False, allow_nan=False)


def _cli(argv: list[str], files: dict[str, str]) -> tuple[int, str, str]:
    """``schedlang ARGV`` in process, over ``files`` written to a fresh directory (the boxes'
    text): exit status, standard output, standard error."""
    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="schedlang-playground-") as directory:
        for name, text in files.items():
            with open(os.path.join(directory, name), "w", encoding="utf-8", newline="\n") as handle:
                handle.write(text)
        os.chdir(directory)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = cli.main(argv)
        finally:
            os.chdir(cwd)
    return code, out.getvalue(), err.getvalue()
