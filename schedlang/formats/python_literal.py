"""Python configuration files followed as Python would run them, without running them.

OpenMMLab configs, DeepSpeed configs kept as a dict in a ``.py`` file and Keras training
scripts are Python.  Importing one must give the values Python builds, so this module
follows the module's statements in order over ``ast`` (nothing is executed: no ``eval``,
no ``exec``, no import) and computes what each statement does:

* assignment and reassignment (``LR = 0.1`` ... ``LR = 0.2``: the last one wins), chained
  and tuple targets, annotated assignment, ``del``;
* augmented assignment (``LR *= 10``; ``+=`` extends a list in place, as Python does);
* subscript assignment (``param_scheduler[0]['start_factor'] = 0.25``);
* ``.append`` / ``.extend`` / ``.insert`` / ``.update`` / ``.pop`` / ``.setdefault`` /
  ``.get`` / ``.copy`` on dicts and lists, ``copy.copy`` / ``copy.deepcopy``;
* ``if`` / ``elif`` / ``else`` and ``x if c else y`` whose test is computed here;
* literals, ``dict(...)`` / ``list(...)`` / ``tuple(...)`` / ``int`` / ``float`` / ``abs`` /
  ``min`` / ``max`` / ``round`` / ``len``, ``**`` unpacking in dicts, indexing and slicing;
* arithmetic as Python computes it: ints exactly, floats as binary floats
  (``5e-4 * 1024 / 512`` is the float Python gets, and the importers write that float as
  the shortest decimal that reads back as it, ``repr``), comparisons and ``and``/``or``/``not``;
* names assigned earlier (sharing, not copying: ``b = a; a['x'] = 1`` changes ``b`` too).

A name is looked up when its statement runs: ``LR = LR`` with no ``LR`` before is
"'LR' is used before it is assigned", as Python's ``NameError``.  What Python would raise
(``ZeroDivisionError``, a missing key) is an error at the expression.

A training script (``script=True``: the DeepSpeed and Keras entry points) is read as the
program Python runs: ``__name__`` is ``"__main__"``, a function of the file is followed into
its body when the file calls it (``main()``), and ``argparse`` parsers are read as data:
``parser.parse_args()`` gives the defaults (``args.lr``), a flag without one an error where it
is read.  A name after ``from m import *`` that the file never assigns is unknown.

Everything else (loops, ``with``, calls to other functions, attributes of
objects) is *not followed*, and is allowed only where it cannot change what is imported:
a name such a statement (re)binds, and a dict or list it passes to a call or mentions,
reads as an error at that statement when the import needs it ("this for loop is not
followed, and it may change 'param_scheduler'").  Names a ``def``, ``class`` or ``lambda``
mentions are refused the same way (the function may run later).  ``exec``, ``eval``,
``globals``, ``vars``, ``setattr`` and the like can change any name: a file that mentions
them is refused.  A value that is not followed (``x = foo()``) is an error only when read.
Calls to classes a format names (Keras schedules and optimizers) are kept as a ``Call``
(its class path and arguments); such an object is taken as fixed once built (Keras keeps
its constructor arguments, ``get_config()``), so passing it to ``model.compile`` does not
change it; assigning to one of its attributes does (refused when read).

Bounded: the file is at most ``MAX_FILE_BYTES``; before ``ast.parse`` sees it, the
tokens are scanned for nesting deeper than ``MAX_NESTING`` (brackets, operator chains and
runs of unary minus signs: ``ast.parse`` would raise ``MemoryError`` or ``RecursionError``),
refused at the token; values made by following the file are counted against
``MAX_YAML_VALUES``; an int larger than ``MAX_DIGITS`` digits and a string longer than the
file are refused.
"""

from __future__ import annotations

import ast
import builtins
import io
import math
import operator
import tokenize

from ..errors import SchedlangError, Source, Span
from ..limits import MAX_DIGITS, MAX_FILE_BYTES, MAX_NESTING, MAX_YAML_DEPTH, MAX_YAML_VALUES
from .yaml_source import Node

#: Names that let a file change any variable behind the statements' backs.
DYNAMIC = ("exec", "eval", "globals", "locals", "vars", "setattr", "delattr", "__import__", "__builtins__",
           "compile", "__dict__")
_HINT = ("schedlang follows assignments, x[...] = ..., x += ..., .append/.update, if/else on values it "
         "computes, arithmetic and names assigned earlier; write the value out that way")


class Item:
    """A value the file builds, with the span that built it (and its keys' spans for a dict).

    ``value`` is a number, string, bool, None, ``dict`` of Items, ``list`` of Items (a tuple
    too, with ``frozen``), an ``Imported`` name or a ``Call``.
    """

    def __init__(self, value, span: Span | None, keys: dict | None = None, frozen: bool = False):
        self._value, self.span = value, span
        self.keys = keys if keys is not None else {}
        self.frozen = frozen

    @property
    def value(self):
        return self._value

    def plain(self):
        value = self.value
        if isinstance(value, dict):
            return {k: v.plain() for k, v in value.items()}
        if isinstance(value, list):
            return [v.plain() for v in value]
        return value

    def view(self, span: Span) -> Item:
        """The same object seen from another place (``b = a``): shared, not copied."""
        return Item(self._value, span, self.keys, self.frozen)


class Unread(Item):
    """A value that was not followed (``x = foo()``): reading it is its error."""

    def __init__(self, error: SchedlangError):
        super().__init__(None, error.span)
        self.error = error

    @property
    def value(self):
        raise self.error

    def plain(self):
        raise self.error

    def view(self, span: Span) -> Item:
        return self


class Imported:
    """A name bound by an import (``keras``, ``LinearLR``): its dotted path."""

    def __init__(self, path: str):
        self.path = path

    def __repr__(self) -> str:
        return self.path


class Call:
    """A call to a class a format reads (``keras.optimizers.schedules.CosineDecay(...)``)."""

    def __init__(self, path: str, args: list[Item], kwargs: dict[str, Item], keys: dict[str, Span],
                 span: Span):
        self.path, self.args, self.kwargs, self.keys, self.span = path, args, kwargs, keys, span

    @property
    def name(self) -> str:
        return self.path.rsplit(".", 1)[-1]

    def __repr__(self) -> str:
        return f"{self.path}(...)"


class Function:
    """A function defined in the file (``def main(): ...``): followed into its body when the
    file calls it.  ``defaults`` holds its parameters' defaults, computed at the ``def``."""

    def __init__(self, node: ast.FunctionDef, defaults: dict[str, Item]):
        self.node, self.defaults = node, defaults

    @property
    def name(self) -> str:
        return self.node.name

    def __repr__(self) -> str:
        return f"the function {self.node.name}"


class Parser:
    """An ``argparse.ArgumentParser``: its arguments by destination, each the value a command
    line without that option gives (its default) or the error saying why it has none."""

    def __init__(self):
        self.values: dict[str, Item] = {}

    def __repr__(self) -> str:
        return "argparse.ArgumentParser"


class Namespace:
    """What ``parser.parse_args()`` returns for a command line that gives no option: the
    defaults, by destination (``args.lr``)."""

    def __init__(self, values: dict[str, Item]):
        self.values = values

    def __repr__(self) -> str:
        return "argparse.Namespace"


class _Return(Exception):  # noqa: N818 - the control flow of `return`, not an error
    def __init__(self, item: Item):
        super().__init__("return")
        self.item = item


class _NotFollowedError(Exception):
    def __init__(self, error: SchedlangError):
        super().__init__(error.message)
        self.error = error


