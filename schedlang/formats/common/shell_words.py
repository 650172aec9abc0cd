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
    words: list[Word] = []
    state = {"chars": [], "start": None, "refs": [], "bad": None, "assign": None}

    def begin(offset):
        if state["start"] is None:
            state["start"] = offset

    def finish(end):
        if state["start"] is not None and (state["chars"] or state["refs"] or state["bad"]):
            word_text = "".join(state["chars"])
            span = Span.at_offset(source, state["start"], max(end - state["start"], 1))
            refs = state["refs"]
            only = refs[0] if len(refs) == 1 and word_text == f"${refs[0].name}" else None
            words.append(Word(word_text, span, only, refs, state["bad"], state["assign"]))
            state["assign"] = None
        elif state["assign"] is not None and state["start"] is None:
            pass  # NAME= with an empty value keeps nothing
        state.update(chars=[], start=None, refs=[], bad=None)

    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n and text[i + 1] == "\n":
            i += 2
            continue
        if c in _SEPARATORS:
            finish(i)
            if state["assign"] is not None and c not in "(":
                state["assign"] = None
            i += 1
            continue
        if c == "#" and state["start"] is None:
            while i < n and text[i] != "\n":
                i += 1
            continue
        if c == '"':  # double quotes do not join words here (see the module docstring)
            i += 1
            continue
        begin(i)
        if c == "\\" and i + 1 < n:
            state["chars"].append(text[i + 1])
            i += 2
        elif c == "'":
            close = text.find("'", i + 1)
            close = n if close < 0 else close
            state["chars"].append(text[i + 1:close])
            i = close + 1
        elif c == "`":
            close = text.find("`", i + 1)
            close = n - 1 if close < 0 else close
            state["bad"] = state["bad"] or Span.at_offset(source, i, close + 1 - i)
            i = close + 1
        elif c == "$":
            i = _dollar(text, i, source, state)
        elif c == "=" and not state["refs"] and _NAME.fullmatch("".join(state["chars"]) or "-"):
            name = "".join(state["chars"])
            state.update(chars=[], start=None, refs=[], bad=None)
            state["assign"] = name
            i += 1
        else:
            state["chars"].append(c)
            i += 1
    finish(n)
    return source, words


def _dollar(text: str, i: int, source: Source, state: dict) -> int:
    n = len(text)
    if i + 1 < n and text[i + 1] == "(":
        depth, j = 0, i + 1
        while j < n:
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            if depth == 0:
                break
            j += 1
        state["bad"] = state["bad"] or Span.at_offset(source, i, min(j, n - 1) + 1 - i)
        return j + 1
    if i + 1 < n and text[i + 1] == "{":
        close = text.find("}", i + 2)
        close = n - 1 if close < 0 else close
        match = _BRACED.fullmatch(text[i + 2:close])
        span = Span.at_offset(source, i, close + 1 - i)
        if match is None:
            state["bad"] = state["bad"] or span
        else:
            _ref(state, Ref(match.group(1), match.group(2), span))
        return close + 1
    match = _NAME.match(text, i + 1)
    if match is None:
        state["chars"].append("$")
        return i + 1
    _ref(state, Ref(match.group(0), None, Span.at_offset(source, i, match.end() - i)))
    return match.end()


def _ref(state: dict, ref: Ref) -> None:
    state["refs"].append(ref)
    state["chars"].append(f"${ref.name}")


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
