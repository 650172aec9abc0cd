"""Where in the user's Python a piece of a schedule was built: a ``Span`` into the ``.py`` file.

``schedlang.build`` reports a mistake the way a ``.sched`` file does: file, line,
column and a caret.  The "file" is the Python source that called ``sb.cosine(...)``
(or applied ``>>``), read through ``linecache``; the columns come from the code
object's positions table (Python 3.11+), so the caret underlines the call or the
operator expression itself.  Where the instruction's source text is available it is
parsed (``ast.parse``: read, never run) to find each argument's own columns, so a
misspelt keyword is underlined alone.
"""

from __future__ import annotations

import ast
import functools
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from ..errors import Source, Span, char_column, python_span

_PACKAGE = str(Path(__file__).resolve().parent)


@functools.lru_cache(maxsize=256)
def _positions(code) -> tuple:
    return tuple(code.co_positions())


_column = char_column


@dataclass(frozen=True)
class Site:
    """The user's expression being evaluated: its span and, when it could be read, its ``ast``."""

    span: Span
    tree: ast.AST | None = None
    line_offset: int = 0  # ast line 1 is file line line_offset + 1
    col_offset: int = 0   # the parsed first line starts at this 0-based column of the file

    def of(self, node: ast.AST | None) -> Span:
        """The span of a sub-expression of ``tree`` (the whole site's when unknown)."""
        if node is None or getattr(node, "end_lineno", None) is None:
            return self.span
        line, col = self._at(node.lineno, node.col_offset)
        end_line, end = self._at(node.end_lineno, node.end_col_offset)
        return Span(self.span.source, line, col, end_line, max(end, col + 1) if end_line == line else end)

    def _at(self, lineno: int, byte_offset: int) -> tuple[int, int]:
        """File line and 1-based column of an ``ast`` position in ``"(" + text``."""
        line = self.line_offset + lineno
        text = self.span.source.line(line)
        if lineno == 1:  # the parsed first line is "(" + the line from the site's column on
            parsed = "(" + text[self.col_offset:]
            return line, self.col_offset + _column(parsed, byte_offset) - 1
        return line, _column(text, byte_offset)

    def argument(self, index: int | None = None, keyword: str | None = None) -> Span:
        """The span of positional argument ``index`` or of ``keyword=value`` in a call site."""
        call = self.tree
        if not isinstance(call, ast.Call):
            return self.span
        if keyword is not None:
            return self.of(next((k for k in call.keywords if k.arg == keyword), None))
        if any(isinstance(a, ast.Starred) for a in call.args[: (index or 0) + 1]):
            return self.span
        return self.of(call.args[index] if index is not None and index < len(call.args) else None)

    def keyword_value(self, keyword: str) -> Span:
        """The span of the value of ``keyword=value`` in a call site."""
        call = self.tree
        if not isinstance(call, ast.Call):
            return self.span
        return self.of(next((k.value for k in call.keywords if k.arg == keyword), None))

    def parameter_value(self, name: str, key: bool = False) -> Span:
        """Where a parameter's value is written in a call site: ``name=value`` (``.bind``) or the
        entry ``"name": value`` of a ``params={...}`` literal (its key with ``key``); else the
        whole site."""
        call = self.tree
        if not isinstance(call, ast.Call):
            return self.span
        for keyword in call.keywords:
            if keyword.arg == name:
                return self.of(keyword.value)
            if keyword.arg == "params" and isinstance(keyword.value, ast.Dict):
                for k, v in zip(keyword.value.keys, keyword.value.values):
                    if isinstance(k, ast.Constant) and k.value == name:
                        return self.of(k if key else v)
                return self.of(keyword.value)
        return self.span

    def operand(self, index: int) -> Span:
        """The span of the left (0) or right (1) operand of an operator site."""
        node = self.tree
        if isinstance(node, ast.BinOp):
            return self.of((node.left, node.right)[index])
        if isinstance(node, ast.Compare) and len(node.comparators) == 1:
            return self.of((node.left, node.comparators[0])[index])
        return self.span


_ASSIGNED = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(?:\(\s*)*")


def assigned_name(span: Span | None) -> str | None:
    """``decay`` when the piece at ``span`` is the whole right side of ``decay = ...`` in the
    user's file (parentheses around it allowed): what ``to_source()`` keeps as a ``let``.
    The text is only read, never run."""
    if span is None or not span.source.text:
        return None
    before = span.source.line(span.line)[:span.column - 1]
    found = _ASSIGNED.fullmatch(before)
    if found is None:
        return None
    after = span.source.line(span.end_line)[span.end_column - 1:].split("#", 1)[0]
    return found.group(1) if after.replace(" ", "").strip() == ")" * before.count("(") else None


def caller(depth_hint: int = 2) -> Site:
    """The site in the first frame outside ``schedlang.build`` (the user's line)."""
    frame = sys._getframe(depth_hint)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
    if frame is None:  # pragma: no cover - there is always a caller
        return Site(Span(Source("", "<python>"), 1, 1, 1, 2))
    code = frame.f_code
    lineno = frame.f_lineno or code.co_firstlineno
    try:
        positions = _positions(code)[frame.f_lasti // 2]
    except (IndexError, ValueError):
        positions = None
    span = python_span(code.co_filename, lineno, positions, frame.f_globals)
    if not positions or None in positions or positions[0] != lineno or not span.source.text:
        return Site(span)
    start_line, end_line, start_byte, end_byte = positions
    col = _column(span.source.line(start_line), start_byte)
    end = _column(span.source.line(end_line), end_byte)
    return Site(span, *_parse(span.source, start_line, end_line, col, end))


def _parse(source: Source, start_line: int, end_line: int, col: int, end: int) -> tuple:
    """The expression at the site as an ``ast`` (never executed), or nothing if it does not parse."""
    lines = [source.line(n) for n in range(start_line, end_line + 1)]
    lines[-1] = lines[-1][: end - 1]
    lines[0] = lines[0][col - 1:]
    text = "\n".join(lines)
    if len(text) > 20_000:
        return ()
    try:
        tree = ast.parse("(" + text + "\n)", mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ()
    return tree, start_line - 1, col - 1
