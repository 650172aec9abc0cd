"""Shell scripts and command lines read as *data*: words with their spans, never run.

Training launch scripts carry their flags in commands, in variables
(``GPT_ARGS="--lr 6e-4 --min-lr 6e-5"``) and in bash arrays
(``TRAINING_ARGS=( --train-iters 500000 )``).  We split the text into words the
way the shell would for these flags (whitespace, ``\\``-newline continuations,
``#`` comments, single quotes literal) with two deliberate simplifications:
double quotes do not join words (so a quoted flag list reads as flags), and
``( ) ; | & < >`` only separate words.  ``NAME=value`` records an assignment.

Expansions are not performed.  A word that is exactly one ``$NAME``,
``${NAME}`` or ``${NAME:-default}`` carries that reference, which importers
turn into a parameter; command substitution, arithmetic and other expansions
(``$(...)``, ``$((...))``, backticks, ``${NAME/...}``) mark the word
unreadable, which importers refuse with a caret when the word matters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...errors import LINE_BREAK, SchedlangError, Source, Span

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BRACED = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?::?[-=]([^}]*))?")
_SEPARATORS = set(" \t\r\n;|&()<>")


@dataclass
class Ref:
    """``$NAME`` / ``${NAME:-default}``: a variable the script leaves to its caller."""

    name: str
    default: str | None
    span: Span


@dataclass
class Word:
    text: str                 # literal characters, quotes removed; a reference shows as "$NAME"
    span: Span
    ref: Ref | None = None    # the whole word is this one reference
    refs: list = field(default_factory=list)
    unreadable: Span | None = None  # an expansion we do not read
    assign_to: str | None = None    # the value of NAME=... (the word right after the '=')


def split(text: str, filename: str) -> tuple[Source, list[Word]]:
    """The words of ``text`` in order, each with its span in ``filename``."""
    source = Source(text, filename)
    return source, _Splitter(source).words()


class _Splitter:
    """``split``'s scan of the text, a character (a quoted run, an expansion) at a time: the word
    being read (its characters, start offset, references, the first expansion it does not read)
    and the name of the ``NAME=`` whose value the next word is.  A character that is part of a
    word is read by its handler (``_READERS``)."""

    def __init__(self, source: Source):
        self.source, self.text = source, source.text
        self.found: list[Word] = []
        self.assign: str | None = None
        self._reset()

    def _reset(self) -> None:
        self.chars: list[str] = []
        self.start: int | None = None
        self.refs: list[Ref] = []
        self.bad: Span | None = None

    def words(self) -> list[Word]:
        i, n = 0, len(self.text)
        while i < n:
            i = self._step(i)
        self._finish(n)
        return self.found

    def _step(self, i: int) -> int:
        """Read what starts at offset ``i``; the offset after it."""
        c = self.text[i]
        if c == "\\" and self.text[i + 1:i + 2] == "\n":
            return i + 2  # a continued line
        if c in _SEPARATORS:
            return self._separator(i)
        if c == "#" and self.start is None:
            end = self.text.find("\n", i)
            return len(self.text) if end < 0 else end
        if c == '"':  # double quotes do not join words here (see the module docstring)
            return i + 1
        if self.start is None:
            self.start = i
        return self._READERS.get(c, _Splitter._char)(self, i)

    def _finish(self, end: int) -> None:
        """The word read so far, if any, ends at ``end``."""
        if self.start is not None and (self.chars or self.refs or self.bad):
            word_text = "".join(self.chars)
            span = Span.at_offset(self.source, self.start, max(end - self.start, 1))
            only = self.refs[0] if len(self.refs) == 1 and word_text == f"${self.refs[0].name}" else None
            self.found.append(Word(word_text, span, only, self.refs, self.bad, self.assign))
            self.assign = None  # (NAME= with an empty value keeps its name for nothing)
        self._reset()

    def _separator(self, i: int) -> int:
        """Whitespace or ``;|&()<>``: the word ends; a ``NAME=`` value ends too, but for a bash
        array's ``(``."""
        self._finish(i)
        if self.assign is not None and self.text[i] != "(":
            self.assign = None
        return i + 1

    def _char(self, i: int) -> int:
        self.chars.append(self.text[i])
        return i + 1

    def _escaped(self, i: int) -> int:
        """``\\x``: the character ``x`` (a backslash at the very end is itself)."""
        if i + 1 >= len(self.text):
            return self._char(i)
        self.chars.append(self.text[i + 1])
        return i + 2

    def _single_quoted(self, i: int) -> int:
        """``'...'``: literal, to the closing quote (or the end)."""
        close = self.text.find("'", i + 1)
        close = len(self.text) if close < 0 else close
        self.chars.append(self.text[i + 1:close])
        return close + 1

    def _backticks(self, i: int) -> int:
        """A backquoted command substitution: not read."""
        close = self.text.find("`", i + 1)
        close = len(self.text) - 1 if close < 0 else close
        self.bad = self.bad or Span.at_offset(self.source, i, close + 1 - i)
        return close + 1

    def _equals(self, i: int) -> int:
        """``NAME=``: an assignment, whose value is the next word; any other ``=`` is a character."""
        name = "".join(self.chars)
        if self.refs or not _NAME.fullmatch(name or "-"):
            return self._char(i)
        self._reset()
        self.assign = name
        return i + 1

    def _dollar(self, i: int) -> int:
        """``$NAME``, ``${NAME}``, ``${NAME:-default}``: a reference; ``$(...)`` and other
        ``${...}``: an expansion not read; a lone ``$``: the character."""
        text, n = self.text, len(self.text)
        if i + 1 < n and text[i + 1] == "(":
            depth, j = 0, i + 1
            while j < n:
                depth += {"(": 1, ")": -1}.get(text[j], 0)
                if depth == 0:
                    break
                j += 1
            self.bad = self.bad or Span.at_offset(self.source, i, min(j, n - 1) + 1 - i)
            return j + 1
        if i + 1 < n and text[i + 1] == "{":
            close = text.find("}", i + 2)
            close = n - 1 if close < 0 else close
            match = _BRACED.fullmatch(text[i + 2:close])
            span = Span.at_offset(self.source, i, close + 1 - i)
            if match is None:
                self.bad = self.bad or span
            else:
                self._ref(Ref(match.group(1), match.group(2), span))
            return close + 1
        match = _NAME.match(text, i + 1)
        if match is None:
            return self._char(i)
        self._ref(Ref(match.group(0), None, Span.at_offset(self.source, i, match.end() - i)))
        return match.end()

    def _ref(self, ref: Ref) -> None:
        self.refs.append(ref)
        self.chars.append(f"${ref.name}")

    _READERS = {"\\": _escaped, "'": _single_quoted, "`": _backticks, "$": _dollar, "=": _equals}


