"""The one checked way a configuration's values and names reach generated ``.sched`` text.

Every importer writes ``.sched`` source; anything it copies from the configuration (a number, an
option string, the file's name in the header comment) goes through a function here, so that no
configuration can add a statement, end a comment or open a string in the generated file:

* ``number``: an exact number (``sched_text``), or a located error at the value;
* ``option``: a string from the schedule's closed set of choices (the preset's ``Arg.choices``),
  or a located error at the value naming the choices: never a string pasted between quotes;
* ``flag_node``: ``true`` / ``false``;
* ``number_node``, ``expression_node``, ``option_node``: the same checks, the value
  a node at its configuration span (``statements``), for the formats that build their tree of
  nodes: an error the lowering raises at it is there, with nothing to search for;
* ``header``: the ``# Imported by ...`` comment, the file name escaped so that no character of
  it (LF, CR, U+2028, any control or format character) can end the comment.
"""

from __future__ import annotations

import contextlib
import contextvars
import re

from ...codegen.sched import sched_text
from ...errors import SchedlangError, Source, Span, split_lines
from ...library.presets import PRESETS
from ...limits import decimal
from ...program import compile as compile_source
from ...syntax import ir, unparse
from . import statements
from .numbers import PythonString, exact
from .statements import GENERATED, noted
from .symbols import MADE, Symbol

#: The values written in the current import: (their ``.sched`` text, their span in the config).
_WRITTEN: contextvars.ContextVar[list | None] = contextvars.ContextVar("written", default=None)
#: The script parameters written in the current import (``symbols.Symbol``), for their declarations.
_SYMBOLS: contextvars.ContextVar[list | None] = contextvars.ContextVar("symbols", default=None)
#: What a symbol's text is made of: names, exact numbers, operators, parentheses, commas and the
#: words of ``trunc``; nothing else (no quote, no comment, no line break) can reach the file.
_SYMBOL_TEXT = re.compile(r"[A-Za-z0-9_ .+\-*/(),]*\Z")
#: The configuration being imported (its text and name), to find a number's literal in it.
_CONFIG: contextvars.ContextVar[tuple[str, str] | None] = contextvars.ContextVar("config", default=None)
_LITERAL = re.compile(r"(?<![\w.$])[-+]?(?:\d[\d_]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?(?![\w.])")


@contextlib.contextmanager
def recording(text: str = "", filename: str = "<string>"):
    """Remember every value ``number``/``option`` writes (with its config span) while importing
    ``text``, the configuration named ``filename``."""
    token, config, symbols = _WRITTEN.set([]), _CONFIG.set((text, filename)), _SYMBOLS.set([])
    made = MADE.set([])
    try:
        yield
    finally:
        _WRITTEN.reset(token)
        _CONFIG.reset(config)
        _SYMBOLS.reset(symbols)
        MADE.reset(made)


def _written(text: str, span) -> str:
    found = _WRITTEN.get()
    if found is not None and span is not None:
        found.append((text, span))
    return text


def checked(generated: str, origin: str) -> str:
    """``generated`` once it compiles; an error in it is reported at the configuration value that
    produced it (``located``), never at a line of generated text the user has not seen."""
    try:
        compile_source(generated, None, filename=GENERATED)
    except SchedlangError as exc:
        raise located(exc, origin) from None
    return generated


def located(exc: SchedlangError, origin: str) -> SchedlangError:
    """``exc`` moved from generated text to the configuration: the value written where the error
    points (or, failing that, the first value on its line); with none, an error naming the
    configuration that quotes the generated line in its hint."""
    span = exc.span
    if span is None or span.source.filename != GENERATED:
        return exc
    lines = split_lines(span.source.text)
    line = lines[span.line - 1] if span.line <= len(lines) else ""
    start, end = span.column - 1, (span.end_column - 1 if span.end_line == span.line else len(line))
    best, best_overlap, first = None, 0, None
    for text, config_span in _WRITTEN.get() or ():
        for match in re.finditer(r"(?<![\w.])" + re.escape(text) + r"(?![\w.])", line):
            overlap = min(end, match.end()) - max(start, match.start())
            if overlap > best_overlap:
                best, best_overlap = config_span, overlap
            if first is None:
                first = config_span
    target = best or first or _key_in_config(line, start, end) or \
        _literal_in_config(line[start:end] if end > start else line)
    if target is not None:
        return SchedlangError(exc.message, target, hint=exc.hint)
    return SchedlangError(f"the schedule imported from {origin} is refused: {exc.message}",
                          hint=f"it reads: {line.strip()}" + (f"; {exc.hint}" if exc.hint else ""))


def number(value, span=None, what: str = "this value") -> str:
    """An exact number as ``.sched`` text; a ``SchedlangError`` at ``span`` for anything else."""
    return _written(_exact_text(value, span, what), span)


def _exact_text(value, span, what: str) -> str:
    found = exact(value)  # None for a bool too
    if found is None:
        hint = ("a string of a Python file stays a string: write the number without quotes (an "
                "argparse default is converted only by type=float)") \
            if isinstance(value, PythonString) and exact(str(value)) is not None else None
        shown = f"the string {_shown(value)}" if isinstance(value, PythonString) else _shown(value)
        raise SchedlangError(f"{what} must be a number, not {shown}", span, hint=hint)
    return sched_text(found)


