"""``schedlang fmt``: one canonical layout for ``.sched`` files, comments kept.

The formatter works on lark's parse tree of the very grammar the compiler uses
(kept tokens carry their positions), never on the text, so it cannot split or
glue tokens.  It only changes whitespace and line breaks, and the optional
trailing comma of a broken list or call: the token sequence of the output is
the input's, so the output parses to the same syntax tree.  ``format_source``
checks exactly that before it returns (a formatter bug is an error, never a
silent change of meaning).

The layout (also in ``docs/language.md``, "Canonical layout"):

* one statement per line; blank lines between statements are kept, several
  in a row become one; none at the start, one newline at the end;
* one space around binary operators (``+ - * / ** >>``, comparisons, ``and``,
  ``or``), after commas and keywords, none inside brackets, none around ``=``
  of a keyword argument (``power=2``), none after unary minus;
* a statement longer than ``WIDTH`` columns breaks from the outside in: a
  ``>>`` chain puts each ``>> segment`` on its own line, indented 4; a call or
  list that still does not fit puts one argument per line, indented 4 more,
  with a trailing comma; ``if c then a else b`` puts ``then`` and ``else`` on
  their own lines;
* parentheses stay as written (they can only clarify);
* comments stay with the token they were written next to: a comment at the
  end of a line stays at the end of that token's line, and trailing comments
  on consecutive lines are aligned one column apart from the longest code
  (as gofmt does); a comment on its own line stays on its own line before the
  token that followed it, at that token's indentation.  A comment inside an
  expression forces the expression's enclosing groups to break (a line
  comment ends its line).

A leading UTF-8 byte order mark is kept; line endings become ``\\n``.
"""

from __future__ import annotations

import bisect
import functools
import threading
from dataclasses import dataclass, fields

import lark
from lark import Token, Tree

from ..errors import SchedlangError
from ..limits import recursion_room
from . import ir
from .parser import BOM, lark_text, make_parser, parse

WIDTH = 100
INDENT = 4
_MARK = "\0"  # separates code from a trailing comment until comments are aligned


# -- documents ---------------------------------------------------------------------------
# A tiny Wadler-style pretty-printing algebra: text, soft line breaks that are a space
# (or nothing) when their group fits on the line, groups, indentation, forced breaks.


@dataclass(frozen=True)
class _Line:
    flat: str  # what the line is when its group is flat (" " or "")


@dataclass(frozen=True)
class _Hard:
    """An unconditional line break (after a comment, around an own-line comment)."""


@dataclass(frozen=True)
class _Comment:
    text: str  # a trailing comment: ends the line it is on


@dataclass(frozen=True)
class _Group:
    parts: tuple
    hard: bool  # contains a forced break: never flat


@dataclass(frozen=True)
class _Nest:
    parts: tuple
    hard: bool


@dataclass(frozen=True)
class _IfBreak:
    broken: object
    flat: object
    hard: bool


LINE, SOFT, HARD = _Line(" "), _Line(""), _Hard()


def _hard(doc) -> bool:
    if isinstance(doc, (str, _Line)):
        return False
    if isinstance(doc, (_Hard, _Comment)):
        return True
    if isinstance(doc, (list, tuple)):
        return any(_hard(d) for d in doc)
    return doc.hard


def group(*parts) -> _Group:
    return _Group(parts, _hard(parts))


def nest(*parts) -> _Nest:
    return _Nest(parts, _hard(parts))


def if_break(broken, flat="") -> _IfBreak:
    return _IfBreak(broken, flat, _hard(broken))


_FLAT, _BREAK = 0, 1


