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

from dataclasses import dataclass, field, replace

import sympy as sp
from sympy.core.cache import cacheit
from sympy.core.relational import Relational
from sympy.functions.elementary.piecewise import ExprCondPair

from .special import folded

#: The step symbol: a whole number >= 0.  Every finished schedule is a function of it.
t = sp.Symbol("t", integer=True, nonnegative=True)
#: The step while a formula is being built (see the module docstring).
tau = sp.Symbol("t", real=True, nonnegative=True)
_STEPS = (t, tau)


def finish(expr):
    """A built formula in the public step ``t``, every comparison in canonical form."""
    return _replace_step(expr, t) if isinstance(expr, sp.Basic) else expr


def has_step(expr) -> bool:
    return isinstance(expr, sp.Basic) and bool(expr.free_symbols & {t, tau})


def breakpoints(expr) -> list:
    """The steps where ``expr`` changes branch, as far as they are numbers: ``t < c`` and
    ``t >= c`` switch at ``c``, ``t <= c`` and ``t > c`` at ``c + 1`` (in ``t`` or ``tau``)."""
    found = set()
    if isinstance(expr, sp.Basic):
        for rel in expr.atoms(sp.StrictLessThan, sp.LessThan, sp.StrictGreaterThan, sp.GreaterThan):
            if rel.lhs in _STEPS and rel.rhs.is_number:
                found.add(rel.rhs + 1 if isinstance(rel, (sp.LessThan, sp.StrictGreaterThan)) else rel.rhs)
    return sorted(found, key=float)


@dataclass(frozen=True)
class Mark:
    """Where a schedule was put together, for ``schedlang check``'s warnings (not its meaning).

    ``kind == "join"``: an ``a >> b`` boundary at local ``step``; ``value`` is where ``a`` was
    heading (``a``'s end value), to compare with ``b``'s start.  ``kind == "cut"``: a ``for``
    that stops a segment at ``step`` before its own end; ``value`` is the end it never reaches
    and ``reached`` the value it holds instead.  ``kind == "steps"`` (files with a batch
    schedule): a segment counted in steps starts at ``step`` and lasts ``value`` steps.
    Only ``>>`` and ``for`` record marks; other operations drop them, which only means fewer
    warnings.
    """

    kind: str
    step: sp.Expr
    value: sp.Expr
    reached: sp.Expr | None = None
    span: object = field(default=None, compare=False)  # the source it is about, for the warning
    intended: bool = False  # a join written ``a >> jump b``: its jump is meant


@dataclass(frozen=True)
class Segment:
    """A formula of the local step and how many steps it lasts (``None``: forever)."""

    expr: sp.Expr
    duration: sp.Expr | None = None
    marks: tuple[Mark, ...] = field(default=(), compare=False)
    #: ``f(n)`` when already known (``sequence`` takes it from its last part), so chained
    #: ``let s = s >> ...`` do not re-evaluate the whole growing table at its end.
    end: sp.Expr | None = field(default=None, compare=False)
    #: ``None`` on the step clock; ``"sp"`` or ``"tok"`` while a schedule whose length was
    #: given in samples or tokens is still in those units (``t`` counts them, SPEC §12), or for
    #: an amount of them (``4.3e12tok``).  Lowering places such a segment on the run's batch
    #: schedule (``semantics/clock.py``) before it becomes part of a finished schedule.
    clock: str | None = None
    #: Where update ``k`` reads a segment on the sample or token clock: ``"before"`` at
    #: ``T_k``, the count consumed before it (Megatron's ``num_steps``, SPEC §12), or
    #: ``"after"`` at ``T_{k+1}``, the count with update ``k``'s own batch included
    #: (OLMo-core's ``global_train_tokens_seen``); or ``"steps"``: a schedule counted in steps
    #: whose length alone is a count (``trunk for 10e12tok``), ending at the first step whose
    #: count before it reaches that length.  Only ``semantics/clock.on_clock`` reads it.
    evaluation: str = "before"

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
        return at(self.expr, self.duration) if self.end is None else self.end

    def held(self) -> sp.Expr:
        """The value at every step t >= 0, holding ``f(n)`` from ``t = n`` on."""
        if self.duration is None or not self.depends_on_step:
            return self.expr
        return piecewise([*cover(self.expr, self.duration), (self.end_value(), sp.true)])


