"""Edits an editor applies: the quick fix a hint suggests, and ``fmt``'s layout.

A quick fix is the error's ``Fix`` (``errors.suggest`` made it with the hint), never a
reading of the hint's prose; formatting is ``syntax.fmt.format_source``, the very layout
``schedlang fmt`` writes, offered only when the text parses (a half-typed file is left alone).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import SchedlangError, Span
from ...syntax.fmt import format_source
from .diagnostics import errors
from .document import Document


@dataclass(frozen=True)
class Action:
    title: str
    span: Span
    text: str
    code: str


def quick_fixes(doc: Document, line: int, end_line: int) -> list[Action]:
    """The fixes of the problems on lines ``line..end_line``."""
    found = []
    for problem in errors(doc):
        fix = problem.fix
        if fix is None or not (line <= problem.span.line <= end_line or line <= fix.span.line <= end_line):
            continue
        shown = fix.text if fix.text.startswith('"') else f"'{fix.text}'"
        found.append(Action(f"Replace with {shown}", fix.span, fix.text, problem.code))
    return found


def formatted(doc: Document) -> str | None:
    """The text as ``schedlang fmt`` lays it out; None when it does not parse or is laid out."""
    try:
        text = format_source(doc.source.text, doc.filename)
    except SchedlangError:
        return None
    return None if text == doc.source.text else text