class _Renderer:
    """Lays a document out in ``WIDTH`` columns (iteratively: no recursion on deep input)."""

    def __init__(self, width: int = WIDTH):
        self.width = width
        self.lines = [""]

    def newline(self, indent: int) -> None:
        if self.lines[-1].strip():
            self.lines.append(" " * indent)
        else:  # never an empty line inside a statement
            self.lines[-1] = " " * indent

    def render(self, doc, indent: int = 0) -> None:
        stack = [(indent, _BREAK, doc)]
        while stack:
            ind, mode, d = stack.pop()
            if isinstance(d, (list, tuple, _Nest, _Group, _IfBreak)):
                stack.extend(self._inside(ind, mode, d, stack))
            else:
                self._emit(ind, mode, d)

    def _inside(self, ind: int, mode: int, d, rest: list) -> list:
        """What a container document (a sequence, nest, group or if-break) puts on the stack,
        in push order: where each layout decision (indent, flat or broken) is made; ``rest`` is
        the stack below it, which decides whether a group fits."""
        if isinstance(d, (list, tuple)):
            return [(ind, mode, part) for part in reversed(d)]
        if isinstance(d, _Nest):
            return [(ind + INDENT, mode, d.parts)]
        if isinstance(d, _Group):
            flat = mode == _FLAT or (not d.hard and self._fits(d.parts, rest))
            return [(ind, _FLAT if flat else _BREAK, d.parts)]
        return [(ind, mode, d.broken if mode == _BREAK else d.flat)]  # an _IfBreak

    def _emit(self, ind: int, mode: int, d) -> None:
        """Writes a leaf document (text, a line break, a trailing comment) to the lines."""
        if isinstance(d, str):
            self.lines[-1] += d
        elif isinstance(d, _Line):
            if mode == _FLAT:
                self.lines[-1] += d.flat
            else:
                self.newline(ind)
        elif isinstance(d, _Hard):
            self.newline(ind)
        elif isinstance(d, _Comment):
            self.lines[-1] = self.lines[-1].rstrip() + _MARK + d.text
            self.newline(ind)
        else:  # pragma: no cover - every document kind is handled above
            raise TypeError(d)

    def _fits(self, parts, rest) -> bool:
        """Whether ``parts`` flat, and what follows up to the next break, fit the line."""
        room = self.width - len(self.lines[-1])
        todo = [(_FLAT, parts)]
        pending = len(rest)
        while room >= 0:
            if not todo:
                if not pending:
                    return True
                pending -= 1
                _, mode, d = rest[pending]
                todo.append((mode, d))
            mode, d = todo.pop()
            width = _flat_width(mode, d, todo)
            if width is None:
                return True
            room -= width
        return False


def _flat_width(mode: int, d, todo: list) -> int | None:
    """The columns document ``d`` takes on the line while ``_fits`` measures it (0 for a
    container, whose parts it pushes onto ``todo``), or None where a break ends the line there."""
    if isinstance(d, str):
        return len(d)
    if isinstance(d, (list, tuple)):
        todo.extend((mode, part) for part in reversed(d))
    elif isinstance(d, _Line):
        return None if mode == _BREAK else len(d.flat)
    elif isinstance(d, (_Hard, _Comment)):
        return None
    elif isinstance(d, (_Nest, _Group)):
        todo.append((mode, d.parts))
    elif isinstance(d, _IfBreak):
        todo.append((mode, d.broken if mode == _BREAK else d.flat))
    return 0


# -- comments ----------------------------------------------------------------------------


class _Comments:
    """Which comment belongs to which token: trailing (same line, after) or leading (before)."""

    def __init__(self, tokens: list[Token], comments: list[Token]):
        self.trailing: dict[int, Token] = {}
        self.leading: dict[int, list[tuple[Token, bool]]] = {}
        self.footer: list[tuple[Token, bool]] = []
        self.blank_before: dict[int, bool] = {}
        ends = [tok.end_pos for tok in tokens]
        items = sorted([(tok.start_pos, 0, tok) for tok in tokens] +
                       [(c.start_pos, 1, c) for c in comments], key=lambda item: item[0])
        last_line = None
        for _, is_comment, item in items:
            blank = last_line is not None and item.line - last_line > 1
            last_line = item.end_line
            if not is_comment:
                self.blank_before[id(item)] = blank
                continue
            index = bisect.bisect_right(ends, item.start_pos) - 1
            before = tokens[index] if index >= 0 else None
            after = tokens[index + 1] if index + 1 < len(tokens) else None
            if before is not None and before.end_line == item.line:
                self.trailing[id(before)] = item
            elif after is not None:
                self.leading.setdefault(id(after), []).append((item, blank))
            else:
                self.footer.append((item, blank))


def _comment_text(tok: Token) -> str:
    return str(tok).rstrip()


# -- the tree to a document --------------------------------------------------------------


