"""JSON read with positions: the same ``Node`` tree ``yaml_source`` builds, from a JSON parser.

DeepSpeed configs, serialized Keras schedules and HF ``TrainingArguments`` files are JSON; read
as YAML they were refused for a tab (real DeepSpeed configs are often tab-indented) and read
``1e-4`` as a string.  This is a small recursive-descent JSON parser (RFC 8259, as Python's
``json`` reads it: strings through ``json.decoder.scanstring``) that keeps a ``Span`` for every
value and key, so importers point at the offending key as they do for YAML.

Every failure is a located ``SchedlangError``, never a traceback: a syntax error at its line and
column, nesting deeper than ``MAX_CONFIG_DEPTH`` (no ``RecursionError`` for 100 000 brackets), a
number longer than ``MAX_DIGITS`` (no 5000-digit integer converted), a lone surrogate escape
(``"\\ud800"``: text that cannot be written as UTF-8), ``NaN``/``Infinity`` (not JSON).
"""

from __future__ import annotations

import bisect
import json
import re

from ...errors import LINE_BREAK, SchedlangError, Source, Span, warn
from ...limits import MAX_CONFIG_DEPTH, LimitError, check_size, decimal
from .yaml_source import Node

_SPACE = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_WORDS = {"true": True, "false": False, "null": None}


def load(text: str, filename: str = "<string>") -> Node:
    """Parse JSON text into ``Node``s with spans; any problem is a located ``SchedlangError``."""
    source = Source(text.removeprefix("\ufeff"), filename)
    check_size(source.text, filename)
    parser = _Parser(source)
    position = parser.skip(0)
    if position == len(source.text):
        raise SchedlangError("the JSON file is empty", Span(source, 1, 1, 1, 2))
    node, position = parser.value(position, 0)
    position = parser.skip(position)
    if position != len(source.text):
        raise parser.error("extra text after the JSON value", position,
                           hint="a JSON file holds one object")
    return node


class _Parser:
    def __init__(self, source: Source):
        self.source, self.text = source, source.text
        self.starts = [0] + [m.end() for m in LINE_BREAK.finditer(self.text)]

    def span(self, start: int, end: int) -> Span:
        line = bisect.bisect_right(self.starts, start) - 1
        column = start - self.starts[line] + 1
        end_line = bisect.bisect_right(self.starts, max(end - 1, start)) - 1
        end_column = max(end, start + 1) - self.starts[end_line] + 1
        return Span(self.source, line + 1, column, end_line + 1, end_column)

    def error(self, message: str, position: int, hint: str | None = None, end: int | None = None):
        return SchedlangError(message, self.span(position, end or position + 1), hint=hint)

    def skip(self, position: int) -> int:
        return _SPACE.match(self.text, position).end()

    def value(self, position: int, depth: int) -> tuple[Node, int]:
        text = self.text
        if position >= len(text):
            raise self.error("the JSON ends in the middle of a value", max(len(text) - 1, 0))
        char = text[position]
        if char in "{[":
            if depth >= MAX_CONFIG_DEPTH:
                raise self.error(f"the JSON nests more than {MAX_CONFIG_DEPTH} levels deep", position,
                                 hint="a scheduler configuration is a few levels deep")
            return (self.mapping if char == "{" else self.array)(position, depth + 1)
        if char == '"':
            value, end = self.string(position)
            return Node(value, self.span(position, end)), end
        number = _NUMBER.match(text, position)
        if number and number.end() > position:
            return self.number(number), number.end()
        for word, value in _WORDS.items():
            if text.startswith(word, position):
                end = position + len(word)
                return Node(value, self.span(position, end)), end
        word = re.match(r"[A-Za-z]+", text[position:position + 20])
        if word and word.group(0) in ("NaN", "Infinity"):
            raise self.error(f"{word.group(0)} is not a JSON number", position,
                             end=position + len(word.group(0)), hint="a schedule's values are finite numbers")
        raise self.error(f"expected a JSON value, found {text[position]!r}", position)

    def number(self, match) -> Node:
        literal = match.group(0)
        span = self.span(match.start(), match.end())
        try:
            decimal(literal)  # the digit and exponent limits, before Python converts anything
        except LimitError as exc:
            raise SchedlangError(str(exc), span, hint=exc.hint) from None
        value = float(literal) if match.group(1) or match.group(2) else int(literal)
        return Node(value, span)

    def string(self, position: int) -> tuple[str, int]:
        try:
            value, end = json.decoder.scanstring(self.text, position + 1, True)
        except json.JSONDecodeError as exc:
            raise self.error(f"not valid JSON: {exc.msg}", exc.pos) from None
        surrogate = next((i for i, c in enumerate(value) if "\ud800" <= c <= "\udfff"), None)
        if surrogate is not None:
            raise self.error(f"the string holds a lone surrogate (U+{ord(value[surrogate]):04X}): not text",
                             position, end=end, hint="a \\ud800-\\udfff escape must be half of a pair")
        return value, end

    def mapping(self, position: int, depth: int) -> tuple[Node, int]:
        start, text = position, self.text
        values: dict[str, Node] = {}
        keys: dict[str, Span] = {}
        position = self.skip(position + 1)
        if text.startswith("}", position):
            return Node(values, self.span(start, position + 1), keys), position + 1
        while True:
            if not text.startswith('"', position):
                raise self.error("expected a \"key\" in double quotes", position)
            key, end = self.string(position)
            key_span = self.span(position, end)
            if key in values:  # Python's json (and so every framework) keeps the last silently
                warn(f"'{key}' is given twice; the later value wins, as Python's json reads it", key_span,
                     hint=f"first at line {keys[key].line}; delete one of them")
            position = self.skip(end)
            if not text.startswith(":", position):
                raise self.error("expected ':' after the key", position)
            values[key], position = self.value(self.skip(position + 1), depth)
            keys[key] = key_span
            position = self.skip(position)
            if text.startswith(",", position):
                position = self.skip(position + 1)
                continue
            if text.startswith("}", position):
                return Node(values, self.span(start, position + 1), keys), position + 1
            raise self.error("expected ',' or '}'", position)

    def array(self, position: int, depth: int) -> tuple[Node, int]:
        start, text = position, self.text
        items: list[Node] = []
        position = self.skip(position + 1)
        if text.startswith("]", position):
            return Node(items, self.span(start, position + 1)), position + 1
        while True:
            item, position = self.value(position, depth)
            items.append(item)
            position = self.skip(position)
            if text.startswith(",", position):
                position = self.skip(position + 1)
                continue
            if text.startswith("]", position):
                return Node(items, self.span(start, position + 1)), position + 1
            raise self.error("expected ',' or ']'", position)
