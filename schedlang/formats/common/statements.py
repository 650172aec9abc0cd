"""The statements an importer writes, as ``ir`` nodes: what a format's ``source`` returns
(``module``), printed by ``syntax/unparse`` and laid out by ``fmt`` (``format.checked``).

A format builds its file from these functions, never from a statement written as text: each
takes the configuration's span of what it states (the key, flag or call it was read from), so the
tree can say where each statement came from.  Expressions are built the same way: ``number`` is
a value at the span it was read from, ``call`` a call of such nodes, so the reader lowers the tree
as it is and an error lands on the configuration by construction (``format.lowered``; sambaflow,
``string``/``boolean`` for checked values,
``formula`` for a formula of the format's own whose values are such nodes, ``computed`` for a
value a format computes with sympy from the configuration's numbers and parameters, ``duration``
for a time with its unit).  Every format builds its expressions so; ``expression`` parses only a
format's own text (a formula's placeholders, a ``where`` condition, a script symbol's
parameters), never a value of the configuration.
Comments are the file's notes: a string item of ``module`` is a line of its own (written
``# ...``), ``noted`` puts one at the end of a statement's line.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from fractions import Fraction

from sympy import Expr, Integer, Mul, Pow, Rational, floor

from ...codegen.sched import sched_text
from ...errors import SchedlangError, Source, Span
from ...syntax import ir
from ...syntax.parser import parse
from .numbers import exact

#: The file name of the parts a format makes up itself (an error there names the configuration,
#: ``source_text.imported_error``).
GENERATED = "<import>"
#: The span of what no configuration span is given for.
_NOWHERE = Span(Source("", GENERATED), 1, 1, 1, 1)


def expression(value: ir.Node | str, span: Span | None = None) -> ir.Node:
    """``value`` as a node: a node as it is, ``.sched`` text parsed (its top node at ``span``)."""
    if isinstance(value, ir.Node):
        return value if span is None else replace(value, span=span)
    tree = parse(value, GENERATED)
    stmt = tree.statements[0] if len(tree.statements) == 1 else None
    if not isinstance(stmt, ir.ScheduleDecl) or stmt.span != stmt.value.span:  # pragma: no cover
        raise SchedlangError(f"not one expression: {value!r}")  # the formats write only expressions
    return stmt.value if span is None else replace(stmt.value, span=span)


def number(value, span: Span | None) -> ir.Node:
    """An exact number (a sympy or Python rational) as the node ``.sched`` reads it back as
    (``0.001``, ``-2``, ``1 / 3``), every part of it at ``span``: the configuration's value it was
    read from, so an error the lowering raises at it points there (no search for it later); one
    the reader refuses (over its 400 digits) is refused there too."""
    return _literal(sched_text(_exact(value, span)), span)


def duration(value, unit: str, span: Span | None) -> ir.Node:
    """An exact amount of a time unit (``3200tok``, ``100ba``, ``0.125dur``, ``3ep``) at ``span``:
    the configuration's value it was read from; a whole number is its ``ir.Duration``, another
    amount the node ``.sched`` reads its text back as, as ``number``."""
    amount = _exact(value, span)
    if amount.is_Integer and amount >= 0:
        return ir.Duration(span or _NOWHERE, Fraction(int(amount)), unit, f"{int(amount)}{unit}")
    return _literal(sched_text(amount) + unit, span)


def _exact(value, span: Span | None):
    if isinstance(value, Fraction):
        return Rational(value.numerator, value.denominator)
    found = value if getattr(value, "is_Rational", False) else exact(value)
    if found is None:  # pragma: no cover - the formats read their numbers with ``exact`` first
        raise SchedlangError(f"not an exact number: {value!r}", span)
    return found


def _literal(text: str, span: Span | None) -> ir.Node:
    """``sched_text``'s literal parsed, at ``span``; one the reader refuses there."""
    try:
        return at(expression(text), span)
    except SchedlangError as exc:
        raise SchedlangError(exc.message, span or exc.span, hint=exc.hint) from None


