"""Greedy minimization of a failing program's text.

Candidates, tried until none keeps the failure: drop a statement (``let``/``def``/
``param``/a second schedule), replace a parenthesized group or a call by one of its
arguments or by ``constant(0.5, 5)``, drop ``params=`` entries, shorten long numbers.
A candidate is kept when ``check_program`` still reports a failure of the same kind.
"""

from __future__ import annotations

import re
from dataclasses import replace

from .generator import Program
from .runner import check_program

SIMPLE = ("constant(0.5, 5)", "constant(0.5)", "1")


def _groups(text: str):
    """(start, end, inner parts) of every balanced ``name(...)`` or ``(...)``, outermost first."""
    stack, found = [], []
    for i, ch in enumerate(text):
        if ch == "(":
            stack.append(i)
        elif ch == ")" and stack:
            j = stack.pop()
            k = j
            while k > 0 and (text[k - 1].isalnum() or text[k - 1] in "._"):
                k -= 1
            found.append((k, i + 1, _split_args(text[j + 1:i])))
    return sorted(found, key=lambda g: g[0] - g[1])


def _split_args(inner: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for ch in inner:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    parts.append(current.strip())
    return [p for p in parts if p and "=" not in p.split("(")[0]]


def _candidates(program: Program):
    lines = program.source.strip().splitlines()
    for i, line in enumerate(lines):
        if not line.startswith("schedule lr"):
            yield replace(program, source="\n".join(lines[:i] + lines[i + 1:]) + "\n",
                          schedules=tuple(n for n in program.schedules
                                          if not line.startswith(f"schedule {n} ")))
    for key in program.params:
        yield replace(program, params={k: v for k, v in program.params.items() if k != key})
    text = program.source
    for start, end, args in _groups(text):
        for option in [*args, *SIMPLE]:
            if option != text[start:end]:
                yield replace(program, source=text[:start] + f"({option})" + text[end:])
    for m in re.finditer(r"\(\(([^()]*)\)\)", text):
        yield replace(program, source=text[:m.start()] + f"({m.group(1)})" + text[m.end():])


def shrink(program: Program, kind: str, budget: float = 5.0, max_tries: int = 400) -> Program:
    """A smaller program that still fails with ``kind`` (``check_program`` decides)."""
    tries = 0
    improved = True
    while improved and tries < max_tries:
        improved = False
        for candidate in _candidates(program):
            tries += 1
            if tries > max_tries:
                break
            if not candidate.schedules or "schedule " not in candidate.source:
                continue
            result = check_program(candidate, budget=budget)
            if any(f.kind == kind for f in result.failures):
                program = candidate
                improved = True
                break
    return program
