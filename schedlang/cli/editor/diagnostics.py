"""What is wrong with a text, as an editor lists it: the compiler's error, then ``check``'s warnings.

The error is quick (parse and compile, milliseconds) and comes first; the warnings need
``check``'s scan of every step (``analysis.summarise``, up to a few hundred milliseconds), so
they are a second call an editor may make later, or cancel when the text changes again.  A
file has at most one error (the parser stops at the first) and any number of warnings.  Each
problem keeps its span in the compiler's units (``positions`` converts), a stable ``code``
and, where a hint names a replacement, the ``Fix`` itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import Fix, SchedlangError, Span
from ..analysis import summarise
from .document import Document

ERROR, WARNING = "error", "warning"


@dataclass(frozen=True)
class Problem:
    severity: str          # ERROR or WARNING
    message: str
    span: Span             # always located: the start of the file when the compiler gave none
    hint: str | None
    code: str              # "unknown-name", "syntax", "jump", ...; "error"/"warning" when unnamed
    fix: Fix | None = None


def _located(doc: Document, span: Span | None) -> Span:
    if span is None or span.source.text != doc.source.text:
        return Span.at_offset(doc.source, 0)
    return span


def errors(doc: Document) -> list[Problem]:
    """The compile error of ``doc`` (empty when it compiles)."""
    exc = doc.error
    if exc is None:
        return []
    fix = exc.fix if exc.fix is not None and exc.fix.span.source.text == doc.source.text else None
    return [Problem(ERROR, exc.message, _located(doc, exc.span), exc.hint, exc.code or ERROR, fix)]


def warnings(doc: Document) -> list[Problem]:
    """``schedlang check``'s warnings for ``doc`` (empty when it does not compile)."""
    program = doc.program
    if program is None:
        return []
    try:
        report = summarise(program)
    except SchedlangError as exc:  # a bound value the scan cannot evaluate: the check's own error
        return [Problem(ERROR, exc.message, _located(doc, exc.span), exc.hint, exc.code or ERROR)]
    return [Problem(WARNING, w.message, _located(doc, w.span), w.hint, getattr(w, "code", None) or WARNING)
            for w in report.warnings]


def problems(doc: Document) -> list[Problem]:
    """The error, or else the warnings: everything ``schedlang check`` would say."""
    return errors(doc) or warnings(doc)