def branches(expr: sp.Expr) -> list[tuple[sp.Expr, sp.Basic]]:
    """``expr`` as a list of ``(formula, condition)`` pairs, the last one the default."""
    return list(expr.args) if isinstance(expr, sp.Piecewise) else [(expr, sp.true)]


def piecewise(pairs, trusted: int = 0) -> sp.Expr:
    """A flat ``Piecewise`` of branches already in canonical form, built without sympy's
    argument collapsing (which recurses once per branch of a nested ``Piecewise``).

    The first ``trusted`` pairs are known to need nothing (branches of a table this
    function built, its default left out): chained ``let s = s >> ...`` look only at
    what is new.
    """
    keep = max(trusted - 1, 0)
    out = list(pairs[:keep])
    previous = None  # (formula, its hash, condition) of out[-1]
    for pair in pairs[keep:]:
        value, cond = pair.args if isinstance(pair, ExprCondPair) else pair
        if cond is sp.false:
            continue
        key = hash(value)  # cached by sympy: most neighbours differ, decided without ==
        if previous is not None and previous[1] == key and previous[0] == value \
                and _covers(cond, previous[2]):
            out[-1] = pair  # a branch followed by one with the same formula covering it adds nothing
        else:
            out.append(pair)
        previous = (value, key, cond)
        if cond is sp.true:
            break
    if len(out) == 1 and out[0][1] is sp.true:
        return out[0][0]
    # Basic.__new__: no argument processing at all, so pairs taken from another Piecewise
    # are shared, not rebuilt (sequencing stays linear in the number of branches).
    return sp.Basic.__new__(sp.Piecewise, *(p if isinstance(p, ExprCondPair) else ExprCondPair(*p)
                                            for p in out))


def _covers(wide, narrow) -> bool:
    """Whether condition ``wide`` holds wherever ``narrow`` does (``True``, or ``t < c`` with a
    larger ``c``)."""
    if wide is sp.true:
        return True
    a, b = strict_bound(wide), strict_bound(narrow)
    return a is not None and b is not None and at_most(b, a)


def bind(expr: sp.Expr, values: dict) -> sp.Expr:
    """``expr`` with parameter symbols replaced by their values, each ``Piecewise``'s
    conditions decided before its branches are built.

    ``xreplace`` rebuilds every branch: the end value of ``poly(..., power=0.5)`` held
    behind ``Max(10, 2*warm) < 10`` is ``sqrt(1 - 2)`` at ``warm = 10``, a complex number
    inside ``Max`` (a crash in sympy), though that branch is reached by no value of ``warm``.
    """
    if not values:
        return expr
    keys = set(values)
    memo: dict = {}

    def rebuild(node):
        if node in values:
            return values[node]
        if not node.args or not (node.free_symbols & keys):
            return node
        done = memo.get(node)
        if done is None:
            if isinstance(node, sp.Piecewise):
                out = []
                for value, cond in node.args:
                    cond = rebuild(cond)
                    if cond == sp.false:
                        continue  # never built: it may be complex or infinite here
                    out.append((rebuild(value), cond))
                    if cond == sp.true:
                        break
                done = piecewise(out)
            else:
                done = _rebuilt(node, rebuild)
            memo[node] = done
        return done

    return rebuild(expr)


def flatten(expr: sp.Expr, step=None) -> sp.Expr:
    """A ``Piecewise`` whose branches are ``Piecewise`` themselves, spliced into one table
    wherever the bounds can now be compared (after parameters are bound, say)."""
    if isinstance(expr, (sp.Add, sp.Mul)):  # d_model**-0.5 * Piecewise(...) once d_model is bound
        expr = pointwise(expr.func, *expr.args)
    if not isinstance(expr, sp.Piecewise):
        return expr
    step = step or (t if t in expr.free_symbols else tau)
    out = []
    for value, cond in expr.args:
        if step == t:
            cond = _strict(cond)
        bound = strict_bound(cond)
        if isinstance(value, (sp.Add, sp.Mul)):  # 100 * Piecewise(...): distribute the constant
            value = pointwise(value.func, *value.args)
        inner = flatten(value, step)
        if isinstance(inner, sp.Piecewise) and bound is not None:
            out += cover(inner, bound, step)
        elif isinstance(inner, sp.Piecewise) and cond is sp.true:
            out += branches(inner)
        else:
            out.append((inner, cond))
    return piecewise(out)


