"""A float64 first look at a long stretch of steps: where might two bound schedules differ?

Exact values (``exact_eval``) cost about a millisecond a step when they are irrational,
so a stretch of a million steps cannot be checked one by one.  numpy computes both
schedules over a block of steps at once in float64; a step where they differ by more
than rounding could explain is a *candidate*, and only a candidate that ``exact_eval``
then proves different is ever reported (a float answer alone never is: a difference of
1e-30 is invisible here, and rounding may fake one).

The sympy tree is turned into nested closures over arrays (no ``eval``/``exec``/
``lambdify``), one per node type, as ``exact_eval`` does for single steps.
"""

from __future__ import annotations

import functools

import sympy as sp
from sympy.core.relational import Relational

from ..core.algebra import t
from ..core.functions import BY_NODE
from ..core.special import restart_index

np = None  # numpy, once ``_numpy`` has loaded it: a proof that never scans (an export read back
# as written, a resume) does not pay its import


@functools.cache
def _numpy():
    """numpy, imported on the first scan; None without it: schedlang needs only lark and sympy
    (the playground's Pyodide has no numpy), and then there are no candidates and the exact scan
    does all the work."""
    global np  # noqa: PLW0603 - the closures of ``_compile`` read the module's name
    try:
        import numpy  # lazy: ~0.1 s, only for a scan
    except ImportError:
        return None
    np = numpy
    return np


BLOCK = 1 << 18  # steps computed at once
RELATIVE = 1e-9  # a larger relative difference is a candidate


class Unsupported(Exception):  # noqa: N818 - a state, not a failure
    """A node this evaluator has no array form for."""


def _compile(expr: sp.Basic):  # noqa: C901 - one branch per node type
    if expr == t:
        return lambda s: s
    if expr in (sp.true, sp.false):
        value = bool(expr)
        return lambda s: np.full(s.shape, value)
    if expr.is_number and not expr.has(t):
        value = float(expr)
        return lambda s: np.full(s.shape, value)
    args = [_compile(a) for a in expr.args] if not isinstance(expr, sp.Piecewise) else None
    if isinstance(expr, sp.Add):
        return lambda s: sum((f(s) for f in args[1:]), args[0](s))
    if isinstance(expr, sp.Mul):
        def product(s):
            out = args[0](s)
            for f in args[1:]:
                out = out * f(s)
            return out
        return product
    if isinstance(expr, sp.Pow):
        return lambda s: np.power(args[0](s), args[1](s))
    if isinstance(expr, sp.exp):
        return lambda s: np.exp(args[0](s))
    if isinstance(expr, sp.floor):
        return lambda s: np.floor(args[0](s))
    if isinstance(expr, sp.ceiling):
        return lambda s: np.ceil(args[0](s))
    if isinstance(expr, sp.Mod):
        return lambda s: np.mod(args[0](s), args[1](s))
    if isinstance(expr, (sp.Min, sp.Max)):
        op = np.minimum if isinstance(expr, sp.Min) else np.maximum

        def extreme(s):
            out = args[0](s)
            for f in args[1:]:
                out = op(out, f(s))
            return out
        return extreme
    if isinstance(expr, sp.Piecewise):
        branches = [(_compile(e), _compile(c)) for e, c in expr.args]

        def piecewise(s):
            out = np.full(s.shape, np.nan)
            left = np.ones(s.shape, dtype=bool)
            for value, cond in branches:
                take = left & cond(s)
                if take.any():
                    out[take] = np.broadcast_to(value(s), s.shape)[take]
                left &= ~take
            return out
        return piecewise
    if isinstance(expr, sp.ITE):
        return lambda s: np.where(args[0](s), args[1](s), args[2](s))
    if isinstance(expr, Relational):
        ops = {sp.StrictLessThan: np.less, sp.LessThan: np.less_equal, sp.StrictGreaterThan: np.greater,
               sp.GreaterThan: np.greater_equal, sp.Eq: np.equal, sp.Ne: np.not_equal}
        op = ops.get(type(expr))
        if op is None:
            raise Unsupported(type(expr).__name__)
        return lambda s: op(args[0](s), args[1](s))
    if isinstance(expr, sp.And):
        return lambda s: np.logical_and.reduce([f(s) for f in args])
    if isinstance(expr, sp.Or):
        return lambda s: np.logical_or.reduce([f(s) for f in args])
    if isinstance(expr, sp.Not):
        return lambda s: ~args[0](s)
    if isinstance(expr, restart_index):
        raise Unsupported("restart_index")
    row = BY_NODE.get(type(expr))
    if row is not None and row.array is not None and hasattr(np, row.array):
        function = getattr(np, row.array)
        return lambda s: function(args[0](s))
    raise Unsupported(type(expr).__name__)


def compile_array(expr: sp.Expr):
    """``steps (float64 array) -> values`` for a bound expression in ``t``; ``Unsupported``
    (also without numpy, which the closures need)."""
    if _numpy() is None:
        raise Unsupported("numpy is not installed")
    return _compile(expr)


def candidates(ra: sp.Expr, rb: sp.Expr, start: int, stop: int, limit: int = 5):
    """Up to ``limit`` steps of ``[start, stop)``, in order, where float64 says the two differ
    (none without numpy: this stage only saves time)."""
    if _numpy() is None:
        return []
    try:
        fa, fb = compile_array(ra), compile_array(rb)
    except (Unsupported, TypeError, ValueError):
        return []
    found: list[int] = []
    with np.errstate(all="ignore"):
        for lo in range(start, stop, BLOCK):
            steps = np.arange(lo, min(lo + BLOCK, stop), dtype=np.float64)
            try:
                a = np.broadcast_to(fa(steps), steps.shape).astype(np.float64)
                b = np.broadcast_to(fb(steps), steps.shape).astype(np.float64)
            except (TypeError, ValueError, OverflowError, ZeroDivisionError):
                return found
            scale = np.maximum(np.abs(a), np.abs(b))
            differ = np.isfinite(a) & np.isfinite(b) & (np.abs(a - b) > RELATIVE * scale)
            for index in np.flatnonzero(differ)[: limit - len(found)]:
                found.append(lo + int(index))
            if len(found) >= limit:
                break
    return found
