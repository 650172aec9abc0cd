"""What may come next at the cursor (completion) and which argument is being written (signature help).

Both read the tokens before the cursor (``Document.call_at``), never the parse: the text is
half-typed while they run.  After ``torch.`` come that library's presets; inside a call its
argument names (``mode=``) and, for an option argument, its choices (``"triangular"``); after
``warmup(`` the ramp shapes; anywhere else the file's own names, the built-ins, the math
functions and constants, the calls of the run's clock, the preset libraries and the keywords.
Everything comes from the tables lowering reads (``stdlib``, ``clock_calls``, ``presets``,
``core.functions``), so completion offers exactly the names a compile accepts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...core.functions import FUNCTIONS
from ...library import stdlib
from ...library.clock_calls import CLOCK_CALLS, Role
from ...syntax.parser import STATEMENT_WORDS
from . import symbols
from .document import Document
from .hover import arg_text, builtin_text, lookup

STATEMENTS = ("param", "let", "def", "schedule")
EXPRESSION_WORDS = ("if", "then", "else", "for", "jump", "and", "or", "not", "true", "false", "where")
#: What each role of a call of the run's clock is, beside its signature.
ROLE_DETAIL = {Role.ON_CLOCK: "a schedule counted on the batch schedule", Role.BATCH: "batch = ... only",
               Role.FROM_BATCH: "a factor read off the batch schedule"}


@dataclass(frozen=True)
class Item:
    label: str
    kind: str                   # function, keyword, module, variable, value, property, constant
    detail: str = ""
    documentation: str = ""
    insert: str | None = None   # what to insert when it is not the label


@dataclass(frozen=True)
class Signature:
    label: str
    parameters: tuple[str, ...]
    active: int
    documentation: str = ""


def _libraries() -> tuple[str, ...]:
    from ...library.presets import LIBRARIES  # lazy: presets (0.1 s), on first completion

    return LIBRARIES


def _presets(library: str) -> list[Item]:
    from ...library.presets import namespace  # lazy: presets (0.1 s), on first completion

    items = []
    for name, entry in namespace(library).items():
        short = name.split(".", 1)[1]
        if isinstance(entry, stdlib.Builtin):
            items.append(Item(short, "function", entry.signature(), builtin_text(entry)))
        else:
            items.append(Item(short, "function", "no closed form", entry.reason))
    for name, call in CLOCK_CALLS.items():
        if name.startswith(f"{library}."):
            items.append(_clock_item(name.split(".", 1)[1], call))
    return items


def _clock_item(label: str, call) -> Item:
    return Item(label, "function", f"{call.signature()}: {ROLE_DETAIL[call.role]}", builtin_text(call))


def _names(doc: Document) -> list[Item]:
    items = [Item(d.name, "variable", f"{d.kind} {d.name}") for d in symbols.definitions(doc.outlined())
             if d.name_span is not None]
    items += [Item(b.name, "function", b.signature(), builtin_text(b)) for b in stdlib.SCHEDULES.values()]
    items += [Item(f.name, "function", "math function") for f in FUNCTIONS
              if f.name not in stdlib.SCHEDULES]
    items += [Item(c, "constant", f"{float(v):.6g}") for c, v in stdlib.CONSTANTS.items()]
    items += [Item("t", "variable", "the step")]
    items += [_clock_item(n, c) for n, c in CLOCK_CALLS.items() if "." not in n]
    items += [Item(lib, "module", "presets") for lib in _libraries()]
    items += [Item(w, "keyword") for w in EXPRESSION_WORDS]
    return items


def complete(doc: Document, line: int, column: int) -> list[Item]:
    """The completion items at (line, column)."""
    tokens = doc.tokens_before(line, column)
    last = tokens[-1] if tokens else None
    before = doc.line(line)[:column - 1]
    if last and last[0] == "name" and "." in last[1] and before.endswith(last[1]):
        library = last[1].split(".", 1)[0]
        return _presets(library) if library in _libraries() else []
    if "#" in re.sub(r'"[^"]*"?', "", before):  # in a comment
        return []
    call = doc.call_at(line, column)
    builtin = lookup(call.name) if call else None
    args = getattr(builtin, "args", ())
    if call is not None and call.keyword is not None:
        arg = next((a for a in args if a.name == call.keyword), None)
        if arg is not None and arg.choices:
            quote = "" if call.in_string or arg.kind == stdlib.Kind.SHAPE else '"'
            return [Item(c, "value", arg.name, insert=f"{quote}{c}{quote}") for c in arg.choices]
        if arg is not None and arg.kind == stdlib.Kind.FLAG:
            return [Item("true", "keyword"), Item("false", "keyword")]
    if call is not None and call.in_string:
        return []
    first = args[0] if args and call is not None and call.index == 0 and call.keyword is None else None
    if first is not None and first.kind == stdlib.Kind.SHAPE:
        return [Item(s, "value", f"{call.name} shape") for s in first.choices]
    items = []
    if call is not None and call.keyword is None:
        items += [Item(f"{a.name}=", "property", arg_text(a), insert=f"{a.name}=") for a in args
                  if a.name not in call.given]
    if not before.strip() or before.strip() in STATEMENTS:
        items += [Item(w, "keyword") for w in STATEMENTS]
        items += [Item(w, "keyword", f"{w} = ...") for w in sorted(STATEMENT_WORDS)]
    return items + _names(doc)


DEF = re.compile(r"^[ \t]*def[ \t]+([A-Za-z_][A-Za-z_0-9]*)[ \t]*\(([^)]*)\)", re.MULTILINE)
ARITY = {None: ["a", "b", "..."], 1: ["x"], 2: ["x", "y"], 3: ["x", "lo", "hi"]}


def _defs(doc: Document) -> dict[str, list[str]]:
    """The file's ``def``s and their parameters, read from the text (it may not parse)."""
    return {m.group(1): [p.strip() for p in m.group(2).split(",") if p.strip()]
            for m in DEF.finditer(doc.source.text)}


def _function_params(doc: Document, name: str) -> list[str] | None:
    defs = _defs(doc)
    if name in defs:
        return defs[name]
    function = next((f for f in FUNCTIONS if f.name == name), None)
    return None if function is None else ARITY.get(function.arity, ["..."])


def signature(doc: Document, line: int, column: int) -> Signature | None:
    """The signature of the call the cursor is in, with the argument being written."""
    call = doc.call_at(line, column)
    if call is None:
        return None
    builtin = lookup(call.name)
    if isinstance(builtin, stdlib.Builtin):
        label = builtin.signature()
        names = [a.name for a in builtin.args]
        parameters = tuple(part.strip() for part in label[label.index("(") + 1:-1].split(","))
        documentation = " ".join(builtin.doc.split()).replace("``", "`")
    else:
        names = _function_params(doc, call.name)
        if names is None:
            return None
        parameters = tuple(names)
        label = f"{call.name}({', '.join(names)})"
        documentation = "" if call.name in _defs(doc) else "math function"
    if call.keyword is not None:
        active = names.index(call.keyword) if call.keyword in names else -1
    else:
        active = call.index if call.index < len(names) else -1
    if "..." in parameters or getattr(builtin, "variadic", False):
        active = min(call.index, len(parameters) - 1)
    return Signature(label, parameters if parameters != ("",) else (), active, documentation)
