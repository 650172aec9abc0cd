"""SambaFlow command-line flags -> ``.sched`` source.

SambaFlow configures its three built-in schedules with flags on the training
command (``--lr_schedule``, ``--learning_rate``, ``--warmup_steps``,
``--max_steps``, ``--end_lr_ratio``; SambaNova's "custom learning rate
scheduler" docs).  We read them from a list of arguments, a command line
(split with ``shlex``, the shell's word rules, never executed; backslash
line continuations and ``#`` comments allowed) or a dict, and ignore every
other flag of the command.  ``--steps_this_run`` only stops training early; it
does not change the schedule.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

import sympy as sp

from ..errors import SchedlangError, Source, Span, did_you_mean
from ..syntax import ir
from .common.format import SHELL, Format, check_style, checked, importing
from .common.numbers import exact
from .common.source_text import header
from .common.statements import call, module, number, schedule_stmt

SCHEDULES = ("cosine_schedule_with_warmup", "polynomial_decay_schedule_with_warmup", "fixed_lr")
FLAGS = ("lr_schedule", "learning_rate", "warmup_steps", "max_steps", "end_lr_ratio")
END_RATIO = {"cosine_schedule_with_warmup": "0.1", "polynomial_decay_schedule_with_warmup": "0"}


@dataclass
class Flags:
    values: dict = field(default_factory=dict)  # flag -> text
    spans: dict = field(default_factory=dict)  # flag -> Span or None
    source: Source | None = None


def _unclosed_quote(text: str) -> int | None:
    """The offset of the quote ``shlex`` found no end for, by the shell's rules (a backslash
    escapes outside single quotes; ``#`` at a word's start begins a comment)."""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
        elif c == "#" and (i == 0 or text[i - 1].isspace()):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif c == "'":
            end = text.find("'", i + 1)
            if end < 0:
                return i
            i = end + 1
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                return i
            i = j + 1
        else:
            i += 1
    return None


def read(flags, origin: str = "<flags>") -> Flags:
    """The schedule flags, each with the span of its value when read from text."""
    found = Flags()
    if isinstance(flags, dict):
        for key, value in flags.items():
            key = key.lstrip("-")
            if key in FLAGS:
                found.values[key] = str(value)
                found.spans[key] = None
        return found
    text, words = _words(flags, origin)
    found.source = Source(text, origin)
    position = 0
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if not word.startswith("--"):
            continue
        name, has_value, value = word[2:].partition("=")
        name = name.replace("-", "_")
        if name not in FLAGS:
            continue
        at = text.find(word, position)
        if has_value:
            where = _locate(found.source, value, at + len(name) + 3) if value else None
        else:
            if i >= len(words) or words[i].startswith("--"):
                raise SchedlangError(f"--{name} needs a value", _locate(found.source, word, position))
            value = words[i]
            i += 1
            where = _locate(found.source, value, at + len(word))
        if where is not None:
            position = max(position, text.find(value, at + len(word) if not has_value else at) + len(value))
        found.values[name] = value
        found.spans[name] = where
    return found


def _words(flags, origin: str) -> tuple[str, list[str]]:
    """The command line's text and its words: split as the shell would, or joined from a list."""
    if not isinstance(flags, str):
        words = [str(w) for w in flags]
        return " ".join(shlex.quote(w) for w in words), words
    try:
        return flags, shlex.split(flags.replace("\\\n", " "), comments=True)
    except ValueError as exc:
        source, at = Source(flags, origin), _unclosed_quote(flags)
        raise SchedlangError(f"cannot split the command line: {exc}",
                             None if at is None else Span.at_offset(source, at, 1),
                             hint="close the quote, or escape it with a backslash") from None


def _locate(source: Source, token: str, start: int) -> Span | None:
    offset = source.text.find(token, max(start, 0))
    if offset < 0:
        return None
    return Span.at_offset(source, offset, len(token))


def _number(flags: Flags, name: str, whole: bool = False):
    text = flags.values[name]
    value = exact(text)
    if value is None or (whole and (not value.is_Integer or value < 0)):
        want = "a whole number >= 0" if whole else "a number"
        raise SchedlangError(f"--{name} must be {want}, not {text!r}", flags.spans.get(name))
    return value


