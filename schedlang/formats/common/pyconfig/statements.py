"""The statements of a followed file: one ``visit_<Statement>`` per statement followed
(assignments of every kind, ``if``, ``del``, ``return``, ``raise``, ``assert``); a statement not
followed has what it may bind or change marked as its error, and where the program may end,
what follows is unknown.  ``definitions`` adds ``def``, ``class`` and ``import``."""

from __future__ import annotations

import ast

from ....errors import SchedlangError
from .calls import EXITS, namespace_attribute
from .state import FileState
from .syntax import ASSIGNED, PASSED, effects, own_nodes
from .values import (
    HINT,
    Call,
    Exit,
    Instance,
    Item,
    MayExit,
    Namespace,
    NotFollowedError,
    Parser,
    Returned,
    Unread,
    truth,
)


class Statements(FileState):
    """The statements of a followed file."""

    def _run(self, body: list[ast.stmt]) -> None:
        for index, stmt in enumerate(body):
            try:
                self._follow(stmt)
            except MayExit as exc:  # what follows may not run: it is not known either
                for rest in body[index + 1:]:
                    self._unknown_after(rest, exc.error)
                raise

    def _follow(self, stmt: ast.stmt) -> None:
        """One statement, or what it may change marked when it is not followed."""
        self._partial = False
        try:
            self._statement(stmt)
        except NotFollowedError as exc:
            self._not_followed(stmt, exc.error)
            self._record_inside(stmt)
            exit_node = self._exit_inside(stmt)
            if exit_node is not None:
                where = exc.error if exc.error.span is not None and exc.error.span.line == stmt.lineno \
                    else self._not_followed_error(stmt, exc.error.message)
                raise MayExit(SchedlangError(
                    f"{where.message}; it may end the script ({_exit_text(exit_node)} at line "
                    f"{exit_node.lineno}), so what follows it is not known here", where.span,
                    hint="decide it in the file (a value the file computes), or move the exit after "
                         "the schedule is built")) from None
            if self.locals is not None and any(isinstance(n, ast.Return) for n in own_nodes(stmt)):
                raise Returned(Unread(SchedlangError(  # what the function returns is not known
                    f"{exc.error.message}; it may return or raise, so what the function returns "
                    "is not known here", exc.error.span, hint=exc.error.hint))) from None
            return
        if self._partial:  # a part not followed (x = setup(cfg)) may have changed what it was given
            error = self._not_followed_error(stmt, "a part of it is not followed")
            self._changes(stmt, error)
            for node in ast.walk(stmt):  # (y := ...) inside a part not followed binds y
                if isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
                    self._bind(node.target.id, Unread(error))

    def _exit_inside(self, stmt: ast.stmt) -> ast.AST | None:
        """The first ``raise``, ``assert`` or exit call (``sys.exit()``, ...) that running ``stmt``
        may reach (a function it defines runs later, not here), or None."""
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        found = [n for n in own_nodes(stmt) if isinstance(n, (ast.Raise, ast.Assert))
                 or isinstance(n, ast.Call) and self._path(n.func) in EXITS]
        return min(found, key=lambda n: (n.lineno, n.col_offset), default=None)

    def _unknown_after(self, stmt: ast.stmt, error: SchedlangError) -> None:
        """A statement after a possible end of the program: every name it may bind, every dict or
        list it may change and every format call in it reads as ``error``, at that end."""
        bound, _, _ = effects(stmt, self._path)
        for name in bound:
            self._bind(name, Unread(error))
        self._changes(stmt, error)
        for node in ast.walk(stmt):
            path = self._path(node.func) if isinstance(node, ast.Call) else None
            if path is not None and self.records(path):
                self._recorded(node, Unread(error), path)

    def _statement(self, stmt: ast.stmt) -> None:
        self.visit(stmt)  # one visit_<Statement> below; the rest is generic_visit: not followed

    def visit_Assign(self, stmt: ast.Assign) -> None:
        value = self._value_or_unread(stmt.value)
        for target in stmt.targets:
            self._assign(target, value, stmt)

    def visit_AnnAssign(self, stmt: ast.AnnAssign) -> None:
        if stmt.value is not None:
            self._assign(stmt.target, self._value_or_unread(stmt.value), stmt)

    def visit_AugAssign(self, stmt: ast.AugAssign) -> None:
        self._augment(stmt)

    def visit_Expr(self, stmt: ast.Expr) -> None:
        if isinstance(stmt.value, ast.Constant):
            return  # a docstring
        self._eval(stmt.value)

    def _test(self, stmt: ast.If | ast.Assert, keyword: str) -> bool:
        """The truth of an ``if``'s or ``assert``'s test; not followed when it is not computed."""
        try:
            test = self._eval(stmt.test)
        except NotFollowedError as exc:
            raise NotFollowedError(SchedlangError(
                f"this {keyword} is not followed: its test is not computed here ({exc.error.message})",
                self.span(stmt), hint=HINT)) from None
        return truth(test, stmt.test, self)

    def visit_If(self, stmt: ast.If) -> None:
        self._run(stmt.body if self._test(stmt, "if") else stmt.orelse)
        self._partial = False  # its statements were each handled

    def visit_Delete(self, stmt: ast.Delete) -> None:
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
                raise NotFollowedError(self._not_followed_error(stmt, "it deletes an attribute"))

    def visit_Return(self, stmt: ast.Return) -> None:
        if self.locals is None:  # ast.parse takes it; Python's compiler refuses the file
            raise self._python_error("'return' outside function: Python refuses to run this file "
                                     "(SyntaxError)", stmt)
        raise Returned(Item(None, self.span(stmt)) if stmt.value is None
                      else self._value_or_unread(stmt.value))

    def visit_Raise(self, stmt: ast.Raise) -> None:
        """``raise``: the program stops here (a ``try`` around it is not followed, so nothing
        catches it); nothing after it runs."""
        raise Exit(SchedlangError("the script ends here: this raise stops it, and Python runs nothing "
                                   "after it", self.span(stmt)))

    def visit_Assert(self, stmt: ast.Assert) -> None:
        """``assert test``: the program stops here when ``test`` is false (``python -O`` skips
        asserts; a training script is read as ``python`` runs it)."""
        if not self._test(stmt, "assert"):
            raise Exit(SchedlangError("the script ends here: this assert fails (AssertionError), and "
                                       "Python runs nothing after it", self.span(stmt)))

    def visit_Nonlocal(self, stmt: ast.Nonlocal) -> None:
        raise NotFollowedError(self._not_followed_error(stmt, "a nonlocal name"))

    def visit_Pass(self, stmt: ast.Pass) -> None:
        pass

    def visit_Global(self, stmt: ast.Global) -> None:
        pass  # `global x` at module level changes nothing; in a function, _invoke reads it

    def _assign(self, target: ast.expr, value: Item, stmt: ast.stmt) -> None:
        if isinstance(target, ast.Name):
            self._bind(target.id, value if isinstance(value, Unread) else self._named(target.id, value.view(
                value.span)))
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            self._unpack(target, value, stmt)
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
            if isinstance(base.value, Instance):  # self.warmup_steps = warmup_steps
                base = Item(base.value.namespace, base.span)
            if isinstance(base.value, Namespace):  # args.lr = 1e-3
                self._assignable(base.value, target)
                base.value.values[target.attr] = self._named(target.attr, value)
                return
        raise NotFollowedError(self._not_followed_error(stmt, "it assigns an attribute"))

    def _assignable(self, namespace: Namespace, target: ast.Attribute) -> None:
        if namespace.frozen:
            raise self._python_error(f"cannot assign to field '{target.attr}' of a frozen dataclass (Python "
                                     "raises FrozenInstanceError)", target)

    def _unpack(self, target: ast.Tuple | ast.List, value: Item, stmt: ast.stmt) -> None:
        """``a, b = ...``: one value to each name, as many as Python requires."""
        if any(isinstance(e, ast.Starred) for e in target.elts):
            raise NotFollowedError(self._not_followed_error(stmt, "a starred target"))
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

    def _augment(self, stmt: ast.AugAssign) -> None:
        target = stmt.target
        if isinstance(target, ast.Name):
            current = self.visit_Name(target)
            self._bind(target.id, self._named(target.id, self._binop(stmt.op, current, self._eval(stmt.value),
                                                                     stmt, inplace=True)))
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
                current = namespace_attribute(self, base, target)
                self._assignable(base.value, target)
                base.value.values[target.attr] = self._named(target.attr, self._binop(
                    stmt.op, current, self._eval(stmt.value), stmt, inplace=True))
                return
        raise NotFollowedError(self._not_followed_error(stmt, "it changes an attribute"))

    def _not_followed(self, stmt: ast.stmt, error: SchedlangError) -> None:
        """A statement not followed: every name it may bind reads as its error, and so does
        every dict or list it may change."""
        where = error if error.span is not None and error.span.line == stmt.lineno \
            else self._not_followed_error(stmt, error.message)
        bound, _, _ = effects(stmt, self._path)
        for name in bound:
            self._bind(name, Unread(SchedlangError(f"{where.message}, and it may change '{name}'",
                                                   where.span, hint=where.hint)))
        self._changes(stmt, where)

    def _changes(self, stmt: ast.stmt, error: SchedlangError) -> None:
        """Mark what ``stmt`` may change without being followed: a dict or list it assigns into,
        calls a method of or passes to a function of this file (a library's function is taken
        to receive the value, not to change it), and the names a def / class / lambda in it
        may change when it runs."""
        _, changed, late = effects(stmt, self._path)
        for name, how in changed.items():
            item = self.lookup(name)
            if item is None or isinstance(item, Unread):
                continue
            message = SchedlangError(f"{error.message}, and it may change '{name}'", error.span,
                                     hint=error.hint)
            # a format's object is fixed once built: calling its methods (trainer.train(),
            # sched.step() in a loop) leaves it alone; assigning into it does not
            if isinstance(item.raw, (dict, list, Parser, Namespace)) \
                    or how == ASSIGNED and isinstance(item.raw, Call):
                self._mark(item, message, calls=how != PASSED)
        for name, node in late.items():
            self.late.setdefault(name, self.span(node))


def _exit_text(node: ast.AST) -> str:
    """How an exit reads in a message: ``raise``, ``assert``, ``sys.exit()``."""
    if isinstance(node, ast.Call):
        return f"{ast.unparse(node.func)}()"
    return "raise" if isinstance(node, ast.Raise) else "assert"
