"""One version of an editor's text, parsed and compiled at most once, for every feature.

An editor asks many questions about the same text (diagnostics, then hover, hints, symbols);
``Document`` answers each from one parse and one compile, kept with the text.  Half-typed
text is the normal case here, so nothing raises: a failed parse or compile is kept as the
``SchedlangError`` it was, and the features that need no tree (completion, signature help,
hover over a built-in) read the text itself with a small tokenizer that, unlike the parser,
never stops at the first error.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field

from ...errors import SchedlangError, Source, Span, split_lines
from ...program import compile_parsed
from ...syntax import ir
from ...syntax.parser import parse

FILENAME = "<editor>"
#: A parse this slow (seconds, a file of about 200 lines) is not repeated for a completion's
#: names while the version before it has them (``Document.outlined``).
SLOW_PARSE = 0.05
_BOM = "\ufeff"
#: What the tokenizer sees: strings (possibly unclosed), comments, dotted names, numbers, the rest.
TOKEN = re.compile(r'(?P<string>"[^"\n\r]*"?)|(?P<comment>#[^\n\r]*)|'
                   r'(?P<name>[A-Za-z_][A-Za-z_0-9]*(?:\.[A-Za-z_][A-Za-z_0-9]*)*\.?)|'
                   r'(?P<number>[0-9][0-9_.eE+-]*[a-z]*)|(?P<space>\s+)|(?P<op>>>|\*\*|[<>=!]=|.)',
                   re.DOTALL)
NAME_AT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*(?:\.[A-Za-z_][A-Za-z_0-9]*)*")


@dataclass(frozen=True)
class Call:
    """The call the cursor is inside: its callee, the index of the argument being written,
    the keyword being written (``mode=`` -> ``"mode"``) and the keywords already given."""

    name: str
    index: int
    keyword: str | None
    given: tuple[str, ...] = ()
    in_string: bool = False


class _Once:
    """``functools.cached_property`` with a lock per document and attribute.  Python 3.11's
    takes one lock per attribute for every instance, so a hover on one version of a file
    waited for the compile of another (or of the same one, for its lines)."""

    def __init__(self, make):
        self.make, self.name, self.__doc__ = make, make.__name__, make.__doc__

    def __get__(self, doc, owner=None):
        if doc is None:
            return self
        cache = doc._cache
        if self.name not in cache:
            with doc._locks.setdefault(self.name, threading.Lock()):  # setdefault: atomic
                if self.name not in cache:
                    cache[self.name] = self.make(doc)
        return cache[self.name]


@dataclass
class Document:
    """The text of one editor buffer and what the compiler makes of it (each at most once).

    ``before``: the last earlier version of the buffer that was compiled, so that a hover sent
    while this one compiles answers from that one (``known_program``) instead of waiting."""

    text: str
    filename: str = FILENAME
    before: Document | None = field(default=None, repr=False)
    _cache: dict = field(default_factory=dict, repr=False)
    _locks: dict = field(default_factory=dict, repr=False)
    parse_seconds: float = field(default=0.0, repr=False)  # how long ``parsed`` took

    @_Once
    def source(self) -> Source:
        return Source(self.text.removeprefix(_BOM), self.filename)

    @_Once
    def lines(self) -> list[str]:
        return split_lines(self.source.text)

    def line(self, line: int) -> str:
        return self.lines[line - 1] if 0 < line <= len(self.lines) else ""

    @_Once
    def parsed(self) -> ir.Module | SchedlangError:
        """The syntax tree, or the error that stopped the parser."""
        started = time.perf_counter()
        try:
            return parse(self.source.text, self.filename)
        except SchedlangError as exc:
            return exc
        finally:
            self.parse_seconds = time.perf_counter() - started

    @property
    def module(self) -> ir.Module | None:
        return self.parsed if isinstance(self.parsed, ir.Module) else None

    @_Once
    def compiled(self):
        """The ``Program`` (parameters at their defaults), or the error that stopped it."""
        if isinstance(self.parsed, SchedlangError):
            return self.parsed
        try:
            return compile_parsed(self.parsed, {})  # the parse made once, here and for the outline
        except SchedlangError as exc:
            return exc
        except Exception as exc:  # noqa: BLE001 - a compiler bug: say so, never crash the editor
            return SchedlangError(f"internal error while compiling: {type(exc).__name__}: {exc}",
                                  Span.at_offset(self.source, 0), code="internal")

    @property
    def program(self):
        return None if isinstance(self.compiled, SchedlangError) else self.compiled

    @property
    def is_compiled(self) -> bool:
        return "compiled" in self._cache

    def latest(self) -> Document:
        """This version if it is compiled (or no earlier one was), else the last earlier one
        that was: what a hover may read without waiting for a compile."""
        return self if self.is_compiled or self.before is None else self.before

    def settled(self, line: int) -> Document:
        """The version a question about ``line`` may read without waiting: this one once it is
        parsed, else the last compiled one when ``line`` reads the same there (a hover while a
        long file is checked answers at once instead of parsing it again beside the compile)."""
        last = self.latest()
        if last is self or "parsed" in self._cache or last.line(line) != self.line(line):
            return self
        return last

    def outlined(self) -> Document:
        """The version whose statements a completion lists: this one once it is parsed, or when
        parsing is quick; else the last compiled one (a long file's names a few keystrokes old,
        at once, instead of a second parse of it beside the check's, or a wait for that one)."""
        last = self.latest()
        if last is self or "parsed" in self._cache or last.parse_seconds < SLOW_PARSE:
            return self
        return last

    def next_version(self, text: str) -> Document:
        """The buffer's next version, which keeps the last compiled one to answer from (and only
        that one: the chain of versions stays one long)."""
        last = self.latest()
        if not last.is_compiled:
            return Document(text, self.filename)
        last.before = None
        return Document(text, self.filename, before=last)

    @property
    def known_program(self):
        """The ``Program`` of ``latest()``: values a hover shows by name (a parameter's, a
        schedule's summary) while this version's compile is still running."""
        return self.latest().program

    @property
    def error(self) -> SchedlangError | None:
        return self.compiled if isinstance(self.compiled, SchedlangError) else None

    # -- the text around a position ------------------------------------------------------

    def offset(self, line: int, column: int) -> int:
        """The offset in ``source.text`` of a (line, column), clamped to the text."""
        offset = 0
        for match_line, found in enumerate(_line_starts(self.source.text), start=1):
            if match_line == line:
                offset = found
                break
        else:
            return len(self.source.text)
        end = offset + len(self.line(line))
        return min(offset + max(column - 1, 0), end)

    def word_at(self, line: int, column: int) -> tuple[str, Span] | None:
        """The (dotted) name under or just before the cursor, with its span; the part up to
        the dot under the cursor for ``torch.StepLR`` hovered at ``torch``."""
        text = self.line(line)
        for match in NAME_AT.finditer(text):
            if match.start() <= column - 1 <= match.end():
                word, start = match.group(), match.start()
                cut = word.find(".", column - 1 - start)
                word = word[:cut] if cut != -1 else word
                return word, Span(self.source, line, start + 1, line, start + 1 + len(word))
        return None

    def tokens_before(self, line: int, column: int) -> list[tuple[str, str]]:
        """(kind, text) of every token before the cursor, comments and spaces dropped."""
        prefix = self.source.text[: self.offset(line, column)]
        return [(m.lastgroup, m.group()) for m in TOKEN.finditer(prefix)
                if m.lastgroup not in ("space", "comment")]

    def call_at(self, line: int, column: int) -> Call | None:
        """The innermost call the cursor is in (read from the tokens, so it works while the file
        does not parse), or None outside every call."""
        stack: list[list] = []  # [name, index, keyword, given, open brackets]
        tokens = self.tokens_before(line, column)
        previous = None
        in_string = False
        for kind, text in tokens:
            in_string = kind == "string" and (len(text) == 1 or not text.endswith('"'))
            if text == "(":
                name = previous[1] if previous and previous[0] == "name" else ""
                stack.append([name, 0, None, [], 0])
            elif text == "[" and stack:
                stack[-1][4] += 1
            elif text == "]" and stack:
                stack[-1][4] = max(stack[-1][4] - 1, 0)
            elif text == ")" and stack:
                stack.pop()
            elif text == "," and stack and stack[-1][4] == 0:
                stack[-1][1] += 1
                stack[-1][2] = None
            elif text == "=" and stack and previous and previous[0] == "name":
                stack[-1][2] = previous[1]
                stack[-1][3].append(previous[1])
            previous = (kind, text)
        frames = [f for f in stack if f[0]]
        if not frames:
            return None
        name, index, keyword, given, _ = frames[-1]
        return Call(name, index, keyword, tuple(given), in_string)


def _line_starts(text: str):
    """The offset where each line starts (``errors.LINE_BREAK``'s lines)."""
    yield 0
    for match in re.finditer(r"\r\n|\r|\n", text):
        yield match.end()
