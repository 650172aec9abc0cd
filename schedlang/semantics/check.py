"""The closed-form check (SPEC §4), on the sympy tree alone.

It runs on whatever expression a ``Schedule`` holds, so schedules built
through the Python API are held to the same rules as parsed files: only ``t``
and declared parameters may be free, only functions with a branch-free torch
equivalent may appear, and once every parameter is bound the value must be
finite at every step ``t >= 0``.
"""

from __future__ import annotations

import functools
import time

import sympy as sp
from sympy.core.relational import Relational
from sympy.functions.elementary.trigonometric import TrigonometricFunction
from sympy.logic.boolalg import Boolean

from ..core.algebra import t
from ..core.clock import ClockCountBase
from ..core.exact_eval import Undetermined, compile_expr
from ..core.functions import BY_NODE
from ..core.special import logb, restart_index
from ..errors import SchedlangError, Span

#: Every function a schedule may use: each has a branch-free torch spelling.
ALLOWED = (sp.Add, sp.Mul, sp.Pow, *BY_NODE, sp.Piecewise, sp.Mod, restart_index, logb,
           ClockCountBase)
#: Seconds sympy may spend deciding sampled steps of one condition (see ``_predicate``).
SYMBOLIC_SAMPLE_SECONDS = 2.0
_STRUCTURE = (sp.core.containers.Tuple, sp.functions.elementary.piecewise.ExprCondPair,
              Relational, sp.And, sp.Or, sp.Not)


def check_closed_form(expr: sp.Basic, allowed_symbols, span: Span | None = None, what: str = "schedule"):
    """Refuse anything but arithmetic, the allowed functions, ``t`` and the parameters."""
    allowed_symbols = set(allowed_symbols) | {t}
    for node in _nodes(expr):
        if isinstance(node, sp.Symbol):
            if node not in allowed_symbols:
                raise SchedlangError(f"the {what} depends on '{node}', which is neither the step t "
                                     "nor a declared parameter", span,
                                     hint=getattr(node, "hint", "") or
                                     "declare it with `param " + str(node) + ": float`")
        elif node in (sp.zoo, sp.oo, -sp.oo, sp.nan):
            raise SchedlangError(f"the {what} has a value that is not finite ({node})", span,
                                 hint="look for a division by zero or log(0)")
        elif node.is_Number or node in (sp.pi, sp.E) or isinstance(node, (Boolean, *_STRUCTURE)):
            continue
        elif isinstance(node, sp.Expr) and isinstance(node, ALLOWED):
            continue
        else:
            name = getattr(node.func, "__name__", type(node).__name__)
            raise SchedlangError(f"the {what} uses {name}, which has no closed form for lazy "
                                 "devices", span)


def _nodes(expr: sp.Basic):
    """Every node of ``expr``, but not the infinities (``zoo``, ``oo``, ``nan``) of a branch
    whose condition depends on a parameter: ``sqrt(total / (t - 7))`` while ``t >= 7 + total``
    folds to ``zoo`` at ``t = 7`` only for ``total = 0``, which the program may never allow.
    Whether such a branch is reached is decided once the parameters are bound."""
    stack = [(expr, False)]
    while stack:
        node, conditional = stack.pop()
        if conditional and node in (sp.zoo, sp.oo, -sp.oo, sp.nan):
            continue
        yield node
        if isinstance(node, sp.Piecewise):
            # a branch is reached only if the conditions before it fail: from the first
            # condition on a parameter, every later branch (the default too) depends on one
            for value, cond in node.args:
                conditional = conditional or bool(cond.free_symbols - {t})
                stack.append((cond, conditional))
                stack.append((value, conditional))
        else:
            stack.extend((arg, conditional) for arg in node.args)


def first_nonfinite_step(expr: sp.Expr, limit: int | None = None) -> int | None:
    """The smallest step where a fully bound schedule is not finite, if there is one.

    Each branch of a ``Piecewise`` is examined only on the steps where it is
    selected.  Hazards (a zero denominator, a negative ``sqrt``/``log``
    argument, ``Mod`` by zero) are solved for exactly where sympy can; where
    it cannot, the steps from 0 to ``limit`` are sampled.
    """
    candidates = []
    for hazard, domain, guard in _hazards(expr, sp.Interval(0, sp.oo), None):
        step = _first_integer_where(hazard, domain, guard, limit)
        if step is not None:
            candidates.append(step)
    return min(candidates) if candidates else None


