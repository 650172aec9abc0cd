"""Every piece of ``schedlang.build`` checked the moment it is made, by the compiler's own
lowering (``lower.lower_piece``), its children already known; a mistake is raised at the
Python line that built it.  Also counted as a piece grows, so a long ``>>`` chain stays
linear work: its segments (``MAX_SEGMENTS``), the clock parameters its lengths in samples
or tokens need, and the parameters a preset's time default needs (``1dur``).  The pieces
(``pieces.Expr``) are read only by their attributes, so this module does not need them."""

from __future__ import annotations

from fractions import Fraction

from ..errors import SchedlangError, Source, Span
from ..library import stdlib
from ..library.clock_calls import Role, of_role
from ..limits import MAX_SEGMENTS, recursion_room
from ..semantics.lower import lower_piece
from ..semantics.lower_expressions import TIME_UNITS, Known
from ..syntax import ir, unparse
from . import site as sites
from .declarations import ORDER, ParamDecl, merge
from .signatures import builtin_entry

#: The calls that put a schedule on the run's clock (``on_samples``, ``on_tokens``).
_ON_CLOCK = frozenset(of_role(Role.ON_CLOCK))
LATER = object()  # a chain's value, lowered when first needed (Expr._known)


def chain_pieces(expr) -> tuple:
    """The pieces a ``>>`` chain joins, down to the first one or to a chain already lowered."""
    pieces = []
    while expr._link is not None and (not pieces or expr._value is LATER):
        before, after = expr._link
        pieces.append(after)
        expr = before
    pieces.append(expr)
    return tuple(pieces[::-1])


def count_segments(node: ir.Node, children: tuple) -> int:
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


def check_node(node: ir.Node, params: dict[str, ParamDecl], children: tuple,
           clocks: frozenset[str]) -> Known | None:
    """Lower the new node (its children are known) with every check of the language."""
    if isinstance(node, ir.Seq) and is_warmup(children[-1]):
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
            shown = unparse.expression(node)
            source = Source("\n" * (span.line - 1) + shown, span.source.filename)
            exc.span = Span(source, span.line, 1, span.line, len(shown) + 1)
        raise exc.with_traceback(None) from None


def clock_params(node: ir.Node, children: tuple) -> frozenset[str]:
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
        elif isinstance(item, ir.Call) and isinstance(item.func, ir.Name) and item.func.id in _ON_CLOCK:
            found.add(TIME_UNITS["sp"][0])  # on_samples(...) needs the run's clock: a stand-in here
            stack.extend(item.args)
        elif isinstance(item, ir.Node):
            stack.extend(getattr(item, f) for f in item.__dataclass_fields__ if f != "span")
        elif isinstance(item, tuple):
            stack.extend(item)
    return frozenset(found)


def time_params(node: ir.Node, params: dict[str, ParamDecl]) -> dict[str, ParamDecl]:
    """``params`` and the parameter each time default of a call needs that it does not have.

    A preset's default such as Composer's ``t_max=1dur`` counts with a parameter of the file
    (``max_duration``); a file declares it, and from Python the call declares it: a required
    ``int`` (bound with ``params=`` / ``.bind()``), which the user's own ``param()`` of that
    name replaces.
    """
    if not isinstance(node, ir.Call):
        return params

    builtin = builtin_entry(node.func.id)
    given = {k.name for k in node.keywords} | {a.name for a in getattr(builtin, "args", ())[:len(node.args)]}
    needed = [TIME_UNITS[a.default.unit][0] for a in getattr(builtin, "args", ())
              if isinstance(a.default, stdlib.TimeDefault) and a.name not in given]
    missing = {n: ParamDecl(ir.Param(node.span, n, "int", node.span, None, None), next(ORDER), implicit=True)
               for n in dict.fromkeys(needed) if n is not None and n not in params}
    return merge(sites.Site(node.span), params, missing) if missing else params


def is_warmup(piece) -> bool:
    return piece._known is not None and isinstance(piece._known.value, stdlib.Warmup)


def is_cooldown(piece) -> bool:
    return piece._known is not None and isinstance(piece._known.value, stdlib.Cooldown)
