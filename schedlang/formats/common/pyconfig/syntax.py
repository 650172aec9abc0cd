"""What a Python file's syntax says before anything is followed: what a statement not followed
may change (``effects``), a function's local and ``global`` names, the nodes a statement owns
outside the functions it defines, and the token scan that refuses deep nesting before
``ast.parse`` sees it."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

from ....errors import SchedlangError, Source, Span
from ....limits import MAX_CONFIG_BASES, MAX_NESTING, read_source_text

SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
#: Calls to the file's own functions followed one inside another, at most.
MAX_CALL_DEPTH = 16


def own_nodes(stmt: ast.AST):
    """The nodes of ``stmt`` outside the functions and classes it defines (its body's own)."""
    stack = list(ast.iter_child_nodes(stmt)) if isinstance(stmt, SCOPES) else [stmt]
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, SCOPES):
            stack.extend(ast.iter_child_nodes(node))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stack.extend(node.decorator_list)


def scope_names(function: ast.FunctionDef) -> tuple[set[str], set[str]]:
    """A function's local names (its parameters and every name its body binds) and its
    ``global`` names, as Python decides them before the body runs."""
    arguments = function.args
    local = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}
    local.update(a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None)
    declared: set[str] = set()
    for node in own_nodes(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            local.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not function:
            local.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            local.update(a.asname or a.name.split(".")[0] for a in node.names if a.name != "*")
        elif isinstance(node, ast.Global):
            declared.update(node.names)
    return local - declared, declared


def effects(stmt: ast.stmt, path_of) -> tuple[set[str], dict[str, int], dict[str, ast.AST]]:
    """What a statement not followed may do to module-level names, read from its syntax:
    the names it (re)binds; the names whose object it may change (-> ``ASSIGNED`` when assigned
    into, ``METHOD`` when a method of it is called, ``PASSED`` when passed to a call that is not a
    library's, ``path_of``
    giving the imported path of a callee and None for one of this file, or read by a loop or
    a ``with``); and, for a def / class / lambda in it, the names its body may change when it
    runs (its ``global`` names, and changed names as above)."""
    found = _Effects(path_of)
    found.visit(stmt, None)
    return found.bound, found.changed, found.late


class _Effects:
    """``effects``' walk: at module level (``scope`` None) names bound go to ``bound`` and names
    changed to ``changed``; inside a def / class / lambda (``scope``), the names its body may
    change when it runs go to ``late_names``, which ``late`` keeps by the scope that changes them.
    Each kind of node has its handler (``_HANDLERS``)."""

    def __init__(self, path_of):
        self.path_of = path_of
        self.bound: set[str] = set()
        self.changed: dict[str, int] = {}
        self.late: dict[str, ast.AST] = {}
        self.late_names: set[str] = set()  # of the scope being walked
        self.local: set[str] = set()  # the names the scope being walked binds
        self.declared: set[str] = set()  # its ``global`` / ``nonlocal`` names
        self.imported: set[str] = set()  # a library imported inside a function is a library too

    def visit(self, node: ast.AST, scope: ast.AST | None) -> None:
        if isinstance(node, SCOPES) and node is not scope:
            self._scope(node, scope)
            return
        target = self.changed if scope is None else self.late_names
        if isinstance(node, _COMPOUND):  # a loop variable or `as` name aliases what it reads
            for inner in _loads(node):
                _add(target, inner, PASSED)
        handler = self._HANDLERS.get(type(node))
        if handler is not None:
            handler(self, node, scope, target)
        for child in ast.iter_child_nodes(node):
            self.visit(child, scope)

    def _scope(self, node: ast.AST, scope: ast.AST | None) -> None:
        """A def / class / lambda: its name is bound; what its body may change is ``late``."""
        if not isinstance(node, ast.Lambda):
            (self.late_names if scope is not None else self.bound).add(node.name)
        inner: set[str] = set()
        body = node.body if isinstance(node.body, list) else [node.body]
        for child in body:
            self._walk_scope(child, inner, node)
        for name in inner:
            self.late.setdefault(name, node)

    def _walk_scope(self, node: ast.AST, names: set[str], scope: ast.AST) -> None:
        saved = self.late_names, self.local, self.declared
        self.late_names, self.local, self.declared = names, set(), set()
        self.visit(node, scope)
        names.update(self.local & self.declared)  # a global assigned in the function
        self.late_names, self.local, self.declared = saved

    def _binds(self, scope: ast.AST | None) -> set[str]:
        return self.bound if scope is None else self.local

    def _name(self, node: ast.Name, scope, target) -> None:
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self._binds(scope).add(node.id)

    def _assigned_into(self, node: ast.Attribute | ast.Subscript, scope, target) -> None:
        root = root_name(node) if isinstance(node.ctx, (ast.Store, ast.Del)) else None
        if root:
            _add(target, root, ASSIGNED)

    def _import(self, node: ast.Import | ast.ImportFrom, scope, target) -> None:
        names = {(a.asname or a.name.split(".")[0]) for a in node.names if a.name != "*"}
        self._binds(scope).update(names)
        self.imported.update(names)

    def _declare(self, node: ast.Global | ast.Nonlocal, scope, target) -> None:
        (self.bound if scope is None else self.late_names).update(node.names)
        self.declared.update(node.names)

    def _call(self, node: ast.Call, scope, target) -> None:
        """A call of the file's own code may change its receiver and every name it is passed."""
        if self.path_of(node.func) is not None or root_name(node.func) in self.imported:
            return
        if isinstance(node.func, ast.Attribute) and root_name(node.func.value):
            _add(target, root_name(node.func.value), METHOD)
        for argument in [*node.args, *(k.value for k in node.keywords)]:
            for inner in ast.walk(argument):
                if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Load):
                    _add(target, inner.id, PASSED)

    _HANDLERS = {ast.Name: _name, ast.Attribute: _assigned_into, ast.Subscript: _assigned_into,
                 ast.Import: _import, ast.ImportFrom: _import, ast.Global: _declare, ast.Nonlocal: _declare,
                 ast.Call: _call}


