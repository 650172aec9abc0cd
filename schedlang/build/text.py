"""What ``to_source()`` and ``to_python()`` need beyond the tree's printer (``syntax/unparse``): the
pieces the user's Python named, kept as ``let`` statements (``lets``), and the same tree written as
``schedlang.build`` code (``python_text``).
"""

from __future__ import annotations

import keyword
from fractions import Fraction

from ..library.clock_calls import Role, of_role
from ..semantics.lower_expressions import TIME_UNITS
from ..syntax import ir
from ..syntax.unparse import expression

#: The batch schedules' calls: each takes the program's ``seq_len`` (``sb.stages(..., seq_len)``).
_BATCH_CALLS = frozenset(of_role(Role.BATCH))
_ATOMS = (ir.Number, ir.Duration, ir.String, ir.Bool, ir.Name, ir.Unary, ir.Keyword)


def lets(tops: list[ir.Node], name_of, taken: set[str]) -> list[tuple[str, ir.Node]]:
    """The pieces under ``tops`` that the user named (``name_of(node)``: the Python variable the
    piece was assigned to), as ``let`` statements in an order that defines each name before
    its use: what ``to_source()`` keeps of the structure it was given.  A name is dropped
    when it names several pieces (``s = s >> x`` in a loop), is ``taken`` (a parameter, a
    schedule, a word or built-in of the language), or names a whole schedule or a literal;
    nothing under ``scale()`` becomes a ``let`` (its lengths mean something else there)."""
    found: dict[str, list[ir.Node]] = {}
    order: list[ir.Node] = []
    seen: set[int] = set()
    stack: list[tuple[ir.Node, bool]] = [(top, False) for top in reversed(tops)]
    while stack:  # post-order, without recursion (a chain may hold 1,000 pieces)
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        for child in reversed(_children(node)):
            stack.append((child, False))
    scaled: set[int] = set()  # under scale(): a let would be lowered outside its time scaling
    pending = [c for n in order if isinstance(n, ir.Call) and n.func.id == "scale" for c in _children(n)]
    while pending:
        node = pending.pop()
        if id(node) not in scaled:
            scaled.add(id(node))
            pending += _children(node)
    skip = {id(top) for top in tops} | scaled
    for node in order:
        name = None if isinstance(node, _ATOMS) or id(node) in skip else name_of(node)
        if name is not None:
            found.setdefault(name, []).append(node)
    keep = {id(nodes[0]): name for name, nodes in found.items() if len(nodes) == 1 and name not in taken}
    return [(keep[id(node)], node) for node in order if id(node) in keep]


def _children(node: ir.Node) -> list[ir.Node]:
    out = []
    for field in node.__dataclass_fields__:
        if field == "span":
            continue
        value = getattr(node, field)
        if isinstance(value, ir.Node):
            out.append(value)
        elif isinstance(value, tuple):
            out += [v for v in value if isinstance(v, ir.Node)]
    return out


# -- the same tree as schedlang.build code ----------------------------------------------------
# Python's precedence, lowest first (``and``/``or``/``not`` are spelt ``& | ~``, which bind
# tighter than comparisons, so every operand of them that is not an atom is parenthesised).
_P_COMPARE, _P_OR, _P_AND, _P_SHIFT, _P_SUM, _P_PRODUCT, _P_UNARY, _P_POWER, _P_ATOM = range(9)
_P_BINARY = {"+": _P_SUM, "-": _P_SUM, "*": _P_PRODUCT, "/": _P_PRODUCT}
_PY_KEYWORDS = frozenset(keyword.kwlist) | {"sb", "Fraction"}
_DEFS = " defs"  # the key under which ``names`` lists the program's defs (not an identifier)
_CLOCK = " clock"  # set when the program declares its batch: ``sp``/``tok`` are on its clock


def python_text(module: ir.Module) -> str:
    """A parsed ``.sched`` program as ``schedlang.build`` code that builds the same program
    (``from schedlang import build as sb`` assumed): the docs' second spelling of a recipe."""
    names: dict[str, str] = {}
    lines, schedules, batch = [], [], []
    if any(isinstance(stmt, ir.BatchDecl) for stmt in module.statements):
        names[_CLOCK] = True
    for stmt in module.statements:
        if isinstance(stmt, (ir.BatchDecl, ir.RunDecl)):  # sb.program(batch=..., run=...)
            keyword = "batch" if isinstance(stmt, ir.BatchDecl) else "run"
            batch.append(f"{keyword}={_py(stmt.value, names, _P_COMPARE)}")
            continue
        name = names.setdefault(stmt.name, _py_name(stmt.name))
        if isinstance(stmt, ir.Param):
            args = [f'"{stmt.name}"', stmt.type if stmt.type in ("int", "float") else f'"{stmt.type}"']
            if stmt.default is not None:
                args.append(_py(stmt.default, names, _P_COMPARE))
            if stmt.where is not None:
                clause = expression(stmt.where)
                args.append(f"where='{clause}'" if '"' in clause else f'where="{clause}"')
            lines.append(f"{name} = sb.param({', '.join(args)})")
        elif isinstance(stmt, ir.Def):
            names[_DEFS] = (*names.get(_DEFS, ()), stmt.name)
            inner = {**names, **{p: _py_name(p) for p in stmt.params}}
            params = ", ".join(inner[p] for p in stmt.params)
            lines.append(f"def {name}({params}):\n    return {_py(stmt.body, inner, _P_COMPARE)}\n")
        else:
            lines.append(f"{name} = {_py(stmt.value, names, _P_COMPARE)}")
            if isinstance(stmt, ir.ScheduleDecl):
                schedules.append((stmt.name, name))
    bare = len(module.statements) == 1 and module.statements[0].span == module.statements[0].value.span
    if not bare:
        lines.append("prog = sb.program(" + ", ".join([*(f"{n}={v}" for n, v in schedules), *batch]) + ")")
    return "\n".join(lines)


