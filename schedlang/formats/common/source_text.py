"""The one checked way a configuration's values and names reach an imported file.

Every importer builds the tree of a ``.sched`` file (``statements``); anything it copies from the
configuration goes through a function here, so that no configuration can add a statement, end a
comment or open a string in the generated file, and every value is a node at the configuration's
span (an error the lowering raises at it is there by construction, nothing is searched for):

* ``number_node``: an exact number, or an error at the value;
* ``expression_node``: that, or a script's value computed from its argparse defaults (a
  ``symbols.Symbol``), its parts at the value; ``declared`` writes the parameters it uses;
* ``option_node``: a string from the schedule's closed set of choices (the preset's
  ``Arg.choices``), or an error at the value naming the choices: never a string pasted between
  quotes;
* ``flag_node``: ``true`` / ``false``;
* ``header``: the ``# Imported by ...`` comment, the file name escaped so that no character of
  it (LF, CR, U+2028, any control or format character) can end the comment (``comment_safe``).

``imported_error`` is what an error at a part the format made up itself becomes.
"""

from __future__ import annotations

import re

from ...errors import SchedlangError, split_lines
from ...library.presets import PRESETS
from ...syntax import ir
from . import statements
from .numbers import PythonString, exact
from .statements import GENERATED, noted
from .symbols import Symbol, Symbols

#: What a symbol's text is made of: names, exact numbers, operators, parentheses, commas and the
#: words of ``trunc``; nothing else (no quote, no comment, no line break) can reach the file.
_SYMBOL_TEXT = re.compile(r"[A-Za-z0-9_ .+\-*/(),]*\Z")


def imported_error(exc: SchedlangError, origin: str) -> SchedlangError:
    """``exc`` as the configuration's error: one at a node the format built with the
    configuration's span is already there; one at a part the format made up itself (no value of
    the configuration in it) names the configuration and quotes that part in its hint."""
    span = exc.span
    if span is None or span.source.filename != GENERATED:
        return exc
    lines = split_lines(span.source.text)
    line = lines[span.line - 1].strip() if span.line <= len(lines) else ""
    hint = "; ".join(part for part in (f"it reads: {line}" if line else "", exc.hint or "") if part)
    return SchedlangError(f"the schedule imported from {origin} is refused: {exc.message}",
                          hint=hint or None)


def _exact(value, span, what: str):
    """``value`` read exactly, or an error at ``span`` (a quoted number of a script named so)."""
    found = exact(value)  # None for a bool too
    if found is None:
        hint = ("a string of a Python file stays a string: write the number without quotes (an "
                "argparse default is converted only by type=float)") \
            if isinstance(value, PythonString) and exact(str(value)) is not None else None
        shown = f"the string {_shown(value)}" if isinstance(value, PythonString) else _shown(value)
        raise SchedlangError(f"{what} must be a number, not {shown}", span, hint=hint)
    return found


def number_node(value, span=None, what: str = "this value") -> ir.Node:
    """An exact number as a node at ``span`` (``statements.number``), or an error there: an error
    the lowering raises at it is the configuration's by construction."""
    return statements.number(_exact(value, span, what), span)


def expression_node(value, span=None, what: str = "this value") -> ir.Node:
    """An exact number as ``number_node``, or a value a script computes from its argparse
    defaults (a ``Symbol``): the text computing it from the file's parameters, parsed and every
    part of it put at ``span``, the symbol recorded by its script's ``Symbols`` (``used``) for
    ``declared`` to declare."""
    if not isinstance(value, Symbol):
        return number_node(value, span, what)
    if not _SYMBOL_TEXT.match(value.text):  # pragma: no cover - symbols.py writes only these
        raise SchedlangError(f"{what} cannot be written as an expression", span)
    value.owner.used.append(value)
    return statements.at(statements.expression(value.text), span)


#: The comment above the parameters a script's argparse defaults became.
PARAMETERS = ("# The script's argparse defaults are parameters: -D NAME=VALUE runs it with that option "
              "given.")


def declared(symbols: Symbols | None) -> tuple[list, list]:
    """The statements declaring the parameters of a script (``symbols``, its reader's; None for a
    file of data) that ``expression_node`` used, as ``statements.module`` items: (the ``param``s;
    every statement, the ``let``s after them; the flags frozen noted), each with its comment made
    safe (a comment alone is a line of its own)."""
    if symbols is None:
        return [], []
    params, lines = symbols.declarations(symbols.used)
    return [_item(*p) for p in params], [_item(*p) for p in lines]


def _item(statement, comment: str | None):
    if statement is None:
        return f"# {comment_safe(comment)}"
    return noted(statement, None if comment is None else comment_safe(comment))


def option_node(value, choices, span=None, what: str = "this option") -> ir.String:
    """``value`` as a string node at ``span`` when it is one of ``choices``, else an error there
    naming them: never a string pasted between quotes."""
    _check_option(value, choices, span, what)
    return statements.string(value, span)


def _check_option(value, choices, span, what: str) -> None:
    choices = tuple(choices)
    if not isinstance(value, str) or value not in choices:
        raise SchedlangError(f"{what} must be one of {', '.join(repr(c) for c in choices)}, "
                             f"not {_shown(value)}", span,
                             hint=f"write {what} = {choices[0]!r}" if choices else None)


def choices_of(preset: str, arg: str) -> tuple[str, ...]:
    """The closed set of strings the preset's option ``arg`` takes (its ``Arg.choices``)."""
    entry = PRESETS.get(preset)
    for item in getattr(entry, "args", ()):
        if item.name == arg:
            return tuple(item.choices)
    return ()


def flag_node(value, span=None, what: str = "this flag") -> ir.Bool:
    """``true`` / ``false`` as a node at ``span``; an error there for anything but a bool."""
    if not isinstance(value, bool):
        raise SchedlangError(f"{what} must be true or false, not {_shown(value)}", span)
    return statements.boolean(value, span)


def header(origin, description: str) -> str:
    """The first line of an imported file: ``# Imported by `schedlang import` from NAME (WHAT).``"""
    return f"# Imported by `schedlang import` from {comment_safe(str(origin))} ({description})."


def comment_safe(text: str) -> str:
    """``text`` for the inside of a ``#`` comment: every character that is not printable (line
    breaks of any kind, controls, U+2028, format characters, lone surrogates of an undecodable file
    name) written as a Python-style escape, and the backslash doubled, so the escaping reads back."""
    out = []
    for char in text:
        if char == "\\":
            out.append("\\\\")
        elif char in _SHORT:
            out.append(_SHORT[char])
        elif char.isprintable() and not "\ud800" <= char <= "\udfff":
            out.append(char)
        elif 0xDC80 <= ord(char) <= 0xDCFF:  # a byte of a file name that is not UTF-8
            out.append(f"\\x{ord(char) - 0xDC00:02x}")
        elif ord(char) < 0x100:
            out.append(f"\\x{ord(char):02x}")
        else:
            out.append(f"\\u{ord(char):04x}" if ord(char) < 0x10000 else f"\\U{ord(char):08x}")
    return "".join(out)


_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
