"""Turning ``where`` facts into assumptions: ``where n > w`` proves things as ``n = w + d``, ``d > 0``.

sympy reasons well from a symbol's assumptions (``Max(1, d)`` is ``d`` for a positive
integer ``d``; ``t / d >= 1`` is linear with a positive slope) and poorly from side
conditions.  A clause ``s - rest > 0`` (or ``>= 0``) in which the parameter ``s`` has
coefficient 1 is therefore *solved*: ``s`` is replaced everywhere by ``rest + d`` with a
fresh ``d`` that is positive (or nonnegative), integer when ``s`` and ``rest`` are.  The
admissible values of the new symbols are exactly those of the old ones (``s``'s own
assumptions, when ``rest + d`` does not imply them, stay behind as a condition), so a
proof over the new symbols is a proof over the old ones, and a counterexample maps back
(``values``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp
from sympy.core.relational import Relational

from .intervals import Fact, facts_from


@dataclass
class Elimination:
    """``mapping``: old symbol -> expression in the new ones; ``conditions`` still to hold."""

    mapping: dict = field(default_factory=dict)
    conditions: list = field(default_factory=list)
    contradiction: bool = False

    def apply(self, expr: sp.Expr) -> sp.Expr:
        return expr.xreplace(self.mapping) if self.mapping else expr

    def values(self, binding: dict, originals) -> dict:
        """The original parameters' values for a binding of the new symbols."""
        out = {}
        for s in originals:
            v = self.mapping.get(s, s).xreplace(binding)
            if v.is_number:
                out[str(s)] = int(v) if v.is_Integer else float(v)
        return out


def _flat(conditions) -> list:
    out = []
    for c in conditions:
        if isinstance(c, sp.And):
            out += _flat(c.args)
        elif c is not sp.true and c is not True:
            out.append(c)
    return out


def _solvable(fact: Fact, free: set):
    """``(s, rest)`` with ``fact.expr == s - rest``, ``s`` a free parameter not in ``rest``."""
    g = sp.expand(fact.expr)
    for s in sorted(g.free_symbols & free, key=str):
        rest = sp.expand(s - g)
        if s in rest.free_symbols:
            continue
        if s.is_integer and not rest.is_integer:
            continue
        return s, rest
    return None


def _equation(c: sp.Eq, free: set, counter: int):
    """``(s, value)`` for an equation that fixes a parameter: ``n == 2 * k`` gives ``n = 2 k``;
    a parity or divisibility clause (``floor(n / 2) * 2 == n``, ``Mod(n, 3) == 0``) gives
    ``n = 2 m`` with a fresh whole ``m >= 0``, so ``n / 2`` is a whole number the prover can
    use as a breakpoint.  The values of the new symbols are exactly those that satisfy the
    clause.  None for anything else."""
    g = sp.expand(c.lhs - c.rhs)
    for s in sorted(g.free_symbols & free, key=str):
        if not s.is_integer:
            continue
        for k in _divisors_of(g, s):
            m = sp.Symbol(f"{s.name}_{counter}_", integer=True, nonnegative=True)
            return s, k * m
        slope = g.coeff(s, 1)
        rest = sp.expand(g - slope * s)
        if slope in (1, -1) and s not in rest.free_symbols and not rest.has(sp.floor, sp.Mod) \
                and (-rest * slope).is_integer:
            return s, sp.expand(-rest * slope)
    return None


def _divisors_of(g: sp.Expr, s: sp.Symbol):
    """``[k]`` when ``g == 0`` says that the whole ``s >= 0`` is a multiple of the number ``k``:
    ``k * floor(s / k) - s`` (either sign) or ``Mod(s, k)``."""
    if not s.is_nonnegative:
        return []
    if isinstance(g, sp.Mod) and g.args[0] == s and g.args[1].is_Integer and g.args[1] > 0:
        return [g.args[1]]
    for sign in (1, -1):
        h = sp.expand(sign * g + s)  # k * floor(s / k)
        if isinstance(h, sp.Mul) and len(h.args) == 2 and h.args[0].is_Integer and h.args[0] > 0 \
                and isinstance(h.args[1], sp.floor) and sp.expand(h.args[1].args[0] - s / h.args[0]) == 0:
            return [h.args[0]]
    return []


def _inequality(c, free, counter: int):
    """``(s, rest + d)`` for a fact ``s > rest`` (``>=``) solvable for a parameter ``s``, ``d`` a
    fresh positive (nonnegative) symbol; None for any other condition."""
    facts = facts_from([c])
    if len(facts) != 1:
        return None
    solved = _solvable(facts[0], free)
    if solved is None:
        return None
    s, rest = solved
    integer = bool(s.is_integer)
    kind = {"positive": True} if facts[0].strict else {"nonnegative": True}
    d = sp.Symbol(f"{s.name}_{counter}_", integer=integer, real=True, **kind) if integer \
        else sp.Symbol(f"{s.name}_{counter}_", real=True, **kind)
    return s, rest + d


def _substituted(pending: list, c, sub: dict, result: Elimination) -> list:
    """The conditions but ``c`` with ``sub`` made, those now true dropped; a false one marks
    ``result`` a contradiction."""
    left = []
    for other in pending:
        if other is c:
            continue
        other = other.xreplace(sub)
        if other is sp.false:
            result.contradiction = True
        elif other is not sp.true:
            left.append(other)
    return left


def eliminate(conditions, free) -> Elimination:
    """Solve as many ``where`` facts for a parameter as possible (see the module docstring)."""
    result = Elimination()
    pending = _flat(conditions)
    free = set(free)
    progress = True
    counter = 0
    while progress:
        progress = False
        for c in pending:
            if not isinstance(c, Relational):
                continue
            equation = (_equation(c, free, counter) if isinstance(c, sp.Eq) else None) \
                or _inequality(c, free, counter)
            if equation is None:
                continue
            s, value = equation
            counter += 1
            sub = {s: value}
            result.mapping = {k: v.xreplace(sub) for k, v in result.mapping.items()}
            result.mapping[s] = value
            left = _substituted(pending, c, sub, result)
            # what ``s`` assumed and ``rest + d`` does not imply stays a condition
            if s.is_positive and not value.is_positive:
                left.append(sp.Gt(value, 0))
            elif s.is_nonnegative and not value.is_nonnegative:
                left.append(sp.Ge(value, 0))
            pending = _flat(left)
            # only the declared parameters are solved for, each once: solving for a fresh
            # symbol could trade one condition for another for ever
            free = free - {s}
            progress = True
            break
    result.conditions = pending
    return result
