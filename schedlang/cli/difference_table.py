"""The table ``verify`` prints under a difference: both schedules' values at the steps around
the first differing one; where two values print as the same float, as many digits of their
exact values as it takes to see them differ (``exact_eval.digits_apart``)."""

from __future__ import annotations

from ..core import exact_eval as ev
from ..errors import SchedlangError


def difference_table(schedules, step: int, around: int = 2) -> str:
    """Both schedules' values just before and after the first differing step; where the two
    values round to the same float, as many digits as it takes to see them differ."""
    try:
        steps = range(max(0, step - around), step + around + 1)
        columns = [s.values(steps) for s in schedules]
    except SchedlangError:
        return ""
    exact = _exact_columns(schedules, steps)
    cells = []
    for i in range(len(steps)):
        a, b = repr(columns[0][i]), repr(columns[1][i])
        if a == b and exact is not None:  # the same float: show the digits where they part
            a, b = ev.digits_apart(exact[0][i], exact[1][i]) or (a, b)
        cells.append((a, b))
    width = max(22, *(len(c) for row in cells for c in row))
    lines = [f"  {'step':>8}  {'A':>{width}}  {'B':>{width}}"]
    for k, (a, b) in zip(steps, cells):
        mark = ">" if k == step else " "
        lines.append(f"{mark} {k:>8}  {a:>{width}}  {b:>{width}}")
    return "\n".join(lines)


def _exact_columns(schedules, steps):
    """Each schedule's exact values (or proven enclosures) at ``steps``; None if one cannot be had."""
    try:
        functions = [ev.compile_expr(s.expr) for s in schedules]
        return [[f(k) for k in steps] for f in functions]
    except (ev.Undetermined, ArithmeticError, ValueError):
        return None