def call(name: str, *args: ir.Node, span: Span | None = None, **keywords: ir.Node) -> ir.Call:
    """``name(args..., key=value, ...)`` as a node, keywords in the order given; each keyword at
    its value's span (the configuration's key it came from)."""
    where = span or _NOWHERE
    return ir.Call(where, ir.Name(where, name), tuple(args),
                   tuple(ir.Keyword(v.span, k, v) for k, v in keywords.items()))


def string(value: str, span: Span | None) -> ir.String:
    """A string already checked against its closed set of choices (``source_text.option_node``)."""
    return ir.String(span or _NOWHERE, value)


def boolean(value: bool, span: Span | None) -> ir.Bool:
    return ir.Bool(span or _NOWHERE, value)


def at(node: ir.Node, span: Span | None) -> ir.Node:
    """``node`` with every part that has no configuration span (parsed from text a format wrote)
    at ``span``; parts that carry one keep it."""
    if span is None:
        return node
    changes = {f.name: _at_value(getattr(node, f.name), span) for f in fields(node)
               if f.name not in ("span", "parens")}
    own = span if node.span.source.filename == GENERATED else node.span
    return replace(node, span=own, **changes)


def formula(text: str, span: Span | None, **values: ir.Node) -> ir.Node:
    """The format's own formula ``text`` as a node, each configuration value in it a name of
    ``values`` (``lr * (1 - t / N)`` with ``lr=``, ``N=``): each such name the node given (at its
    own span, ``number``'s), the rest at ``span``.  No value of the configuration is in the text
    that is parsed, so the formula's layout is the format's and every number keeps its span."""
    parsed = expression(text)
    missing = {n for n in _names(parsed) if n.isupper()} - set(values)
    if missing:  # pragma: no cover - the formats give every value their formulas name
        raise SchedlangError(f"formula {text!r} is given no {', '.join(sorted(missing))}")
    return at(_filled(parsed, values), span)


def computed(value, span: Span | None) -> ir.Node:
    """A value a format computes from the configuration's numbers and parameters (a sympy number,
    a parameter, a product of them, its ``floor``: Megatron's length divided by the batch, a warmup
    fraction of the decay) as a node, every part at ``span`` (the value it is computed from), laid
    out as ``codegen.sched`` prints it: factors, then ``/`` and the divisors."""
    value, span = (Integer(value) if isinstance(value, int) else value), span or _NOWHERE
    if value.is_Rational:
        return number(value, span)
    if value.is_Symbol:
        return ir.Name(span, value.name)
    if isinstance(value, floor):
        return call("floor", computed(value.args[0], span), span=span)
    if value.is_Pow and value.exp.is_Integer and value.exp > 0:
        return ir.BinOp(span, "**", _atom(computed(value.base, span)), _atom(number(value.exp, span)))
    if value.is_Mul or value.is_Pow:
        return _product(value, span)
    raise SchedlangError(f"no node for the value {value}", span)  # pragma: no cover - products only


def _product(value: Expr, span: Span | None) -> ir.Node:
    """A product as ``codegen.sched._product`` writes it: ``-(...)`` for a negative one, the
    factors of the numerator, then ``/`` one divisor or ``(`` several ``)``."""
    if value.as_coeff_Mul()[0] < 0:
        return ir.Unary(span, "-", _atom(computed(-value, span)))
    top, bottom = [], []
    for factor in Mul.make_args(value):
        if factor.is_Pow and factor.exp.is_number and factor.exp < 0:
            bottom.append(Pow(factor.base, -factor.exp))
        elif factor.is_Rational and factor.q != 1:
            top += [Integer(factor.p)] if factor.p != 1 else []
            bottom.append(Integer(factor.q))
        else:
            top.append(factor)
    numerator = _times(top or [Integer(1)], span)
    if not bottom:
        return numerator
    divisor = _times(bottom, span)
    return ir.BinOp(span, "/", numerator, replace(divisor, parens=1) if len(bottom) > 1 else divisor)


def _times(factors: list, span: Span | None) -> ir.Node:
    """``a * b * ...``, each factor an operand (parenthesised unless a name, number or call)."""
    nodes = [_atom(computed(f, span)) for f in factors]
    out = nodes[0]
    for node in nodes[1:]:
        out = ir.BinOp(span, "*", out, node)
    return out


