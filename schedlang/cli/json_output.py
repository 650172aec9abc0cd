"""``--json``: what ``check``, ``eval``, ``verify`` and ``import`` print for tools.

One JSON object per run on standard output, keys in the order written here (so
output is stable byte for byte for the same input), numbers as JSON numbers
(every value is finite: the closed-form check guarantees it).  Every object
starts with ``"schema": "schedlang.<command>/1"``; the number changes only when a
key is removed or changes meaning (new keys may appear).  ``docs/cli.md``,
"Machine-readable output", documents every key.

An error is also JSON on standard output (``"schema": "schedlang.error/1"``) with
exit status 2; the usual caret diagnostic still goes to standard error.
"""

from __future__ import annotations

import json
import sys

from ..limits import printable_name
from ..semantics.lower import lower
from ..syntax.parser import parse

VERSION = 1


def schema(command: str) -> str:
    return f"schedlang.{command}/{VERSION}"


def emit(doc: dict, stream=None) -> None:
    stream = stream or sys.stdout
    stream.write(dumps(doc) + "\n")


def dumps(doc) -> str:
    """``doc`` as JSON text that is always valid UTF-8: a string holding a lone surrogate (a byte
    of a file name that is not UTF-8, or an escape read from a config) is written with that
    character as ``\\xNN`` / ``\\uNNNN`` text (``limits.printable_name``)."""
    text = json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(_printable(doc), indent=2, ensure_ascii=False, allow_nan=False)
    return text


def _printable(value):
    if isinstance(value, str):
        return printable_name(value)
    if isinstance(value, dict):
        return {_printable(k): _printable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_printable(v) for v in value]
    return value


def location(span) -> dict:
    """``file``, ``line``, ``col`` (1-based), ``end_line``, ``end_col`` (exclusive), or nulls."""
    if span is None:
        return {"file": None, "line": None, "col": None, "end_line": None, "end_col": None}
    return {"file": span.source.filename, "line": span.line, "col": span.column,
            "end_line": span.end_line, "end_col": span.end_column}


def diagnostic(message: str, span, hint: str | None) -> dict:
    return {**location(span), "message": message, "hint": hint}


def error(exc) -> dict:
    return {"schema": schema("error"), "error": diagnostic(exc.message, exc.span, exc.hint)}


def usage_error(message: str) -> dict:
    return {"schema": schema("error"), "error": diagnostic(message, None, "see schedlang --help")}


def internal_error(message: str) -> dict:
    """A failure that is schedlang's own fault (exit 2 all the same: never a verdict)."""
    return {"schema": schema("error"), "error": diagnostic(message, None, "please report it, with the "
                                                                              "command that caused it")}


def _number(value):
    """An exact parameter value as a JSON number (an int stays an int)."""
    if value is None:
        return None
    return int(value) if value.is_Integer else float(value)


def _duration(duration):
    if duration is None:
        return None
    return duration if isinstance(duration, int) else str(duration)


def check(path: str, program, report) -> dict:
    params = [{"name": name, "type": info.type, "value": _number(program.values.get(name)),
               "required": info.default is None} for name, info in program.params.items()]
    schedules = []
    for s in report.summaries:
        schedule = program[s.name]
        bound = s.start is not None
        schedules.append({
            "name": s.name,
            "duration": _duration(s.duration),
            "bound": bound,
            "start": s.start, "end": s.end, "min": s.low, "max": s.high,
            "sum": s.budget if bound else None,
            "sum_exact": s.budget_exact if bound else None,
            "horizon": s.horizon if bound else None,
            "breakpoints": [int(b) for b in schedule.breakpoints if b.is_Integer] if bound else [],
            "unbound": sorted(str(x) for x in schedule.expr.free_symbols if str(x) != "t"),
        })
    warnings = [diagnostic(str(w), getattr(w, "span", None), getattr(w, "hint", None))
                for w in report.warnings]
    out = {"schema": schema("check"), "file": path, "params": params, "schedules": schedules,
           "warnings": warnings}
    if report.time is not None:
        out["time"] = report.time  # SPEC §12: batch stages, segment starts, totals
    if report.run is not None:
        out["run"] = report.run  # SPEC §14: the run's end, the values at its last update
    return out


