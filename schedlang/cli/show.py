"""``schedlang show``: a schedule as its table of segments, one row each.

Every finished schedule is one flat ``Piecewise`` whose conditions are canonical
``t < c`` with increasing bounds (``algebra.sequence``), so it reads as rows
``[start, end): formula`` — the formula in the global step ``t``, exact rationals,
powers ``b ** x`` as written (not the ``exp(x * logb(b))`` kept inside), the last row
open-ended.  ``--latex`` writes the same rows as a ``cases`` table.
A formula that is not such a table (a ``cycle``, whose rows repeat through ``Mod``)
is one row ``[0, ∞)``; ``restart_index`` and a count of tokens or samples (``T(t)``, ``S(t)``) are
explained under the table where they appear.
"""

from __future__ import annotations

import sympy as sp

from ..codegen.array import last_step
from ..core.algebra import strict_bound
from ..core.clock import UNITS, ClockCountBase
from ..core.special import as_powers, restart_index

INFINITY = "∞"


def rows(expr: sp.Expr, start=sp.S.Zero, end=None) -> list[tuple[sp.Expr, sp.Expr | None, sp.Expr]]:
    """``(start, end, formula)`` per segment; ``end`` None for the last (it never ends).

    A branch that is itself a table (a one-cycle's phases inside its length) is split into
    its own rows, clipped to the branch.
    """
    if not isinstance(expr, sp.Piecewise):
        return [(start, end, expr)]
    bounds = [_bound(cond) for _, cond in expr.args[:-1]]
    if any(b is None for b in bounds):
        return [(start, end, expr)]
    out = []
    lo = start
    for (value, _), hi in zip(expr.args, [*bounds, None]):
        if hi is not None and end is not None and (hi - end).is_nonnegative:
            hi = end
        if hi is None:
            hi = end
        if hi is not None and (hi - lo).is_nonpositive:
            continue  # no step reaches this branch inside the outer one
        out += rows(value, lo, hi)
        if hi is None or hi == end:
            break
        lo = hi
    return out


def _bound(cond):
    """The first step after ``t < c`` / ``t <= c`` (``strict_bound`` when that is all it is)."""
    found = strict_bound(cond)
    if found is None:
        last = last_step(cond)  # the array printers' reading of t <= c: floor(c)
        found = None if last is None else last + 1
    return found


def text(expr: sp.Expr, indent: str = "  ") -> str:
    """The rows as aligned text lines."""
    found = rows(expr)
    spans = [f"[{sp.sstr(start)}, {INFINITY if end is None else sp.sstr(end)}):" for start, end, _ in found]
    width = max(len(s) for s in spans)
    lines = [f"{indent}{span:<{width}} {sp.sstr(as_powers(value))}"
             for span, (_, _, value) in zip(spans, found)]
    return "\n".join(lines + _notes(expr, indent))


def latex(name: str, expr: sp.Expr) -> str:
    """``name(t) = \\begin{cases} ... \\end{cases}`` with one ``start \\le t < end`` per row."""
    found = rows(expr)
    if len(found) == 1:
        return f"{name}(t) = {sp.latex(as_powers(found[0][2]))}"
    cases = []
    for start, end, value in found:
        where = rf"{sp.latex(start)} \le t" + ("" if end is None else rf" < {sp.latex(end)}")
        cases.append(rf"{sp.latex(as_powers(value))} & {where}")
    return f"{name}(t) = \\begin{{cases}} " + r" \\ ".join(cases) + r" \end{cases}"


def _notes(expr: sp.Expr, indent: str) -> list[str]:
    notes = []
    if expr.has(restart_index):
        notes.append(f"{indent}restart_index(t, T, m): the cycle holding step t when cycle i lasts T * m**i "
                     "steps (SGDR's growing restarts; the largest i with T * (m**i - 1) / (m - 1) <= t)")
    for count in sorted({type(c) for c in expr.atoms(ClockCountBase)}, key=lambda c: c.unit, reverse=True):
        notes.append(f"{indent}{count.__name__}(t): the {UNITS[count.unit]} consumed before step t, "
                     f"linear in t within each of the {len(count.firsts)} batch stages "
                     "(schedlang check lists them)")
    return notes