class _Printer:
    def __init__(self, comments: _Comments):
        self.comments = comments
        self.skip_leading: set[int] = set()  # printed by the statement loop instead
        self.skip_trailing: set[int] = set()

    def tok(self, token: Token) -> list:
        parts: list = []
        key = id(token)
        if key not in self.skip_leading:
            for comment, _ in self.comments.leading.get(key, ()):
                parts += [HARD, _comment_text(comment), HARD]
        parts.append(str(token))
        if key not in self.skip_trailing and key in self.comments.trailing:
            parts.append(_Comment(_comment_text(self.comments.trailing[key])))
        return parts

    def expr(self, node) -> object:
        """A node's document; comments before its first token and after its last go outside
        its groups, so they break the enclosing lines but not the node itself."""
        if isinstance(node, Token):
            return self.tok(node)
        method = getattr(self, "_" + node.data.rstrip("_"), None)
        if method is None:  # pragma: no cover - every rule of the grammar has a method
            raise AssertionError(f"fmt: no layout for rule {node.data!r}")
        first, last = _edge(node, 0), _edge(node, -1)
        before, after = [], []
        if id(first) not in self.skip_leading:
            for comment, _ in self.comments.leading.get(id(first), ()):
                before += [HARD, _comment_text(comment), HARD]
            self.skip_leading.add(id(first))
        if id(last) not in self.skip_trailing and id(last) in self.comments.trailing:
            after.append(_Comment(_comment_text(self.comments.trailing[id(last)])))
            self.skip_trailing.add(id(last))
        return [before, method([c for c in node.children if c is not None]), after]

    # atoms
    def _number(self, children):
        return self.tok(children[0])

    _duration = _string = _true = _false = _number

    def _name(self, children):
        return [self.tok(c) for c in children]

    def _paren(self, children):
        lpar, inner, rpar = children
        if isinstance(inner, Tree) and inner.data == "seq":
            return group(self.tok(lpar), nest(SOFT, self._chain(inner)), SOFT, self.tok(rpar))
        return group(self.tok(lpar), nest(SOFT, self.expr(inner)), SOFT, self.tok(rpar))

    def _items(self, opening, items, closing):
        """``(a, b)`` / ``[a, b]``: flat, or one item per line with a trailing comma."""
        body: list = []
        values = [c for c in items if not (isinstance(c, Token) and c.type == "COMMA")]
        commas = [c for c in items if isinstance(c, Token) and c.type == "COMMA"]
        for i, value in enumerate(values):
            body.append(self.expr(value))
            last = i == len(values) - 1
            comma = commas[i] if i < len(commas) else None
            if not last:
                body += [self.tok(comma), LINE]
            elif comma is not None:  # the written trailing comma (it may carry a comment)
                body.append(if_break(self.tok(comma)))
            else:
                body.append(if_break(","))
        if not values:
            return [self.tok(opening), self.tok(closing)]
        return group(self.tok(opening), nest(SOFT, body), SOFT, self.tok(closing))

    def _list(self, children):
        return self._items(children[0], children[1:-1], children[-1])

    def _call(self, children):
        func, lpar, *rest = children
        rpar = rest[-1]
        items = rest[0].children if len(rest) == 2 else []
        return [self.expr(func), self._items(lpar, [c for c in items if c is not None], rpar)]

    def _keyword(self, children):
        name, equal, value = children
        return [self.tok(name), self.tok(equal), self.expr(value)]

    # operators
    def _binop(self, children):
        parts: list = [self.expr(children[0])]
        for op, operand in zip(children[1::2], children[2::2]):
            parts += [" ", self.tok(op), " ", self.expr(operand)]
        return parts

    _compare = _or = _and = _hold_for = _binop

    def _unary(self, children):
        op, operand = children
        return [self.tok(op), self.expr(operand)]

    def _not(self, children):
        op, operand = children
        return [self.tok(op), " ", self.expr(operand)]

    def _if_expr(self, children):
        kw_if, cond, kw_then, then, kw_else, other = children
        return group(self.tok(kw_if), " ", self.expr(cond),
                     nest(LINE, self.tok(kw_then), " ", self.expr(then),
                          LINE, self.tok(kw_else), " ", self.expr(other)))

    def _chain(self, node) -> list:
        """The segments of ``a >> b >> c`` (a left-nested tree, walked without recursion)."""
        ops, segments = [], []
        while isinstance(node, Tree) and node.data == "seq":
            left, *op, right = node.children  # `>>`, or `>>` and `jump`
            ops.append(op)
            segments.append(right)
            node = left
        segments.append(node)
        segments.reverse()
        ops.reverse()
        parts: list = [self.expr(segments[0])]
        for op, segment in zip(ops, segments[1:]):
            parts.append(LINE)
            for token in op:
                parts += [self.tok(token), " "]
            parts.append(self.expr(segment))
        return parts

    def _seq(self, children):
        parts = self._chain(Tree("seq", children))
        return group(parts[0], nest(parts[1:]))

    # statements
    def statement(self, node: Tree) -> list:
        children = [c for c in node.children if c is not None]
        kind = node.data
        if kind in ("let", "schedule"):
            kw, name, equal, value = children
            return [self.tok(kw), " ", self.tok(name), " ", self.tok(equal), " ", self.expr(value)]
        if kind in ("batch", "run"):
            kw, equal, value = children
            return [self.tok(kw), " ", self.tok(equal), " ", self.expr(value)]
        if kind == "param":
            kw, name, colon, type_, *rest = children
            parts: list = [self.tok(kw), " ", self.tok(name), self.tok(colon), " ", self.tok(type_)]
            for keyword, value in zip(rest[0::2], rest[1::2]):
                parts += [" ", self.tok(keyword), " ", self.expr(value)]
            return parts
        if kind == "def":
            kw, name, lpar, *rest = children
            rpar_index = next(i for i, c in enumerate(rest) if isinstance(c, Token) and c.type == "RPAR")
            params, (rpar, equal, body) = rest[:rpar_index], rest[rpar_index:]
            inner: list = []
            for item in params:
                inner.append(self.tok(item))
                if item.type == "COMMA":
                    inner.append(" ")
            return [self.tok(kw), " ", self.tok(name), self.tok(lpar), inner, self.tok(rpar), " ",
                    self.tok(equal), " ", self.expr(body)]
        return [self.expr(node)]  # the expression of a bare program


