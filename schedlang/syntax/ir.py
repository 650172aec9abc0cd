"""The syntax tree of a .sched file: small frozen nodes that remember their span.

Sympy cannot carry source positions, and it rewrites expressions as soon as
they are built, so the parser produces this tree first; ``lower`` turns it
into sympy once, reporting errors at these spans.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from ..errors import Span


@dataclass(frozen=True)
class Node:
    span: Span
    #: How many pairs of parentheses the text wrapped this node in: they add no meaning (equal trees
    #: stay equal), but ``unparse`` writes them back, so printed text keeps what its writer wrote.
    parens: int = field(default=0, kw_only=True, compare=False)


def walk(node):
    """Every node in ``node`` (a node or a tuple of them), itself included; iterative, so a
    deep tree cannot exhaust the recursion limit."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, Node):
            yield item
            stack.extend(getattr(item, f) for f in item.__dataclass_fields__ if f != "span")
        elif isinstance(item, tuple):
            stack.extend(item)


# -- expressions ---------------------------------------------------------------------


@dataclass(frozen=True)
class Number(Node):
    value: Fraction  # exact: 0.1 is 1/10
    text: str


@dataclass(frozen=True)
class Duration(Node):
    """A number with a time unit, e.g. ``500ba`` or ``0.3dur``."""

    value: Fraction
    unit: str
    text: str


@dataclass(frozen=True)
class String(Node):
    value: str


@dataclass(frozen=True)
class Bool(Node):
    value: bool


@dataclass(frozen=True)
class Name(Node):
    id: str  # dotted names keep their dots: "torch.StepLR"


@dataclass(frozen=True)
class List(Node):
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Keyword(Node):
    name: str
    value: Node


@dataclass(frozen=True)
class Call(Node):
    func: Name
    args: tuple[Node, ...]
    keywords: tuple[Keyword, ...]


@dataclass(frozen=True)
class BinOp(Node):
    op: str  # + - * / **
    left: Node
    right: Node


@dataclass(frozen=True)
class Unary(Node):
    op: str  # + -
    operand: Node


@dataclass(frozen=True)
class Compare(Node):
    operands: tuple[Node, ...]
    ops: tuple[str, ...]


@dataclass(frozen=True)
class BoolOp(Node):
    op: str  # and / or
    left: Node
    right: Node


@dataclass(frozen=True)
class Not(Node):
    operand: Node


@dataclass(frozen=True)
class If(Node):
    cond: Node
    then: Node
    other: Node


@dataclass(frozen=True)
class For(Node):
    """``body for steps``: the body cut or held to exactly ``steps`` steps."""

    body: Node
    steps: Node


@dataclass(frozen=True)
class Seq(Node):
    """``first >> then``; ``jump``: written ``first >> jump then``, the step from ``first``'s end
    value to ``then``'s start declared intended (``check`` does not warn about it).  The
    values are the same either way."""

    first: Node
    then: Node
    jump: bool = False


# -- statements ----------------------------------------------------------------------


@dataclass(frozen=True)
class Param(Node):
    name: str
    type: str
    type_span: Span
    default: Node | None
    where: Node | None


@dataclass(frozen=True)
class Let(Node):
    name: str
    value: Node


@dataclass(frozen=True)
class Def(Node):
    name: str
    params: tuple[str, ...]
    body: Node


@dataclass(frozen=True)
class ScheduleDecl(Node):
    name: str
    value: Node


@dataclass(frozen=True)
class BatchDecl(Node):
    """``batch = ...``: the samples in each optimizer step (SPEC §12); at most one per file."""

    value: Node


@dataclass(frozen=True)
class RunDecl(Node):
    """``run = N``: the run's length, in steps or on the run's clock (SPEC §14); at most one per file."""

    value: Node


@dataclass(frozen=True)
class Comment:
    """A ``#`` comment kept for ``unparse`` (the parser reads none into the tree; ``fmt`` keeps a
    file's own from its text): ``text`` is what follows ``# ``, one line, written on a line of its
    own before statement ``before`` (``len(statements)``: after the last), or at the end of that
    statement's line when ``trailing``.  Not a ``Node``: ``walk`` and lowering never see it."""

    text: str
    before: int
    trailing: bool = False


@dataclass(frozen=True)
class Module(Node):
    statements: tuple[Node, ...]
    comments: tuple[Comment, ...] = ()  # an imported file's notes (``unparse.module`` writes them)