def _strict(cond):
    """``t <= c`` as ``t < floor(c) + 1``, the same steps for a whole ``t`` (one-cycle's phases
    end at ``t <= pct*n - 1``; written in the real-valued ``tau`` that a ``stretch`` reads
    at fractions, they stay as written until the step is whole)."""
    if isinstance(cond, sp.LessThan) and cond.lhs == t and not has_step(cond.rhs):
        return sp.Lt(t, sp.floor(cond.rhs) + 1, evaluate=False)
    return cond


def cover(expr: sp.Expr, n, step=tau) -> list[tuple[sp.Expr, sp.Basic]]:
    """Branches of ``expr`` for the steps ``0 <= t < n``, the last one ending at ``t < n``.

    Branches that start at or after ``n`` are dropped; when a bound cannot be compared
    with ``n`` the whole formula becomes one branch (nested, still correct).
    """
    out = []
    pairs = branches(expr)
    for index, pair in enumerate(pairs):
        value, cond = pair
        bound = strict_bound(cond)
        last = index == len(pairs) - 1  # the default, whatever its condition says
        if not last and bound is not None and at_most(bound, n):
            out.append(pair)
        elif last or (bound is not None and at_most(n, bound)):
            out.append((value, before(step, n)))
            return out
        else:
            return [(_cut_at(expr, n), before(step, n))]
    return out


def before(step: sp.Symbol, bound) -> sp.Basic:
    """``step < bound`` in canonical form, the node sympy builds.  A positive number ``bound``
    is not handed to sympy's evaluation, which would only confirm through the assumptions
    system (milliseconds per comparison: a cosine on the token clock over a 768-stage batch
    ramp has a bound per stage) that a step with no upper bound is below it at some steps
    and not at others."""
    if not isinstance(bound, sp.Basic):  # a Python int or Fraction, exact (never parsed from text)
        bound = sp.Rational(bound)
    return sp.Lt(step, bound, evaluate=not (bound.is_Number and bound > 0))


def _cut_at(expr: sp.Expr, n) -> sp.Expr:
    """``expr`` used only where ``t < n``: a branch reading exactly ``t < n`` becomes the default."""
    pairs = branches(expr)
    for index, (value, cond) in enumerate(pairs):
        if strict_bound(cond) == n:
            return piecewise([*pairs[:index], (value, sp.true)])
    return expr


def at_most(a, b) -> bool:
    """``a <= b`` provably (numbers compared directly, the common and cheap case)."""
    if a.is_Rational and b.is_Rational:
        return a.p * b.q <= b.p * a.q
    if a.is_number and b.is_number:
        return bool(a <= b)
    return bool((b - a).is_nonnegative)


def ordered(bounds) -> list | None:
    """``bounds`` sorted when every pair is provably ordered (``30*spe <= 60*spe`` for a
    positive ``spe``), else None."""
    out: list = []
    for bound in bounds:
        index = len(out)
        while index and not at_most(out[index - 1], bound):
            if not at_most(bound, out[index - 1]):
                return None
            index -= 1
        out.insert(index, bound)
    return out


def strict_bound(cond) -> sp.Expr | None:
    """``c`` of a canonical ``t < c`` (either step symbol), else None."""
    if isinstance(cond, sp.StrictLessThan) and cond.lhs in _STEPS:
        return cond.rhs
    return None


@cacheit
def at(expr: sp.Expr, step) -> sp.Expr:
    """The formula at one step (a number or a symbolic offset), conditions kept canonical.

    Cached in sympy's cache (``cacheit``, cleared by ``sympy.core.cache.clear_cache``): every
    printer puts each branch in its local step (``at(value, t + start)``), so the reference
    module ``compile`` loads and the torch target's functions rebuild the same pieces."""
    return _replace_step(expr, step)