def _hazards(expr, domain, guard):
    """(condition under which the value breaks, set of t where that part is used, guard).

    ``guard`` is None when ``domain`` is exactly where the part is used; otherwise a
    condition (``Mod(t, 100) < 90`` of a cycle, which has no interval form) that a
    step must also meet, so sampling never reports a step the branch is not used on.
    """
    if isinstance(expr, sp.Piecewise):
        yield from _piecewise_hazards(expr, domain, guard)
        return
    if isinstance(expr, (Relational, Boolean)) and not isinstance(expr, sp.Expr):
        return
    for breaks in _node_hazards(expr):
        yield breaks, domain, guard
    for arg in expr.args:
        if isinstance(arg, sp.Basic):
            yield from _hazards(arg, domain, guard)


def _piecewise_hazards(expr: sp.Piecewise, domain, guard):
    """``_hazards`` of each branch, on the steps that reach it."""
    before = []
    for branch, cond in expr.args:
        where = _condition_set(cond)
        if _may_break(branch):  # the sets are built only for branches that can break
            taken = [w for w, _ in before if w is not None]
            remaining = sp.Complement(domain, sp.Union(*taken)) if taken else domain
            here = remaining if where is None else sp.Intersection(remaining, where)
            inexact = where is None or any(w is None for w, _ in before)
            branch_guard = sp.And(*(sp.Not(c) for _, c in before), cond) if inexact else None
            if guard is not None:
                branch_guard = sp.And(guard, branch_guard if branch_guard is not None else cond)
            if here is not sp.S.EmptySet:
                yield from _hazards(branch, here, branch_guard)
        # A condition with no set form (None) keeps the whole domain for later branches;
        # the guard says which steps really reach them.
        before.append((where, cond))


def _node_hazards(expr) -> list:
    """The conditions under which this node itself breaks (its operands aside)."""
    if isinstance(expr, sp.Pow):
        base, exponent = expr.args
        found = []
        if exponent.is_number and exponent.is_negative:
            found.append(sp.Eq(base, 0))
        if not (exponent.is_integer or (exponent.is_number and exponent.is_integer)):
            found.append(sp.Lt(base, 0))
        return found
    if isinstance(expr, sp.log):
        return [sp.Le(expr.args[0], 0)]
    if isinstance(expr, sp.Mod):
        return [sp.Eq(expr.args[1], 0)]
    return []


def _may_break(expr) -> bool:
    """Whether ``expr`` has a node ``_hazards`` looks at (a power that can divide by zero or
    take a root of a negative, a log, a Mod)."""
    return any(isinstance(n, (sp.log, sp.Mod)) or (isinstance(n, sp.Pow) and not (
        n.exp.is_Integer and n.exp >= 0)) for n in sp.preorder_traversal(expr))


@functools.lru_cache(maxsize=4096)
def _condition_set(cond):
    if cond == sp.true:
        return sp.Interval(0, sp.oo)
    if cond.free_symbols - {t}:
        return None
    simple = _interval_of(cond)
    if simple is not None:
        return simple
    try:
        return cond.as_set()
    except (NotImplementedError, TypeError, ValueError):
        return None


def _interval_of(cond):
    """``t < c`` and friends (and their and/or) as intervals, without sympy's general solver."""
    if isinstance(cond, (sp.And, sp.Or)):
        parts = [_interval_of(a) for a in cond.args]
        if any(p is None for p in parts):
            return None
        return sp.Intersection(*parts) if isinstance(cond, sp.And) else sp.Union(*parts)
    if isinstance(cond, Relational) and cond.lhs == t and cond.rhs.is_number:
        c = cond.rhs
        if isinstance(cond, sp.StrictLessThan):
            return sp.Interval(-sp.oo, c, right_open=True)
        if isinstance(cond, sp.LessThan):
            return sp.Interval(-sp.oo, c)
        if isinstance(cond, sp.StrictGreaterThan):
            return sp.Interval(c, sp.oo, left_open=True)
        if isinstance(cond, sp.GreaterThan):
            return sp.Interval(c, sp.oo)
    return None


