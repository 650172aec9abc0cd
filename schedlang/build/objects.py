"""The objects of ``schedlang.build``: pieces of a schedule that Python code composes.

Each object holds the very ``ir`` node the parser would make for the same text,
with ``Span``s into the user's ``.py`` file (``site``), and is lowered by
``lower.lower_piece`` the moment it is made: every check and every hint is the
language's own, raised at the Python line that built the bad piece.  A lowered
piece is remembered (``lower_expressions.Known``), so composing pieces never lowers them again.
"""

from __future__ import annotations

import inspect
import itertools
import numbers
import re
from dataclasses import dataclass, replace
from decimal import Decimal
from fractions import Fraction

import sympy as sp

from ..errors import SchedlangError, Source, Span, did_you_mean
from ..library import stdlib
from ..library.presets import PRESETS, Rejected
from ..limits import (
    MAX_DIGITS,
    MAX_LIST_ITEMS,
    MAX_NESTING,
    MAX_SEGMENTS,
    LimitError,
    decimal,
    recursion_room,
)
from ..program import Program, Schedule
from ..semantics.lower import lower, lower_piece
from ..semantics.lower_batch import BATCH_CALLS, CALL_SIGNATURES
from ..semantics.lower_clock import ON_CLOCK
from ..semantics.lower_expressions import TIME_UNITS, Known
from ..semantics.params import to_number
from ..syntax import ir
from ..syntax.fmt import format_source
from ..syntax.parser import RESERVED, parse
from . import site as sites
from . import text as texts

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_STRING = re.compile(r'[^"\\\n]*\Z')  # what a "string" of the grammar may hold
_ORDER = itertools.count()


class BuildAttributeError(SchedlangError, AttributeError):
    """An unknown name in ``schedlang.build`` or a preset namespace: an ``AttributeError`` (so
    ``hasattr`` and ``getattr(..., default)`` work) that also reads like any ``SchedlangError``."""

    def __init__(self, message: str, span: Span | None = None, hint: str | None = None):
        SchedlangError.__init__(self, message, span, hint)


# -- parameters ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ParamDecl:
    """A ``param`` statement made by ``param()``; ``order`` keeps declarations in creation order."""

    stmt: ir.Param
    order: int
    implicit: bool = False  # declared by a preset's time default (``1dur``), not by param()

    @property
    def name(self) -> str:
        return self.stmt.name

    def same(self, other: ParamDecl) -> bool:
        """Two declarations of one name agree when they would print the same statement; an
        implicit one agrees with any (the user's own declaration of that name wins)."""
        return (self is other or self.implicit or other.implicit
                or texts.statement(self.stmt) == texts.statement(other.stmt))


def _merge(site: sites.Site, *groups: dict[str, ParamDecl]) -> dict[str, ParamDecl]:
    merged: dict[str, ParamDecl] = {}
    for group in groups:
        for name, decl in group.items():
            seen = merged.get(name)
            if seen is None or (seen.implicit and not decl.implicit):
                merged[name] = decl
            elif not seen.same(decl):
                raise SchedlangError(f"two different parameters are named '{name}'", site.span,
                                     hint=f"one is declared at {seen.stmt.span.location}, the other at "
                                          f"{decl.stmt.span.location}; use one param() object")
    return dict(sorted(merged.items(), key=lambda item: item[1].order))


# -- expressions ---------------------------------------------------------------------------


