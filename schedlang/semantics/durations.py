"""Point a fractional duration at the expression that made it fractional.

``let stable = 0.9 * total - warmup`` and later ``constant(peak, stable)``: with
``total = 1005`` the duration is 804.5 steps, but the place to fix is ``0.9 *
total`` (904.5) in the ``let``, not the name ``stable`` where it is used.  When the
check of bound durations fails, ``relocate`` walks down from the duration's
expression: through a name defined by ``let`` into its definition, and into the
operand of ``+ - * / **`` or unary minus whose value is not whole either (a written
number such as ``0.9`` is a factor, not the culprit), and reports the innermost
such expression, naming the duration it feeds.
"""

from __future__ import annotations

import math

import sympy as sp

from ..errors import SchedlangError
from ..syntax import ir

_PREFIX = "a duration must be a whole number of steps"


def relocate(exc: SchedlangError, lowered, substitutions: dict) -> SchedlangError:
    """``exc`` moved to the expression that made the duration fractional (or ``exc`` itself)."""
    if not exc.message.startswith(_PREFIX) or exc.span is None or lowered.module is None:
        return exc
    lets = {s.name: s.value for s in lowered.module.statements if isinstance(s, ir.Let)}
    start = _node_at(lowered.module, exc.span)
    if start is None:
        return exc

    def fractional(node) -> sp.Expr | None:
        return _fractional(lowered, substitutions, node)

    node, value = start, fractional(start)
    if value is None:
        return exc
    for _ in range(10_000):  # each step goes one level down the (finite) tree
        found = _fractional_below(node, lets, fractional)
        if found is None:
            break
        node, value = found
    if node is start:
        return exc
    text = _text(node)
    shown = float(value)
    return SchedlangError(
        f"{_PREFIX}: `{text}` is {shown:g}, so the duration `{_text(start)}` at line "
        f"{exc.span.line} is {_duration(exc)}", node.span,
        hint=f"round it where it is made, e.g. floor({text}) or ceil({text}) "
             f"({math.floor(shown)} or {math.ceil(shown)})")


def _fractional(lowered, substitutions: dict, node) -> sp.Expr | None:
    """The value of ``node`` (the parameters bound) where it is a finite number that is not whole."""
    try:
        value = lowered.value(node)
    except SchedlangError:
        return None
    expr = getattr(value, "expr", None)
    if not isinstance(expr, sp.Basic):
        return None
    expr = expr.xreplace(substitutions)
    return expr if expr.is_number and expr.is_finite and not expr.is_integer else None


def _fractional_below(node, lets: dict, fractional):
    """(node, value) one level below ``node`` that is fractional too: the definition of a ``let``
    name, or the first operand not a written number; None where there is none."""
    if isinstance(node, ir.Name) and node.id in lets:
        inner = fractional(lets[node.id])
        return None if inner is None else (lets[node.id], inner)
    children = ([node.left, node.right] if isinstance(node, ir.BinOp) else
                [node.operand] if isinstance(node, ir.Unary) else [])
    for child in children:
        if not isinstance(child, ir.Number):
            inner = fractional(child)
            if inner is not None:
                return child, inner
    return None


def _duration(exc: SchedlangError) -> str:
    return exc.message.rsplit(" ", 1)[-1]


def _text(node) -> str:
    span = node.span
    if span.end_line != span.line:
        return "this expression"
    return span.source.line(span.line)[span.column - 1:span.end_column - 1]


def _node_at(module: ir.Module, span):
    """The outermost node of the syntax tree at exactly ``span`` (iteratively)."""
    stack = list(module.statements)
    while stack:
        node = stack.pop()
        if not isinstance(node, ir.Node):
            continue
        if node.span == span and not isinstance(node, (ir.Let, ir.ScheduleDecl, ir.Param, ir.Def)):
            return node
        for value in vars(node).values():
            if isinstance(value, ir.Node):
                stack.append(value)
            elif isinstance(value, tuple):
                stack.extend(v for v in value if isinstance(v, ir.Node))
    return None
