"""The two sides of a comparison: what ``equivalent`` was given, as a sympy formula of the step
with its ``where`` conditions, every bound value substituted and one symbol per parameter
name.  Kept apart from the proof so that the proof sees formulas only, never programs."""

from __future__ import annotations

import sys
from dataclasses import dataclass

import sympy as sp

from ..core.algebra import bind
from ..core.clock import expand_counts
from ..core.special import as_powers
from ..errors import SchedlangError
from ..program import Program, Schedule, compile_declared
from ..semantics.params import bind_params


@dataclass
class _Side:
    expr: sp.Expr
    conditions: list  # where clauses and duration positivity, in the (merged) symbols
    symbols: dict  # name -> symbol


def pick_schedule(x, params: dict | None = None, filename: str = "<string>"):
    """The ``Schedule`` meant by ``x``: itself, a program's main schedule (``lr``, or its only
    one), a ``schedlang.build`` piece, or source compiled with those of ``params`` it declares
    (``compile_declared``)."""
    built = sys.modules.get("schedlang.build.pieces")  # loaded if x can be a built piece
    if built is not None and isinstance(x, built.Expr):
        x = x.schedule
    if isinstance(x, (str, bytes)):
        x = compile_declared(x, params or {}, filename)
    if isinstance(x, Program):
        x = x.main_schedule(purpose="equivalent compares one schedule of each side")
    if not isinstance(x, Schedule):
        raise SchedlangError(f"cannot compare a {type(x).__name__}; give a Schedule, a Program or "
                             "source text")
    return x


def read_side(x, params: dict, expand: bool = True) -> _Side:
    """``x``'s formula with ``params`` bound; ``expand``: in the form the proof rules read
    (``prepared``), else as compiled (what two sides are compared by first: identical formulas
    need no proof rule)."""
    x = pick_schedule(x, params)
    program = x.program
    infos = program.params if program else {}
    # ``params`` wins over values the program was compiled with (also for Schedule inputs),
    # checked against the declarations like any other binding.
    values = bind_params(infos, {n: v for n, v in params.items() if n in infos},
                         program.values if program else None)
    bound = {infos[n].symbol: v for n, v in values.items()}
    expr = bind(x.symbolic_expr, bound) if program else x.expr
    if expand:
        expr = prepared(expr)
    conditions = [c.xreplace(bound) for c in (program.constraints if program else [])]
    symbols = {name: info.symbol for name, info in infos.items()}
    return _Side(expr, conditions, symbols)


def prepared(expr: sp.Expr) -> sp.Expr:
    """``expr`` in the form the proof rules read: the count of a token-clock schedule written per
    batch stage (``core.clock.expand_counts``: a side given as branches compares alike), powers
    as ``as_powers`` writes them."""
    return as_powers(expand_counts(expr))


def identical(a: sp.Expr, b: sp.Expr) -> bool:
    """Whether ``a`` and ``b`` are the same formula (in the same symbols), one with a value at
    every step: then they are equal at every step and for every parameter value, with no proof
    rule (an export read back as the file was written, a schedule against itself)."""
    return a == b and not a.has(sp.nan, sp.zoo, sp.oo, -sp.oo)


def merge_symbols(a: _Side, b: _Side) -> None:
    """One symbol per parameter name, with the assumptions of both sides (admissible for both)."""
    for name in set(a.symbols) & set(b.symbols):
        sa, sb = a.symbols[name], b.symbols[name]
        if sa == sb:
            continue
        assumptions = {"real": True}
        for key in ("integer", "positive", "nonnegative"):
            if sa.assumptions0.get(key) or sb.assumptions0.get(key):
                assumptions[key] = True
        merged = sp.Symbol(name, **assumptions)
        for side, old in ((a, sa), (b, sb)):
            side.expr = side.expr.xreplace({old: merged})
            side.conditions = [c.xreplace({old: merged}) for c in side.conditions]
            side.symbols[name] = merged