class Expr:
    """A piece of a schedule: a number, a schedule, a condition, a warmup or a list.

    Compose with ``>>`` (sequence), ``+ - * / **``, unary ``-``, comparisons
    (``< <= > >= == !=``), ``& | ~`` (``and or not``), ``sb.if_(cond, a, b)`` and
    ``.for_(n)``.  A schedule whose parameters all have values is callable like a
    ``schedlang.Schedule`` (``lr(250)``) and has ``.expr``, ``.duration``, ``.torch``
    and ``.jax``; every piece has ``.to_source()``.
    """

    __slots__ = ("node", "params", "_value", "_depth", "_bindings", "_schedule", "_segments", "_clocks",
                 "_link")
    __hash__ = object.__hash__  # == builds a condition; identity stays the hash

    def __init__(self, node: ir.Node, params: dict[str, ParamDecl], children: tuple[Expr, ...] = (),
                 depth: int | None = None, check: bool = True):
        self.node = node
        self.params = params = _time_params(node, params)
        self._bindings: dict = {}
        self._schedule = None
        self._depth = 1 + max((c._depth for c in children), default=0) if depth is None else depth
        if self._depth > MAX_NESTING:
            raise SchedlangError(f"this expression nests more than {MAX_NESTING} levels deep", node.span,
                                 hint="build it from fewer nested pieces (a >> chain counts once)")
        self._segments = _segments(node, children)
        self._clocks = _clock_params(node, children)
        self._link = None  # (the chain before, the piece after) for a link of a >> chain
        self._value: Known | None | object = None
        if not check:
            return
        if isinstance(node, ir.Seq):
            self._link = children
            if children[0]._link is not None:  # a longer chain: check the new join alone
                self._value = _LATER
                if not _is_warmup(children[1]):
                    _check(replace(node, first=children[0]._link[1].node), params,
                           (children[0]._link[1], children[1]), self._clocks)
                return
        self._value = _check(node, params, children, self._clocks)

    @property
    def _known(self) -> Known | None:
        """The lowered value, for composing; a chain's is lowered in one pass the first time it
        is needed.  Lowering the whole chain again at each ``>>`` (each time one longer) made a
        chain built one link at a time quadratic; each new join is checked alone instead, and
        the pieces are sequenced once (``lower_expressions._seq``)."""
        if self._value is _LATER:
            self._value = None
            if not _is_warmup(self._link[1]):
                self._value = _check(self.node, self.params, _chain_pieces(self), self._clocks)
        return self._value

    # -- composing -------------------------------------------------------------------

    def __rshift__(self, other) -> Expr:
        return _seq(self, other, sites.caller())

    def __rrshift__(self, other) -> Expr:
        site = sites.caller()
        return _seq(_expr(other, site.operand(0)), self, site)

    def __add__(self, other): return _binop("+", self, other, sites.caller())
    def __radd__(self, other): return _binop("+", other, self, sites.caller())
    def __sub__(self, other): return _binop("-", self, other, sites.caller())
    def __rsub__(self, other): return _binop("-", other, self, sites.caller())
    def __mul__(self, other): return _binop("*", self, other, sites.caller())
    def __rmul__(self, other): return _binop("*", other, self, sites.caller())
    def __truediv__(self, other): return _binop("/", self, other, sites.caller())
    def __rtruediv__(self, other): return _binop("/", other, self, sites.caller())
    def __pow__(self, other): return _binop("**", self, other, sites.caller())
    def __rpow__(self, other): return _binop("**", other, self, sites.caller())
    def __lt__(self, other): return _compare("<", self, other, sites.caller())
    def __le__(self, other): return _compare("<=", self, other, sites.caller())
    def __gt__(self, other): return _compare(">", self, other, sites.caller())
    def __ge__(self, other): return _compare(">=", self, other, sites.caller())
    def __eq__(self, other): return _compare("==", self, other, sites.caller())  # type: ignore[override]
    def __ne__(self, other): return _compare("!=", self, other, sites.caller())  # type: ignore[override]
    def __and__(self, other): return _boolop("and", self, other, sites.caller())
    def __rand__(self, other): return _boolop("and", other, self, sites.caller())
    def __or__(self, other): return _boolop("or", self, other, sites.caller())
    def __ror__(self, other): return _boolop("or", other, self, sites.caller())

    def __invert__(self):
        site = sites.caller()
        return Expr(ir.Not(site.span, self.node), self.params, (self,))

    def __neg__(self):
        site = sites.caller()
        return Expr(ir.Unary(site.span, "-", self.node), self.params, (self,))

    def __pos__(self):
        return self

    def __abs__(self):
        return _call("abs", (self,), {}, sites.caller())

    def __floor__(self):
        return _call("floor", (self,), {}, sites.caller())

    def __ceil__(self):
        return _call("ceil", (self,), {}, sites.caller())

    def __bool__(self):
        raise SchedlangError("a piece of a schedule has no truth value in Python", sites.caller().span,
                             hint="`a < b < c`, `and`, `or`, `not` and `if` ask Python for one: write "
                                  "(a < b) & (b < c), | for or, ~ for not, and sb.if_(cond, a, b)")

    def for_(self, steps) -> Expr:
        """``self for steps``: cut or held to exactly ``steps`` steps (the language's ``A for N``)."""
        site = sites.caller()
        steps = _expr(steps, site.argument(0))
        return Expr(ir.For(site.span, self.node, steps.node), _merge(site, self.params, steps.params),
                    (self, steps))

    # -- using -----------------------------------------------------------------------

    def bind(self, **values) -> Expr:
        """The same piece with values for its parameters (checked as ``compile(params=)`` does)."""
        site = sites.caller()
        for name in values:
            if name not in self.params:
                raise SchedlangError(f"this schedule has no parameter '{name}'", site.span,
                                     hint=did_you_mean(name, self.params) or (
                                         "it has " + ", ".join(self.params) if self.params
                                         else "it has no parameters"))
        bound = Expr.__new__(Expr)
        bound.node, bound.params = self.node, self.params
        bound._value, bound._depth, bound._segments = self._known, self._depth, self._segments
        bound._clocks, bound._link = self._clocks, self._link
        bound._bindings, bound._schedule = {**self._bindings, **values}, None
        bound.schedule  # noqa: B018 - check the values now, at this line
        return bound

    def program(self, name: str = "lr", params: dict | None = None) -> BuiltProgram:
        """A ``schedlang.Program`` whose schedule ``name`` is this piece."""
        return _program({name: self}, {**self._bindings, **(params or {})}, sites.caller(),
                        statement_spans=False)

    @property
    def schedule(self) -> Schedule:
        """This piece as a ``schedlang.Schedule`` (every whole-schedule check runs once, here)."""
        if self._schedule is None:
            self._schedule = self.program()["lr"]
        return self._schedule

    def __call__(self, step) -> float:
        """The value at ``step``, from the plain-Python reference (``Schedule.__call__``)."""
        return self.schedule(step)

    def values(self, steps) -> list[float]:
        return self.schedule.values(steps)

    @property
    def expr(self) -> sp.Expr:
        """The value as a sympy expression in ``schedlang.t`` (``Schedule.expr``)."""
        return self.schedule.expr

    @property
    def duration(self):
        """Whole steps, a sympy expression of unbound parameters, or None for never-ending."""
        return self.schedule.duration

    def torch(self, steps, dtype=None):
        """Values at a tensor of steps from branch-free torch code (``Schedule.torch``)."""
        return self.schedule.torch(steps, dtype=dtype)

    def jax(self, steps, dtype=None):
        """Values at an integer array of steps from ``jnp.where`` code (``Schedule.jax``)."""
        return self.schedule.jax(steps, dtype=dtype)

    def scheduler_class(self, name: str = "Scheduler", target: str = "torch", **options):
        """A torch ``LRScheduler`` subclass setting this schedule as ``lr`` (``Program.scheduler_class``)."""
        return self.program().scheduler_class(name, target=target, **options)

    def to_source(self) -> str:
        """Canonical ``.sched`` text (``schedlang fmt``'s layout) that compiles to this piece."""
        params = [_bound_param(d.stmt, self._bindings) for d in self.params.values()]
        return _source([*params, ir.ScheduleDecl(self.node.span, "lr", self.node)], bare=True)

    def __repr__(self) -> str:
        shown = texts.text(self.node)
        return f"<schedlang.build {shown if len(shown) <= 120 else shown[:117] + '...'}>"

    def __iter__(self):  # a piece is not a sequence (and `in` would call __eq__)
        raise TypeError("a piece of a schedule is not iterable")


_LATER = object()  # a chain's value, lowered when first needed (Expr._known)


def _chain_pieces(expr: Expr) -> tuple[Expr, ...]:
    """The pieces a ``>>`` chain joins, down to the first one or to a chain already lowered."""
    pieces = []
    while expr._link is not None and (not pieces or expr._value is _LATER):
        before, after = expr._link
        pieces.append(after)
        expr = before
    pieces.append(expr)
    return tuple(pieces[::-1])


