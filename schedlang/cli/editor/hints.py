"""Inlay hints: the step where each ``>>`` segment starts, and the value of a computed duration.

``a >> b`` starts ``b`` where ``a`` ends, which the text never says: ``warmup(linear, 2000) >>
cosine(...)`` starts the cosine at step 2000, and after three segments with lengths computed
from parameters nobody can tell by eye.  Lowering records every ``>>`` boundary (an
``algebra.Mark`` of kind ``join``, at the segment after it) and every duration it read
(``Lowered.durations``: the steps and the span they were written at); the hints are those,
with the parameters at their values.  A duration written as a plain whole number gets no
hint: it would repeat the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...errors import Span
from .document import Document

PLAIN_NUMBER = re.compile(r"[0-9][0-9_]*\Z")
MAX_HINTS = 500


@dataclass(frozen=True)
class Hint:
    line: int
    column: int
    label: str
    kind: str      # "step" (before a segment) or "duration" (after a computed length)
    tooltip: str = ""


def _text(doc: Document, span: Span) -> str:
    if span.line != span.end_line:
        return ""
    return doc.line(span.line)[span.column - 1:span.end_column - 1]


def hints(doc: Document) -> list[Hint]:
    """Every hint of the file (empty when it does not compile)."""
    program = doc.program
    if program is None:
        return []
    bound = program.substitutions
    starts: dict[tuple[int, int], set[int]] = {}
    for schedule in program:
        for mark in schedule.segment.marks:
            span = mark.span
            if mark.kind != "join" or span is None or span.source.text != doc.source.text:
                continue
            step = mark.step.xreplace(bound)
            if step.is_Integer:
                starts.setdefault((span.line, span.column), set()).add(int(step))
    found = [Hint(line, column, "step " + " | ".join(f"{s:_}" for s in sorted(steps)) + ":", "step",
                  "the step where this segment starts")
             for (line, column), steps in sorted(starts.items())]
    seen = set()
    for steps, span, _ in program.durations:
        if span is None or span.source.text != doc.source.text:
            continue
        text = _text(doc, span)
        value = steps.xreplace(bound)
        key = (span.end_line, span.end_column)
        if not text or PLAIN_NUMBER.match(text) or not value.is_Integer or key in seen:
            continue
        seen.add(key)
        found.append(Hint(span.end_line, span.end_column, f"= {int(value):_} steps", "duration",
                          f"{text} is {int(value)} steps"))
    return found[:MAX_HINTS]