def shifted(expr: sp.Expr, offset) -> sp.Expr:
    """``expr`` seen from a segment that starts at global step ``offset``."""
    if offset == 0 or not has_step(expr):
        return expr
    return _replace_step(expr, tau - offset)


def _replace_step(expr: sp.Expr, value) -> sp.Expr:
    """Put ``value`` (which may itself contain ``tau``) where either step symbol stands.

    The tree is rebuilt bottom-up, each comparison put in canonical form *before* the
    ``Piecewise`` holding it is built.  sympy's ``subs`` builds the ``Piecewise`` first,
    and its argument collapsing can then chase non-canonical conditions such as
    ``2*n - t > -Max(10, 2*n)`` into unbounded recursion; it also re-evaluates every
    branch at once and trips over branches that are complex where they are never used.
    """
    memo: dict = {}
    value = sp.Integer(value) if isinstance(value, int) else value
    # ``value`` = step + offset (a shift, or the other step symbol): canonical ``t < c``
    # becomes ``t < c - offset`` without sympy solving anything (the common case).
    steps = list(value.free_symbols & {t, tau})
    offset = value - steps[0] if len(steps) == 1 else None
    if offset is not None and has_step(offset):
        offset = None

    def rebuild(node):
        if node in _STEPS:
            return value
        if not node.args or not (node.free_symbols & {t, tau}):
            return node
        done = memo.get(node)
        if done is None:
            if isinstance(node, sp.Piecewise):
                done = piecewise(_branches(node, rebuild, value))
            elif offset is not None and isinstance(node, _ORDER) and node.lhs in _STEPS \
                    and not has_step(node.rhs):
                bound = node.rhs - offset
                # A positive number bound: sympy would only confirm the relation stays as is
                # (as in ``before``, for every order relation).
                done = node.func(steps[0], bound, evaluate=not (bound.is_Number and bound > 0))
            else:
                done = _rebuilt(node, rebuild)
            memo[node] = done
        return done

    return rebuild(expr)


def _rebuilt(node: sp.Basic, rebuild) -> sp.Basic:
    """``node`` with its arguments rebuilt (``bind``, ``_replace_step``): ``Min``/``Max``
    compared only among numbers, small powers folded, comparisons canonical."""
    args = [rebuild(a) for a in node.args]
    if isinstance(node, (sp.Min, sp.Max)):
        return _min_max(node.func, args)
    if node.func in _ORDER:  # canonical first: a positive number bound needs no evaluation
        parts = _canonical_parts(node.func(*args, evaluate=False))
        if parts is not None and parts[2].is_Number and parts[2] > 0:
            func, step, bound = parts
            return func(step, bound, evaluate=False)
    done = folded(periodic(node.func, args[0]) if node.func in _SIN_COS else node.func(*args))
    return _canonical_relation(done) if isinstance(done, Relational) else done


_SIN_COS = (sp.sin, sp.cos)


def periodic(func, arg: sp.Expr) -> sp.Expr:
    """``func(arg)`` for ``func`` ``sp.sin`` or ``sp.cos``: the node sympy builds, built without
    asking sympy when its evaluation is known.

    A segment's ``cos(pi*t/n)`` is rebuilt at every stage (moved to its start, ``tau`` made
    ``t``, put back in its local step by the printers, halved by ``half_angle``).  Each time,
    sympy's ``cos.eval`` asks the assumptions system whether the new argument over pi is an
    integer, a half-integer, even: 5-10 ms for an argument it has not seen, most of the cost
    of a trig-heavy schedule (200 distinct cosines took seconds to check).  For an argument
    ``pi * (a*s + b)`` (``s`` a step symbol, ``a``, ``b`` rationals, ``a > 0`` with ``2a`` not
    whole, and ``a < 2`` when ``b == 0``) the answer is known without asking: the quotient by
    pi is not a whole or half-whole number at every step (its values at consecutive steps
    differ by ``a``), there is no sign to extract and no multiple of pi/2 to peel off (the
    argument is a product, not a sum), so sympy only writes the product in its canonical
    form ``pi * (a*s + b)`` (``pi*(t - 5)/7`` becomes ``pi*(t/7 - 5/7)``) and keeps it.
    Anything else goes through sympy.  ``tests/test_fast_paths.py`` compares the two.
    """
    canonical_arg = _plain_pi_multiple(arg)
    if canonical_arg is not None:
        return func(canonical_arg, evaluate=False)
    return func(arg)