def _segments(node: ir.Node, children: tuple[Expr, ...]) -> int:
    """The schedules a ``>>`` chain joins, counted as it grows and refused past ``MAX_SEGMENTS``
    with the file's message: lowering a built chain sees only its newest link (the rest is
    known), so without this count a 100,000-piece chain never met the limit, and its
    ``to_source()`` text did not compile."""
    if not isinstance(node, ir.Seq):
        return 1
    count = sum(c._segments for c in children)
    if count > MAX_SEGMENTS:
        raise SchedlangError(f"this sequence joins {count} schedules with >>; schedlang takes at most "
                             f"{MAX_SEGMENTS}", node.span,
                             hint="use a formula (step, multistep, cycle) for a repeating pattern")
    return count


def _check(node: ir.Node, params: dict[str, ParamDecl], children: tuple[Expr, ...],
           clocks: frozenset[str]) -> Known | None:
    """Lower the new node (its children are known) with every check of the language."""
    if isinstance(node, ir.Seq) and _is_warmup(children[-1]):
        return None  # `a >> warmup(...)`: complete once Python applies the next `>>`
    statements = tuple(d.stmt for d in params.values())
    if not clocks <= params.keys():  # a stand-in batch: lengths in tokens are checked, not placed
        statements += (ir.BatchDecl(node.span, ir.Number(node.span, Fraction(1), "1")),)
    module = ir.Module(node.span, statements)
    known = {id(c.node): c._known for c in children if c._known is not None}
    try:
        with recursion_room():
            return lower_piece(module, node, known)
    except SchedlangError as exc:  # the message points at the user's line: drop lowering's frames
        span = exc.span
        if span is not None and not span.source.text:  # python -c, the plain REPL: show the piece
            shown = texts.text(node)
            source = Source("\n" * (span.line - 1) + shown, span.source.filename)
            exc.span = Span(source, span.line, 1, span.line, len(shown) + 1)
        raise exc.with_traceback(None) from None


def _clock_params(node: ir.Node, children: tuple[Expr, ...]) -> frozenset[str]:
    """The constant-batch parameters (``batch_size``, ``seq_len``) that the lengths in samples
    or tokens inside ``node`` (``sb.time(n, "tok")``) count with.  When one is not declared, the
    length is meant for the run's clock and the piece is checked against a stand-in batch.

    Each piece keeps its set and a new node looks only at what its children do not cover:
    walking the whole tree at every ``>>`` made a chain built one link at a time quadratic."""
    covered = {id(c.node): c._clocks for c in children}
    found: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, ir.Node) and item is not node and id(item) in covered:
            found |= covered[id(item)]
        elif isinstance(item, ir.Duration):
            if item.unit in ("sp", "tok"):
                found.add(TIME_UNITS[item.unit][0])
        elif isinstance(item, ir.Call) and isinstance(item.func, ir.Name) and item.func.id in ON_CLOCK:
            found.add(TIME_UNITS["sp"][0])  # on_samples(...) needs the run's clock: a stand-in here
            stack.extend(item.args)
        elif isinstance(item, ir.Node):
            stack.extend(getattr(item, f) for f in item.__dataclass_fields__ if f != "span")
        elif isinstance(item, tuple):
            stack.extend(item)
    return frozenset(found)


def _time_params(node: ir.Node, params: dict[str, ParamDecl]) -> dict[str, ParamDecl]:
    """``params`` and the parameter each time default of a call needs that it does not have.

    A preset's default such as Composer's ``t_max=1dur`` counts with a parameter of the file
    (``max_duration``); a file declares it, and from Python the call declares it: a required
    ``int`` (bound with ``params=`` / ``.bind()``), which the user's own ``param()`` of that
    name replaces.
    """
    if not isinstance(node, ir.Call):
        return params

    builtin = _builtin(node.func.id)
    given = {k.name for k in node.keywords} | {a.name for a in getattr(builtin, "args", ())[:len(node.args)]}
    needed = [TIME_UNITS[a.default.unit][0] for a in getattr(builtin, "args", ())
              if isinstance(a.default, stdlib.TimeDefault) and a.name not in given]
    missing = {n: ParamDecl(ir.Param(node.span, n, "int", node.span, None, None), next(_ORDER), implicit=True)
               for n in dict.fromkeys(needed) if n is not None and n not in params}
    return _merge(sites.Site(node.span), params, missing) if missing else params


def _is_warmup(piece: Expr) -> bool:
    return piece._known is not None and isinstance(piece._known.value, stdlib.Warmup)


class Param(Expr):
    """A declared parameter (``sb.param``): a name in the schedule, a constructor argument of its
    scheduler class, bound with ``params=`` / ``.bind()`` / its default."""

    __slots__ = ()


# -- Python values as nodes ----------------------------------------------------------------


def _expr(value, span: Span) -> Expr:
    """Any value a schedule may hold, as an ``Expr`` (numbers, bools, strings, lists, names)."""
    if isinstance(value, Expr):
        return value
    if isinstance(value, Jump):
        raise SchedlangError("sb.jump(...) only makes sense right after `>>`", value.span,
                             hint="e.g. sb.constant(1e-3, 500) >> sb.jump(sb.constant(1e-4, 500))")
    if isinstance(value, Function):
        return Expr(ir.Name(span, value.name), {}, check=False)
    if isinstance(value, (list, tuple)):
        if len(value) > MAX_LIST_ITEMS:
            raise SchedlangError(f"this list has {len(value)} items; schedlang takes at most "
                                 f"{MAX_LIST_ITEMS}", span)
        items = [_expr(v, span) for v in value]
        params = _merge(sites.Site(span), *(i.params for i in items))
        return Expr(ir.List(span, tuple(i.node for i in items)), params, tuple(items), check=False)
    return Expr(_literal(value, span), {}, check=False)


def _literal(value, span: Span) -> ir.Node:
    if isinstance(value, bool):
        return ir.Bool(span, value)
    if isinstance(value, str):
        if not _STRING.match(value):
            raise SchedlangError(f"{value!r} cannot be a schedlang string", span,
                                 hint='an option value holds no ", \\ or line break')
        return ir.String(span, value)
    if isinstance(value, Schedule):
        raise SchedlangError("a compiled Schedule cannot be part of a built one", span,
                             hint="build the whole schedule with schedlang.build, or compare the two "
                                  "with schedlang.equivalent")
    try:
        number = _exact(value)
    except LimitError as exc:
        raise SchedlangError(str(exc), span, hint=exc.hint) from None
    if number is None:
        raise SchedlangError(f"expected a number, got {type(value).__name__}", span,
                             hint="numbers, bools, strings (option values), lists and schedlang.build "
                                  "objects make a schedule")
    return _number(number, span)