def _atom(node: ir.Node) -> ir.Node:
    return replace(node, parens=1) if isinstance(node, (ir.BinOp, ir.Unary)) and not node.parens else node


def _names(node: ir.Node):
    if isinstance(node, ir.Name):
        yield node.id
    for f in fields(node):
        value = getattr(node, f.name)
        for item in value if isinstance(value, tuple) else (value,):
            if isinstance(item, ir.Node):
                yield from _names(item)


def _filled(value, values: dict):
    if isinstance(value, ir.Name) and value.id in values:
        return values[value.id] if not value.parens else replace(values[value.id], parens=value.parens)
    if isinstance(value, ir.Node):
        return replace(value, **{f.name: _filled(getattr(value, f.name), values) for f in fields(value)
                                 if f.name not in ("span", "parens")})
    if isinstance(value, tuple):
        return tuple(_filled(v, values) for v in value)
    return value


def _at_value(value, span: Span):
    if isinstance(value, ir.Node):
        return at(value, span)
    if isinstance(value, tuple):
        return tuple(_at_value(v, span) for v in value)
    return value


def schedule_stmt(name: str, value: ir.Node | str, span: Span | None = None) -> ir.ScheduleDecl:
    return ir.ScheduleDecl(span or _NOWHERE, name, expression(value))


def param_stmt(name: str, type_: str, default: ir.Node | str | None = None,
               where: ir.Node | str | None = None, span: Span | None = None) -> ir.Param:
    """``param NAME: TYPE [= DEFAULT] [where CONDITION]``."""
    at = span or _NOWHERE
    return ir.Param(at, name, type_, at, None if default is None else expression(default),
                    None if where is None else expression(where))


def let_stmt(name: str, value: ir.Node | str, span: Span | None = None) -> ir.Let:
    return ir.Let(span or _NOWHERE, name, expression(value))


def def_stmt(name: str, params: tuple[str, ...], body: ir.Node | str, span: Span | None = None) -> ir.Def:
    """``def NAME(PARAMS) = BODY``."""
    return ir.Def(span or _NOWHERE, name, tuple(params), expression(body))


def run_stmt(value: ir.Node | str, span: Span | None = None) -> ir.RunDecl:
    """``run = N``: the run's length (SPEC §14)."""
    return ir.RunDecl(span or _NOWHERE, expression(value))


def batch_stmt(value: ir.Node | str, span: Span | None = None) -> ir.BatchDecl:
    """``batch = ...``: the run's batch schedule (SPEC §12)."""
    return ir.BatchDecl(span or _NOWHERE, expression(value))


@dataclass(frozen=True)
class Noted:
    """A statement with a comment at the end of its line (``module``'s item)."""

    statement: ir.Node
    comment: str


def noted(statement: ir.Node, comment: str | None) -> ir.Node | Noted:
    """``statement`` with ``comment`` (its text after ``# ``) at the end of its line; None: none."""
    return statement if comment is None else Noted(statement, comment)


def module(*items) -> ir.Module:
    """The file of ``items`` in order: statements, ``noted`` statements, comment lines (strings
    written ``# ...``, as ``source_text.header`` makes them), or lists of these."""
    statements: list[ir.Node] = []
    comments: list[ir.Comment] = []
    pending = list(reversed(items))
    while pending:
        item = pending.pop()
        if isinstance(item, (list, tuple)):
            pending.extend(reversed(item))
        elif isinstance(item, str):
            comments.append(ir.Comment(_comment_text(item), len(statements)))
        elif isinstance(item, Noted):
            comments.append(ir.Comment(item.comment, len(statements), trailing=True))
            statements.append(item.statement)
        else:
            statements.append(item)
    return ir.Module(statements[0].span if statements else _NOWHERE, tuple(statements), tuple(comments))


def _comment_text(line: str) -> str:
    if line == "#":
        return ""
    if not line.startswith("# "):  # pragma: no cover - the formats write only these
        raise ValueError(f"a comment line is written '# ...': {line!r}")
    return line[2:]