def _plain_pi_multiple(arg: sp.Expr) -> sp.Expr | None:
    """``pi * (a*s + b)`` in sympy's canonical form when ``arg`` is one as ``periodic``
    describes, else None."""
    # ``could_extract_minus_sign`` without its ``arg == -arg`` (a second product built) or an
    # assumptions query on a new number (the facts engine's full closure, most of the cost):
    # a negative number first is what it looks for.  A float first answers None (sympy).
    first = arg.args[0] if arg.is_Mul else None
    if first is None or arg.args.count(sp.pi) != 1 or (
            first.is_Number and (not first.is_Rational or first.p < 0)):
        return None
    quotient = sp.Mul(*(f for f in arg.args if f is not sp.pi))
    slope = constant = None
    for term in sp.Add.make_args(quotient):
        coefficient, factor = term.as_coeff_Mul()
        if not coefficient.is_Rational:
            return None
        if factor is sp.S.One and constant is None:
            constant = coefficient
        elif factor in _STEPS and slope is None:
            slope = coefficient
        else:
            return None
    if slope is None or slope <= 0 or (2 * slope).is_Integer or (constant is None and slope >= 2):
        return None
    return sp.Mul(sp.pi, quotient)


def _min_max(func, args: list) -> sp.Expr:
    """``Min``/``Max`` of rebuilt arguments, compared only when they are numbers.

    sympy's ``Min`` looks for arguments that dominate others by factoring their differences:
    between two tables holding ``(1 - t/10**9)**3`` and an exp warmup, that took minutes
    (fuzz seed 22).  Left unevaluated, the printers and the prover read ``Min`` as it is.
    """
    if all(a.is_number for a in args):
        return func(*args)
    return func(*args, evaluate=False)


def _branches(node: sp.Piecewise, rebuild, value) -> list[tuple]:
    """The branches of a ``Piecewise`` rebuilt: a condition that became false drops its branch
    unbuilt (its formula may be complex there), one that became true ends the list.
    ``t < c`` at a number is decided by comparing numbers (the common case, kept cheap)."""
    out = []
    for expr, cond in node.args:
        bound = strict_bound(cond)
        if bound is not None and bound.is_number and value.is_number:
            cond = sp.false if at_most(bound, value) else sp.true
        else:
            cond = rebuild(cond)
        if cond == sp.false:
            continue
        out.append((rebuild(expr), cond))
        if cond == sp.true:
            break
    return out


_ORDER = (sp.StrictLessThan, sp.LessThan, sp.StrictGreaterThan, sp.GreaterThan)


def canonical(expr: sp.Expr) -> sp.Expr:
    """Rewrite every comparison that is linear in t with unit slope as ``t < c`` etc."""
    if not expr.has(Relational):
        return expr
    return expr.replace(lambda e: isinstance(e, Relational), _canonical_relation)


def _canonical_relation(rel: Relational):
    parts = _canonical_parts(rel)
    if parts is None:
        return rel
    func, step, bound = parts
    return func(step, bound)