def source(flags: Flags, origin: str, style: str = "presets") -> ir.Module:
    if "lr_schedule" not in flags.values:
        raise SchedlangError("no --lr_schedule flag found",
                             Span(flags.source, 1, 1, 1, 2) if flags.source and flags.source.text else None,
                             hint="one of " + ", ".join(SCHEDULES))
    name = flags.values["lr_schedule"]
    if name not in SCHEDULES:
        raise SchedlangError(f"'{name}' is not a SambaFlow built-in schedule", flags.spans.get("lr_schedule"),
                             hint=did_you_mean(name, SCHEDULES) or "one of " + ", ".join(SCHEDULES))
    if "learning_rate" not in flags.values:
        raise SchedlangError("no --learning_rate flag found", flags.spans.get("lr_schedule"))
    lr = _number(flags, "learning_rate")
    head = [header(origin, "SambaFlow flags"),
            "# SambaFlow's code is not public: these presets follow its documented behaviour."]
    if name == "fixed_lr":
        return module(head, schedule_stmt("lr", _fixed(flags, lr, style), flags.spans.get("lr_schedule")))
    if "max_steps" not in flags.values:
        raise SchedlangError(f"{name} needs --max_steps", flags.spans.get("lr_schedule"))
    warm = _number(flags, "warmup_steps", whole=True) if "warmup_steps" in flags.values else sp.Integer(0)
    total = _number(flags, "max_steps", whole=True)
    if total <= warm:
        raise SchedlangError(f"--max_steps ({total}) must be larger than --warmup_steps ({warm})",
                             flags.spans.get("max_steps"))
    ratio = _number(flags, "end_lr_ratio") if "end_lr_ratio" in flags.values else exact(END_RATIO[name])
    body = _preset(flags, name, lr, warm, total, ratio) if style == "presets" \
        else _core(flags, name, lr, warm, total, ratio)
    return module(head, schedule_stmt("lr", body, flags.spans.get("lr_schedule")))


def _fixed(flags: Flags, lr, style: str) -> ir.Call:
    value = number(lr, flags.spans.get("learning_rate"))
    return call("sambaflow.fixed_lr", learning_rate=value) if style == "presets" else call("constant", value)


def _preset(flags: Flags, name: str, lr, warm, total, ratio) -> ir.Call:
    """``sambaflow.NAME(...)``, each argument at its flag (``--warmup_steps`` at ``--lr_schedule``
    when not given: it is the schedule's 0)."""
    spans = flags.spans
    given = {"learning_rate": number(lr, spans.get("learning_rate")),
             "warmup_steps": number(warm, spans.get("warmup_steps", spans.get("lr_schedule"))),
             "max_steps": number(total, spans.get("max_steps"))}
    if "end_lr_ratio" in flags.values:
        given["end_lr_ratio"] = number(ratio, spans.get("end_lr_ratio"))
    return call(f"sambaflow.{name}", **given)


def _core(flags: Flags, name: str, lr, warm, total, ratio) -> ir.Node:
    """The standard library's ``[warmup(linear, W) >>] cosine|linear(lr, lr * ratio, N)``."""
    spans, where = flags.spans, flags.spans.get("lr_schedule")
    shape = "cosine" if name == "cosine_schedule_with_warmup" else "linear"
    body = call(shape, number(lr, spans.get("learning_rate")),
                number(lr * ratio, spans.get("end_lr_ratio", spans.get("learning_rate"))),
                number(total - warm, spans.get("max_steps")), span=where)
    if not warm:
        return body
    ramp = call("warmup", ir.Name(where, "linear"), number(warm, spans.get("warmup_steps")), span=where)
    return ir.Seq(where, ramp, body)


# -- the declaration (``formats/__init__.py`` lists this module) ----------------------------------


_FLAGS = re.compile(r"--(?:lr_schedule|learning_rate|warmup_steps|max_steps|decay_steps|end_lr)\b")


def from_sambaflow(flags, origin: str = "<flags>", style: str = "presets") -> str:
    """``.sched`` source for SambaFlow flags: a list of arguments, a command line, or a dict."""
    check_style(style)
    with importing(flags if isinstance(flags, str) else "", origin):
        return checked(source(read(flags, origin), origin, style), origin)


FORMAT = Format("sambaflow", "SambaFlow --lr_schedule flags (a command line or script, or --flags)",
                SHELL, lambda text, suffix: bool(_FLAGS.search(text)), from_sambaflow,
                schedule_flags=re.compile(r"--lr_schedule\b"))