#: How a statement not followed may change a name's object (``effects``), the strongest kept:
#: passed to a function of the file or read by a loop, a method of it called, assigned into.
PASSED, METHOD, ASSIGNED = 0, 1, 2


def _add(target, name: str, through: int) -> None:
    if isinstance(target, dict):
        target[name] = max(target.get(name, PASSED), through)
    else:
        target.add(name)


_COMPOUND = (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.If, ast.Match)


def _loads(node: ast.AST) -> set[str]:
    """The names ``node`` reads, outside the functions and classes it defines."""
    names: set[str] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, SCOPES):
            continue
        if isinstance(current, ast.Name) and isinstance(current.ctx, ast.Load):
            names.add(current.id)
        stack.extend(ast.iter_child_nodes(current))
    return names


def root_name(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


# -- the nesting scan ---------------------------------------------------------------------------------

_OPEN, _CLOSE = "([{", ")]}"
_NESTING_WORDS = {"not", "and", "or", "if", "else", "lambda", "in", "is", "for", "await"}
_RESET = {",", ":", "=", ";", ":="}


def check_nesting(source: Source) -> None:
    """Refuse, at the token, an expression nesting deeper than ``MAX_NESTING``: brackets,
    operators, attribute dots and keywords each count one level in their bracket, and the
    count of a bracket restarts at each ``,``, ``:`` and ``=`` (a new item).  ``ast.parse`` of
    100 000 unary minus signs raises ``MemoryError``; of a 100 000-term sum ``RecursionError``."""
    stack = [0]
    try:
        for token in tokenize.generate_tokens(io.StringIO(source.text).readline):
            kind, text = token.type, token.string
            if kind in (tokenize.NEWLINE, tokenize.ENDMARKER):
                stack = [0]
                continue
            if kind == tokenize.OP and text in _RESET:
                stack[-1] = 0
                continue
            if kind == tokenize.OP and text in _CLOSE:
                if len(stack) > 1:
                    stack.pop()
                continue
            counts = kind == tokenize.OP or (kind == tokenize.NAME and text in _NESTING_WORDS)
            if not counts:
                continue
            stack[-1] += 1
            if text in _OPEN:
                stack.append(0)
            if sum(stack) + len(stack) > MAX_NESTING:
                line, col = token.start
                raise SchedlangError(f"this expression nests more than {MAX_NESTING} levels deep",
                                     Span(source, line, col + 1, line, col + 2),
                                     hint="a configuration value needs a few levels; split it into names")
    except (tokenize.TokenError, SyntaxError):  # ast.parse reports it with its position
        return




#: ``import m`` / ``from m import ...`` of an undotted module, read from the text (no parsing).
_IMPORTS = re.compile(r"^[ \t]*(?:from[ \t]+(\w+)[ \t]+import\b|import[ \t]+([\w \t,]+?)[ \t]*(?:#.*)?$)",
                      re.MULTILINE)


def with_modules(path: Path, text: str) -> str:
    """``text`` and the text of the module files beside the script that it imports (``import
    config``, ``from config import *``), theirs in turn, each read once within the limits: what
    the format guesser reads, so a script is guessed by what it calls, wherever it is written."""
    if str(path).startswith("<") or str(path) == "-":
        return text
    seen, texts, queue = {Path(path).resolve()}, [text], [text]
    while queue:
        current = queue.pop()
        for match in _IMPORTS.finditer(current):
            names = [match.group(1)] if match.group(1) else [n.split()[0] for n in match.group(2).split(",")
                                                             if n.split()]
            for name in names:
                found = (Path(path).parent / f"{name}.py").resolve()
                if found in seen or not found.is_file() or len(seen) > MAX_CONFIG_BASES:
                    continue
                seen.add(found)
                texts.append(read_source_text(found))
                queue.append(texts[-1])
    return "\n".join(texts)
