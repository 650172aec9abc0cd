"""Calls in a followed file: a builtin or method followed (``calls``), a function of the file
followed into its body, a dataclass or ``Subclass`` instance built, a format's class kept as a
``Call`` (recorded in ``calls``, with those inside a statement not followed), and the imported
path a callee names."""

from __future__ import annotations

import ast
import builtins

from ....errors import SchedlangError, Span
from .calls import BUILTINS, EXITS, METHODS, bind_arguments, instance
from .state import FileState
from .syntax import MAX_CALL_DEPTH, scope_names
from .values import (
    KINDS,
    Call,
    DataClass,
    Function,
    Imported,
    Instance,
    Item,
    Namespace,
    NotFollowedError,
    Parser,
    Returned,
    Subclass,
    Unread,
    short,
    type_name,
)


class Calling(FileState):
    """The calls of a followed file."""

    def visit_Call(self, node: ast.Call) -> Item:
        span = self.span(node)
        func = node.func
        if isinstance(func, ast.Attribute) and not self._is_imported(func.value):
            return self._method(node, func)
        callee = self._eval(func)
        if isinstance(callee.value, (Function, DataClass)):
            return self._call_of_file(callee.value, node)
        if isinstance(callee.value, Subclass):
            return self._instance(callee.value, node, span)
        path = callee.value.path if isinstance(callee.value, Imported) else None
        if isinstance(callee.value, Call):  # optax.inject_hyperparams(optax.adamw)(learning_rate=...)
            path = f"{callee.value.path}.__call__"
        if path is None:
            self._arguments_first(node)
            self._not(node, "this call")
        if self.records(path):
            try:
                return self._record(node, path, span)
            except NotFollowedError as exc:
                self._recorded(node, Unread(exc.error), path)
                raise
        builtin = BUILTINS.get(path)
        # a call not followed still has its arguments computed first, as Python does (a function of
        # the file called there, ``config=ds_config(args)``, is followed); each one not followed is
        # kept as such
        lazy = builtin is None or path in ("builtins.dict", "argparse.ArgumentParser",
                                           "types.SimpleNamespace", "argparse.Namespace", *EXITS)
        args = [self._element(a) if lazy else self._eval(a) for a in node.args
                if not isinstance(a, ast.Starred)]
        if any(isinstance(a, ast.Starred) for a in node.args):
            self._not(node, "a call with *args")
        kwargs, keys = self._keywords(node, lazy=lazy)
        if builtin is None:
            self._not(node, f"the call {short(path)}(...)")
        return builtin(self, node, args, kwargs, keys)

    def _method(self, node: ast.Call, func: ast.Attribute) -> Item:
        try:
            target = self._eval(func.value)
            value = target.value
        except NotFollowedError:  # model.compile(optimizer=make_optimizer(model)): model not known
            self._arguments_first(node)
            raise
        if isinstance(value, Namespace) and func.attr in value.values:  # config.make_schedule(...)
            function = value.values[func.attr]
            if not isinstance(function, Unread) and isinstance(function.raw, (Function, DataClass)):
                return self._call_of_file(function.raw, node)
        kind = "dict" if isinstance(value, dict) else \
            "list" if isinstance(value, list) and not target.frozen else \
            "parser" if isinstance(value, Parser) else None
        method = METHODS.get((kind, func.attr))
        if method is None:
            what = {dict: "a dict", list: "a tuple" if target.frozen else "a list"}.get(
                type(value), repr(value) if isinstance(value, (Parser, Namespace)) else type(value).__name__)
            self._arguments_first(node)
            self._not(node, f".{func.attr}() on {what}")
        if any(isinstance(a, ast.Starred) for a in node.args):
            self._not(node, "a call with *args")
        args = [self._element(a) for a in node.args]
        kwargs, keys = self._keywords(node, lazy=True)
        return method(self, target, args, kwargs, keys, node)

    def _call_of_file(self, callee: Function | DataClass, node: ast.Call) -> Item:
        """A call to a function of the file (followed into its body) or to a dataclass of the file
        (an instance); the arguments not followed are kept as such."""
        if any(isinstance(a, ast.Starred) for a in node.args):
            self._not(node, "a call with *args")
        args = [self._element(a) for a in node.args]
        kwargs, _ = self._keywords(node, lazy=True)
        if isinstance(callee, DataClass):
            return instance(self, callee, node, args, kwargs)
        return self._invoke(callee, node, args, kwargs)

    def _instance(self, cls: Subclass, node: ast.Call, span: Span) -> Item:
        """``CustomSchedule(d_model)``: a ``Subclass``'s instance, its ``__init__`` followed with
        ``self`` bound to it (``self.warmup_steps = warmup_steps``), recorded as a call of the
        format (its base's path)."""
        if any(isinstance(a, ast.Starred) for a in node.args):
            self._not(node, "a call with *args")
        args = [self._element(a) for a in node.args]
        kwargs, _ = self._keywords(node, lazy=True)
        made = Item(Instance(cls, Namespace({}, kind=cls.name)), span)
        if cls.init is not None:
            self._invoke(cls.init, node, [made, *args], kwargs)
        elif args or kwargs:
            raise self._python_error(f"{cls.name}() takes no arguments (Python raises TypeError)", node)
        self._recorded(node, made, cls.base)
        return made

    def _invoke(self, function: Function, node: ast.Call, args: list[Item], kwargs: dict[str, Item]) -> Item:
        """Follow a call to a function of the file into its body: its parameters bound as
        Python binds them, its statements followed, the value it returns."""
        if self._depth >= MAX_CALL_DEPTH:
            self._not(node, f"a call nested more than {MAX_CALL_DEPTH} deep")
        names = bind_arguments(self, function, node, args, kwargs)
        saved = (self.locals, self._local_names, self._global_names, self._enclosing, self._partial,
                 self._invocation)
        home = getattr(function, "home", self)  # a function of a module of the script: its names
        module_saved = (self.env, self.source, self._assigned_at, self._star_imports)
        self.env, self.source, self._assigned_at, self._star_imports = (
            home.env, home.source, home._assigned_at, home._star_imports)
        self._calls_made += 1
        self.locals, self._enclosing, self._invocation = names, function.enclosing, self._calls_made
        self._local_names, self._global_names = scope_names(function.node)
        self._depth += 1
        result = Item(None, self.span(node))
        try:
            self._run(function.node.body)
        except Returned as done:
            result = done.item
        finally:
            self._depth -= 1
            (self.locals, self._local_names, self._global_names, self._enclosing, self._partial,
             self._invocation) = saved
            self.env, self.source, self._assigned_at, self._star_imports = module_saved
        self.frames.append((function, names, result))
        return result if isinstance(result, Unread) else result.view(self.span(node))

    def _record(self, node: ast.Call, path: str, span: Span) -> Item:
        """A call to one of the format's classes, kept as its path and arguments."""
        if any(isinstance(a, ast.Starred) for a in node.args):
            self._not(node, "a call with *args")
        lazy = self.lazy_calls
        args = [self._element(a) if lazy else self._eval(a) for a in node.args]
        # ``name=`` only names ops (Keras drops it): an f-string there is read only if used
        kwargs, keys = self._keywords(node, lazy=lazy, lazy_names=("name",))
        made = Item(Call(path, args, kwargs, keys, span), span)
        self._recorded(node, made, path)
        return made

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
                    f"{short(path)}(...) is built inside a {KINDS.get(type(stmt), 'statement')}, which is "
                    "not followed (the file is read, never run)", self.span(node),
                    hint="build it at the top level of the file, from names assigned before")))

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
                                             f"{type_name(given.value)} (Python raises TypeError)",
                                             keyword.value)
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

    def _arguments_first(self, node: ast.Call) -> None:
        """A call that is not followed still has its arguments computed first, as Python computes
        them before calling: a function of the file called there is followed (``model.compile(
        optimizer=make_optimizer(model))`` builds the schedule in ``make_optimizer``); each one not
        followed is kept as such."""
        for argument in [*node.args, *(k.value for k in node.keywords)]:
            self._element(argument.value if isinstance(argument, ast.Starred) else argument)

    def _is_imported(self, node: ast.expr) -> bool:
        root = node
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name):
            return False
        item = self.lookup(root.id)
        if item is None:
            return root.id not in self._assigned_at and root.id in vars(builtins)
        return not isinstance(item, Unread) and isinstance(item.raw, Imported)

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
        if item is None or isinstance(item, Unread) or not isinstance(item.raw, Imported):
            return None
        return ".".join([item.raw.path, *reversed(parts)])
