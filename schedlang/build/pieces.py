"""``Expr``, a piece of a schedule that Python code composes, and all that its own methods make.

Each piece holds the very ``ir`` node the parser would make for the same text,
with ``Span``s into the user's ``.py`` file (``site``), and is lowered by
``lower.lower_piece`` the moment it is made (``checks``): every check and every hint is
the language's own, raised at the Python line that built the bad piece.  A lowered
piece is remembered (``lower_expressions.Known``), so composing pieces never lowers them again.

The operators, calls of built-ins (``Function``, ``Namespace``), ``>>`` with ``jump`` and
programs (``BuiltProgram``) are here with ``Expr`` because each makes an ``Expr`` and
``Expr``'s methods make each of them (``a + 1``, ``abs(a)``, ``a.program()``): one module,
no import cycle.  What needs no ``Expr`` is below it (``declarations``, ``literals``,
``signatures``, ``checks``, ``source``); the language's other forms build on it
(``conditions``, ``times``, ``parameters``).
"""

from __future__ import annotations

import inspect
from dataclasses import replace

import sympy as sp

from ..errors import SchedlangError, Span, did_you_mean
from ..library import stdlib
from ..limits import MAX_LIST_ITEMS, MAX_NESTING, recursion_room
from ..program import Program, Schedule
from ..semantics.lower import lower
from ..semantics.lower_expressions import Known
from ..semantics.params import to_number
from ..syntax import ir, unparse
from ..syntax.parser import RESERVED
from . import site as sites
from .checks import (
    LATER,
    chain_pieces,
    check_node,
    clock_params,
    count_segments,
    is_cooldown,
    is_warmup,
    time_params,
)
from .declarations import IDENTIFIER, ParamDecl, merge
from .literals import literal_node
from .signatures import builtin_entry, child_names, doc, dotted_presets, is_batch, signature_of
from .source import source_text