#: A line that launches a training program (a command, not a variable holding flags).
_LAUNCH = re.compile(r"(?:^|[\s;&|(])(?:\S*\.py|\S*\.sh|torchrun|python3?|deepspeed|accelerate|srun|mpirun)"
                     r"(?=\s|$)")


def one_command(text: str, filename: str, schedule_flags: re.Pattern) -> None:
    """Refuse a command-line file that launches training several times with ``schedule_flags``
    (the format's own, ``Format.schedule_flags``: SambaFlow's compile step, or `train.py --help`,
    is not a schedule), naming the lines: merging a docs page's three commands would import a
    schedule that none of them runs."""
    commands, line, logical, first = [], 1, [], None
    for raw in LINE_BREAK.split(text):
        first = first or line
        logical.append(raw)
        line += 1
        if raw.rstrip().endswith("\\"):
            continue
        command = " ".join(logical).split("#")[0] if not logical[0].lstrip().startswith("#") else ""
        if _LAUNCH.search(command) and schedule_flags.search(command.replace("=", " ")):
            commands.append(first)
        logical, first = [], None
    if len(commands) > 1:
        source = Source(text, filename)
        raise SchedlangError(f"{filename} holds {len(commands)} commands with schedule flags (lines "
                             f"{', '.join(map(str, commands))}); which one runs?",
                             Span(source, commands[1], 1, commands[1], 2),
                             hint="import one command: put it in a file of its own")
