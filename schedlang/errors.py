"""Every user-facing failure is a ``SchedlangError`` that points into the source.

A message alone is not enough to fix a schedule: the user needs the file, the
line and column, the offending text underlined and, where we can guess, a
hint.  This module owns the one ``Span`` type and the one renderer, so every
stage (parser, lowering, checks, CLI) reports errors the same way.
"""

from __future__ import annotations

import functools
import linecache
import re
import warnings
from dataclasses import dataclass

_SNIPPET_WIDTH = 100
#: What ends a line, for the parser, every diagnostic and every importer's spans alike: LF, CRLF
#: and a lone CR (as editors and Python count them).  A form feed, U+2028 and the other
#: characters ``str.splitlines`` also splits at do not end a line here: lark does not count them,
#: so a caret quoting ``splitlines()`` would quote the wrong line after one.
LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """The lines of ``text``, without their line breaks (``LINE_BREAK``; a last empty line dropped,
    as ``splitlines`` does)."""
    lines = LINE_BREAK.split(text)
    return lines[:-1] if lines and lines[-1] == "" else lines


@dataclass(frozen=True)
class Source:
    """The text of one schedule file and the name to show for it."""

    text: str
    filename: str = "<string>"

    def line(self, lineno: int) -> str:
        lines = split_lines(self.text)
        return lines[lineno - 1] if 0 < lineno <= len(lines) else ""


