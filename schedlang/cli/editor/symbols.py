"""The names a file declares: the outline, go to definition, references and rename.

A ``param``, ``let``, ``def`` or ``schedule`` statement declares one name, written right after
its keyword (the statement's span starts at it); every other use is an ``ir.Name`` with that
id, except inside a ``def`` whose own parameters shadow it.  Everything here reads the syntax
tree, so it works for a file that parses, compiles or not.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from ...errors import Span
from ...library import stdlib
from ...syntax import ir
from ...syntax.parser import RESERVED, STATEMENT_WORDS
from .document import Document

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z_0-9]*\Z")
KINDS = {ir.Param: "param", ir.Let: "let", ir.Def: "def", ir.ScheduleDecl: "schedule", ir.BatchDecl: "batch",
         ir.RunDecl: "run"}


@dataclass(frozen=True)
class Definition:
    kind: str             # param, let, def, schedule, batch, run
    name: str
    span: Span            # the whole statement
    name_span: Span | None  # where the name is written (None: `lr` of a bare expression, batch, run)
    node: ir.Node


def definitions(doc: Document) -> list[Definition]:
    """Every statement of the file, in order (empty when it does not parse)."""
    module = doc.module
    if module is None:
        return []
    found = []
    for statement in module.statements:
        kind = KINDS.get(type(statement))
        if kind is None:
            continue
        name = getattr(statement, "name", kind)  # `batch` and `run` have no name of their own
        span = statement.span
        name_span = Span(span.source, span.line, span.column, span.line, span.column + len(name))
        written = doc.line(span.line)[span.column - 1:span.column - 1 + len(name)]
        named = written == name and kind not in STATEMENT_WORDS
        found.append(Definition(kind, name, span, name_span if named else None, statement))
    return found


def defined(doc: Document) -> dict[str, Definition]:
    return {d.name: d for d in definitions(doc) if d.name_span is not None}


def _children(node):
    for f in dataclasses.fields(node):
        value = getattr(node, f.name)
        if isinstance(value, ir.Node):
            yield value
        elif isinstance(value, tuple):
            yield from (v for v in value if isinstance(v, ir.Node))


def names(node: ir.Node, shadowed: frozenset = frozenset()):
    """(``ir.Name``, the def parameters in scope there, whether it is called) for every name used
    under ``node``.  A called name is a built-in or a ``def`` (``warmup(linear, warmup)`` calls
    the built-in even where a ``param warmup`` exists); any other name is a value."""
    stack = [(node, shadowed, False)]
    while stack:  # no recursion: nesting is bounded by the parser, but stay flat anyway
        current, scope, called = stack.pop()
        if isinstance(current, ir.Name):
            yield current, scope, called
            continue
        if isinstance(current, ir.Def):
            scope = scope | frozenset(current.params)
        stack.extend((child, scope, isinstance(current, ir.Call) and child is current.func)
                     for child in reversed(list(_children(current))))


def references(doc: Document, name: str, include_declaration: bool = True) -> list[Span]:
    """Where ``name`` (declared in the file) is used, and declared when asked."""
    declared = defined(doc).get(name)
    if declared is None or doc.module is None:
        return []
    found = [declared.name_span] if include_declaration else []
    for node, scope, called in names(doc.module):
        if node.id == name and name not in scope and called == (declared.kind == "def"):
            found.append(node.span)
    return found


def at(doc: Document, line: int, column: int) -> Definition | None:
    """The declared name under the cursor: at its declaration or at a use."""
    word = doc.word_at(line, column)
    if word is None:
        return None
    declared = defined(doc).get(word[0])
    if declared is None:
        return None
    if _inside(declared.name_span, line, column):
        return declared
    spans = references(doc, declared.name, include_declaration=False)
    return declared if any(_inside(s, line, column) for s in spans) else None


def _inside(span: Span, line: int, column: int) -> bool:
    return span.line == line and span.column <= column <= span.end_column


def rename(doc: Document, line: int, column: int, new: str) -> list[tuple[Span, str]] | str:
    """The edits renaming the name under the cursor everywhere, or why it cannot be renamed."""
    declared = at(doc, line, column)
    if declared is None:
        return "only a name declared by param, let, def or schedule can be renamed"
    if not IDENTIFIER.match(new):
        return f"'{new}' is not a name"
    if new in RESERVED:
        return f"'{new}' is a word of the language"
    taken = set(defined(doc)) | set(stdlib.SCHEDULES) | set(stdlib.MATH) | set(stdlib.CONSTANTS) | {"t"}
    if new != declared.name and new in taken:
        return f"'{new}' is already a name in this file or the standard library"
    return [(span, new) for span in references(doc, declared.name)]