class Module:
    """The module-level names of one Python file after following its statements.

    ``records(path)`` says which imported callables become ``Call``s (a format's classes);
    ``calls`` lists every ``Call`` built, in order, with the statement that built it.
    """

    def __init__(self, text: str, filename: str = "<string>", records=None, script: bool = False):
        self.source = Source(text, filename)
        if len(text.encode("utf-8", "replace")) > MAX_FILE_BYTES:
            raise SchedlangError(f"this file is over {MAX_FILE_BYTES} bytes", self._span_at(1, 1))
        _check_nesting(self.source)
        try:
            self.tree = ast.parse(text, filename)
        except SyntaxError as exc:
            line, col = exc.lineno or 1, exc.offset or 1
            where = Span(self.source, line, col, line, col + 1)
            raise SchedlangError(f"not valid Python: {exc.msg}", where) from None
        except (MemoryError, RecursionError):  # the token scan refuses what it can see first
            raise SchedlangError("this file nests too deeply to read", self._span_at(1, 1)) from None
        self.records = records or (lambda path: False)
        self.env: dict[str, Item] = {}
        self.late: dict[str, Span] = {}      # names a def / class / lambda mentions
        self.tainted: dict[int, tuple[object, SchedlangError]] = {}  # containers passed to what is not run
        self.calls: list[tuple[Item, ast.Call, str]] = []  # the format's calls (Call or Unread), paths
        self._recorded_nodes: set[tuple[int, int]] = set()
        self.budget = MAX_YAML_VALUES
        self._assigned_at: dict[str, list[int]] = {}
        self._star_imports: list[tuple[str, int]] = []  # `from m import *`: (m, line)
        # the function being followed: its names (None at module level), the names it assigns,
        # its `global` names; every call followed, with its names and what it returned
        self.locals: dict[str, Item] | None = None
        self._local_names: set[str] = set()
        self._global_names: set[str] = set()
        self.frames: list[tuple[Function, dict[str, Item], Item]] = []
        self._enclosing: list[dict[str, Item]] = []
        self._calls_made = self._invocation = self._depth = 0
        if script:  # a training script is read as the program Python runs
            self.env["__name__"] = Item("__main__", self._span_at(1, 1))
        self._scan()
        try:
            self._run(self.tree.body)
        except _Return:  # pragma: no cover - ast.parse refuses `return` outside a function
            raise
        except RecursionError:
            raise SchedlangError("the values of this file nest too deeply", self._span_at(1, 1)) from None

    # -- reading the result ------------------------------------------------------------------

    def get(self, name: str) -> Item | None:
        """The module-level ``name`` (None when the file never binds it), or the error of the
        statement that may have changed it."""
        item = self.env.get(name)
        if item is None:
            return None
        if name in self.late:
            raise SchedlangError(f"a function or class defined here mentions '{name}', and may change it "
                                 "when it runs; schedlang does not run it", self.late[name], hint=_HINT)
        if isinstance(item, Unread):
            raise item.error
        self.check_untainted(item)
        return item

    def check_untainted(self, item: Item) -> None:
        """Refuse a value holding a dict or list that a statement not followed may have changed,
        or nesting deeper than ``MAX_YAML_DEPTH`` (what reads it afterwards may recurse)."""
        seen: set[int] = set()
        stack = [(item, 0)]
        while stack:
            current, depth = stack.pop()
            if isinstance(current, Unread):
                continue
            value = current.value
            if isinstance(value, (dict, list, Call, Parser, Namespace)):
                if depth > MAX_YAML_DEPTH:
                    raise SchedlangError(f"this value nests more than {MAX_YAML_DEPTH} levels deep",
                                         item.span)
                if id(value) in seen:
                    continue
                seen.add(id(value))
                if id(value) in self.tainted:
                    raise self.tainted[id(value)][1]
                stack.extend((child, depth + 1) for child in _children(value))

    # -- statements -----------------------------------------------------------------------

    def _run(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            self._partial = False
            try:
                self._statement(stmt)
            except _NotFollowedError as exc:
                self._not_followed(stmt, exc.error)
                self._record_inside(stmt)
                if self.locals is not None and any(isinstance(n, (ast.Return, ast.Raise))
                                                   for n in _own_nodes(stmt)):
                    raise _Return(Unread(SchedlangError(  # what the function returns is not known
                        f"{exc.error.message}; it may return or raise, so what the function returns "
                        "is not known here", exc.error.span, hint=exc.error.hint))) from None
                continue
            if self._partial:  # a part not followed (x = setup(cfg)) may have changed what it was given
                error = self._not_followed_error(stmt, "a part of it is not followed")
                self._changes(stmt, error)
                for node in ast.walk(stmt):  # (y := ...) inside a part not followed binds y
                    if isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
                        self._bind(node.target.id, Unread(error))

    def _statement(self, stmt: ast.stmt) -> None:  # noqa: PLR0911, PLR0912 - one case per statement
        if isinstance(stmt, ast.Assign):
            value = self._value_or_unread(stmt.value)
            for target in stmt.targets:
                self._assign(target, value, stmt)
            return
        if isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None:
                self._assign(stmt.target, self._value_or_unread(stmt.value), stmt)
            return
        if isinstance(stmt, ast.AugAssign):
            self._augment(stmt)
            return
        if isinstance(stmt, ast.Expr):
            if isinstance(stmt.value, ast.Constant):
                return  # a docstring
            self._eval(stmt.value)
            return
        if isinstance(stmt, ast.If):
            try:
                test = self._eval(stmt.test)
            except _NotFollowedError as exc:
                raise _NotFollowedError(SchedlangError(
                    f"this if is not followed: its test is not computed here ({exc.error.message})",
                    self.span(stmt), hint=_HINT)) from None
            self._run(stmt.body if _truth(test, stmt.test, self) else stmt.orelse)
            self._partial = False  # its statements were each handled
            return
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                name = alias.asname or alias.name.split(".")[0]
                path = alias.name if alias.asname else alias.name.split(".")[0]
                self._bind(name, Item(Imported(path), self.span(stmt)))
            return
        if isinstance(stmt, ast.ImportFrom):
            module = "." * stmt.level + (stmt.module or "")
            for alias in stmt.names:
                if alias.name == "*":
                    self._star_imports.append((module, stmt.lineno))
                    raise _NotFollowedError(self._not_followed_error(stmt, "a * import may bind any name"))
                self._bind(alias.asname or alias.name, Item(Imported(f"{module}.{alias.name}"),
                                                            self.span(stmt)))
            return
        if isinstance(stmt, ast.Delete):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    local = self.locals is not None and target.id not in self._global_names
                    scope = self.locals if local else self.env
                    if target.id not in scope:
                        raise self._python_error(f"'{target.id}' is not assigned (Python raises NameError)",
                                                 target)
                    del scope[target.id]
                elif isinstance(target, ast.Subscript):
                    container, key = self._eval(target.value), self._index(target)
                    self._delete_item(container, key, target)
                else:
                    raise _NotFollowedError(self._not_followed_error(stmt, "it deletes an attribute"))
            return
        if isinstance(stmt, ast.FunctionDef):
            self._define(stmt)
            return
        if isinstance(stmt, ast.Return) and self.locals is not None:
            raise _Return(Item(None, self.span(stmt)) if stmt.value is None
                          else self._value_or_unread(stmt.value))
        if isinstance(stmt, ast.Nonlocal):
            raise _NotFollowedError(self._not_followed_error(stmt, "a nonlocal name"))
        if isinstance(stmt, (ast.Pass, ast.Global)):
            return  # `global x` at module level changes nothing; in a function, _invoke reads it
        raise _NotFollowedError(self._not_followed_error(stmt))

    # -- functions of the file ------------------------------------------------------------------

    def _define(self, stmt: ast.FunctionDef) -> None:
        """``def f(...)``: bound to a ``Function`` (its defaults computed now, as Python does),
        followed when the file calls it.  The names its body may change are noted as a
        function's are (it may also run from where schedlang does not follow it)."""
        if stmt.decorator_list:
            raise _NotFollowedError(self._not_followed_error(stmt, "a decorator may replace the function"))
        if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in _own_nodes(stmt)):
            raise _NotFollowedError(self._not_followed_error(stmt, "a generator"))
        arguments = stmt.args
        defaults: dict[str, Item] = {}
        positional = [*arguments.posonlyargs, *arguments.args]
        pairs = [*zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults),
                 *((a, d) for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None)]
        for argument, default in pairs:
            try:
                defaults[argument.arg] = self._eval(default)
            except _NotFollowedError as exc:
                defaults[argument.arg] = Unread(exc.error)
        function = Function(stmt, defaults)
        function.enclosing = ([self.locals, *self._enclosing] if self.locals is not None else [])
        self._bind(stmt.name, Item(function, self.span(stmt)))
        _, _, late = _effects(stmt, self._path)
        for name, node in late.items():
            self.late.setdefault(name, self.span(node))

    def _invoke(self, function: Function, node: ast.Call, args: list[Item], kwargs: dict[str, Item]) -> Item:
        """Follow a call to a function of the file into its body: its parameters bound as
        Python binds them, its statements followed, the value it returns."""
        if self._depth >= MAX_CALL_DEPTH:
            self._not(node, f"a call nested more than {MAX_CALL_DEPTH} deep")
        names = _parameters(self, function, node, args, kwargs)
        saved = (self.locals, self._local_names, self._global_names, self._enclosing, self._partial,
                 self._invocation)
        self._calls_made += 1
        self.locals, self._enclosing, self._invocation = names, function.enclosing, self._calls_made
        self._local_names, self._global_names = _scope_names(function.node)
        self._depth += 1
        result = Item(None, self.span(node))
        try:
            self._run(function.node.body)
        except _Return as done:
            result = done.item
        finally:
            self._depth -= 1
            (self.locals, self._local_names, self._global_names, self._enclosing, self._partial,
             self._invocation) = saved
        self.frames.append((function, names, result))
        return result if isinstance(result, Unread) else result.view(self.span(node))

    def _not_followed_error(self, stmt: ast.stmt, why: str = "") -> SchedlangError:
        kind = _KINDS.get(type(stmt), "statement")
        return SchedlangError(f"this {kind} is not followed (the file is read, never run)"
                              + (f": {why}" if why else ""), self.span(stmt), hint=_HINT)

    def _not_followed(self, stmt: ast.stmt, error: SchedlangError) -> None:
        """A statement not followed: every name it may bind reads as its error, and so does
        every dict or list it may change."""
        where = error if error.span is not None and error.span.line == stmt.lineno \
            else self._not_followed_error(stmt, error.message)
        bound, _, _ = _effects(stmt, self._path)
        for name in bound:
            self._bind(name, Unread(SchedlangError(f"{where.message}, and it may change '{name}'",
                                                   where.span, hint=where.hint)))
        self._changes(stmt, where)

    def _changes(self, stmt: ast.stmt, error: SchedlangError) -> None:
        """Mark what ``stmt`` may change without being followed: a dict or list it assigns into,
        calls a method of or passes to a function of this file (a library's function is taken
        to receive the value, not to change it), and the names a def / class / lambda in it
        may change when it runs."""
        _, changed, late = _effects(stmt, self._path)
        for name, through in changed.items():
            item = self.lookup(name)
            if item is None or isinstance(item, Unread):
                continue
            message = SchedlangError(f"{error.message}, and it may change '{name}'", error.span,
                                     hint=error.hint)
            if isinstance(item.value, (dict, list, Parser, Namespace)) \
                    or through and isinstance(item.value, Call):
                self._mark(item, message, calls=through)
        for name, node in late.items():
            self.late.setdefault(name, self.span(node))

    def _mark(self, item: Item, error: SchedlangError, calls: bool = True) -> None:
        """Mark the dicts and lists of ``item`` (and its ``Call``s unless it was only handed
        to a function: a format's object is taken as fixed once built) as changed."""
        kinds = (dict, list, Call, Parser, Namespace) if calls else (dict, list, Parser, Namespace)
        stack = [item]
        while stack:
            current = stack.pop()
            if isinstance(current, Unread):
                continue
            value = current.value
            if isinstance(value, kinds) and id(value) not in self.tainted:
                self.tainted[id(value)] = (value, error)
                stack.extend(_children(value))

    def _bind(self, name: str, item: Item) -> None:
        if self.locals is not None and name not in self._global_names:
            self.locals[name] = item
        else:
            self.env[name] = item

    def lookup(self, name: str) -> Item | None:
        """``name`` as the statement being followed sees it: the function's own names first,
        then those of the functions around it, then the module's."""
        if self.locals is not None and name not in self._global_names:
            if name in self.locals or name in self._local_names:
                return self.locals.get(name)
            for names in self._enclosing:
                if name in names:
                    return names[name]
        return self.env.get(name)

    def _assign(self, target: ast.expr, value: Item, stmt: ast.stmt) -> None:
        if isinstance(target, ast.Name):
            self._bind(target.id, value if isinstance(value, Unread) else value.view(value.span))
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            if any(isinstance(e, ast.Starred) for e in target.elts):
                raise _NotFollowedError(self._not_followed_error(stmt, "a starred target"))
            if isinstance(value, Unread):
                for element in target.elts:
                    self._assign(element, value, stmt)
                return
            items = self._iterate(value, target)
            if len(items) != len(target.elts):
                raise self._python_error(f"{len(target.elts)} names but {len(items)} values (Python raises "
                                         "ValueError)", target)
            for element, item in zip(target.elts, items):
                self._assign(element, item, stmt)
            return
        if isinstance(target, ast.Subscript):
            container = self._eval(target.value)
            key = self._index(target)
            if isinstance(value, Unread):
                self._mark(container, value.error)  # the container now holds what was not followed
            self._set_item(container, key, value, target)
            return
        if isinstance(target, ast.Attribute) and not isinstance(value, Unread):
            base = self._eval(target.value)
            if isinstance(base.value, Namespace):  # args.lr = 1e-3
                base.value.values[target.attr] = value
                return
        raise _NotFollowedError(self._not_followed_error(stmt, "it assigns an attribute"))

    def _augment(self, stmt: ast.AugAssign) -> None:
        target = stmt.target
        if isinstance(target, ast.Name):
            current = self._name(target)
            self._bind(target.id, self._binop(stmt.op, current, self._eval(stmt.value), stmt, inplace=True))
            return
        if isinstance(target, ast.Subscript):
            container = self._eval(target.value)
            key = self._index(target)
            current = self._get_item(container, key, target)
            self._set_item(container, key, self._binop(stmt.op, current, self._eval(stmt.value), stmt,
                                                       inplace=True), target)
            return
        if isinstance(target, ast.Attribute):
            base = self._eval(target.value)
            if isinstance(base.value, Namespace):  # args.lr *= 2
                current = _option(self, base, target)
                base.value.values[target.attr] = self._binop(stmt.op, current, self._eval(stmt.value), stmt,
                                                             inplace=True)
                return
        raise _NotFollowedError(self._not_followed_error(stmt, "it changes an attribute"))

    def _recorded(self, node: ast.Call, item: Item, path: str) -> None:
        key = (id(node), self._invocation)  # a function called twice builds twice
        if key not in self._recorded_nodes:
            self._recorded_nodes.add(key)
            self.calls.append((item, node, path))

    def _record_inside(self, stmt: ast.stmt) -> None:
        """The format's calls inside a statement not followed (``model.compile(optimizer=
        keras.optimizers.Adam(...))``): built from the names as they are, when the statement is
        a simple one; inside a loop, a function or a ``with`` block, an error if read."""
        simple = isinstance(stmt, (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign))
        for node in ast.walk(stmt):
            if not isinstance(node, ast.Call) or (id(node), self._invocation) in self._recorded_nodes:
                continue
            path = self._path(node.func)
            if path is None or not self.records(path):
                continue
            if simple:
                self._recorded(node, self._value_or_unread(node), path)
            else:
                self._recorded(node, path=path, item=Unread(SchedlangError(
                    f"{_short(path)}(...) is built inside a {_KINDS.get(type(stmt), 'statement')}, which is "
                    "not followed (the file is read, never run)", self.span(node),
                    hint="build it at the top level of the file, from names assigned before")))

    def _path(self, node: ast.expr) -> str | None:
        """The imported dotted path ``node`` names, if it names one (no side effects)."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        item = self.lookup(node.id)
        if item is None and node.id in vars(builtins):
            return ".".join(["builtins", node.id, *reversed(parts)])
        if item is None or isinstance(item, Unread) or not isinstance(item.value, Imported):
            return None
        return ".".join([item.value.path, *reversed(parts)])

    # -- expressions -------------------------------------------------------------------------

    def _value_or_unread(self, node: ast.expr) -> Item:
        try:
            return self._eval(node)
        except _NotFollowedError as exc:
            self._partial = True
            return Unread(exc.error)

    def _eval(self, node: ast.expr) -> Item:  # noqa: PLR0911, PLR0912 - one case per node type
        span = self.span(node)
        if isinstance(node, ast.Constant):
            if isinstance(node.value, int) and abs(node.value).bit_length() > 4 * MAX_DIGITS:
                raise SchedlangError(f"this number has more than {MAX_DIGITS} digits", span)
            if isinstance(node.value, (int, float, str, bool, type(None))):
                return Item(node.value, span)
            self._not(node, "this constant")
        if isinstance(node, ast.Name):
            return self._name(node)
        if isinstance(node, (ast.List, ast.Tuple)):
            items = []
            for element in node.elts:
                if isinstance(element, ast.Starred):
                    items.extend(self._iterate(self._eval(element.value), element))
                else:
                    items.append(self._element(element))
            self._spend(len(items), node)
            return Item(items, span, frozen=isinstance(node, ast.Tuple))
        if isinstance(node, ast.Dict):
            out, keys = {}, {}
            for key_node, value_node in zip(node.keys, node.values):
                if key_node is None:  # {**other}
                    other = self._eval(value_node)
                    self._update(out, keys, other, value_node)
                    continue
                key = self._key(self._eval(key_node), key_node)
                out[key] = self._element(value_node)
                keys[key] = self.span(key_node)
            self._spend(len(out), node)
            return Item(out, span, keys)
        if isinstance(node, ast.UnaryOp):
            return self._unary(node)
        if isinstance(node, ast.BinOp):
            return self._binop(node.op, self._eval(node.left), self._eval(node.right), node)
        if isinstance(node, ast.BoolOp):
            result = None
            for value in node.values:
                result = self._eval(value)
                if _truth(result, value, self) == isinstance(node.op, ast.Or):
                    break
            return result.view(span)
        if isinstance(node, ast.Compare):
            return self._compare(node)
        if isinstance(node, ast.IfExp):
            return (self._eval(node.body) if _truth(self._eval(node.test), node.test, self)
                    else self._eval(node.orelse)).view(span)
        if isinstance(node, ast.Subscript):
            container = self._eval(node.value)
            if isinstance(node.slice, ast.Slice):
                return self._slice(container, node)
            return self._get_item(container, self._index(node), node).view(span)
        if isinstance(node, ast.Attribute):
            base = self._eval(node.value)
            if isinstance(base.value, Imported):
                return Item(Imported(f"{base.value.path}.{node.attr}"), span)
            if isinstance(base.value, Namespace):
                return _option(self, base, node).view(span)
            self._not(node, f"the attribute .{node.attr}")
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.JoinedStr):
            self._not(node, "an f-string")
        self._not(node, _EXPRESSIONS.get(type(node), type(node).__name__))
        raise AssertionError  # unreachable

    def _element(self, node: ast.expr) -> Item:
        """A container's element: one not followed is kept as such, read only if needed."""
        return self._value_or_unread(node)

    def _not(self, node: ast.AST, what: str) -> None:
        raise _NotFollowedError(SchedlangError(f"{what} is not followed (the file is read, never run)",
                                          self.span(node), hint=_HINT))

    def _name(self, node: ast.Name) -> Item:
        item = self.lookup(node.id)
        if item is None and self.locals is not None and node.id in self._local_names \
                and node.id not in self._global_names:
            raise self._python_error(f"'{node.id}' is used before it is assigned in this function "
                                     "(Python raises UnboundLocalError)", node)
        if item is None:
            later = [line for line in self._assigned_at.get(node.id, ()) if line >= node.lineno]
            if node.id in ("True", "False", "None"):  # pragma: no cover - constants since 3.8
                return Item({"True": True, "False": False, "None": None}[node.id], self.span(node))
            if later:
                where = "this statement assigns it, after Python has read it" if later[0] == node.lineno \
                    else f"line {later[0]} assigns it"
                raise self._python_error(f"'{node.id}' is used before it is assigned (Python raises "
                                         "NameError)", node,
                                         hint=f"{where}; a config reads only names assigned before")
            if node.id in vars(builtins):
                return Item(Imported(f"builtins.{node.id}"), self.span(node))
            star = next(((m, line) for m, line in self._star_imports if line < node.lineno), None)
            if star is not None:  # Python finds it there (or raises NameError): unknown here
                raise _NotFollowedError(SchedlangError(
                    f"the value of '{node.id}' is unknown: it is not assigned in this file, and "
                    f"`from {star[0]} import *` (line {star[1]}) may bind it", self.span(node),
                    hint=f"write its value in this file, or import it by name from {star[0]} "
                         "(the imported module is not read either)"))
            raise self._python_error(f"'{node.id}' is not assigned in this file (Python raises NameError)",
                                     node)
        if isinstance(item, Unread):
            raise _NotFollowedError(item.error)
        return item.view(self.span(node))

    def _call(self, node: ast.Call) -> Item:  # noqa: PLR0911, PLR0912
        span = self.span(node)
        func = node.func
        if isinstance(func, ast.Attribute) and not self._is_imported(func.value):
            return self._method(node, func)
        callee = self._eval(func)
        if isinstance(callee.value, Function):
            if any(isinstance(a, ast.Starred) for a in node.args):
                self._not(node, "a call with *args")
            args = [self._element(a) for a in node.args]
            kwargs, _ = self._keywords(node, lazy=True)
            return self._invoke(callee.value, node, args, kwargs)
        path = callee.value.path if isinstance(callee.value, Imported) else None
        if path is None:
            self._not(node, "this call")
        if self.records(path):
            try:
                return self._record(node, path, span)
            except _NotFollowedError as exc:
                self._recorded(node, Unread(exc.error), path)
                raise
        lazy = path in ("builtins.dict", "argparse.ArgumentParser")
        args = [self._element(a) if lazy else self._eval(a) for a in node.args
                if not isinstance(a, ast.Starred)]
        if any(isinstance(a, ast.Starred) for a in node.args):
            self._not(node, "a call with *args")
        kwargs, keys = self._keywords(node, lazy=lazy)
        builtin = _BUILTINS.get(path)
        if builtin is None:
            self._not(node, f"the call {_short(path)}(...)")
        return builtin(self, node, args, kwargs, keys)

    def _record(self, node: ast.Call, path: str, span: Span) -> Item:
        """A call to one of the format's classes, kept as its path and arguments."""
        if any(isinstance(a, ast.Starred) for a in node.args):
            self._not(node, "a call with *args")
        args = [self._eval(a) for a in node.args]
        # ``name=`` only names ops (Keras drops it): an f-string there is read only if used
        kwargs, keys = self._keywords(node, lazy=False, lazy_names=("name",))
        made = Item(Call(path, args, kwargs, keys, span), span)
        self._recorded(node, made, path)
        return made

    def _keywords(self, node: ast.Call, lazy: bool, lazy_names=()) -> tuple[dict, dict]:
        """A call's keyword arguments (``**mapping`` included) and the spans of their names; a
        keyword given twice is Python's ``TypeError``.  ``lazy``: a value not followed is kept
        as such (a dict's entries are read only where needed); ``lazy_names``: the same for
        those keywords alone."""
        kwargs, keys = {}, {}
        for keyword in node.keywords:
            if keyword.arg is None:
                given = self._eval(keyword.value)
                if not isinstance(given.value, dict):
                    raise self._python_error(f"argument after ** must be a mapping, not "
                                             f"{_type(given.value)} (Python raises TypeError)", keyword.value)
                pairs = [(str(k), v, given.keys.get(k, given.span)) for k, v in given.value.items()]
                self._spend(len(pairs), keyword.value)
            else:
                value = self._element(keyword.value) if lazy or keyword.arg in lazy_names \
                    else self._eval(keyword.value)
                start = keyword.col_offset + 1
                name_span = Span(self.source, keyword.lineno, start, keyword.lineno, start + len(keyword.arg))
                pairs = [(keyword.arg, value, name_span)]
            for name, value, span in pairs:
                if name in kwargs:
                    raise self._python_error(f"keyword argument '{name}' given twice (Python raises "
                                             "TypeError)", keyword.value)
                kwargs[name], keys[name] = value, span
        return kwargs, keys

    def _is_imported(self, node: ast.expr) -> bool:
        root = node
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name):
            return False
        item = self.lookup(root.id)
        if item is None:
            return root.id not in self._assigned_at and root.id in vars(builtins)
        return not isinstance(item, Unread) and isinstance(item.value, Imported)

    def _method(self, node: ast.Call, func: ast.Attribute) -> Item:
        target = self._eval(func.value)
        value = target.value
        kind = "dict" if isinstance(value, dict) else \
            "list" if isinstance(value, list) and not target.frozen else \
            "parser" if isinstance(value, Parser) else None
        method = _METHODS.get((kind, func.attr))
        if method is None:
            what = {dict: "a dict", list: "a tuple" if target.frozen else "a list"}.get(
                type(value), repr(value) if isinstance(value, (Parser, Namespace)) else type(value).__name__)
            self._not(node, f".{func.attr}() on {what}")
        if any(isinstance(a, ast.Starred) for a in node.args):
            self._not(node, "a call with *args")
        args = [self._element(a) for a in node.args]
        kwargs, keys = self._keywords(node, lazy=True)
        return method(self, target, args, kwargs, keys, node)

    def _unary(self, node: ast.UnaryOp) -> Item:
        operand = self._eval(node.operand)
        value = operand.value
        span = self.span(node)
        if isinstance(node.op, ast.Not):
            return Item(not _truth(operand, node.operand, self), span)
        if not _is_number(value):
            self._not(node, f"unary {_OPS[type(node.op)]} on {_type(value)}")
        if isinstance(node.op, ast.Invert) and isinstance(value, float):
            raise self._python_error("bad operand for unary ~: float (Python raises TypeError)", node)
        op = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert}[type(node.op)]
        return Item(op(value), span)

    def _binop(self, op: ast.operator, left: Item, right: Item, node: ast.AST, inplace: bool = False) -> Item:
        a, b, span = left.value, right.value, self.span(node)
        symbol = _OPS[type(op)]
        if _is_number(a) and _is_number(b):
            return Item(self._arith(op, a, b, node), span)
        if isinstance(op, ast.Add) and isinstance(a, str) and isinstance(b, str):
            if len(a) + len(b) > MAX_FILE_BYTES:
                raise SchedlangError(f"this string is over {MAX_FILE_BYTES} characters", span)
            self._spend(1 + (len(a) + len(b)) // 64, node)
            return Item(a + b, span)
        same = isinstance(a, list) and isinstance(b, list) and left.frozen == right.frozen
        if isinstance(op, ast.Add) and same:
            self._spend(len(a) + len(b), node)
            if inplace and not left.frozen:
                a.extend(b)
                return left.view(left.span)
            return Item(a + b, span, frozen=left.frozen)
        if isinstance(op, ast.Add) and inplace and isinstance(a, list) and not left.frozen and \
                isinstance(b, list):
            self._spend(len(b), node)
            a.extend(b)
            return left.view(left.span)
        if isinstance(op, ast.BitOr) and isinstance(a, dict) and isinstance(b, dict):
            if inplace:
                self._update(a, left.keys, right, node)
                return left.view(left.span)
            out, keys = dict(a), dict(left.keys)
            self._update(out, keys, right, node)
            return Item(out, span, keys)
        # anything else ('%s' % x, a list repeated with *, an object's operator) is not followed:
        # only numbers, str + str, list / tuple + and dict | are
        self._not(node, f"{symbol} on {_type(a)} and {_type(b)}")
        raise AssertionError  # unreachable

    def _arith(self, op: ast.operator, a, b, node: ast.AST):
        if isinstance(op, ast.Pow) and _is_int(a) and _is_int(b) and b > 0 and abs(a) > 1 \
                and b * math.log10(abs(a)) > MAX_DIGITS:
            raise SchedlangError(f"this power has more than {MAX_DIGITS} digits", self.span(node))
        if isinstance(op, (ast.LShift, ast.RShift)) and _is_int(b) and b > 4 * MAX_DIGITS:
            raise SchedlangError(f"this shift has more than {MAX_DIGITS} digits", self.span(node))
        function = _ARITH.get(type(op))
        if function is None:
            self._not(node, f"the operator {_OPS.get(type(op), '@')}")
        try:
            result = function(a, b)
        except ZeroDivisionError:
            raise self._python_error("division by zero (Python raises ZeroDivisionError)", node) from None
        except OverflowError:
            raise self._python_error("the result is too large for a float (Python raises OverflowError)",
                                     node) from None
        except (TypeError, ValueError) as exc:
            raise self._python_error(f"{exc} (Python raises {type(exc).__name__})", node) from None
        if isinstance(result, complex):
            raise self._python_error("the result is a complex number", node)
        if _is_int(result) and abs(result).bit_length() > 4 * MAX_DIGITS:
            raise SchedlangError(f"this number has more than {MAX_DIGITS} digits", self.span(node))
        return result

    def _compare(self, node: ast.Compare) -> Item:
        left = self._eval(node.left)
        for op, right_node in zip(node.ops, node.comparators):
            right = self._eval(right_node)
            a, b = _comparable(left, self), _comparable(right, self)
            try:
                if isinstance(op, (ast.In, ast.NotIn)):
                    holder = right.value
                    inside = a in (holder if isinstance(holder, dict) else b)
                    ok = inside == isinstance(op, ast.In)
                elif isinstance(op, (ast.Is, ast.IsNot)):
                    if not (a is None or b is None or isinstance(a, bool) or isinstance(b, bool)):
                        self._not(node, "'is' between values other than None, True and False")
                    ok = (a is b) == isinstance(op, ast.Is)
                else:
                    ok = _COMPARE[type(op)](a, b)
            except TypeError as exc:
                raise self._python_error(f"{exc} (Python raises TypeError)", node) from None
            if not ok:
                return Item(False, self.span(node))
            left = right
        return Item(True, self.span(node))

    # -- containers -------------------------------------------------------------------------

    def _key(self, item: Item, node: ast.AST):
        value = item.value
        if isinstance(value, (str, int, float, bool, type(None))):
            return value
        raise self._python_error(f"a dict key must be a string or a number here, not {_type(value)}", node)

    def _index(self, node: ast.Subscript):
        return self._key(self._eval(node.slice), node.slice)

    def _get_item(self, container: Item, key, node: ast.AST) -> Item:
        value = container.value
        if isinstance(value, dict):
            if key not in value:
                raise self._python_error(f"no key {key!r} (Python raises KeyError)", node)
            return value[key]
        if isinstance(value, (list, str)):
            if not _is_int(key):
                raise self._python_error(f"{_type(value)} indices must be integers (Python raises TypeError)",
                                         node)
            if not -len(value) <= key < len(value):
                raise self._python_error(f"index {key} out of range (Python raises IndexError)", node)
            return value[key] if isinstance(value, list) else Item(value[key], self.span(node))
        self._not(node, f"indexing {_type(value)}")
        raise AssertionError  # unreachable

    def _slice(self, container: Item, node: ast.Subscript) -> Item:
        bounds = []
        for part in (node.slice.lower, node.slice.upper, node.slice.step):
            bound = None if part is None else self._eval(part).value
            if bound is not None and not _is_int(bound):
                raise self._python_error("slice indices must be integers (Python raises TypeError)", part)
            bounds.append(bound)
        value = container.value
        if not isinstance(value, (list, str)):
            self._not(node, f"slicing {_type(value)}")
        try:
            part = value[slice(*bounds)]
        except ValueError as exc:
            raise self._python_error(f"{exc} (Python raises ValueError)", node) from None
        if isinstance(part, list):
            self._spend(len(part), node)
        return Item(part, self.span(node), frozen=container.frozen)

    def _set_item(self, container: Item, key, value: Item, node: ast.AST) -> None:
        target = container.value
        if isinstance(target, dict):
            self._no_cycle(container, value, node)
            target[key] = value
            container.keys[key] = self.span(node)
            self._spend(1, node)
            return
        if isinstance(target, list) and not container.frozen:
            self._get_item(container, key, node)  # the same IndexError
            self._no_cycle(container, value, node)
            target[key] = value
            return
        raise self._python_error(f"{_type(target)} does not support item assignment (Python raises "
                                 "TypeError)", node)

    def _delete_item(self, container: Item, key, node: ast.AST) -> None:
        target = container.value
        self._get_item(container, key, node)
        if isinstance(target, dict):
            del target[key]
            container.keys.pop(key, None)
        elif isinstance(target, list) and not container.frozen:
            del target[key]
        else:
            raise self._python_error(f"{_type(target)} does not support item deletion", node)

    def _update(self, out: dict, keys: dict, other: Item, node: ast.AST) -> None:
        value = other.value
        if not isinstance(value, dict):
            raise self._python_error(f"{_type(value)} is not a mapping (Python raises TypeError)", node)
        for key, item in list(value.items()):
            out[key] = item
            keys[key] = other.keys.get(key, other.span)
        self._spend(len(value), node)

    def _iterate(self, item: Item, node: ast.AST) -> list[Item]:
        value = item.value
        if isinstance(value, list):
            return list(value)
        if isinstance(value, dict):
            return [Item(k, item.keys.get(k, item.span)) for k in value]
        if isinstance(value, str):
            self._spend(len(value), node)
            return [Item(c, item.span) for c in value]
        raise self._python_error(f"{_type(value)} is not iterable (Python raises TypeError)", node)

    def _no_cycle(self, container: Item, value: Item, node: ast.AST) -> None:
        """A dict or list that would hold itself (``a.append(a)``) is refused: every value the
        importers read is a tree."""
        stack, seen, goal = [value], set(), id(container.value)
        while stack:
            current = stack.pop()
            if isinstance(current, Unread):
                continue
            inner = current.value
            if isinstance(inner, (dict, list)):
                if id(inner) == goal:
                    raise SchedlangError("this makes a value that contains itself", self.span(node))
                if id(inner) in seen:
                    continue
                seen.add(id(inner))
                self._spend(1 + len(inner), node)  # the walk is bounded too: one value per item
                stack.extend(inner.values() if isinstance(inner, dict) else inner)

    def _deepcopy(self, item: Item, node: ast.AST) -> Item:
        memo: dict[int, Item] = {}

        def copy(current: Item) -> Item:
            if isinstance(current, Unread):
                return current
            value = current.value
            if not isinstance(value, (dict, list)):
                return current
            if id(value) in memo:
                return memo[id(value)]
            self._spend(1 + len(value), node)
            if isinstance(value, dict):
                made = Item({}, current.span, dict(current.keys))
                memo[id(value)] = made
                made.value.update({k: copy(v) for k, v in value.items()})
            else:
                made = Item([], current.span, frozen=current.frozen)
                memo[id(value)] = made
                made.value.extend(copy(v) for v in value)
            return made

        return copy(item)

    def _spend(self, count: int, node: ast.AST) -> None:
        self.budget -= count
        if self.budget < 0:
            raise SchedlangError(f"following this file makes more than {MAX_YAML_VALUES} values",
                                 self.span(node), hint="a configuration is a few hundred values")

    # -- helpers ----------------------------------------------------------------------------------

    def _python_error(self, message: str, node: ast.AST, hint: str | None = None) -> SchedlangError:
        return SchedlangError(message, self.span(node), hint=hint)

    def span(self, node: ast.AST) -> Span:
        end_line = getattr(node, "end_lineno", None) or node.lineno
        end_col = getattr(node, "end_col_offset", None)
        if end_line != node.lineno or end_col is None or end_col <= node.col_offset:
            end_col = node.col_offset + 1
        return Span(self.source, node.lineno, node.col_offset + 1, node.lineno, end_col + 1)

    def _span_at(self, line: int, col: int) -> Span:
        return Span(self.source, line, col, line, col + 1)

    def _scan(self) -> None:
        """One walk of the tree: refuse the names that can change any variable (``exec``,
        ``globals``, ...), and note where each name is bound anywhere in the file, so that
        "used before it is assigned" can say where."""
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Name):
                name = node.id
                if isinstance(node.ctx, ast.Store):
                    self._assigned_at.setdefault(name, []).append(node.lineno)
            elif isinstance(node, ast.Attribute) and node.attr.startswith("__"):
                name = node.attr
            else:
                continue
            if name in DYNAMIC:
                raise SchedlangError(f"'{name}' can change any name of the file behind its statements' "
                                     "backs; schedlang cannot follow it", self.span(node),
                                     hint="write the configuration with plain assignments")
        for lines in self._assigned_at.values():
            lines.sort()


