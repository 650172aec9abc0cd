"""The meaning of a schedule (SPEC §1) as sympy: local steps, holding, sequencing.

A ``Segment`` is a formula in the local step ``t`` plus a duration (``None`` for
infinity).  Everything else in schedlang is built from three operations here:
``held`` (a finite segment keeps its end value ``f(n)`` from ``t = n`` on),
``sequence`` (``a >> b``: ``b`` sees its own local step from 0) and
``combine`` (the duration of an arithmetic mix of segments).  Conditions are
kept in the canonical form ``t < c`` so later stages (printers, verification)
can read the breakpoints straight off the tree.

Two symbols stand for the step.  ``t`` is the public one, a whole number, and
every finished schedule is written in it.  ``tau`` is the same step while a
schedule is being built: a real number, so sympy cannot use integrality to
rewrite ``floor(t)`` as ``t`` or ``cos(pi*t)`` as ``(-1)**t`` in a formula that
``stretch`` later evaluates at ``t / k``.  ``finish`` turns ``tau`` into ``t``.
Everything here accepts either symbol.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp
from sympy.core.relational import Relational

#: The step symbol: a whole number >= 0.  Every finished schedule is a function of it.
t = sp.Symbol("t", integer=True, nonnegative=True)
#: The step while a formula is being built (see the module docstring).
tau = sp.Symbol("t", real=True, nonnegative=True)
_STEPS = (t, tau)


def finish(expr):
    """A built formula in the public step ``t``, every comparison in canonical form."""
    return canonical(expr.xreplace({tau: t})) if isinstance(expr, sp.Basic) else expr


def has_step(expr) -> bool:
    return isinstance(expr, sp.Basic) and bool(expr.free_symbols & {t, tau})


@dataclass(frozen=True)
class Mark:
    """Where a schedule was put together, for ``schedlang check``'s warnings (not its meaning).

    ``kind == "join"``: an ``a >> b`` boundary at local ``step``; ``value`` is where ``a`` was
    heading (``a``'s end value), to compare with ``b``'s start.  ``kind == "cut"``: a ``for``
    that stops a segment at ``step`` before its own end; ``value`` is the end it never reaches
    and ``reached`` the value it holds instead.
    Only ``>>`` and ``for`` record marks; other operations drop them, which only means fewer
    warnings.
    """

    kind: str
    step: sp.Expr
    value: sp.Expr
    reached: sp.Expr | None = None


@dataclass(frozen=True)
class Segment:
    """A formula of the local step and how many steps it lasts (``None``: forever)."""

    expr: sp.Expr
    duration: sp.Expr | None = None
    marks: tuple[Mark, ...] = field(default=(), compare=False)

    @property
    def finite(self) -> bool:
        return self.duration is not None

    @property
    def depends_on_step(self) -> bool:
        return has_step(self.expr)

    def start_value(self) -> sp.Expr:
        return at(self.expr, 0)

    def end_value(self) -> sp.Expr:
        """``f(n)``: the value a finite segment holds after its last step."""
        assert self.duration is not None
        return at(self.expr, self.duration)

    def held(self) -> sp.Expr:
        """The value at every step t >= 0, holding ``f(n)`` from ``t = n`` on."""
        if self.duration is None or not self.depends_on_step:
            return self.expr
        n = self.duration
        if isinstance(self.expr, sp.Piecewise) and _all_before(self.expr, n):
            # The branches already cover [0, n): extend the list instead of nesting it.
            *head, (last, _) = self.expr.args
            return sp.Piecewise(*head, (last, sp.Lt(tau, n)), (self.end_value(), True))
        return sp.Piecewise((self.expr, sp.Lt(tau, n)), (self.end_value(), True))


def _all_before(expr: sp.Piecewise, n) -> bool:
    """Whether every branch but the last reads ``t < c`` with ``c <= n`` provably."""
    for _, cond in expr.args[:-1]:
        if not (isinstance(cond, sp.StrictLessThan) and cond.lhs in _STEPS
                and (n - cond.rhs).is_nonnegative):
            return False
    last = expr.args[-1].cond
    return last == sp.true or (isinstance(last, sp.StrictLessThan) and last.lhs in _STEPS
                                and (n - last.rhs).is_nonnegative)


def at(expr: sp.Expr, step) -> sp.Expr:
    """The formula at one step (a number or a symbolic offset), conditions kept canonical."""
    return canonical(_replace_step(expr, step))


def shifted(expr: sp.Expr, offset) -> sp.Expr:
    """``expr`` seen from a segment that starts at global step ``offset``."""
    if offset == 0 or not has_step(expr):
        return expr
    return canonical(_replace_step(expr, tau - offset))


def _replace_step(expr: sp.Expr, value) -> sp.Expr:
    """Put ``value`` (which may itself contain ``tau``) where either step symbol stands.

    ``tau`` goes first, then ``t``: ``value`` never contains ``t``, so nothing is
    replaced twice.  (sympy's simultaneous ``subs`` re-evaluates every branch at
    once and trips over branches that are complex where they are never used.)
    """
    if tau in expr.free_symbols:
        expr = expr.subs(tau, value)
    if t in expr.free_symbols:
        expr = expr.subs(t, value)
    return expr


def canonical(expr: sp.Expr) -> sp.Expr:
    """Rewrite every comparison that is linear in t with unit slope as ``t < c`` etc."""
    if not expr.has(Relational):
        return expr
    return expr.replace(lambda e: isinstance(e, Relational), _canonical_relation)


def _canonical_relation(rel: Relational):
    steps = rel.free_symbols & {t, tau}
    if len(steps) != 1 or not isinstance(rel, (sp.StrictLessThan, sp.LessThan,
                                                sp.StrictGreaterThan, sp.GreaterThan)):
        return rel
    (step,) = steps
    diff = sp.expand(rel.lhs - rel.rhs)
    slope = diff.coeff(step)
    rest = sp.expand(diff - slope * step)
    if step in rest.free_symbols or not slope.is_number or slope == 0:
        return rel
    # slope*t + rest  op  0   ->   t op -rest/slope   (the order flips when slope < 0)
    bound = sp.expand(-rest / slope)
    if slope > 0:
        return rel.func(step, bound)
    flipped = {sp.StrictLessThan: sp.StrictGreaterThan, sp.LessThan: sp.GreaterThan,
               sp.StrictGreaterThan: sp.StrictLessThan, sp.GreaterThan: sp.LessThan}[rel.func]
    return flipped(step, bound)


def sequence(first: Segment, then: Segment) -> Segment:
    """``first >> then``; ``first`` must be finite (the caller reports it otherwise)."""
    assert first.duration is not None
    n = first.duration
    value = sp.Piecewise((first.expr, sp.Lt(tau, n)), (shifted(then.held(), n), True))
    duration = None if then.duration is None else n + then.duration
    marks = (*first.marks, Mark("join", n, first.end_value()),
             *(Mark(m.kind, n + m.step, m.value, m.reached) for m in then.marks))
    return Segment(_flatten(value), duration, marks)


def _flatten(expr: sp.Expr) -> sp.Expr:
    """Merge a Piecewise whose last branch is itself a Piecewise into one list of branches.

    Sequencing nests to the right; a flat list of ``t < c_i`` branches is both
    what people read in ``schedlang show`` and what the printers turn into one
    chain of ``where``.
    """
    if not isinstance(expr, sp.Piecewise):
        return expr
    *head, (last_expr, last_cond) = expr.args
    if last_cond == sp.true and isinstance(last_expr, sp.Piecewise):
        return sp.Piecewise(*head, *last_expr.args)
    return expr


def combine(*segments: Segment) -> sp.Expr | None:
    """The duration of a value computed pointwise from several segments.

    Finite segments set it (the longest one wins); segments constant in ``t``
    (numbers, parameters) are neutral; one that changes forever makes it infinite.
    """
    finite = [s.duration for s in segments if s.duration is not None]
    if any(s.duration is None and s.depends_on_step for s in segments):
        return None
    if not finite:
        return None
    return finite[0] if len(finite) == 1 else sp.Max(*finite)


def hold_for(body: Segment, steps) -> Segment:
    """``body for steps``: cut or held to exactly ``steps`` steps."""
    # Marks the cut hides (past ``steps``) would land inside whatever follows: drop them.
    marks = tuple(m for m in body.marks if (steps - m.step).is_nonnegative)
    cut_short = body.duration is not None and (body.duration - steps).is_positive is not False
    if cut_short and body.depends_on_step:
        marks += (Mark("cut", steps, body.end_value(), at(body.held(), steps)),)
    return Segment(body.held(), steps, marks)