class BuildAttributeError(SchedlangError, AttributeError):
    """An unknown name in ``schedlang.build`` or a preset namespace: an ``AttributeError`` (so
    ``hasattr`` and ``getattr(..., default)`` work) that also reads like any ``SchedlangError``."""

    def __init__(self, message: str, span: Span | None = None, hint: str | None = None):
        SchedlangError.__init__(self, message, span, hint)


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
        self.params = params = time_params(node, params)
        self._bindings: dict = {}
        self._schedule = None
        self._depth = 1 + max((c._depth for c in children), default=0) if depth is None else depth
        if self._depth > MAX_NESTING:
            raise SchedlangError(f"this expression nests more than {MAX_NESTING} levels deep", node.span,
                                 hint="build it from fewer nested pieces (a >> chain counts once)")
        self._segments = count_segments(node, children)
        self._clocks = clock_params(node, children)
        self._link = None  # (the chain before, the piece after) for a link of a >> chain
        self._value: Known | None | object = None
        if not check:
            return
        if isinstance(node, ir.Seq):
            self._link = children
            if children[0]._link is not None and is_cooldown(children[1]):
                # a cooldown starts from the end value of the whole chain before it
                self._value = check_node(node, params, children, self._clocks)
                return
            if children[0]._link is not None:  # a longer chain: check the new join alone
                self._value = LATER
                if not is_warmup(children[1]):
                    check_node(replace(node, first=children[0]._link[1].node), params,
                           (children[0]._link[1], children[1]), self._clocks)
                return
        self._value = check_node(node, params, children, self._clocks)

    @property
    def _known(self) -> Known | None:
        """The lowered value, for composing; a chain's is lowered in one pass the first time it
        is needed.  Lowering the whole chain again at each ``>>`` (each time one longer) made a
        chain built one link at a time quadratic; each new join is checked alone instead, and
        the pieces are sequenced once (``lower_expressions._seq``)."""
        if self._value is LATER:
            self._value = None
            if not is_warmup(self._link[1]):
                self._value = check_node(self.node, self.params, chain_pieces(self), self._clocks)
        return self._value

    # -- composing -------------------------------------------------------------------

    def __rshift__(self, other) -> Expr:
        return _seq(self, other, sites.caller())

    def __rrshift__(self, other) -> Expr:
        site = sites.caller()
        return _seq(as_expr(other, site.operand(0)), self, site)

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
    def __and__(self, other): return boolop("and", self, other, sites.caller())
    def __rand__(self, other): return boolop("and", other, self, sites.caller())
    def __or__(self, other): return boolop("or", self, other, sites.caller())
    def __ror__(self, other): return boolop("or", other, self, sites.caller())

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
        steps = as_expr(steps, site.argument(0))
        return Expr(ir.For(site.span, self.node, steps.node), merge(site, self.params, steps.params),
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
        return source_text([*params, ir.ScheduleDecl(self.node.span, "lr", self.node)], bare=True)

    def __repr__(self) -> str:
        shown = unparse.expression(self.node)
        return f"<schedlang.build {shown if len(shown) <= 120 else shown[:117] + '...'}>"

    def __iter__(self):  # a piece is not a sequence (and `in` would call __eq__)
        raise TypeError("a piece of a schedule is not iterable")


class Param(Expr):
    """A declared parameter (``sb.param``): a name in the schedule, a constructor argument of its
    scheduler class, bound with ``params=`` / ``.bind()`` / its default."""

    __slots__ = ()


def as_expr(value, span: Span) -> Expr:
    """Any value a schedule may hold, as an ``Expr`` (numbers, bools, strings, lists, names)."""
    if isinstance(value, Expr):
        return value
    if isinstance(value, Jump):
        raise SchedlangError("sb.jump(...) only makes sense right after `>>`", value.span,
                             hint="e.g. sb.constant(1e-3, 500) >> sb.jump(sb.constant(1e-4, 500))")
    if isinstance(value, (Function, Shape)):
        return Expr(ir.Name(span, value.name), {}, check=False)
    if isinstance(value, (list, tuple)):
        if len(value) > MAX_LIST_ITEMS:
            raise SchedlangError(f"this list has {len(value)} items; schedlang takes at most "
                                 f"{MAX_LIST_ITEMS}", span)
        items = [as_expr(v, span) for v in value]
        params = merge(sites.Site(span), *(i.params for i in items))
        return Expr(ir.List(span, tuple(i.node for i in items)), params, tuple(items), check=False)
    return Expr(literal_node(value, span), {}, check=False)


# -- operators -----------------------------------------------------------------------------


def _pair(a, b, site: sites.Site) -> tuple[Expr, Expr]:
    return as_expr(a, site.operand(0)), as_expr(b, site.operand(1))


def _binop(op: str, a, b, site: sites.Site) -> Expr:
    a, b = _pair(a, b, site)
    return Expr(ir.BinOp(site.span, op, a.node, b.node), merge(site, a.params, b.params), (a, b))


def _compare(op: str, a, b, site: sites.Site) -> Expr:
    a, b = _pair(a, b, site)
    return Expr(ir.Compare(site.span, (a.node, b.node), (op,)), merge(site, a.params, b.params), (a, b))


def boolop(op: str, a, b, site: sites.Site) -> Expr:
    a, b = _pair(a, b, site)
    return Expr(ir.BoolOp(site.span, op, a.node, b.node), merge(site, a.params, b.params), (a, b))


def _seq(a: Expr, b, site: sites.Site) -> Expr:
    jump = isinstance(b, Jump)
    b = b.piece if jump else as_expr(b, site.operand(1))
    # ``a >> b >> c`` is one chain, as in the parser: only the new segment adds a level.
    depth = max(a._depth if isinstance(a.node, ir.Seq) else a._depth + 1, b._depth + 1)
    return Expr(ir.Seq(site.span, a.node, b.node, jump), merge(site, a.params, b.params), (a, b),
                depth=depth)


class Jump:
    """``sb.jump(piece)``: ``piece`` after ``>>`` with its jump declared intended, the
    language's ``a >> jump b`` (``check`` does not warn about it; the values are the same).
    It is not a piece of its own: it means something only right after ``>>``."""

    __slots__ = ("piece", "span")

    def __init__(self, piece: Expr, span: Span):
        self.piece, self.span = piece, span

    def __repr__(self) -> str:
        return f"<schedlang.build jump {unparse.expression(self.piece.node)}>"


def jump(piece) -> Jump:
    """``a >> sb.jump(b)``: ``a >> jump b``, the jump from ``a``'s end to ``b``'s start meant."""
    site = sites.caller()
    return Jump(as_expr(piece, site.argument(0)), site.span)


# -- functions: built-ins, math, presets ---------------------------------------------------


class Function:
    """A built-in of the language (``cosine``, ``sin``, ``torch.StepLR``): call it to build a
    piece; pass it bare where the language takes a name (``warmup(sb.linear, 500)``)."""

    def __init__(self, name: str):
        self.name = name
        self.__name__ = self.__qualname__ = name.rsplit(".", 1)[-1]
        self.__doc__ = doc(name)

    def __call__(self, *args, **kwargs) -> Expr:
        return _call(self.name, args, kwargs, sites.caller())

    @property
    def __signature__(self) -> inspect.Signature:
        return signature_of(self.name)

    def __getattr__(self, attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _preset_attribute(self.name, attr)

    def __dir__(self):
        return sorted({*object.__dir__(self), *child_names(self.name)})

    def __repr__(self) -> str:
        return f"<schedlang.build function {self.name}{signature_of(self.name)}>"


class Shape:
    """A shape that is no function of the language (``sb.megatron_exponential``): pass it bare
    where the language takes a shape, ``sb.cooldown(sb.megatron_exponential, 1000, 0)``; the
    other shapes are the functions of their names (``sb.linear``, ``sb.sqrt``)."""

    def __init__(self, name: str):
        self.name = self.__name__ = name

    def __repr__(self) -> str:
        return f"<schedlang.build shape {self.name}>"


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
        return sorted({*object.__dir__(self), *child_names(self._library)})

    def __repr__(self) -> str:
        return f"<schedlang.build presets {self._library}>"


def _preset_attribute(prefix: str, attr: str) -> Function:
    full = f"{prefix}.{attr}"
    if full in dotted_presets() or attr in child_names(prefix):
        return Function(full)
    raise BuildAttributeError(f"{prefix} has no preset '{attr}'", sites.caller().span,
                              hint=did_you_mean(attr, child_names(prefix)) or
                              f"its presets: {', '.join(child_names(prefix))}")


def _call(name: str, args, kwargs: dict, site: sites.Site) -> Expr:
    builtin = builtin_entry(name)
    # a batch preset, like sb.stages, takes the program's tokens per sample as seq_len=, no argument
    seq_len = kwargs.pop("seq_len", None) if is_batch(name) else None
    plain = isinstance(builtin, stdlib.Builtin) and not builtin.variadic
    names = [a.name for a in builtin.args] if plain else []
    if any(a is None for a in args) and len(args) <= len(names):  # None: "not given", as in Python
        first = next(i for i, a in enumerate(args) if a is None)
        kwargs = {**dict(zip(names[first:], args[first:])), **kwargs}
        args = args[:first]
    kwargs = {k: v for k, v in kwargs.items() if v is not None}
    positional = [as_expr(a, site.argument(i)) for i, a in enumerate(args)]
    keywords = [(k, as_expr(v, site.keyword_value(k))) for k, v in kwargs.items()]
    func = ir.Name(site.of(getattr(site.tree, "func", None)), name)
    node = ir.Call(site.span, func, tuple(p.node for p in positional),
                   tuple(ir.Keyword(site.argument(keyword=k), k, v.node) for k, v in keywords))
    parts = (*positional, *(v for _, v in keywords))
    params = merge(site, *(p.params for p in parts), *_seq_len_params(seq_len, site))
    # a batch schedule is checked where it goes, in sb.program(batch=...)
    return Expr(node, params, parts, check=not is_batch(name))


# -- programs ------------------------------------------------------------------------------


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
        return source_text(statements)


def program(params: dict | None = None, *, batch=None, run=None, **schedules) -> BuiltProgram:
    """Name schedules (``lr=``, ``weight_decay=``, ...) into a ``schedlang.Program``.

    ``params`` binds parameters as ``schedlang.compile(params=)`` does.  ``batch`` is the
    run's batch schedule (a file's ``batch = ...``): a number of samples per step or
    ``sb.stages(...)``; its tokens per sample are ``sb.param("seq_len", int, ...)``, passed
    to ``stages`` or used anywhere in the program.  ``run`` is the run's length (a file's
    ``run = ...``, SPEC §14): a number of steps, a parameter, or ``sb.time(n, "tok")`` /
    ``sb.time(n, "sp")`` on the run's clock.  The result is a ``Program``:
    ``prog["lr"](250)``, ``prog.scheduler_class("GPT")``, ``schedlang.equivalent``.
    """
    site = sites.caller()
    if not schedules:
        raise SchedlangError("program() names no schedule", site.span, hint="e.g. sb.program(lr=...)")
    return _program(schedules, params or {}, site, batch=batch, run=run)


def stages(first, batches, thresholds, seq_len: Param | None = None) -> Expr:
    """``stages(b0, [b1, ...], [th1, ...])``: a batch schedule for ``sb.program(batch=...)``.

    Thresholds are ``sb.time(n, "tok")`` or ``sb.time(n, "sp")``; a token threshold needs the
    tokens per sample, ``seq_len`` (a ``sb.param("seq_len", int, ...)``), passed here.
    """
    site = sites.caller()
    args = [as_expr(first, site.argument(0)), as_expr(list(batches), site.argument(1)),
            as_expr(list(thresholds), site.argument(2))]
    params = merge(site, *(a.params for a in args), *_seq_len_params(seq_len, site))
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
             batch=None, run=None) -> BuiltProgram:
    pieces = {}
    for name, value in schedules.items():
        span = site.argument(keyword=name) if statement_spans else None
        if not IDENTIFIER.match(name) or name in RESERVED or name == "t":
            raise SchedlangError(f"'{name}' cannot name a schedule", span or site.span,
                                 hint="a name is ASCII letters, digits and _, not a word of the language")
        pieces[name] = (as_expr(value, span or site.span), span)
    batches, pieces_params = [], []
    for keyword, value, declaration in (("batch", batch, ir.BatchDecl), ("run", run, ir.RunDecl)):
        if value is not None:  # the run's statements: no name, one each
            piece = as_expr(value, site.argument(keyword=keyword))
            batches.append(declaration(piece.node.span, piece.node))
            pieces_params.append(piece.params)
    merged = merge(site, *pieces_params, *(piece.params for piece, _ in pieces.values()))
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
    return replace(stmt, default=as_expr(values[stmt.name], stmt.span).node)