def _exact(value) -> Fraction | None:
    """A Python number as the exact value its digits say (``0.1`` is 1/10, as in a .sched file).

    Sizes are checked before any conversion, with the file's limits (``limits.decimal``):
    ``Decimal("1e-999999")`` as a ``Fraction`` is a denominator of a million digits, and
    ``10**5000`` has more digits than Python will print.  Raises ``LimitError``."""
    if isinstance(value, sp.Basic):
        if value.is_Rational:
            return _within_limits(Fraction(int(value.p), int(value.q)))
        if not value.is_Float:
            return None
        value = float(value)
    if isinstance(value, numbers.Integral):
        return _within_limits(Fraction(int(value)))
    if isinstance(value, Fraction):
        return _within_limits(value)
    if isinstance(value, Decimal):
        # its own text (``1E-999999``) is read as the parser reads a literal: digits and
        # exponent checked before 10**999999 is ever computed
        return decimal(str(value).replace("E", "e")) if value.is_finite() else None
    if isinstance(value, numbers.Real):
        value = float(value)
        return Fraction(repr(value)) if value - value == 0 else None  # not inf, not nan
    return None


def _within_limits(value: Fraction) -> Fraction:
    """``value`` if a literal could write it: numerator and denominator of at most
    ``MAX_DIGITS`` digits each (a quotient of two literals); else the parser's ``LimitError``."""
    for part in (value.numerator, value.denominator):
        bits = abs(part).bit_length()
        if bits > MAX_DIGITS * 4:  # > ~1200 digits: too many to print (Python stops at 4300)
            digits = int(bits * 0.30103) + 1
            raise LimitError(f"this number has about {digits} digits; schedlang reads at most {MAX_DIGITS}",
                             "write a long number with an exponent, e.g. 1.5e20")
        if bits > MAX_DIGITS * 3:
            decimal(str(abs(part)))  # the exact count, in the parser's own words
    return value


def _number(value: Fraction, span: Span) -> ir.Node:
    """The nodes the parser makes for the number's text: ``-0.5`` is ``-`` of ``0.5``, 1/3 a division."""
    if value < 0:
        return ir.Unary(span, "-", _number(-value, span))
    shown = _written(span, value) or _decimal_text(value)
    if shown is None:
        return ir.BinOp(span, "/", _number(Fraction(value.numerator), span),
                        _number(Fraction(value.denominator), span))
    try:
        exact = decimal(shown)  # the parser's digit limits
    except LimitError as exc:
        raise SchedlangError(str(exc), span, hint=exc.hint) from None
    return ir.Number(span, exact, shown)


def _written(span: Span, value: Fraction) -> str | None:
    """The literal the user's Python wrote at ``span`` (``10e12``, ``2.2e-4``, ``4_096``), when it
    is a ``.sched`` literal too and says exactly ``value``: ``to_source()`` then keeps the text
    as written instead of the digits of the float (``10000000000000``).  The text is only read
    (``limits.decimal``), never evaluated; any other expression there gives None."""
    if span is None or span.line != span.end_line or not span.source.text:
        return None
    text = span.source.line(span.line)[span.column - 1:span.end_column - 1].strip().lstrip("+-").strip()
    try:
        return text if decimal(text) == value else None
    except (ValueError, LimitError):
        return None