@dataclass(frozen=True)
class Span:
    """A region of a source: 1-based line and column, end exclusive."""

    source: Source
    line: int
    column: int
    end_line: int
    end_column: int

    @classmethod
    def at_offset(cls, source: Source, offset: int, length: int = 1) -> Span:
        before = source.text[:offset]
        breaks = list(LINE_BREAK.finditer(before))
        line = len(breaks) + 1
        column = offset - (breaks[-1].end() if breaks else 0) + 1
        return cls(source, line, column, line, column + max(length, 1))

    def to(self, other: Span | None) -> Span:
        """The span from the start of ``self`` to the end of ``other``."""
        if other is None:
            return self
        return Span(self.source, self.line, self.column, other.end_line, other.end_column)

    @property
    def location(self) -> str:
        return f"{self.source.filename}:{self.line}:{self.column}"

    def snippet(self) -> str:
        text = self.source.line(self.line).expandtabs(1)
        if self.end_line == self.line:
            width = max(self.end_column - self.column, 1)
        else:
            width = max(len(text) - self.column + 1, 1)
        column = self.column
        if len(text) > _SNIPPET_WIDTH:  # show a window of a long line around the culprit
            start = max(0, min(column - 1 - _SNIPPET_WIDTH // 2, len(text) - _SNIPPET_WIDTH))
            text = ("..." if start else "") + text[start:start + _SNIPPET_WIDTH] + "..."
            column = column - start + (3 if start else 0)
            width = max(min(width, _SNIPPET_WIDTH - (column - 1) + 3), 1)  # a caret, always
        gutter = f"{self.line:>4} | "
        pad = " " * (len(gutter) - 2) + "| "
        return f"{gutter}{text}\n{pad}{' ' * (column - 1)}{'^' * width}"


def python_span(filename: str, lineno: int, positions=None, module_globals=None) -> Span:
    """A span in a Python source file, for schedules made by Python code (``schedlang.build``,
    ``from_python``): the expression at ``positions`` (a ``co_positions()`` entry: lines and
    0-based UTF-8 byte columns) when it starts on ``lineno`` (to the end of that line when it
    goes on), else the whole line."""
    lines = linecache.getlines(filename, module_globals)
    source = _python_source(filename, tuple(lines))
    line = source.line(lineno)
    if positions and positions[0] == lineno and positions[2] is not None:
        start = char_column(line, positions[2])
        one_line = positions[1] == lineno and positions[3] is not None
        end = char_column(line, positions[3]) if one_line else len(line) + 1
        return Span(source, lineno, start, lineno, max(end, start + 1))
    indent = len(line) - len(line.lstrip())
    return Span(source, lineno, indent + 1, lineno, max(len(line) + 1, indent + 2))


@functools.lru_cache(maxsize=32)
def _python_source(filename: str, lines: tuple) -> Source:
    return Source("".join(lines), filename)


def char_column(line: str, byte_offset: int) -> int:
    """A 1-based character column from a 0-based UTF-8 byte offset (what Python's positions give)."""
    return len(line.encode("utf-8")[:byte_offset].decode("utf-8", errors="ignore")) + 1


@dataclass(frozen=True)
class Fix:
    """A replacement that would repair an error: ``text`` in place of what ``span`` covers.

    An editor offers it as a quick fix; it is data, so no one parses the hint's prose
    ("did you mean 'cosine'?") to find the name or where it goes."""

    span: Span
    text: str


class SchedlangError(Exception):
    """A problem in a schedule that the user can fix.

    ``str()`` renders ``file:line:col: error: message``, the source line with a
    caret under the culprit, and a hint when there is one.  ``code`` names the kind of
    problem for tools (``unknown-name``; None where no site gave one) and ``fix`` is the
    replacement a hint suggests, when it suggests one.
    """

    def __init__(self, message: str, span: Span | None = None, hint: str | None = None, *,
                 code: str | None = None, fix: Fix | None = None):
        super().__init__(message)
        self.message = message
        self.span = span
        self.hint = hint
        self.code = code
        self.fix = fix

    @property
    def filename(self) -> str | None:
        return self.span.source.filename if self.span else None

    @property
    def line(self) -> int | None:
        return self.span.line if self.span else None

    @property
    def column(self) -> int | None:
        return self.span.column if self.span else None

    def with_span(self, span: Span | None) -> SchedlangError:
        """Attach a location to an error raised where none was known."""
        if self.span is None and span is not None:
            self.span = span
        return self

    def __str__(self) -> str:
        return render("error", self.message, self.span, self.hint)


class Diagnostic(str):
    """A warning: its message as a ``str`` (so ``"step 100" in warning`` reads naturally),
    plus the span it is about, a hint and a ``code`` naming its kind for tools (``jump``);
    ``render()`` shows it as an error is shown."""

    def __new__(cls, message: str, span: Span | None = None, hint: str | None = None,
                code: str | None = None):
        self = super().__new__(cls, message)
        self.message, self.span, self.hint, self.code = message, span, hint, code
        return self

    def render(self) -> str:
        return render("warning", self.message, self.span, self.hint)


def render(kind: str, message: str, span: Span | None, hint: str | None) -> str:
    """``file:line:col: kind: message``, the line with a caret under the span, the hint."""
    parts = [f"{span.location}: {kind}: {message}" if span else f"{kind}: {message}"]
    if span is not None:
        parts.append(span.snippet())
    if hint:
        parts.append(f"hint: {hint}")
    return "\n".join(parts)


#: Candidates this close to the best match count as a tie, which ``_role`` then breaks.
NEAR_TIE = 0.05


def did_you_mean(name: str, known) -> str | None:
    """A 'did you mean' hint naming the closest known name, if any is close."""
    match = closest(name, known)
    return f"did you mean '{match}'?" if match else None


def suggest(name: str, known, span: Span | None, quote: str = "") -> tuple[str | None, Fix | None]:
    """``did_you_mean``'s hint and, when it names a match and the culprit has a span, the ``Fix``
    writing the match there (``quote`` around it, for a string such as ``mode="triangular"``)."""
    match = closest(name, known)
    if match is None:
        return None, None
    return f"did you mean '{match}'?", Fix(span, f"{quote}{match}{quote}") if span is not None else None


def closest(name: str, known, cutoff: float = 0.6) -> str | None:
    """The known name closest to ``name``; among near ties, the learning-rate schedule.

    Libraries name twins alike (Cerebras' ``CosineDecayLR`` / ``CosineDecayWD``) and a
    plain string distance cannot tell which one a truncated name meant; the lr one is
    what nearly everyone means, so near ties go to names that end in LR, and names that
    end in WD (or another non-lr role) come last.  Exact case-insensitive matches win.
    """
    candidates = sorted(set(known))
    lowered = {k.lower(): k for k in candidates}
    if name.lower() in lowered and name not in candidates:
        return lowered[name.lower()]
    import difflib  # lazy: only a misspelt name's suggestion needs it (2 ms of every check)

    matcher = difflib.SequenceMatcher(b=name)
    scored = []
    for candidate in candidates:
        matcher.set_seq1(candidate)
        if matcher.real_quick_ratio() >= cutoff and matcher.quick_ratio() >= cutoff:
            score = matcher.ratio()
            if score >= cutoff:
                scored.append((score, candidate))
    if not scored:
        return None
    best = max(score for score, _ in scored)
    ties = [(score, c) for score, c in scored if score >= best - NEAR_TIE]
    return max(ties, key=lambda item: (_role(item[1]), item[0], -len(item[1]), item[1]))[1]


_LR_SUFFIXES = ("lr", "_lr", "learningrate", "learning_rate")
_OTHER_SUFFIXES = ("wd", "_wd", "weightdecay", "weight_decay", "momentum", "beta")


def _role(candidate: str) -> int:
    """1 for a learning-rate name (``CosineDecayLR``), -1 for its twins (``...WD``), else 0."""
    last = candidate.rsplit(".", 1)[-1].lower()
    if last.endswith(_LR_SUFFIXES):
        return 1
    if last.endswith(_OTHER_SUFFIXES):
        return -1
    return 0


class SchedlangWarning(UserWarning):
    """Something schedlang accepts, as the original tool did, but the user should know about.

    Importers tolerate what the framework tolerated (a YAML key given twice, a key
    the release ignored) and say so through Python's ``warnings`` module with this
    category, so API users filter or escalate them as usual
    (``warnings.simplefilter("error", SchedlangWarning)``) and ``schedlang import``
    prints each on standard error.  ``str()`` renders like ``SchedlangError``:
    ``file:line:col: warning: ...``, the line with a caret, and a hint.
    """

    def __init__(self, message: str, span: Span | None = None, hint: str | None = None):
        super().__init__(message)
        self.message, self.span, self.hint = message, span, hint

    def __str__(self) -> str:
        head = f"{self.span.location}: warning: {self.message}" if self.span else f"warning: {self.message}"
        parts = [head]
        if self.span is not None:
            parts.append(self.span.snippet())
        if self.hint:
            parts.append(f"hint: {self.hint}")
        return "\n".join(parts)


def warn(message: str, span: Span | None = None, hint: str | None = None) -> None:
    """Issue a located ``SchedlangWarning`` (shown once per location by Python's default filter)."""
    warnings.warn(SchedlangWarning(message, span, hint), stacklevel=3)