def _py_name(name: str) -> str:
    return f"{name}_" if name in _PY_KEYWORDS else name


def _py_wrap(shown: str, level: int, need: int) -> str:
    return f"({shown})" if level < need else shown


def _py(node: ir.Node, names: dict, need: int) -> str:
    shown, level = _py_shown(node, names)
    return _py_wrap(shown, level, need)


def _py_number(node: ir.Number) -> str:
    shown = node.text.replace("_", "")
    if "." not in shown and "e" not in shown.lower():
        return node.text
    # A decimal is the number its digits say in schedlang and in schedlang.build (which reads
    # a float by its shortest repr), unless float64 cannot hold those digits.
    return node.text if Fraction(repr(float(shown))) == node.value else f'Fraction("{shown}")'


def _py_shown(node: ir.Node, names: dict) -> tuple[str, int]:  # noqa: C901 - one case per node
    if isinstance(node, ir.Number):
        return _py_number(node), _P_ATOM
    if isinstance(node, ir.Duration):
        per = None if names.get(_CLOCK) and node.unit in ("sp", "tok") else TIME_UNITS[node.unit][0]
        amount = node.text[: -len(node.unit)]
        args = [amount, f'"{node.unit}"'] + ([names.get(per, per)] if per else [])
        return f"sb.time({', '.join(args)})", _P_ATOM
    if isinstance(node, ir.String):
        return f'"{node.value}"', _P_ATOM
    if isinstance(node, ir.Bool):
        return ("True" if node.value else "False"), _P_ATOM
    if isinstance(node, ir.Name):
        return (names[node.id] if node.id in names else f"sb.{node.id}"), _P_ATOM
    if isinstance(node, ir.List):
        return "[" + ", ".join(_py(i, names, _P_COMPARE) for i in node.items) + "]", _P_ATOM
    if isinstance(node, ir.Call):
        # a call names a def or a built-in, never a param or let (`param warmup` leaves warmup())
        callee = names[node.func.id] if node.func.id in names.get(_DEFS, ()) else f"sb.{node.func.id}"
        parts = [_py(a, names, _P_COMPARE) for a in node.args]
        parts += [f"{k.name}={_py(k.value, names, _P_COMPARE)}" if k.name not in _PY_KEYWORDS
                  else f'**{{"{k.name}": {_py(k.value, names, _P_COMPARE)}}}' for k in node.keywords]
        if node.func.id == "stages" and "seq_len" in names:  # its token thresholds count with it
            parts.append(names["seq_len"])
        elif node.func.id in _BATCH_CALLS and "seq_len" in names:  # a preset's: the same, by keyword
            parts.append(f"seq_len={names['seq_len']}")
        return f"{callee}({', '.join(parts)})", _P_ATOM
    if isinstance(node, ir.BinOp):
        if node.op == "**":
            return f"{_py(node.left, names, _P_ATOM)} ** {_py(node.right, names, _P_UNARY)}", _P_POWER
        level = _P_BINARY[node.op]
        return f"{_py(node.left, names, level)} {node.op} {_py(node.right, names, level + 1)}", level
    if isinstance(node, ir.Unary):
        return f"{node.op}{_py(node.operand, names, _P_UNARY)}", _P_UNARY
    if isinstance(node, ir.Compare):
        if len(node.ops) != 1:  # Python would ask for a truth value between the comparisons
            pairs = [ir.Compare(node.span, (a, b), (op,))
                     for op, a, b in zip(node.ops, node.operands, node.operands[1:])]
            return " & ".join(_py(p, names, _P_ATOM) for p in pairs), _P_AND
        a, b = node.operands
        return f"{_py(a, names, _P_OR)} {node.ops[0]} {_py(b, names, _P_OR)}", _P_COMPARE
    if isinstance(node, ir.BoolOp):
        op, level = ("|", _P_OR) if node.op == "or" else ("&", _P_AND)
        return (f"{_py(node.left, names, max(level, _P_ATOM) if _is_compare(node.left) else level)} {op} "
                f"{_py(node.right, names, _P_ATOM if _is_compare(node.right) else level + 1)}"), level
    if isinstance(node, ir.Not):
        return f"~{_py(node.operand, names, _P_ATOM)}", _P_UNARY
    if isinstance(node, ir.If):
        parts = ", ".join(_py(p, names, _P_COMPARE) for p in (node.cond, node.then, node.other))
        return f"sb.if_({parts})", _P_ATOM
    if isinstance(node, ir.For):
        return f"{_py(node.body, names, _P_ATOM)}.for_({_py(node.steps, names, _P_COMPARE)})", _P_ATOM
    if isinstance(node, ir.Seq):
        parts = []
        while isinstance(node, ir.Seq):
            then = _py(node.then, names, _P_COMPARE if node.jump else _P_SUM)
            parts.append(f"sb.jump({then})" if node.jump else then)
            node = node.first
        parts.append(_py(node, names, _P_SUM))
        return " >> ".join(reversed(parts)), _P_SHIFT
    raise TypeError(f"cannot write {type(node).__name__}")  # pragma: no cover


def _is_compare(node: ir.Node) -> bool:
    return isinstance(node, ir.Compare)