# -- the builtins and methods followed ---------------------------------------------------------------


def _no_args(module: Module, node, args, kwargs, name: str, most: int, keywords: bool = False):
    if len(args) > most or (kwargs and not keywords):
        raise module._python_error(f"{name}() takes at most {most} positional arguments here", node)


def _b_dict(module, node, args, kwargs, keys):
    _no_args(module, node, args, kwargs, "dict", 1, keywords=True)
    out, out_keys = {}, {}
    if args:
        module._update(out, out_keys, args[0], node)
    out.update(kwargs)
    out_keys.update(keys)
    module._spend(len(out), node)
    return Item(out, module.span(node), out_keys)


def _b_sequence(frozen: bool):
    def build(module, node, args, kwargs, keys):
        _no_args(module, node, args, kwargs, "tuple" if frozen else "list", 1)
        items = module._iterate(args[0], node) if args else []
        module._spend(len(items), node)
        return Item(items, module.span(node), frozen=frozen)
    return build


def _b_number(kind):
    def build(module, node, args, kwargs, keys):
        _no_args(module, node, args, kwargs, kind.__name__, 1)
        value = args[0].value if args else 0
        if isinstance(value, str) and len(value) > MAX_DIGITS + 10:
            raise SchedlangError(f"this number has more than {MAX_DIGITS} digits", module.span(node))
        if not (_is_number(value) or isinstance(value, str)):
            raise module._python_error(f"{kind.__name__}() of {_type(value)} (Python raises TypeError)", node)
        try:
            return Item(kind(value), module.span(node))
        except (ValueError, OverflowError) as exc:
            raise module._python_error(f"{exc} (Python raises {type(exc).__name__})", node) from None
    return build