def _decimal_text(value: Fraction) -> str | None:
    """The shortest decimal that reads back as ``value`` exactly, or None when there is none."""
    if value.denominator == 1:
        return str(value.numerator)
    shown = repr(float(value))
    if "inf" not in shown and Fraction(shown) == value:
        return shown
    q, twos, fives = value.denominator, 0, 0
    while q % 2 == 0:
        q, twos = q // 2, twos + 1
    while q % 5 == 0:
        q, fives = q // 5, fives + 1
    if q != 1:
        return None
    places = max(twos, fives)
    digits = str(value.numerator * 10**places // value.denominator).rjust(places + 1, "0")
    return f"{digits[:-places]}.{digits[-places:]}"


# -- operators -----------------------------------------------------------------------------


def _pair(a, b, site: sites.Site) -> tuple[Expr, Expr]:
    return _expr(a, site.operand(0)), _expr(b, site.operand(1))


def _binop(op: str, a, b, site: sites.Site) -> Expr:
    a, b = _pair(a, b, site)
    return Expr(ir.BinOp(site.span, op, a.node, b.node), _merge(site, a.params, b.params), (a, b))


def _compare(op: str, a, b, site: sites.Site) -> Expr:
    a, b = _pair(a, b, site)
    return Expr(ir.Compare(site.span, (a.node, b.node), (op,)), _merge(site, a.params, b.params), (a, b))


def _boolop(op: str, a, b, site: sites.Site) -> Expr:
    a, b = _pair(a, b, site)
    return Expr(ir.BoolOp(site.span, op, a.node, b.node), _merge(site, a.params, b.params), (a, b))


def _seq(a: Expr, b, site: sites.Site) -> Expr:
    jump = isinstance(b, Jump)
    b = b.piece if jump else _expr(b, site.operand(1))
    # ``a >> b >> c`` is one chain, as in the parser: only the new segment adds a level.
    depth = max(a._depth if isinstance(a.node, ir.Seq) else a._depth + 1, b._depth + 1)
    return Expr(ir.Seq(site.span, a.node, b.node, jump), _merge(site, a.params, b.params), (a, b),
                depth=depth)


class Jump:
    """``sb.jump(piece)``: ``piece`` after ``>>`` with its jump declared intended, the
    language's ``a >> jump b`` (``check`` does not warn about it; the values are the same).
    It is not a piece of its own: it means something only right after ``>>``."""

    __slots__ = ("piece", "span")

    def __init__(self, piece: Expr, span: Span):
        self.piece, self.span = piece, span

    def __repr__(self) -> str:
        return f"<schedlang.build jump {texts.text(self.piece.node)}>"


def jump(piece) -> Jump:
    """``a >> sb.jump(b)``: ``a >> jump b``, the jump from ``a``'s end to ``b``'s start meant."""
    site = sites.caller()
    return Jump(_expr(piece, site.argument(0)), site.span)


def if_(cond, then, other) -> Expr:
    """``if cond then then else other`` (a condition chooses between two values at each step)."""
    site = sites.caller()
    parts = [_expr(v, site.argument(i)) for i, v in enumerate((cond, then, other))]
    node = ir.If(site.span, *(p.node for p in parts))
    return Expr(node, _merge(site, *(p.params for p in parts)), tuple(parts))


def and_(a, b) -> Expr:
    """``a and b`` (also ``a & b``)."""
    return _boolop("and", a, b, sites.caller())


def or_(a, b) -> Expr:
    """``a or b`` (also ``a | b``)."""
    return _boolop("or", a, b, sites.caller())


def not_(a) -> Expr:
    """``not a`` (also ``~a``)."""
    site = sites.caller()
    a = _expr(a, site.argument(0))
    return Expr(ir.Not(site.span, a.node), a.params, (a,))


# -- functions: built-ins, math, presets ---------------------------------------------------


class Function:
    """A built-in of the language (``cosine``, ``sin``, ``torch.StepLR``): call it to build a
    piece; pass it bare where the language takes a name (``warmup(sb.linear, 500)``)."""

    def __init__(self, name: str):
        self.name = name
        self.__name__ = self.__qualname__ = name.rsplit(".", 1)[-1]
        self.__doc__ = _doc(name)

    def __call__(self, *args, **kwargs) -> Expr:
        return _call(self.name, args, kwargs, sites.caller())

    @property
    def __signature__(self) -> inspect.Signature:
        return _signature(self.name)

    def __getattr__(self, attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _preset_attribute(self.name, attr)

    def __dir__(self):
        return sorted({*object.__dir__(self), *_children(self.name)})

    def __repr__(self) -> str:
        return f"<schedlang.build function {self.name}{_signature(self.name)}>"


class Namespace:
    """One library's presets (``sb.torch.StepLR``), with the library's own names and keywords."""

    def __init__(self, library: str):
        self._library = library
        self.__doc__ = f"{library}'s schedulers as schedlang presets (docs/presets.md)."

    def __getattr__(self, attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _preset_attribute(self._library, attr)

    def __dir__(self):
        return sorted({*object.__dir__(self), *_children(self._library)})

    def __repr__(self) -> str:
        return f"<schedlang.build presets {self._library}>"


def _presets() -> dict:
    """The presets, and the dotted calls lowering knows by name (``megatron.rampup_batch_size``)."""
    return {**PRESETS, **{n: b for n, b in CALL_SIGNATURES.items() if "." in n}}


def _children(prefix: str) -> list[str]:
    depth = prefix.count(".") + 1
    return sorted({name.split(".")[depth] for name in _presets() if name.startswith(prefix + ".")
                   and name.count(".") >= depth})


def _preset_attribute(prefix: str, attr: str) -> Function:
    full = f"{prefix}.{attr}"
    if full in _presets() or attr in _children(prefix):
        return Function(full)
    raise BuildAttributeError(f"{prefix} has no preset '{attr}'", sites.caller().span,
                              hint=did_you_mean(attr, _children(prefix)) or
                              f"its presets: {', '.join(_children(prefix))}")


def _builtin(name: str):
    """The table entry of a name: a stdlib ``Builtin``, a preset ``Builtin`` / ``Rejected``, or None."""
    return stdlib.SCHEDULES.get(name) or _presets().get(name) or CALL_SIGNATURES.get(name)


def _call(name: str, args, kwargs: dict, site: sites.Site) -> Expr:
    builtin = _builtin(name)
    # a batch preset, like sb.stages, takes the program's tokens per sample as seq_len=, no argument
    seq_len = kwargs.pop("seq_len", None) if name in BATCH_CALLS else None
    plain = isinstance(builtin, stdlib.Builtin) and not builtin.variadic
    names = [a.name for a in builtin.args] if plain else []
    if any(a is None for a in args) and len(args) <= len(names):  # None: "not given", as in Python
        first = next(i for i, a in enumerate(args) if a is None)
        kwargs = {**dict(zip(names[first:], args[first:])), **kwargs}
        args = args[:first]
    kwargs = {k: v for k, v in kwargs.items() if v is not None}
    positional = [_expr(a, site.argument(i)) for i, a in enumerate(args)]
    keywords = [(k, _expr(v, site.keyword_value(k))) for k, v in kwargs.items()]
    func = ir.Name(site.of(getattr(site.tree, "func", None)), name)
    node = ir.Call(site.span, func, tuple(p.node for p in positional),
                   tuple(ir.Keyword(site.argument(keyword=k), k, v.node) for k, v in keywords))
    parts = (*positional, *(v for _, v in keywords))
    params = _merge(site, *(p.params for p in parts), *_seq_len_params(seq_len, site))
    # a batch schedule is checked where it goes, in sb.program(batch=...)
    return Expr(node, params, parts, check=name not in BATCH_CALLS)


# -- signatures and docs, from the one table of built-ins ----------------------------------

#: What each kind of argument takes, for the signature (annotation) and the docstring.
_KINDS = {
    stdlib.Kind.VALUE: ("float | Expr", "a number or a schedule"),
    stdlib.Kind.STEPS: ("int | Expr", "a period in steps: a whole number > 0"),
    stdlib.Kind.DURATION: ("int | Expr", "a length in steps: a whole number >= 0 (0: no steps)"),
    stdlib.Kind.CONST: ("float | Expr", "a number constant in t"),
    stdlib.Kind.VALUES: ("list[float]", "a list of numbers constant in t"),
    stdlib.Kind.SCHEDULE: ("Expr", "a schedule"),
    stdlib.Kind.FINITE: ("Expr", "a schedule with a finite duration"),
    stdlib.Kind.SHAPE: ("Function", "a warmup shape: sb.linear, sb.cosine or sb.exp"),
    stdlib.Kind.OPTION: ("str", "one of the strings listed"),
    stdlib.Kind.FLAG: ("bool", "True or False"),
    stdlib.Kind.SCHEDULES: ("list[Expr]", "a list of schedules"),
    stdlib.Kind.PAIRS: ("list[tuple[float, float]]", "a list of [a, b] pairs"),
}


class _Shown:
    """A default as the docs show it (``0.1``, ``"cos"``, ``1dur``)."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _signature(name: str) -> inspect.Signature:
    builtin = _builtin(name)
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    if isinstance(builtin, stdlib.Builtin) and builtin.variadic or (builtin is None and name in stdlib.MATH):
        arity = stdlib.MATH_ARITY.get(name)
        if arity is None:
            return inspect.Signature([inspect.Parameter("values", inspect.Parameter.VAR_POSITIONAL,
                                                        annotation="float | Expr")], return_annotation="Expr")
        positional = inspect.Parameter.POSITIONAL_ONLY
        return inspect.Signature([inspect.Parameter(n, positional, annotation="float | Expr")
                                  for n in "xyz"[:arity]], return_annotation="Expr")
    if not isinstance(builtin, stdlib.Builtin):
        return inspect.Signature([inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD)],
                                 return_annotation="Expr")
    params = []
    for arg in builtin.args:
        if arg.default is not stdlib.REQUIRED:
            kind = inspect.Parameter.KEYWORD_ONLY if kind == inspect.Parameter.KEYWORD_ONLY else kind
        elif params and params[-1].default is not inspect.Parameter.empty:
            kind = inspect.Parameter.KEYWORD_ONLY  # a required one after an optional one: by keyword
        annotation = _KINDS[arg.kind][0]
        if arg.kind == stdlib.Kind.OPTION and arg.choices:
            annotation = "Literal[" + ", ".join(repr(c) for c in arg.choices) + "]"
        default = inspect.Parameter.empty if arg.default is stdlib.REQUIRED else _Shown(
            _default_text(arg.default))
        params.append(inspect.Parameter(arg.name, kind, default=default, annotation=annotation))
        kind = params[-1].kind
    if name in BATCH_CALLS:  # the program's tokens per sample, as sb.stages takes it
        params.append(inspect.Parameter("seq_len", inspect.Parameter.KEYWORD_ONLY, default=None,
                                        annotation="Param | None"))
    return inspect.Signature(params, return_annotation="Expr")


def _default_text(default) -> str:
    if isinstance(default, bool):
        return repr(default)
    if default is None:
        return "None"
    return stdlib.show_default(default)


def _doc(name: str) -> str:
    builtin = _builtin(name)

    if isinstance(builtin, Rejected):
        return f"{name}: refused, not a closed-form schedule. {builtin.reason}"
    if builtin is None:
        if name in stdlib.MATH:
            arity = stdlib.MATH_ARITY[name]
            shown = f"{name}(a, b, ...)" if arity is None else f"{name}({', '.join('xyz'[:arity])})"
            return f"{shown}: the math function {name} of numbers or schedules (docs/language.md)."
        return f"{name}: a namespace of presets."
    lines = [builtin.signature(), "", inspect.cleandoc(builtin.build.__doc__ or "")]
    if name == "exp":
        lines += ["", "exp(x) with one argument is the math function e ** x."]
    if builtin.args and not builtin.variadic:
        lines += ["", "Arguments:"]
        for arg in builtin.args:
            what = _KINDS[arg.kind][1]
            if arg.choices:
                what += ": " + ", ".join(f'"{c}"' for c in arg.choices)
            lines.append(f"    {arg.name}: {what}")
    return "\n".join(lines).strip()


# -- times: Composer-style durations (``500ba``, ``2ep``, ``0.3dur``) ---------------------


def time(amount, unit: str, per: Param | None = None) -> Expr:
    """A time literal of the language, ``500ba`` (``time(500, "ba")``) or ``2ep`` (``time(2, "ep",
    steps_per_epoch)``): a number of steps counted as Composer counts them (``docs/language.md``).

    Every unit but ``ba`` is converted by a parameter the program must declare, which ``per``
    is: ``steps_per_epoch`` for ``ep``, ``max_duration`` for ``dur``, ``batch_size`` for ``sp``,
    ``tokens_per_batch`` for ``tok``.  Inside ``scale()`` a time keeps Composer's meaning.
    ``sp`` and ``tok`` without ``per`` are lengths on the run's sample or token clock: the
    program names its batch schedule (``sb.program(..., batch=sb.stages(...))``, SPEC §12).
    """
    site = sites.caller()
    if unit not in TIME_UNITS:
        raise SchedlangError(f"unknown time unit {unit!r}", site.argument(1),
                             hint=did_you_mean(str(unit), TIME_UNITS) or "one of " + ", ".join(TIME_UNITS))
    needed = TIME_UNITS[unit][0]
    params: dict[str, ParamDecl] = {}
    if needed is not None and not (per is None and unit in ("sp", "tok")):
        if not isinstance(per, Param) or needed not in per.params or per.node.id != needed:
            raise SchedlangError(f"a time in {unit} counts {TIME_UNITS[unit][1]}: pass the '{needed}' "
                                 "parameter", site.span,
                                 hint=f'{needed} = sb.param("{needed}", int); '
                                      f'sb.time(..., "{unit}", {needed})')
        params = per.params
    value = _exact(amount)
    if value is None or value < 0:
        raise SchedlangError(f"a time is a number >= 0, not {amount!r}", site.argument(0))
    shown = _written(site.argument(0), value) or _decimal_text(value)
    if shown is None:
        raise SchedlangError(f"{amount!r} has no decimal form for a time literal", site.argument(0))
    try:
        exact = decimal(shown)
    except LimitError as exc:
        raise SchedlangError(str(exc), site.argument(0), hint=exc.hint) from None
    return Expr(ir.Duration(site.span, exact, unit, f"{shown}{unit}"), params)


# -- parameters and programs ---------------------------------------------------------------


def param(name: str, type: type | str = float, default=None, where=None) -> Param:  # noqa: A002
    """Declare a parameter: ``param NAME: TYPE = DEFAULT where CLAUSE`` in a ``.sched`` file.

    ``type``: ``int`` (whole numbers >= 0, e.g. steps), ``float``, or ``"group"`` (a float each
    optimizer param group may override).  ``default``: a number, or None for a required
    parameter (bound later by ``params=`` / ``.bind()`` / the scheduler class's constructor).
    ``where``: the clause as ``.sched`` text (``"total > warmup"``, naming any parameter of
    the schedule), or a function of this parameter returning a condition
    (``lambda total: total > warmup``).
    """
    site = sites.caller()
    if not isinstance(name, str) or not _NAME.match(name):
        raise SchedlangError(f"{name!r} is not a name", site.argument(0),
                             hint="a name is ASCII letters, digits and _, not starting with a digit")

    if name in RESERVED or name == "t":
        raise SchedlangError(f"'{name}' is a word of the language and cannot be a parameter name"
                             if name != "t" else "'t' is the step and cannot be a parameter",
                             site.argument(0), hint=f"pick another name, e.g. 'my_{name}'")
    type_name = {int: "int", float: "float"}.get(type, type)
    type_span = site.argument(1) if site.argument(1) is not site.span else site.argument(keyword="type")
    if not isinstance(type_name, str) or not _NAME.match(type_name):
        raise SchedlangError(f"unknown parameter type {type_name!r}", type_span,
                             hint="use int (whole numbers, e.g. steps), float, or \"group\"")
    name_node = ir.Name(site.span, name)
    deps: dict[str, ParamDecl] = {}
    default_node = None
    if default is not None:
        value = _expr(default, _argument_span(site, 2, "default"))
        default_node, deps = value.node, value.params
    where_node = None
    if where is not None:
        where_node, where_params = _where(where, name, type_name, name_node, site)
        deps = _merge(site, deps, {k: v for k, v in where_params.items() if k != name})
    stmt = ir.Param(site.span, name, type_name, type_span, default_node, where_node)
    decl = ParamDecl(stmt, next(_ORDER))
    return Param(name_node, _merge(site, deps, {name: decl}))


def _argument_span(site: sites.Site, index: int, keyword: str) -> Span:
    found = site.argument(index)
    return found if found is not site.span else site.argument(keyword=keyword)


def _where(where, name: str, type_name: str, name_node: ir.Name, site: sites.Site):
    """A ``where`` clause from text (parsed by the parser) or from a function of the parameter."""
    span = _argument_span(site, 3, "where")
    if callable(where) and not isinstance(where, (str, Expr)):
        provisional = ParamDecl(ir.Param(site.span, name, type_name, span, None, None), -1)
        clause = where(Param(name_node, {name: provisional}, check=False))
        clause = _expr(clause, span)
        return clause.node, clause.params
    if isinstance(where, Expr):
        return where.node, where.params
    if not isinstance(where, str):
        raise SchedlangError(f"where must be .sched text or a function, not {type(where).__name__}", span)

    prefix = f"param {name}: {type_name} where "
    locate = _text_locator(where, span, len(prefix))
    try:
        module = parse(prefix + where, span.source.filename)
    except SchedlangError as exc:
        raise SchedlangError(exc.message, locate(exc.span), exc.hint) from None
    statements = module.statements
    if len(statements) != 1 or statements[0].where is None:
        raise SchedlangError("where must be one condition, e.g. \"total > 0\"", span)
    return _relocated(statements[0].where, locate), {}


def _text_locator(text: str, span: Span, skip: int):
    """Spans in the parsed text mapped into the user's ``.py`` line: onto the string literal
    itself when it is written plainly on one line, else onto the whole ``where=`` argument."""
    one_line = span.end_line == span.line
    written = span.source.line(span.line)[span.column - 1: span.end_column - 1] if one_line else ""
    start = written.find(text) if "\n" not in text and text else -1
    if not written or start < 0 or written.count(text) != 1 or written[start - 1:start] not in ("'", '"'):
        return lambda inner: span
    base = span.column + start

    def locate(inner: Span | None) -> Span:
        if inner is None or inner.line != 1 or inner.end_line != 1:
            return span
        column = max(inner.column - skip, 0)
        end = max(min(inner.end_column - skip, len(text) + 1), column + 1)
        return Span(span.source, span.line, base + column - 1, span.line, base + end - 1)

    return locate


def _relocated(node, locate):
    """``node`` with every span mapped by ``locate`` (the ``where`` text moved into the .py file)."""
    if isinstance(node, tuple):
        return tuple(_relocated(n, locate) for n in node)
    if not isinstance(node, ir.Node):
        return node
    changes = {f: _relocated(getattr(node, f), locate) for f in node.__dataclass_fields__ if f != "span"}
    return replace(node, span=locate(node.span), **changes)


class BuiltProgram(Program):
    """A ``schedlang.Program`` made by ``sb.program``; ``to_source()`` gives its ``.sched`` text."""

    def __init__(self, lowered, given: dict, module: ir.Module):
        self._module = module
        self._given = dict(given)
        super().__init__(lowered, given)

    def to_source(self) -> str:
        """Canonical ``.sched`` text of the whole program; bound values become the defaults."""
        statements = [_bound_param(s, self._given) if isinstance(s, ir.Param) else s
                      for s in self._module.statements]
        return _source(statements)


def program(params: dict | None = None, *, batch=None, **schedules) -> BuiltProgram:
    """Name schedules (``lr=``, ``weight_decay=``, ...) into a ``schedlang.Program``.

    ``params`` binds parameters as ``schedlang.compile(params=)`` does.  ``batch`` is the
    run's batch schedule (a file's ``batch = ...``): a number of samples per step or
    ``sb.stages(...)``; its tokens per sample are ``sb.param("seq_len", int, ...)``, passed
    to ``stages`` or used anywhere in the program.  The result is a ``Program``:
    ``prog["lr"](250)``, ``prog.scheduler_class("GPT")``, ``schedlang.equivalent``.
    """
    site = sites.caller()
    if not schedules:
        raise SchedlangError("program() names no schedule", site.span, hint="e.g. sb.program(lr=...)")
    return _program(schedules, params or {}, site, batch=batch)


def stages(first, batches, thresholds, seq_len: Param | None = None) -> Expr:
    """``stages(b0, [b1, ...], [th1, ...])``: a batch schedule for ``sb.program(batch=...)``.

    Thresholds are ``sb.time(n, "tok")`` or ``sb.time(n, "sp")``; a token threshold needs the
    tokens per sample, ``seq_len`` (a ``sb.param("seq_len", int, ...)``), passed here.
    """
    site = sites.caller()
    args = [_expr(first, site.argument(0)), _expr(list(batches), site.argument(1)),
            _expr(list(thresholds), site.argument(2))]
    params = _merge(site, *(a.params for a in args), *_seq_len_params(seq_len, site))
    node = ir.Call(site.span, ir.Name(site.span, "stages"), tuple(a.node for a in args), ())
    return Expr(node, params, tuple(args), check=False)


def _seq_len_params(seq_len, site: sites.Site) -> list[dict]:
    """The parameters ``seq_len=`` brings to a batch schedule: the program's tokens per sample."""
    if seq_len is None:
        return []
    if not isinstance(seq_len, Param):
        raise SchedlangError("seq_len= takes the program's parameter, not a value",
                             site.argument(keyword="seq_len"),
                             hint='seq_len = sb.param("seq_len", int, 4096), then seq_len=seq_len')
    return [seq_len.params]


def _program(schedules: dict, params: dict, site: sites.Site, statement_spans: bool = True,
             batch=None) -> BuiltProgram:
    pieces = {}
    for name, value in schedules.items():
        span = site.argument(keyword=name) if statement_spans else None
        if not _NAME.match(name) or name in RESERVED or name == "t":
            raise SchedlangError(f"'{name}' cannot name a schedule", span or site.span,
                                 hint="a name is ASCII letters, digits and _, not a word of the language")
        pieces[name] = (_expr(value, span or site.span), span)
    batches = []
    if batch is not None:
        batch_piece = _expr(batch, site.argument(keyword="batch"))
        batches.append(ir.BatchDecl(batch_piece.node.span, batch_piece.node))
        pieces_params = [batch_piece.params]
    else:
        pieces_params = []
    merged = _merge(site, *pieces_params, *(piece.params for piece, _ in pieces.values()))
    _check_values(params, merged, site)
    decls = [ir.ScheduleDecl(span or piece.node.span, name, piece.node)
             for name, (piece, span) in pieces.items()]
    module = ir.Module(site.span, (*(d.stmt for d in merged.values()), *batches, *decls))
    known = {id(p.node): p._known for p, _ in pieces.values() if p._known is not None}
    try:
        with recursion_room():
            return BuiltProgram(lower(module, known), params, module)
    except SchedlangError as exc:  # a `where` clause the values break: at the caller's line
        raise _at_value(exc, params, site).with_traceback(None) from None


def _at_value(exc: SchedlangError, params: dict, site: sites.Site) -> SchedlangError:
    """An error about a value given here (``parameter 'peak' must satisfy peak > 0``) moved to
    that value in the caller's line, the declaration it broke named in the hint."""
    name = next((n for n in params if exc.message.startswith(f"parameter '{n}' ")), None)
    if name is None:
        return exc.with_span(site.span)
    declared = f"'{name}' is declared at {exc.span.location}" if exc.span is not None else None
    return SchedlangError(exc.message, site.parameter_value(name),
                          hint="; ".join(h for h in (exc.hint, declared) if h) or None)


def _check_values(values: dict, declared: dict[str, ParamDecl], site: sites.Site) -> None:
    """Each value of ``params=`` / ``.bind()`` checked at its own place in the caller's line
    (``compile(params=)`` would report it with no place: there the caller's text is unknown)."""
    for name, value in values.items():
        if name not in declared:
            raise SchedlangError(f"this program has no parameter '{name}'",
                                 site.parameter_value(name, key=True),
                                 hint=did_you_mean(name, declared) or (
                                     "it declares " + ", ".join(declared) if declared
                                     else "it declares no parameters"))
        try:
            number = to_number(value, f"parameter '{name}'")
        except SchedlangError as exc:
            raise exc.with_span(site.parameter_value(name)).with_traceback(None) from None
        if declared[name].stmt.type == "int" and number.is_number and not (number.is_integer and number >= 0):
            raise SchedlangError(f"parameter '{name}' is an int (a whole number >= 0), not {value!r}",
                                 site.parameter_value(name))


def _bound_param(stmt: ir.Param, values: dict) -> ir.Param:
    """The statement with a bound value as its default (what ``to_source`` writes)."""
    if stmt.name not in values:
        return stmt
    return replace(stmt, default=_expr(values[stmt.name], stmt.span).node)


#: Names a ``let`` of ``to_source()`` never takes: the language's words and built-ins.
_LANGUAGE_NAMES = frozenset({*RESERVED, "t", "lr", "batch", *stdlib.SCHEDULES, *stdlib.MATH,
                             *stdlib.CONSTANTS, *(name.split(".")[0] for name in PRESETS)})


def _source(statements: list[ir.Node], bare: bool = False) -> str:
    """The statements as ``.sched`` text, with a ``let`` for each piece the user's Python
    assigned to a variable (``decay = sb.cosine(...)``, ``site.assigned_name``) and used in
    a schedule, so the text keeps the structure it was given; ``bare``: a lone schedule
    with no parameter and no ``let`` is written as a bare expression."""
    values = [s.value for s in statements if isinstance(s, (ir.ScheduleDecl, ir.BatchDecl))]
    taken = _LANGUAGE_NAMES | {s.name for s in statements if hasattr(s, "name")}
    found = texts.lets(values, _assigned_name, taken)
    params = [s for s in statements if isinstance(s, ir.Param)]
    if bare and not params and not found:
        return _formatted(texts.text(values[0]))
    names = {id(node): name for name, node in found}
    lines = [*map(texts.statement, params)]
    lines += [f"let {name} = {texts.text(node, {k: v for k, v in names.items() if k != id(node)})}"
              for name, node in found]
    for stmt in statements:
        if isinstance(stmt, ir.BatchDecl):
            lines.append(f"batch = {texts.text(stmt.value, names)}")
        elif isinstance(stmt, ir.ScheduleDecl):
            lines.append(f"schedule {stmt.name} = {texts.text(stmt.value, names)}")
            if not isinstance(stmt.value, ir.Name):  # a later schedule built on it names it
                names.setdefault(id(stmt.value), stmt.name)
    return _formatted("\n".join(lines))


def _assigned_name(node: ir.Node) -> str | None:
    name = sites.assigned_name(node.span)
    return name if name is not None and _NAME.match(name) else None


def _formatted(source: str) -> str:
    return format_source(source, "<schedlang.build>")


__all__ = ["BuildAttributeError", "BuiltProgram", "Expr", "Function", "Namespace", "Param", "and_", "if_",
           "not_", "or_", "param", "program", "stages", "time"]