def expression(value, span=None, what: str = "this value") -> str:
    """An exact number (a located error for anything else), or for a value a script computes from
    its argparse defaults (a ``Symbol``) the text computing it from the file's parameters, whose
    declarations ``declarations`` writes.  A plain number is not recorded for ``located`` (the
    Keras and DeepSpeed readers never did: equal numbers on one line would take each other's
    caret, and their keys find it instead)."""
    if not isinstance(value, Symbol):
        return _exact_text(value, span, what)
    if not _SYMBOL_TEXT.match(value.text):  # pragma: no cover - symbols.py writes only these
        raise SchedlangError(f"{what} cannot be written as an expression", span)
    found = _SYMBOLS.get()
    if found is not None:
        found.append(value)
    return _written(value.text, span)


def number_node(value, span=None, what: str = "this value") -> ir.Node:
    """``number``'s check, the value as a node at ``span`` (``statements.number``): an error the
    lowering raises at it is the configuration's by construction, with nothing recorded to find."""
    _exact_text(value, span, what)
    return statements.number(value, span)


def expression_node(value, span=None, what: str = "this value") -> ir.Node:
    """``expression`` as a node at ``span``: a number as ``number_node``; a ``Symbol``'s text
    parsed and every part of it put at ``span``, the symbol still recorded for ``declared``."""
    if not isinstance(value, Symbol):
        return number_node(value, span, what)
    return statements.at(statements.expression(expression(value, span, what)), span)


#: The comment above the parameters a script's argparse defaults became.
PARAMETERS = ("# The script's argparse defaults are parameters: -D NAME=VALUE runs it with that option "
              "given.")


def declared() -> tuple[list, list]:
    """The statements declaring what ``expression`` wrote, as ``statements.module`` items: (the
    ``param``s; every statement, the ``let``s after them), each with its comment made safe (a
    comment alone is a line of its own)."""
    used = _SYMBOLS.get() or []
    owners = [used[0].owner] if used else MADE.get() or []
    if not owners:
        return [], []
    params, lines = owners[-1].declarations(used)
    return [_item(*p) for p in params], [_item(*p) for p in lines]


def _item(statement, comment: str | None):
    if statement is None:
        return f"# {comment_safe(comment)}"
    return noted(statement, None if comment is None else comment_safe(comment))


def declarations() -> tuple[list[str], list[str]]:
    """``declared()`` as lines of text, for the formats that still write text."""
    params, lines = declared()
    return [_line(i) for i in params], [_line(i) for i in lines]


def _line(item) -> str:
    if isinstance(item, str):
        return item
    if isinstance(item, ir.Node):
        return unparse.statement(item)
    return f"{unparse.statement(item.statement)}  # {item.comment}"


def _key_in_config(line: str, start: int, end: int):
    """When the error points inside one keyword argument (``decay_steps=0``) of the generated
    line, the value of that key in the configuration (``"decay_steps": 0``, ``decay_steps: 0``,
    ``--decay-steps 0``), if the configuration has exactly one such key."""
    config = _CONFIG.get()
    if not config or not config[0] or "(" in line[start:end]:
        return None
    keys = [m for m in re.finditer(r"(\w+)\s*=\s*", line) if m.start() <= start]
    if not keys or "," in line[keys[-1].end():start] or "(" in line[keys[-1].end():start]:
        return None
    key = keys[-1].group(1)
    forms = "|".join(re.escape(k) for k in {key, key.replace("_", "-")})
    pattern = (r"(?:(?<![\w-])['\"]?(?:" + forms + r")['\"]?\s*[:=]\s*|--(?:" + forms + r")(?:=|\s+))"
               r"([^\s,}\]#]+)")
    found = list(re.finditer(pattern, config[0]))
    if len(found) != 1:
        return None
    return Span.at_offset(Source(*config), found[0].start(1), len(found[0].group(1)))


def _literal_in_config(generated: str):
    """The span of the configuration's first number literal equal to a number in ``generated``
    (the part of the generated line an error points at): every importer copies numbers exactly,
    so ``1e30`` in the config is ``1000000000000000000000000000000`` in the ``.sched`` text."""
    config = _CONFIG.get()
    if not config or not config[0]:
        return None
    wanted = set()
    for match in _LITERAL.finditer(generated):
        try:
            wanted.add(abs(decimal(match.group(0))))
        except ValueError:
            continue
    wanted.discard(0)
    if not wanted:
        return None
    source = Source(*config)
    for match in _LITERAL.finditer(config[0]):
        try:
            value = abs(decimal(match.group(0)))
        except ValueError:
            continue
        if value in wanted:
            return Span.at_offset(source, match.start(), len(match.group(0)))
    return None


def exact_number(value, span) -> str:
    """``sched_text`` of an exact number already read from the configuration at ``span``."""
    return _written(sched_text(value), span)


def option(value, choices, span=None, what: str = "this option") -> str:
    """``"value"`` when ``value`` is one of ``choices``, else a located error naming them."""
    _check_option(value, choices, span, what)
    return _written(f'"{value}"', span)


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