def _b_reduce(function):
    def build(module, node, args, kwargs, keys):
        if kwargs:
            module._not(node, f"{function.__name__}() with keywords")
        values = module._iterate(args[0], node) if len(args) == 1 else args
        numbers = [v.value for v in values]
        if not numbers or not all(_is_number(n) for n in numbers):
            raise module._python_error(f"{function.__name__}() of these values is not followed", node)
        return Item(function(numbers), module.span(node))
    return build


def _b_print(module, node, args, kwargs, keys):
    """``print(...)`` changes no value (it only writes to the terminal)."""
    return Item(None, module.span(node))


def _b_abs(module, node, args, kwargs, keys):
    _no_args(module, node, args, kwargs, "abs", 1)
    if len(args) != 1 or not _is_number(args[0].value):
        raise module._python_error("abs() takes one number", node)
    return Item(abs(args[0].value), module.span(node))


def _b_round(module, node, args, kwargs, keys):
    _no_args(module, node, args, kwargs, "round", 2)
    digits = args[1].value if len(args) == 2 else 0
    if not args or not all(_is_number(a.value) for a in args) or not _is_int(digits):
        raise module._python_error("round() takes a number and a whole number of digits", node)
    return Item(round(*(a.value for a in args)), module.span(node))


def _b_len(module, node, args, kwargs, keys):
    _no_args(module, node, args, kwargs, "len", 1)
    if len(args) != 1 or not isinstance(args[0].value, (list, dict, str)):
        raise module._python_error("len() takes a list, a dict or a string here", node)
    return Item(len(args[0].value), module.span(node))