def evaluate(path: str, steps, names: list[str], columns: list[list[float]], axis=None) -> dict:
    """``eval --json``; ``axis`` is ``(name, positions)`` for ``--axis samples|tokens``: the
    positions come first, each with the step that trains it."""
    out = {"schema": schema("eval"), "file": path}
    if axis is not None:
        out["axis"] = axis[0]
        out[axis[0]] = axis[1]
    out["steps"] = list(steps)
    out["values"] = {name: column for name, column in zip(names, columns)}
    return out


def stream_evaluate(out, path: str, positions: range, names: list[str], schedules, chunk: int = 1 << 16,
                    axis: str | None = None, steps_at=None) -> None:
    """What ``emit(evaluate(...))`` writes, byte for byte, written a chunk of positions at a time:
    ``eval --json`` over ``MAX_EVAL_POINTS`` positions never holds every value (or the text) at
    once.  With ``axis`` (``samples`` / ``tokens``) the positions count that, and ``steps_at(part)``
    gives the step that trains each."""
    head = {"schema": schema("eval"), "file": path} | ({"axis": axis} if axis else {})
    steps_of = steps_at or (lambda part: part)
    # Every schedule's first chunk before the first byte: an error (an unbound parameter) leaves
    # standard output to the error document alone, not after half of this one.
    firsts = [[repr(v) for v in s.values(steps_of(positions[:chunk]))] for s in schedules]
    out.write(dumps(head)[:-2] + ",\n")  # the object without its closing "\n}"

    def array(indent: str, lines) -> None:
        first = True
        for block in lines:
            if not block:
                continue
            out.write(("[\n" if first else ",\n") + indent + f",\n{indent}".join(block))
            first = False
        out.write("[]" if first else "\n" + indent[:-2] + "]")

    def blocks(values, first: list[str]):
        yield first
        for start in range(chunk, len(positions), chunk):
            yield [repr(v) for v in values(steps_of(positions[start:start + chunk]))]

    if axis:
        out.write(f'  {dumps(axis)}: ')
        array("    ", ([repr(x) for x in positions[start:start + chunk]]
                       for start in range(0, len(positions), chunk)))
        out.write(",\n")
    out.write('  "steps": ')
    array("    ", blocks(lambda part: part, [repr(k) for k in steps_of(positions[:chunk])]))
    out.write(',\n  "values": ' + ("{\n" if names else "{}"))
    for index, (name, schedule, first) in enumerate(zip(names, schedules, firsts)):
        out.write(f"    {dumps(name)}: ")
        array("      ", blocks(schedule.values, first))
        out.write(",\n" if index + 1 < len(names) else "\n  }")
    out.write("\n}\n")


def verify(sides: list[dict], verdict, bindings: list[dict], warnings: list[dict], span=None,
           after=None, axis: str = "steps") -> dict:
    """``verify --json``; ``span`` the steps compared (``verify_run.Window``), ``after`` a
    difference proven after the run's end (SPEC §14)."""
    status = "equivalent" if verdict.equivalent else "different" if verdict.different else "unknown"
    steps = None
    if span is not None and (span.start or span.stop is not None):
        steps = {"start": span.start, "stop": span.stop, "from": span.origin}
    return {"schema": schema("verify"), "a": sides[0], "b": sides[1], "verdict": status,
            "method": verdict.method, "reason": verdict.reason,
            "counterexample": _counterexample(verdict.counterexample), "bindings": bindings,
            "warnings": warnings, "steps": steps, "after_run": _counterexample(after), "axis": axis}


def _counterexample(ce) -> dict | None:
    if ce is None:
        return None
    return {"step": ce.step, "a": ce.a, "b": ce.b, "a_exact": ce.a_exact, "b_exact": ce.b_exact,
            "difference": ce.difference, "earliest": ce.earliest,
            "params": {k: _plain(v) for k, v in ce.params.items()}}


def _plain(value):
    if isinstance(value, (int, float, str)) or value is None:
        return value
    try:
        return int(value) if getattr(value, "is_Integer", False) else float(value)
    except (TypeError, ValueError):
        return str(value)


def imported(path: str | None, fmt: str | None, style: str, text: str, output: str | None) -> dict:
    """The ``.sched`` source and what a tool needs next: its parameters (required ones must be
    bound with ``-D``) and schedule names."""
    lowered = lower(parse(text, output or "<imported>"))
    params = [{"name": name, "type": info.type, "required": info.default is None,
               "default": _number(info.default) if info.default is not None and info.default.is_number
               else None} for name, info in lowered.params.items()]
    return {"schema": schema("import"), "file": path, "format": fmt, "style": style, "output": output,
            "params": params, "schedules": list(lowered.schedules), "source": text}
