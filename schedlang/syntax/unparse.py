"""``ir`` -> ``.sched`` text: the one printer of the syntax tree, whoever built it (``schedlang.build``,
the importers of ``formats/``), so that any tree prints as text that parses back to the same tree.

Each node is printed with the parentheses the grammar needs (``grammar/schedlang.lark``'s
precedence, lowest first: ``>>``, ``for``, ``if``, ``or``, ``and``, ``not``, comparisons, ``+ -``,
``* /``, unary, ``**``); a statement is one line, a module's comments (``ir.Comment``) on lines of
their own or at the end of their statement's.  The layout is ``fmt``'s: callers hand the text to
``format_source``, which also checks that it parses to the same tree.
"""

from __future__ import annotations

import threading

from . import ir

SEQ, FOR, IF, OR, AND, NOT, COMPARE, SUM, PRODUCT, UNARY, POWER, ATOM = range(12)
_BINARY = {"+": SUM, "-": SUM, "*": PRODUCT, "/": PRODUCT}


def expression(node: ir.Node, names: dict[int, str] | None = None) -> str:
    """``node`` as an expression (no outer parentheses); a node in ``names`` (by identity) is
    written as that name (a ``let`` printed before it)."""
    saved = getattr(_PRINTING, "names", {})
    _PRINTING.names = names or {}
    try:
        return _print(node, SEQ)
    finally:
        _PRINTING.names = saved


_PRINTING = threading.local()  # ``names``: the lets of the text being printed (``expression``'s)


def _wrap(shown: str, level: int, need: int) -> str:
    return f"({shown})" if level < need else shown


def _print(node: ir.Node, need: int) -> str:
    names = getattr(_PRINTING, "names", None)
    if names and id(node) in names:
        return names[id(node)]
    shown, level = _shown(node)
    if node.parens:  # as the text it was parsed from wrote it
        return "(" * node.parens + shown + ")" * node.parens
    return _wrap(shown, level, need)


def _shown(node: ir.Node) -> tuple[str, int]:  # noqa: C901 - one case per node type
    if isinstance(node, ir.Number):
        return node.text, ATOM
    if isinstance(node, ir.Duration):
        return node.text, ATOM
    if isinstance(node, ir.String):
        return f'"{node.value}"', ATOM
    if isinstance(node, ir.Bool):
        return ("true" if node.value else "false"), ATOM
    if isinstance(node, ir.Name):
        return node.id, ATOM
    if isinstance(node, ir.List):
        return "[" + ", ".join(_print(i, SEQ) for i in node.items) + "]", ATOM
    if isinstance(node, ir.Call):
        parts = [_print(a, SEQ) for a in node.args]
        parts += [f"{k.name}={_print(k.value, SEQ)}" for k in node.keywords]
        return f"{node.func.id}({', '.join(parts)})", ATOM
    if isinstance(node, ir.BinOp):
        if node.op == "**":  # atom ** unary: right-associative through the unary level
            return f"{_print(node.left, ATOM)} ** {_print(node.right, UNARY)}", POWER
        level = _BINARY[node.op]
        return f"{_print(node.left, level)} {node.op} {_print(node.right, level + 1)}", level
    if isinstance(node, ir.Unary):
        return f"{node.op}{_print(node.operand, UNARY)}", UNARY
    if isinstance(node, ir.Compare):
        parts = [_print(node.operands[0], SUM)]
        for op, operand in zip(node.ops, node.operands[1:]):
            parts.append(f"{op} {_print(operand, SUM)}")
        return " ".join(parts), COMPARE
    if isinstance(node, ir.BoolOp):
        level = OR if node.op == "or" else AND
        return f"{_print(node.left, level)} {node.op} {_print(node.right, level + 1)}", level
    if isinstance(node, ir.Not):
        return f"not {_print(node.operand, NOT)}", NOT
    if isinstance(node, ir.If):
        # `if c then a else b` followed by `for` or `>>` must be parenthesised (the parser
        # refuses a bare one): IF is below FOR's body level, so _print adds them.
        return (f"if {_print(node.cond, SEQ)} then {_print(node.then, SEQ)} "
                f"else {_print(node.other, IF)}"), IF
    if isinstance(node, ir.For):
        return f"{_print(node.body, IF + 1)} for {_print(node.steps, OR)}", FOR
    if isinstance(node, ir.Seq):
        parts = []
        while isinstance(node, ir.Seq):  # a long chain without recursion
            parts.append(("jump " if node.jump else "") + _print(node.then, FOR))
            node = node.first
        parts.append(_print(node, FOR))
        return " >> ".join(reversed(parts)), SEQ
    raise TypeError(f"cannot print {type(node).__name__}")  # pragma: no cover


def statement(node: ir.Node, names: dict[int, str] | None = None) -> str:
    """One statement as a line; ``names`` as ``expression``'s (a ``let`` never names its own value)."""
    if isinstance(node, ir.Param):
        parts = [f"param {node.name}: {node.type}"]
        if node.default is not None:
            parts.append(f" = {expression(node.default, names)}")
        if node.where is not None:
            parts.append(f" where {expression(node.where, names)}")
        return "".join(parts)
    if isinstance(node, ir.Let):
        own = {k: v for k, v in (names or {}).items() if k != id(node.value)}
        return f"let {node.name} = {expression(node.value, own)}"
    if isinstance(node, ir.Def):
        return f"def {node.name}({', '.join(node.params)}) = {expression(node.body, names)}"
    if isinstance(node, ir.ScheduleDecl):
        return f"schedule {node.name} = {expression(node.value, names)}"
    if isinstance(node, ir.BatchDecl):
        return f"batch = {expression(node.value, names)}"
    if isinstance(node, ir.RunDecl):
        return f"run = {expression(node.value, names)}"
    raise TypeError(f"cannot print {type(node).__name__}")  # pragma: no cover


def module(tree: ir.Module) -> str:
    """The module as ``.sched`` text, one statement a line, its comments where ``ir.Comment`` puts
    them; a newline at the end."""
    before: dict[int, list[str]] = {}
    after: dict[int, list[str]] = {}
    for note in tree.comments:
        if not note.text.isprintable():  # a line break of any kind, a control: formats escape them
            raise ValueError(f"a comment is printable text on one line: {note.text!r}")
        (after if note.trailing else before).setdefault(note.before, []).append(comment(note.text))
    lines = []
    for index, stmt in enumerate(tree.statements):
        lines += before.get(index, [])
        lines.append("  ".join([statement(stmt), *after.get(index, [])]))
    lines += before.get(len(tree.statements), [])
    return "\n".join(lines) + "\n"


def comment(text: str) -> str:
    return f"# {text}" if text else "#"