def _b_copy(deep: bool):
    def build(module, node, args, kwargs, keys):
        _no_args(module, node, args, kwargs, "deepcopy" if deep else "copy", 1)
        item = args[0]
        if deep:
            return module._deepcopy(item, node).view(module.span(node))
        return _m_copy(module, item, [], {}, {}, node)
    return build


def _b_deepspeed_arguments(module, node, args, kwargs, keys):
    """``deepspeed.add_config_arguments(parser)``: DeepSpeed's own flags, added to the parser
    it returns (``--deepspeed``, ``--deepspeed_config`` and their old names), none given."""
    if len(args) != 1 or kwargs or not isinstance(args[0].value, Parser):
        module._not(node, "deepspeed.add_config_arguments() of something other than a parser")
    span = module.span(node)
    args[0].value.values.update({"deepspeed": Item(False, span), "deepspeed_config": Item(None, span),
                                 "deepscale": Item(False, span), "deepscale_config": Item(None, span)})
    return args[0].view(span)


_BUILTINS = {
    "builtins.dict": _b_dict, "builtins.list": _b_sequence(False), "builtins.tuple": _b_sequence(True),
    "builtins.int": _b_number(int), "builtins.float": _b_number(float), "builtins.abs": _b_abs,
    "builtins.min": _b_reduce(min), "builtins.max": _b_reduce(max), "builtins.round": _b_round,
    "builtins.len": _b_len, "builtins.print": _b_print, "copy.deepcopy": _b_copy(True),
    "copy.copy": _b_copy(False), "deepspeed.add_config_arguments": _b_deepspeed_arguments,
    "argparse.ArgumentParser": lambda module, node, *_: Item(Parser(),
                                                                                         module.span(node)),
}