def _canonical_parts(rel: Relational):
    """``(func, step, bound)`` with ``rel`` equivalent to ``func(step, bound)`` for a comparison
    linear in one step symbol, else None.

    Rebuilding a comparison (a Megatron class on the sample clock of a 768-stage ramp rebuilds
    each of its conditions once per stage) evaluates only this canonical form, and not at
    all when its bound is a positive number: sympy cannot decide ``a*t + b < c`` then (true
    at ``t = 0``, false for large ``t``), so the evaluations of the comparison as written and
    of ``t < bound`` would both leave it as it is, at milliseconds each."""
    steps = rel.free_symbols & {t, tau}
    if len(steps) != 1 or not isinstance(rel, _ORDER):
        return None
    (step,) = steps
    diff = sp.expand(rel.lhs - rel.rhs)
    slope = diff.coeff(step)
    rest = sp.expand(diff - slope * step)
    if step in rest.free_symbols or not slope.is_number or slope == 0:
        return None
    # slope*t + rest  op  0   ->   t op -rest/slope   (the order flips when slope < 0)
    bound = sp.expand(-rest / slope)
    if slope > 0:
        return rel.func, step, bound
    flipped = {sp.StrictLessThan: sp.StrictGreaterThan, sp.LessThan: sp.GreaterThan,
               sp.StrictGreaterThan: sp.StrictLessThan, sp.GreaterThan: sp.LessThan}[rel.func]
    return flipped, step, bound


def sequence(*segments: Segment, spans=None, jumps=frozenset()) -> Segment:
    """``a >> b >> ...``; all but the last must be finite (the caller reports it otherwise).

    ``spans``, one per segment, locate the ``join`` marks (at the segment after ``>>``);
    ``jumps`` holds the indices of the segments written ``>> jump``: their marks are
    ``intended``.

    One flat list of branches in one pass: each segment's branches are cut to its
    duration in its own local step, then moved to where it starts.
    """
    pairs: list[tuple[sp.Expr, sp.Basic]] = []
    marks: list[Mark] = []
    offset = sp.Integer(0)
    trusted = 0
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        played = branches(segment.held()) if last else _played(segment)
        if index == 0 and not last and _sequenced(segment):
            trusted = len(played)
        if offset != 0:
            played = branches(shifted(piecewise(played), offset))
        pairs += played
        marks += segment.marks if offset == 0 else [replace(m, step=offset + m.step) for m in segment.marks]
        if not last:
            assert segment.duration is not None
            marks.append(Mark("join", offset + segment.duration, segment.end_value(),
                              span=spans[index + 1] if spans else None, intended=index + 1 in jumps))
            offset = offset + segment.duration
    last = segments[-1]
    duration = None if last.duration is None else offset + last.duration
    end = None if last.duration is None else last.end_value()
    return Segment(piecewise(pairs, trusted), duration, tuple(marks), end)


def _played(segment: Segment) -> list[tuple[sp.Expr, sp.Basic]]:
    """The branches of a finite segment for its own steps ``0 <= t < n``.

    A segment built by ``sequence`` (it knows its ``end``) is a table whose bounds
    increase up to ``t < n`` followed by the held end: its branches but the last, with
    no comparison (what keeps chained ``let s = s >> ...`` linear).
    """
    if _sequenced(segment):
        return list(segment.expr.args[:-1])
    return cover(segment.expr, segment.duration)


def _sequenced(segment: Segment) -> bool:
    """Whether ``segment`` is a table ``sequence`` built: bounds up to ``t < n``, then its end."""
    pairs = segment.expr.args if isinstance(segment.expr, sp.Piecewise) else ()
    return segment.end is not None and len(pairs) > 1 and strict_bound(pairs[-2][1]) == segment.duration


def pointwise(function, *exprs) -> sp.Expr:
    """``function(*exprs)``, a lone ``Piecewise`` operand distributed over its branches.

    ``0.5 * (a >> b)``, ``-s``, ``max(s, 1e-4)`` or ``s / peak`` then stay one flat table
    (``0.5*a`` while ``t < n``, ``0.5*b`` after) instead of a ``Piecewise`` nested one
    level deeper per operation, which chained ``def``s would nest hundreds deep.
    Operands that change with the step are not distributed over (their own breakpoints
    would have to be merged in).
    """
    tables = [i for i, e in enumerate(exprs) if isinstance(e, sp.Piecewise)]
    if len(tables) != 1 or any(has_step(e) for i, e in enumerate(exprs) if i != tables[0]):
        return function(*exprs)
    i = tables[0]
    return piecewise([(function(*exprs[:i], value, *exprs[i + 1:]), cond)
                      for value, cond in exprs[i].args])


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