def _edge(node, index: int) -> Token:
    """The first (``index=0``) or last (``-1``) token of a subtree."""
    while isinstance(node, Tree):
        node = [c for c in node.children if c is not None][index]
    return node


def _tokens(tree: Tree) -> list[Token]:
    """Every token of the tree in source order (iteratively)."""
    found, stack = [], [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, Token):
            found.append(node)
        elif isinstance(node, Tree):
            stack.extend(reversed(node.children))
    return found


# -- the whole file ----------------------------------------------------------------------


def format_source(text: str | bytes, filename: str = "<string>") -> str:
    """The canonical layout of a ``.sched`` file; a ``SchedlangError`` if it does not parse."""
    if isinstance(text, bytes):
        parse(text, filename)  # the compiler's own message for bytes that are not UTF-8
        text = text.decode("utf-8")
    bom = BOM if text.startswith(BOM) else ""
    text = text.removeprefix(BOM)
    with recursion_room():
        before = parse(text, filename)  # every diagnostic (syntax, limits) as the compiler gives it
        tree, comments = _tree(text)
        result = _layout(tree, comments)
        after = parse(result, filename)
    if _shape(before) != _shape(after):  # pragma: no cover - a formatter bug, never user error
        raise SchedlangError("schedlang fmt would change the meaning of this file (a bug in "
                             "schedlang: please report it with the file)")
    return bom + result


def _layout(tree: Tree, comment_tokens: list[Token]) -> str:
    tokens = _tokens(tree)
    comments = _Comments(tokens, comment_tokens)
    printer = _Printer(comments)
    statements = tree.children if tree.data == "program" else tree.children[:1]
    renderer = _Renderer()
    out: list[str] = []
    for index, statement in enumerate(statements):
        statement_tokens = _tokens(statement)
        first, last = statement_tokens[0], statement_tokens[-1]
        printer.skip_leading.add(id(first))
        printer.skip_trailing.add(id(last))
        leading = comments.leading.get(id(first), [])
        for number, (comment, blank) in enumerate(leading):
            if blank and (out or number):
                out.append("")
            out.append(_comment_text(comment))
        if comments.blank_before.get(id(first)) and (index or leading):
            out.append("")
        renderer.lines = [""]
        renderer.render(printer.statement(statement))
        lines = [line.rstrip() for line in renderer.lines if line.strip()]
        if id(last) in comments.trailing:
            lines[-1] += _MARK + _comment_text(comments.trailing[id(last)])
        out += lines
    for comment, blank in comments.footer:
        if blank:
            out.append("")
        out.append(_comment_text(comment))
    while out and not out[0]:
        out.pop(0)
    return "\n".join(_align(out)) + "\n"


def _align(lines: list[str]) -> list[str]:
    """Trailing comments on consecutive lines start in one column, two past the longest code."""
    result, run = [], []

    def flush():
        if run:
            column = max(len(code) for code, _ in run) + 2
            result.extend(f"{code:<{column}}{comment}" for code, comment in run)
            run.clear()

    for line in lines:
        code, mark, comment = line.partition(_MARK)
        if mark and code.strip():
            run.append((code.rstrip(), comment))
            continue
        flush()
        result.append(code.rstrip() + (comment if mark else ""))
    flush()
    return result


_LOCK = threading.Lock()
_COMMENTS: list[Token] = []


@functools.lru_cache(maxsize=1)
def _tree_parser() -> lark.Lark:
    return make_parser("fmt", lexer_callbacks={"COMMENT": _COMMENTS.append})


def _tree(text: str) -> tuple[Tree, list[Token]]:
    with _LOCK:
        _COMMENTS.clear()
        tree = _tree_parser().parse(lark_text(text))
        return tree, list(_COMMENTS)


def _shape(tree) -> list:
    """A syntax tree without its spans, in pre-order (iteratively): what must not change."""
    found, stack = [], [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ir.Node):
            found.append(type(node).__name__)
            stack.extend(reversed([getattr(node, f.name) for f in fields(node)
                                   if f.name not in ("span", "type_span")]))
        elif isinstance(node, (tuple, list)):
            found.append(len(node))
            stack.extend(reversed(node))
        else:
            found.append(node)
    return found


def needs_formatting(text: str | bytes, filename: str = "<string>") -> bool:
    original = text.decode("utf-8") if isinstance(text, bytes) else text
    return format_source(text, filename) != original