# -- argparse: a command line that gives no option (its defaults) ---------------------------------------


_CONVERT = {"builtins.int": int, "builtins.float": float, "builtins.str": str}
_ACTIONS = {"store": None, "store_true": False, "store_false": True, "store_const": None, "append": None,
            "append_const": None, "count": None, "extend": None}


def _destination(module, flags: list[Item], kwargs, node) -> tuple[str, bool]:
    """An argument's attribute name (``--lr-warmup`` → ``lr_warmup``) and whether it is an option."""
    names = [f.value for f in flags]
    if not names or not all(isinstance(n, str) and n for n in names):
        raise module._python_error("add_argument() takes its names as strings here", node)
    option = names[0].startswith("-")
    if "dest" in kwargs:
        dest = kwargs["dest"].value
        if not isinstance(dest, str):
            raise module._python_error("dest= must be a string", node)
        return dest, option
    if not option:
        return names[0], False
    longs = [n for n in names if n.startswith("--")]
    return (longs or names)[0].lstrip("-").replace("-", "_"), True


def _m_add_argument(module, target, args, kwargs, keys, node):
    dest, option = _destination(module, args, kwargs, node)
    target.value.values[dest] = _default(module, args[0].value, option, kwargs, keys, node)
    return Item(None, module.span(node))


def _default(module, flag: str, option: bool, kwargs, keys, node) -> Item:
    """The value ``parse_args()`` gives ``flag`` when the command line does not: argparse's
    default (a string default converted by ``type=``), or an ``Unread`` saying why there is none."""
    span = module.span(node)

    def unknown(why: str, where=span) -> Item:
        return Unread(SchedlangError(f"the value of {flag} is not known here: {why}", where,
                                     hint=f"give {flag} a default=, or write its value in the file"))

    given = {k: v for k, v in kwargs.items() if k in ("action", "required", "nargs", "type")}
    for key, item in given.items():
        if isinstance(item, Unread) or key != "type" and isinstance(item.value, (Imported, Call)):
            return unknown(f"its {key}= is not computed here", keys[key])
    action = given["action"].value if "action" in given else "store"
    if action not in _ACTIONS:
        return unknown("its action= is not one argparse names (store, store_true, ...)", keys["action"])
    nargs = given["nargs"].value if "nargs" in given else None
    required = bool(given["required"].value) if "required" in given \
        else not option and nargs not in ("?", "*")
    if required:
        return unknown("it is required, so its value comes from the command line")
    if "default" not in kwargs:
        return Item(_ACTIONS[action], span)
    default = kwargs["default"]
    if isinstance(default, Unread):
        return default
    if not isinstance(default.value, str) or action not in ("store", "append", "extend") \
            or "type" not in given:
        return default
    kind = given["type"].value
    path = kind.path if isinstance(kind, Imported) else None
    if path not in _CONVERT:
        return unknown("its type= is not int, float or str, and argparse passes the string default "
                       "through it", keys["type"])
    try:
        return Item(_CONVERT[path](default.value), default.span)
    except ValueError:
        raise module._python_error(f"{flag}: invalid {path.removeprefix('builtins.')} value "
                                   f"{default.value!r} (argparse exits)", node) from None


def _m_same_parser(module, target, args, kwargs, keys, node):
    """``parser.add_argument_group(...)``: a group adds its arguments to the parser."""
    return target.view(module.span(node))


def _m_set_defaults(module, target, args, kwargs, keys, node):
    if args:
        raise module._python_error("set_defaults() takes keywords", node)
    target.value.values.update(kwargs)
    return Item(None, module.span(node))


def _m_parse_args(module, target, args, kwargs, keys, node):
    if args or kwargs:
        module._not(node, "parse_args() of a given list")  # the defaults are read for no option given
    if id(target.value) in module.tainted:
        raise _NotFollowedError(module.tainted[id(target.value)][1])
    return Item(Namespace(dict(target.value.values)), module.span(node))


def _m_append(module, target, args, kwargs, keys, node):
    if len(args) != 1 or kwargs:
        raise module._python_error("append() takes exactly one argument", node)
    module._no_cycle(target, args[0], node)
    module._spend(1, node)
    target.value.append(args[0])
    return Item(None, module.span(node))


def _m_extend(module, target, args, kwargs, keys, node):
    if len(args) != 1 or kwargs:
        raise module._python_error("extend() takes exactly one argument", node)
    items = module._iterate(args[0], node)
    for item in items:
        module._no_cycle(target, item, node)
    module._spend(len(items), node)
    target.value.extend(items)
    return Item(None, module.span(node))


def _m_insert(module, target, args, kwargs, keys, node):
    if len(args) != 2 or kwargs or not _is_int(args[0].value):
        raise module._python_error("insert() takes an index and a value", node)
    module._no_cycle(target, args[1], node)
    module._spend(1, node)
    target.value.insert(args[0].value, args[1])
    return Item(None, module.span(node))


def _m_update(module, target, args, kwargs, keys, node):
    if len(args) > 1:
        raise module._python_error("update() takes at most one positional argument", node)
    for other in args:
        module._no_cycle(target, other, node)
        module._update(target.value, target.keys, other, node)
    for key, item in kwargs.items():
        module._no_cycle(target, item, node)
        target.value[key] = item
        target.keys[key] = keys[key]
    module._spend(len(kwargs), node)
    return Item(None, module.span(node))


def _m_pop(module, target, args, kwargs, keys, node):
    value = target.value
    if kwargs or len(args) > (2 if isinstance(value, dict) else 1):
        raise module._python_error("pop() takes a key (and a default for a dict)", node)
    if isinstance(value, dict):
        key = module._key(args[0], node) if args else None
        if not args:
            raise module._python_error("dict.pop() takes a key", node)
        if key not in value:
            if len(args) == 2:
                return args[1]
            raise module._python_error(f"no key {key!r} (Python raises KeyError)", node)
        target.keys.pop(key, None)
        return value.pop(key)
    index = args[0].value if args else -1
    if not _is_int(index):
        raise module._python_error("list indices must be integers", node)
    if not value or not -len(value) <= index < len(value):
        raise module._python_error("pop index out of range (Python raises IndexError)", node)
    return value.pop(index)


def _m_get(module, target, args, kwargs, keys, node):
    if kwargs or not 1 <= len(args) <= 2:
        raise module._python_error("get() takes a key and a default", node)
    key = module._key(args[0], node)
    if key in target.value:
        return target.value[key]
    return args[1] if len(args) == 2 else Item(None, module.span(node))


def _m_setdefault(module, target, args, kwargs, keys, node):
    if kwargs or not 1 <= len(args) <= 2:
        raise module._python_error("setdefault() takes a key and a default", node)
    key = module._key(args[0], node)
    if key not in target.value:
        value = args[1] if len(args) == 2 else Item(None, module.span(node))
        module._no_cycle(target, value, node)
        target.value[key] = value
        target.keys[key] = module.span(node)
    return target.value[key]


def _m_copy(module, target, args, kwargs, keys, node):
    if args or kwargs:
        raise module._python_error("copy() takes no arguments", node)
    value = target.value
    module._spend(len(value) if isinstance(value, (dict, list)) else 1, node)
    if isinstance(value, dict):
        return Item(dict(value), module.span(node), dict(target.keys))
    if isinstance(value, list):
        return Item(list(value), module.span(node), frozen=target.frozen)
    return target


