"""The one place positions change units: the compiler's (line, column) and an editor's.

The compiler counts 1-based lines split at ``errors.LINE_BREAK`` (LF, CRLF, a lone CR: never
at a form feed or U+2028, which ``str.splitlines`` would split at) and 1-based columns in code
points, end exclusive (``errors.Span``).  The Language Server Protocol counts 0-based lines
and 0-based columns in the unit the client negotiated: UTF-16 code units (the default, and
all VS Code speaks), UTF-8 bytes (Neovim) or code points (Emacs).  A column after an emoji
differs in all three; converting anywhere else is how servers end up underlining the wrong
characters.  Every feature works in the compiler's units; the server converts here, once per
request and once per result.
"""

from __future__ import annotations

from ...errors import LINE_BREAK, Span

UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"
ENCODINGS = (UTF16, UTF8, UTF32)
_BOM = "\ufeff"


def _units(text: str, encoding: str) -> int:
    """The length of ``text`` in ``encoding``'s code units."""
    if encoding == UTF8:
        return len(text.encode("utf-8", errors="surrogatepass"))
    if encoding == UTF16:
        return len(text.encode("utf-16-le", errors="surrogatepass")) // 2
    return len(text)


class Lines:
    """A document's lines as the compiler counts them, converting positions both ways.

    A leading byte order mark is part of the editor's first line but not of the compiler's
    (the parser drops it), so columns on line 1 shift by one code point across it.
    """

    def __init__(self, text: str, encoding: str = UTF16):
        self.encoding = encoding if encoding in ENCODINGS else UTF16
        self.bom = text.startswith(_BOM)
        self.lines = LINE_BREAK.split(text)  # the last one may be empty: a position there is valid
        self.breaks = LINE_BREAK.findall(text)

    def _line(self, line0: int) -> str:
        return self.lines[line0] if 0 <= line0 < len(self.lines) else ""

    def to_lsp(self, line: int, column: int) -> tuple[int, int]:
        """(0-based line, column in the client's units) of the compiler's (line, column),
        clamped to the document: a span one past the end of a line or file stays on it."""
        line0 = min(max(line - 1, 0), max(len(self.lines) - 1, 0))
        text = self._line(line0)
        chars = max(column - 1, 0) + (1 if self.bom and line0 == 0 else 0)
        return line0, _units(text[:chars], self.encoding)

    def from_lsp(self, line0: int, character: int) -> tuple[int, int]:
        """The compiler's (line, column) at an editor's position; a column inside a character
        (half a surrogate pair, a byte of a UTF-8 sequence) or past the end of the line is
        taken to the character's start or the line's end."""
        line0 = min(max(line0, 0), max(len(self.lines) - 1, 0))
        text = self._line(line0)
        chars, used = 0, 0
        for char in text:
            width = _units(char, self.encoding)
            if used + width > character:
                break
            used += width
            chars += 1
        if self.bom and line0 == 0:
            chars = max(chars - 1, 0)
        return line0 + 1, chars + 1

    def range(self, span: Span) -> tuple[tuple[int, int], tuple[int, int]]:
        """A span as ((line, character), (line, character)) in the client's units, never empty
        when the span is not (an editor shows an empty range as nothing)."""
        start = self.to_lsp(span.line, span.column)
        end = self.to_lsp(span.end_line, span.end_column)
        if end < start:
            end = start
        return start, end

    def offset(self, line0: int, character: int) -> int:
        """The offset in the editor's text (a byte order mark counted) of an editor's position,
        clamped as ``from_lsp`` clamps: where an incremental change starts or ends."""
        line0 = min(max(line0, 0), max(len(self.lines) - 1, 0))
        start = sum(len(line) + len(brk) for line, brk in zip(self.lines[:line0], self.breaks))
        chars, used = 0, 0
        for char in self._line(line0):
            used += _units(char, self.encoding)
            if used > character:
                break
            chars += 1
        return start + chars

    def end(self) -> tuple[int, int]:
        """The position after the last character, for an edit replacing the whole document."""
        last = len(self.lines) - 1
        return last, _units(self.lines[last], self.encoding)