def _first_integer_where(hazard, domain, guard, limit):
    if hazard == sp.false or domain is sp.S.EmptySet or hazard.free_symbols - {t}:
        return None
    if guard is not None:  # the branch is used on steps no set describes: look step by step
        return _sample(hazard, domain, limit, guard)
    if t not in hazard.free_symbols:
        return _first_integer_in(domain) if hazard == sp.true else None
    solved = None
    if _solvable(hazard):
        try:
            solved = sp.solveset(hazard, t, domain=sp.S.Reals)
        except (NotImplementedError, TypeError, ValueError):
            solved = None
    if solved is not None and not isinstance(solved, (sp.ConditionSet, sp.ImageSet)) and \
            not solved.has(sp.ConditionSet, sp.ImageSet):
        return _first_integer_in(sp.Intersection(solved, domain))
    return _sample(hazard, domain, limit)


def _solvable(hazard) -> bool:
    """Whether sympy's solver is worth a try: not with two trigonometric functions of the step,
    nor one inside ``min``/``max``/a table, nor through a ``restart_index``.

    ``cos(pi*t/15) + cos(pi*t)`` = 0 becomes a polynomial of degree 30 in ``exp(I*pi*t/15)``
    whose exact complex roots took sympy 50 s to isolate (the fuzzer's hang, seed 12002336);
    the solution would be an ``ImageSet``, sampled anyway.
    """
    trig = {n for n in sp.preorder_traversal(hazard)
            if isinstance(n, TrigonometricFunction) and t in n.free_symbols}
    # restart_index is opaque to sympy: a hazard through it comes back a ConditionSet after
    # seconds of work (8-12 s for a stretched cosine_restarts under min(), fuzz seed 19).
    # A cosine inside min/max or a table: the solver's case splits intersect sets of
    # ImageSets without end (sqrt(min(cosine(...), linear(...))), fuzz seed 22).
    if trig and hazard.has(sp.Min, sp.Max, sp.Piecewise):
        return False
    return len(trig) < 2 and not hazard.has(restart_index, ClockCountBase)


def _first_integer_in(s):
    s = sp.Intersection(s, sp.Interval(0, sp.oo))
    if s is sp.S.EmptySet:
        return None
    if isinstance(s, sp.FiniteSet):
        ints = sorted(int(x) for x in s if x.is_integer)
        return ints[0] if ints else None
    if isinstance(s, sp.Interval):
        start = sp.ceiling(s.inf)
        if start == s.inf and s.left_open:
            start += 1
        if start in s:
            return int(start)
        return None
    if isinstance(s, sp.Union):
        found = [_first_integer_in(part) for part in s.args]
        found = [f for f in found if f is not None]
        return min(found) if found else None
    return _sample_set(s)


def _sample_set(s, count: int = 2000):
    for step in range(count):
        if sp.Integer(step) in s:
            return step
    return None


def _sample(hazard, domain, limit, guard=None):
    """The first of the steps 0 .. min(limit, 2000) in ``domain`` (and meeting ``guard``)
    where ``hazard`` holds."""
    holds = _predicate(hazard)
    for step in _admitted(domain, guard, min(limit or 2000, 2000)):
        if holds(step):
            return step
    return None


@functools.lru_cache(maxsize=256)
def _admitted(domain, guard, count: int) -> tuple[int, ...]:
    """The steps below ``count`` a branch is used on (shared by all hazards of the branch)."""
    used = _predicate(guard) if guard is not None else (lambda step: True)
    try:
        inside = _predicate(domain.as_relational(t))
    except (NotImplementedError, TypeError, ValueError, AttributeError):
        def inside(step):
            return sp.Integer(step) in domain
    return tuple(step for step in range(count) if used(step) and inside(step))


def _predicate(condition):
    """``step -> bool`` for a condition of the step: exact rational arithmetic (fast), with
    sympy deciding the steps where enclosures are too close to call."""
    try:
        fast = compile_expr(condition)
    except Undetermined:
        fast = None

    deadline = [None]

    def holds(step: int) -> bool:
        if fast is not None:
            try:
                return bool(fast(step))
            except (Undetermined, ZeroDivisionError, ValueError):
                pass
        # sympy decides what the enclosures could not, within a CPU-time budget per condition
        # (deciding ``Eq(cos(...), 0)`` can take seconds); past it, undecided steps count as
        # safe, and the overflow probe on the reference still sees a non-finite value.
        deadline[0] = deadline[0] or time.process_time() + SYMBOLIC_SAMPLE_SECONDS
        if time.process_time() > deadline[0]:
            return False
        return condition.xreplace({t: sp.Integer(step)}) == sp.true
    return holds