_METHODS = {("list", "append"): _m_append, ("list", "extend"): _m_extend, ("list", "insert"): _m_insert,
            ("list", "pop"): _m_pop, ("list", "copy"): _m_copy, ("dict", "update"): _m_update,
            ("dict", "pop"): _m_pop, ("dict", "get"): _m_get, ("dict", "setdefault"): _m_setdefault,
            ("dict", "copy"): _m_copy, ("parser", "add_argument"): _m_add_argument,
            ("parser", "add_argument_group"): _m_same_parser,
            ("parser", "add_mutually_exclusive_group"): _m_same_parser,
            ("parser", "set_defaults"): _m_set_defaults, ("parser", "parse_args"): _m_parse_args}

_ARITH = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
          ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
          ast.LShift: operator.lshift, ast.RShift: operator.rshift, ast.BitAnd: operator.and_,
          ast.BitOr: operator.or_, ast.BitXor: operator.xor}
_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
        ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
        ast.MatMult: "@", ast.USub: "-", ast.UAdd: "+", ast.Invert: "~"}
_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
            ast.Gt: operator.gt, ast.GtE: operator.ge}
_KINDS = {ast.For: "for loop", ast.AsyncFor: "for loop", ast.While: "while loop", ast.With: "with block",
          ast.AsyncWith: "with block", ast.Try: "try block", ast.FunctionDef: "function definition",
          ast.AsyncFunctionDef: "function definition", ast.ClassDef: "class definition", ast.If: "if",
          ast.Assign: "assignment", ast.AugAssign: "assignment", ast.AnnAssign: "assignment",
          ast.Expr: "statement", ast.Global: "global statement", ast.Raise: "raise", ast.Assert: "assert",
          ast.ImportFrom: "import", ast.Delete: "del", ast.Match: "match"}
_EXPRESSIONS = {ast.ListComp: "a comprehension", ast.DictComp: "a comprehension", ast.SetComp: "a set",
                ast.GeneratorExp: "a generator", ast.Lambda: "a lambda", ast.Set: "a set",
                ast.NamedExpr: "an assignment expression", ast.Await: "await", ast.Starred: "a starred value"}


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
#: Calls to the file's own functions followed one inside another, at most.
MAX_CALL_DEPTH = 16


def _children(value) -> list:
    """The items a container holds: a dict's or a namespace's values, a list's items, a call's
    arguments."""
    if isinstance(value, dict):
        return list(value.values())
    if isinstance(value, list):
        return list(value)
    if isinstance(value, (Parser, Namespace)):
        return list(value.values.values())
    return [*value.args, *value.kwargs.values()]


def _own_nodes(stmt: ast.AST):
    """The nodes of ``stmt`` outside the functions and classes it defines (its body's own)."""
    stack = list(ast.iter_child_nodes(stmt)) if isinstance(stmt, _SCOPES) else [stmt]
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, _SCOPES):
            stack.extend(ast.iter_child_nodes(node))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stack.extend(node.decorator_list)


def _scope_names(function: ast.FunctionDef) -> tuple[set[str], set[str]]:
    """A function's local names (its parameters and every name its body binds) and its
    ``global`` names, as Python decides them before the body runs."""
    arguments = function.args
    local = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}
    local.update(a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None)
    declared: set[str] = set()
    for node in _own_nodes(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            local.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not function:
            local.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            local.update(a.asname or a.name.split(".")[0] for a in node.names if a.name != "*")
        elif isinstance(node, ast.Global):
            declared.update(node.names)
    return local - declared, declared


def _parameters(module: Module, function: Function, node: ast.Call, args: list[Item],
                kwargs: dict[str, Item]) -> dict[str, Item]:
    """The names a call binds in the function, as Python binds them (its ``TypeError``s)."""
    arguments, name, span = function.node.args, function.name, module.span(node)
    positional = [*arguments.posonlyargs, *arguments.args]
    if len(args) > len(positional) and arguments.vararg is None:
        raise module._python_error(f"{name}() takes {len(positional)} positional arguments but "
                                   f"{len(args)} were given (Python raises TypeError)", node)
    names: dict[str, Item] = {a.arg: v for a, v in zip(positional, args)}
    if arguments.vararg is not None:
        names[arguments.vararg.arg] = Item(args[len(positional):], span, frozen=True)
    by_keyword = {a.arg for a in [*arguments.args, *arguments.kwonlyargs]}
    rest: dict[str, Item] = {}
    for key, value in kwargs.items():
        if key in by_keyword:
            if key in names:
                raise module._python_error(f"{name}() got multiple values for argument '{key}' (Python "
                                           "raises TypeError)", node)
            names[key] = value
        elif arguments.kwarg is not None:
            rest[key] = value
        else:
            raise module._python_error(f"{name}() got an unexpected keyword argument '{key}' (Python "
                                       "raises TypeError)", node)
    if arguments.kwarg is not None:
        names[arguments.kwarg.arg] = Item(rest, span)
    for argument in [*positional, *arguments.kwonlyargs]:
        if argument.arg not in names:
            if argument.arg not in function.defaults:
                raise module._python_error(f"{name}() is missing the argument '{argument.arg}' (Python "
                                           "raises TypeError)", node)
            names[argument.arg] = function.defaults[argument.arg]
    return names


def _option(module: Module, namespace: Item, node: ast.Attribute) -> Item:
    """``args.lr``: the default of ``--lr``, or why it has none."""
    values = namespace.value.values
    if node.attr not in values:
        module._not(node, f"args.{node.attr}: no add_argument followed here gives it")
    item = values[node.attr]
    if isinstance(item, Unread):
        raise _NotFollowedError(item.error)
    return item


def _effects(stmt: ast.stmt, path_of) -> tuple[set[str], set[str], dict[str, ast.AST]]:
    """What a statement not followed may do to module-level names, read from its syntax:
    the names it (re)binds; the names whose object it may change (-> True when assigned into
    or a method of it called, False when passed to a call that is not a library's, ``path_of``
    giving the imported path of a callee and None for one of this file, or read by a loop or
    a ``with``); and, for a def / class / lambda in it, the names its body may change when it
    runs (its ``global`` names, and changed names as above)."""
    bound: set[str] = set()
    changed: dict[str, bool] = {}
    late: dict[str, ast.AST] = {}

    def visit(node: ast.AST, scope: ast.AST | None) -> None:
        if isinstance(node, _SCOPES) and node is not scope:
            if not isinstance(node, ast.Lambda):
                (late_names if scope is not None else bound).add(node.name)
            inner: set[str] = set()
            body = node.body if isinstance(node.body, list) else [node.body]
            for child in body:
                _walk_scope(child, inner, node)
            for name in inner:
                late.setdefault(name, node)
            return
        target = changed if scope is None else late_names
        if isinstance(node, _COMPOUND):  # a loop variable or `as` name aliases what it reads
            for inner in _loads(node):
                _add(target, inner, False)
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            (bound if scope is None else local).add(node.id)
        elif isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            root = _root(node)
            if root:
                _add(target, root, True)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = {(a.asname or a.name.split(".")[0]) for a in node.names if a.name != "*"}
            (bound if scope is None else local).update(names)
            imported.update(names)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            (bound if scope is None else late_names).update(node.names)
            declared.update(node.names)
        elif isinstance(node, ast.Call) and path_of(node.func) is None and _root(node.func) not in imported:
            if isinstance(node.func, ast.Attribute) and _root(node.func.value):
                _add(target, _root(node.func.value), True)
            for argument in [*node.args, *(k.value for k in node.keywords)]:
                for inner in ast.walk(argument):
                    if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Load):
                        _add(target, inner.id, False)
        for child in ast.iter_child_nodes(node):
            visit(child, scope)

    def _walk_scope(node, names, scope):
        nonlocal late_names, local, declared
        saved = late_names, local, declared
        late_names, local, declared = names, set(), set()
        visit(node, scope)
        names.update(local & declared)  # a global assigned in the function
        late_names, local, declared = saved

    late_names: set[str] = set()
    local: set[str] = set()
    declared: set[str] = set()
    imported: set[str] = set()  # a library imported inside a function is a library too
    visit(stmt, None)
    return bound, changed, late


def _add(target, name: str, through: bool) -> None:
    if isinstance(target, dict):
        target[name] = target.get(name, False) or through
    else:
        target.add(name)


_COMPOUND = (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.If, ast.Match)


def _loads(node: ast.AST) -> set[str]:
    """The names ``node`` reads, outside the functions and classes it defines."""
    names: set[str] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, _SCOPES):
            continue
        if isinstance(current, ast.Name) and isinstance(current.ctx, ast.Load):
            names.add(current.id)
        stack.extend(ast.iter_child_nodes(current))
    return names


