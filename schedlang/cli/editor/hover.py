"""What a name means, shown when the pointer rests on it: Markdown text and the span it is about.

A built-in shows its signature and its docstring (which states its formula); a preset its
signature and docstring, or why the library's schedule has no closed form; a preset library
how many presets it has; a parameter its declaration and the value it has; a schedule the
start, end, lowest and highest values ``check`` reports, its duration, and a sparkline of it
(text: images in hover Markdown break in VS Code).  Text only, built from the compiler's own
tables, so the hover can never disagree with what a compile says.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...core.functions import FUNCTIONS
from ...errors import SchedlangError, Span
from ...library import stdlib
from ...library.clock_calls import CLOCK_CALLS
from ...syntax.parser import RESERVED, STATEMENT_WORDS
from ..analysis import summarise_schedule
from . import symbols
from .document import Document

KEYWORDS = {
    "param": "`param name: int|float = default where condition`: a value given at compile time",
    "let": "`let name = expr`: a name for a value or a schedule",
    "def": "`def name(a, b) = expr`: a function of values or schedules",
    "schedule": "`schedule name = expr`: one of the file's outputs (`lr`, `weight_decay`, ...)",
    "where": "the condition every value of a `param` must meet",
    "for": "`body for n`: the body cut or held to exactly `n` steps",
    "jump": "`a >> jump b`: `a >> b` with its jump from `a`'s end to `b`'s start declared intended "
            "(`check` does not warn about it)",
    "if": "`if cond then a else b`", "then": "`if cond then a else b`", "else": "`if cond then a else b`",
    "and": "boolean and", "or": "boolean or", "not": "boolean not", "true": "the flag value true",
    "false": "the flag value false",
    "batch": "`batch = n` or `batch = stages(b0, [b1, ...], [th1, ...])`: the samples in each "
             "optimizer step (docs/tokens.md)",
    "run": "`run = n` (steps), or `run = 4e12tok` / `4000sp` on the run's clock: the run's length; "
           "`check` warns when it ends inside a phase that is not constant",
}
SPARK = "▁▂▃▄▅▆▇█"
SPARK_POINTS = 24


@dataclass(frozen=True)
class Hover:
    markdown: str
    span: Span


def _fence(code: str) -> str:
    return f"```schedlang\n{code}\n```"


def builtin_text(builtin) -> str:
    """A built-in's or preset's signature and docstring, as Markdown."""
    doc = " ".join(builtin.doc.split()).replace("``", "`")
    return _fence(builtin.signature()) + (f"\n\n{doc}" if doc else "")


def arg_text(arg: stdlib.Arg) -> str:
    """One argument of a built-in: its kind, its default and its choices."""
    parts = [f"`{arg.name}`: {arg.kind.value}"]
    if arg.default is not stdlib.REQUIRED:
        parts.append(f"default `{stdlib.show_default(arg.default)}`")
    if arg.choices:
        parts.append("one of " + ", ".join(f"`{c}`" for c in arg.shown_choices()))
    return ", ".join(parts)


def lookup(name: str):
    """The ``Builtin`` (or preset ``Rejected``) a callee name stands for, or None."""
    if name in stdlib.SCHEDULES:
        return stdlib.SCHEDULES[name]
    if name in CLOCK_CALLS:
        return CLOCK_CALLS[name]
    if "." in name:
        from ...library.presets import PRESETS  # lazy: presets (0.1 s), on first dotted name

        return PRESETS.get(name)
    return None


def _library(name: str) -> str | None:
    from ...library.presets import LIBRARIES, namespace  # lazy: presets (0.1 s), on first use

    if name not in LIBRARIES:
        return None
    entries = namespace(name)
    return f"`{name}`: {len(entries)} presets of {name}'s schedulers (`{name}.` for the list)"


def _span_text(doc: Document, span: Span) -> str:
    if span.line == span.end_line:
        return doc.line(span.line)[span.column - 1:span.end_column - 1]
    lines = [doc.line(span.line)[span.column - 1:]]
    lines += [doc.line(n) for n in range(span.line + 1, span.end_line)]
    return "\n".join([*lines, doc.line(span.end_line)[:span.end_column - 1]])


def _number(value) -> str:
    return str(value) if getattr(value, "is_Integer", False) else f"{float(value):.6g}"


def schedule_summary(doc: Document, name: str, markdown: bool = True, waiting: bool = True) -> str | None:
    """What a schedule is: its length, start, end, lowest and highest values and a sparkline
    (the hover's Markdown, or plain text for a message); None when the file does not compile.
    ``waiting=False``: from the last compiled version while this one compiles (a hover)."""
    program = doc.program if waiting else doc.known_program
    if program is None or name not in program.schedules:
        return None
    schedule = program[name]
    summary = summarise_schedule(schedule)
    if summary.start is None:
        return "symbolic: bind its parameters to see its values"
    length = "forever" if summary.duration is None else f"{summary.duration} steps"
    end = "" if summary.end is None else f", end {summary.end:.6g}"
    lines = [f"{length}: start {summary.start:.6g}{end}, min {summary.low:.6g}, max {summary.high:.6g}"]
    horizon = max(summary.horizon, 1)
    steps = sorted({round(i * horizon / (SPARK_POINTS - 1)) for i in range(SPARK_POINTS)})
    values = schedule.values(steps)
    low, high = min(values), max(values)
    if high > low:
        top = len(SPARK) - 1
        spark = "".join(SPARK[min(int((v - low) / (high - low) * len(SPARK)), top)] for v in values)
        lines.append(f"`{spark}` steps 0..{horizon}" if markdown else f"{spark} steps 0..{horizon}")
    return "\n\n".join(lines) if markdown else "\n".join(lines)


def _declared(doc: Document, declared: symbols.Definition) -> str:
    text = _fence(f"{declared.kind} " + _span_text(doc, declared.span))
    program = doc.known_program  # never waits for a compile: the last one's values, by name
    if declared.kind == "param" and program is not None:
        value = program.values.get(declared.name)
        text += "\n\nvalue: " + ("unbound (give it with -D or params=)" if value is None else
                                 f"`{_number(value)}`")
    elif declared.kind == "schedule":
        summary = schedule_summary(doc, declared.name, waiting=False)
        text += f"\n\n{summary}" if summary else ""
    elif declared.kind == "let" and program is not None and doc.latest() is doc:  # a node of this parse
        try:
            segment = program.value_of(declared.node.value)
        except SchedlangError:
            return text
        duration = getattr(segment, "duration", None)
        if duration is not None:
            bound = duration.xreplace(program.substitutions)
            shown = _number(bound) if bound.is_number else str(bound)
            text += f"\n\nlasts {shown} steps"
    return text


def hover(doc: Document, line: int, column: int) -> Hover | None:
    """The hover for the name at (line, column), or None where there is nothing to say."""
    word = doc.word_at(line, column)
    if word is None:
        return None
    name, span = word
    declared = symbols.at(doc, line, column)
    if declared is not None:
        return Hover(_declared(doc, declared), span)
    text = _in_place_text(doc, line, column, name, span)
    if text is not None:
        return Hover(text, span)
    text = _entry_text(name)
    if text is not None:
        return Hover(text, span)
    library = _library(name)
    return Hover(library, span) if library else None


def _in_place_text(doc: Document, line: int, column: int, name: str, span) -> str | None:
    """The text for a name whose meaning hangs on the language or on where it stands: a
    keyword, ``t``, or a keyword argument of the call it is in (which wins over a built-in of
    the same name, so it is asked first)."""
    after = doc.line(line)[span.end_column - 1:].lstrip()
    if name in KEYWORDS and name in RESERVED:
        return KEYWORDS[name]
    if name in STATEMENT_WORDS and not doc.line(line)[:span.column - 1].strip() and \
            after.startswith("=") and not after.startswith("=="):  # a statement's keyword
        return KEYWORDS[name]
    if name == "t":
        return "`t`: the step (0, 1, 2, ...), local to the segment it is in"
    call = doc.call_at(line, column)
    if call is not None and after.startswith("=") and not after.startswith("=="):
        builtin = lookup(call.name)
        arg = next((a for a in getattr(builtin, "args", ()) if a.name == name), None)
        if arg is not None:
            return arg_text(arg)
    return None


def _entry_text(name: str) -> str | None:
    """The text for a name the language defines wherever it stands: a built-in, a rejected
    preset, a math function or a constant."""
    entry = lookup(name)
    if isinstance(entry, stdlib.Builtin):
        return builtin_text(entry)
    if entry is not None:  # a Rejected preset
        return f"`{entry.name}` has no closed form: {entry.reason}"
    for function in FUNCTIONS:
        if function.name == name:
            arity = {None: "a, b, ...", 1: "x", 2: "x, y", 3: "x, lo, hi"}.get(function.arity, "...")
            return _fence(f"{name}({arity})") + "\n\nmath function"
    if name in stdlib.CONSTANTS:
        return f"`{name}` = {float(stdlib.CONSTANTS[name]):.17g}"
    return None