def _root(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _truth(item: Item, node: ast.AST, module: Module) -> bool:
    value = item.value
    if isinstance(value, (Imported, Call)):
        return True
    return bool(value)


def _comparable(item: Item, module: Module):
    value = item.value
    if isinstance(value, (Imported, Call)):
        raise _NotFollowedError(SchedlangError("comparing an imported object is not followed", item.span,
                                               hint=_HINT))
    if isinstance(value, (dict, list)):
        module.check_untainted(item)
        plain = item.plain()
        module.budget -= len(repr(plain)) // 8  # comparing walks the whole value: counted
        if module.budget < 0:
            raise SchedlangError(f"following this file makes more than {MAX_YAML_VALUES} values", item.span)
        return plain
    return value


def _is_number(value) -> bool:
    return isinstance(value, (int, float))  # bool too: Python computes True + 1


def _is_int(value) -> bool:
    return isinstance(value, int)


def _type(value) -> str:
    if isinstance(value, Imported):
        return value.path
    return {dict: "dict", list: "list"}.get(type(value), type(value).__name__)


def _short(path: str) -> str:
    return path.removeprefix("builtins.")


# -- the nesting scan ---------------------------------------------------------------------------------

_OPEN, _CLOSE = "([{", ")]}"
_NESTING_WORDS = {"not", "and", "or", "if", "else", "lambda", "in", "is", "for", "await"}
_RESET = {",", ":", "=", ";", ":="}


def _check_nesting(source: Source) -> None:
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


# -- what the formats read -------------------------------------------------------------------------


def to_node(item: Item, what: str = "value"):
    """A value as the YAML readers' ``Node`` (the DeepSpeed and Keras importers read those):
    every part is read here, so a part not followed is its error."""
    value = item.value
    if isinstance(value, dict):
        return Node({str(k): to_node(v, str(k)) for k, v in value.items()}, item.span,
                    {str(k): item.keys.get(k, item.span) for k in value})
    if isinstance(value, list):
        return Node([to_node(v, what) for v in value], item.span)
    if isinstance(value, (Imported, Call)):
        raise SchedlangError(f"{what} is {value!r}, not a value a configuration holds", item.span)
    return Node(value, item.span)


_DEEPSPEED_KEYS = ("scheduler", "optimizer", "train_batch_size", "train_micro_batch_size_per_gpu",
                   "zero_optimization")


def deepspeed_config(text: str, filename: str):
    """The DeepSpeed config a ``.py`` file keeps as a dict (``ds_config = {...}`` or
    ``config = dict(...)``), at module level or built in a function the script calls
    (``def main(): ...`` under ``if __name__ == "__main__":``): the dict with a
    ``"scheduler"`` key (or, without one, with DeepSpeed's other keys), as a ``Node`` for
    ``deepspeed_json.source``."""
    module = Module(text, filename, script=True)
    found: dict[int, tuple[str, Item, bool]] = {}  # one dict seen under several names is one
    for name, item in _bindings(module):
        if isinstance(item, Unread) or not isinstance(item.value, dict):
            continue
        keys = set(item.value)
        if "scheduler" in keys or keys & set(_DEEPSPEED_KEYS):
            found.setdefault(id(item.value), (name, item, "scheduler" in keys))
    with_scheduler = [(name, item) for name, item, has in found.values() if has]
    chosen = with_scheduler or [(name, item) for name, item, _ in found.values()]
    if not chosen:
        for name in ("ds_config", "deepspeed_config", "config"):
            if isinstance(module.env.get(name), Unread):  # json.load(...), say: its own error
                raise module.env[name].error
        _unfollowed(module, [n for n in ast.walk(module.tree) if _deepspeed_dict(n)], "DeepSpeed config")
        raise SchedlangError("no DeepSpeed config in this file: no dict with a \"scheduler\" key", Span(
            module.source, 1, 1, 1, 2), hint="ds_config = {\"scheduler\": {\"type\": \"WarmupLR\", "
                                              "\"params\": {...}}, ...}; a config kept in a JSON file is "
                                              "imported from that file")
    if len(chosen) > 1:
        raise SchedlangError("more than one dict here looks like a DeepSpeed config: "
                             + ", ".join(name for name, _ in chosen), chosen[1][1].span,
                             hint="keep the one to import in the file")
    name, item = chosen[0]
    return to_node(module.get(name) if module.env.get(name) is item else _checked(module, item))


def _bindings(module: Module):
    """Every value the file names: its module-level names, then each followed call's names
    and what it returned (``"<main>"``)."""
    yield from module.env.items()
    for function, names, result in module.frames:
        yield from names.items()
        yield f"<the value {function.name}() returns>", result


def _checked(module: Module, item: Item) -> Item:
    module.check_untainted(item)
    return item


def _deepspeed_dict(node: ast.AST) -> bool:
    """A dict display or ``dict(...)`` call with a ``scheduler`` key, read from the syntax."""
    if isinstance(node, ast.Dict):
        return any(isinstance(k, ast.Constant) and k.value == "scheduler" for k in node.keys)
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict" \
        and any(k.arg == "scheduler" for k in node.keywords)


def _unfollowed(module: Module, nodes: list[ast.AST], what: str) -> None:
    """Why the first of ``nodes`` (what the format looks for, written in the file) was not
    read: the function around it is never called, or the statement around it is not followed;
    the caret on it."""
    if not nodes:
        return
    node = min(nodes, key=lambda n: (n.lineno, n.col_offset))
    called = {id(function.node) for function, _, _ in module.frames}
    around = [f for f in ast.walk(module.tree) if isinstance(f, (*_SCOPES[:2], ast.ClassDef, ast.Lambda))
              and f.lineno <= node.lineno <= (f.end_lineno or f.lineno) and f is not node
              and any(n is node for n in ast.walk(f))]
    uncalled = [f for f in around if isinstance(f, ast.FunctionDef) and id(f) not in called]
    if uncalled:
        raise SchedlangError(f"this {what} is built in {uncalled[-1].name}(), which this file never calls, "
                             "so it is not read (the file is read, never run)", module.span(node),
                             hint=f"call {uncalled[-1].name}() at the top level of the file or under "
                                  "`if __name__ == \"__main__\":`")
    why = "inside a function or class that is not followed" if around else \
        "inside a statement that is not followed (a loop, a with or try block, an if on a value not known)"
    raise SchedlangError(f"this {what} is built {why} (the file is read, never run)", module.span(node),
                         hint="build it with plain assignments, at the top level or in main()")


def keras_schedule(text: str, filename: str, classes, positional):
    """The one Keras ``LearningRateSchedule`` a training script builds
    (``keras.optimizers.schedules.CosineDecay(...)``, ``tf.keras...``, a class imported
    from there, or inside an optimizer's ``learning_rate=``) as the ``Node`` of its
    serialized form (``{"class_name": ..., "config": {...}}``) for ``keras_json.source``.
    ``positional`` names each class's positional parameters, in Keras' order."""

    def records(path: str) -> bool:
        return path.split(".")[0] in ("keras", "tensorflow", "tf_keras") and (
            _schedule(path, classes)
            or ".optimizers." in f".{path}" and path.rsplit(".", 1)[-1][:1].isupper())

    module = Module(text, filename, records, script=True)
    found = [(item, node) for item, node, path in module.calls if _schedule(path, classes)]
    if not found:
        _unfollowed(module, [n for n in ast.walk(module.tree) if isinstance(n, ast.Call) and (
            getattr(n.func, "attr", None) or getattr(n.func, "id", None)) in classes], "Keras schedule")
        raise SchedlangError("no Keras LearningRateSchedule is built in this file",
                             Span(module.source, 1, 1, 1, 2),
                             hint="keras.optimizers.schedules." + "(...), ".join(classes[:2]) + "(...), ...")
    if len(found) > 1:
        lines = ", ".join(str(node.lineno) for _, node in found)
        raise SchedlangError(f"this file builds {len(found)} Keras schedules (lines {lines}); one is "
                             "imported",
                             module.span(found[1][1]), hint="keep the one to import in the file")
    item, node = found[0]
    call = item.value  # an Unread is its error here
    module.check_untainted(item)
    names = positional[call.name]
    if len(call.args) > len(names):
        raise SchedlangError(f"{call.name} takes at most {len(names)} positional arguments", call.span)
    config, keys = {}, {}
    for name, arg in zip(names, call.args):
        if name in call.kwargs:
            raise SchedlangError(f"{call.name} got two values for '{name}' (Python raises TypeError)",
                                 call.keys[name])
        config[name], keys[name] = arg, arg.span
    config.update(call.kwargs)
    keys.update(call.keys)
    if isinstance(config.get("name"), Unread):  # an f-string name: dropped, as keras_json drops names
        del config["name"]
    head = Span(module.source, call.span.line, call.span.column, call.span.line, call.span.column + 1)

    return Node({"class_name": Node(call.name, call.span),
                 "config": Node({k: to_node(v, k) for k, v in config.items()}, head, keys)}, call.span)


#: Schedulers a training script builds with a framework's code, which no format here reads from
#: a script (their configs are imported instead): the module each comes from, the format to use.
_SCRIPT_SCHEDULERS = {"timm.scheduler": "its command line or args.yaml with --format timm-args",
                      "torch.optim.lr_scheduler": "a config that names it (mmengine, Composer, Cerebras)",
                      "transformers": "its TrainingArguments JSON with --format hf-args",
                      "transformers.optimization": "its TrainingArguments JSON with --format hf-args"}


def script_schedule(module: Module) -> None:
    """Refuse, with the caret on the call, a script whose scheduler is a framework's factory or
    class called in Python (``create_scheduler_v2(optimizer, ...)``): nothing reads that call."""
    for node in ast.walk(module.tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        for statement in ast.walk(module.tree):
            if not isinstance(statement, (ast.Import, ast.ImportFrom)):
                continue
            for alias in statement.names:
                origin = (statement.module or "") if isinstance(statement, ast.ImportFrom) else alias.name
                bound = alias.asname or alias.name
                if origin in _SCRIPT_SCHEDULERS and (bound == name or bound == _root(node.func)) \
                        and ("sched" in name.lower() or name.endswith("LR")):
                    raise SchedlangError(f"this script builds its schedule by calling {origin}'s {name}(), "
                                         "which schedlang does not follow into that library",
                                         module.span(node), hint=f"import {_SCRIPT_SCHEDULERS[origin]}")


def _schedule(path: str, classes) -> bool:
    module, _, name = path.rpartition(".")
    return name in classes and module.endswith(("optimizers.schedules", "learning_rate_schedule"))


__all__ = ["Call", "Imported", "Item", "Module", "Unread", "deepspeed_config", "keras_schedule",
           "script_schedule",
           "to_node"]
