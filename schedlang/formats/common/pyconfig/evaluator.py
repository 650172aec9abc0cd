"""The evaluator of a Python file's expressions: one ``visit_<Node>`` per expression followed
(``Constant``, ``Name``, ``Dict``, ``BinOp``, ``Call``, ...), the containers' operations as
Python does them, and the budget.  ``literal.Module`` adds the statements."""

from __future__ import annotations

import ast
import builtins
import math
import operator

from ....errors import SchedlangError, Span
from ....limits import MAX_DIGITS, MAX_FILE_BYTES, MAX_YAML_VALUES
from .. import symbols
from ..symbols import Symbol
from .calls import BUILTINS, EXITS, METHODS, instance, namespace_attribute
from .values import (
    ARITH,
    COMPARE,
    EXPRESSIONS,
    HINT,
    OPS,
    Call,
    DataClass,
    Function,
    Imported,
    Instance,
    Item,
    Namespace,
    NotFollowedError,
    Parser,
    Subclass,
    Unread,
    comparable,
    is_int,
    is_number,
    short,
    truth,
    type_name,
)


class Evaluator(ast.NodeVisitor):
    """Expressions of a followed file (a ``Module``): ``visit`` returns an ``Item``."""

    # -- expressions -------------------------------------------------------------------------

    def _value_or_unread(self, node: ast.expr) -> Item:
        try:
            return self._eval(node)
        except NotFollowedError as exc:
            self._partial = True
            return Unread(exc.error)

    def _eval(self, node: ast.expr) -> Item:
        return self.visit(node)  # one visit_<Expression> below; the rest is generic_visit

    def generic_visit(self, node: ast.AST):
        self._not(node, EXPRESSIONS.get(type(node), type(node).__name__))

    def visit_Constant(self, node: ast.Constant) -> Item:
        span = self.span(node)
        if isinstance(node.value, int) and abs(node.value).bit_length() > 4 * MAX_DIGITS:
            raise SchedlangError(f"this number has more than {MAX_DIGITS} digits", span)
        if isinstance(node.value, (int, float, str, bool, type(None))):
            return Item(node.value, span)
        self._not(node, "this constant")
        raise AssertionError  # unreachable

    def visit_List(self, node: ast.List | ast.Tuple) -> Item:
        items = []
        for element in node.elts:
            if isinstance(element, ast.Starred):
                items.extend(self._iterate(self._eval(element.value), element))
            else:
                items.append(self._element(element))
        self._spend(len(items), node)
        return Item(items, self.span(node), frozen=isinstance(node, ast.Tuple))

    def visit_Tuple(self, node: ast.Tuple) -> Item:
        return self.visit_List(node)

    def visit_Dict(self, node: ast.Dict) -> Item:
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
        return Item(out, self.span(node), keys)

    def visit_BinOp(self, node: ast.BinOp) -> Item:
        return self._binop(node.op, self._eval(node.left), self._eval(node.right), node)

    def visit_BoolOp(self, node: ast.BoolOp) -> Item:
        result = None
        for value in node.values:
            result = self._eval(value)
            if truth(result, value, self) == isinstance(node.op, ast.Or):
                break
        return result.view(self.span(node))

    def visit_IfExp(self, node: ast.IfExp) -> Item:
        return (self._eval(node.body) if truth(self._eval(node.test), node.test, self)
                else self._eval(node.orelse)).view(self.span(node))

    def visit_Subscript(self, node: ast.Subscript) -> Item:
        container = self._eval(node.value)
        if isinstance(node.slice, ast.Slice):
            return self._slice(container, node)
        return self._get_item(container, self._index(node), node).view(self.span(node))

    def visit_Attribute(self, node: ast.Attribute) -> Item:
        base = self._eval(node.value)
        if isinstance(base.value, Imported):
            return Item(Imported(f"{base.value.path}.{node.attr}"), self.span(node))
        if isinstance(base.value, Instance):  # self.warmup_steps
            base = Item(base.value.namespace, base.span)
        if isinstance(base.value, Namespace):
            return namespace_attribute(self, base, node).view(self.span(node))
        self._not(node, f"the attribute .{node.attr}")
        raise AssertionError  # unreachable

    def visit_JoinedStr(self, node: ast.JoinedStr) -> Item:
        self._not(node, "an f-string")
        raise AssertionError  # unreachable

    def _element(self, node: ast.expr) -> Item:
        """A container's element: one not followed is kept as such, read only if needed."""
        return self._value_or_unread(node)

    def _not(self, node: ast.AST, what: str) -> None:
        raise NotFollowedError(SchedlangError(f"{what} is not followed (the file is read, never run)",
                                          self.span(node), hint=HINT))

    def visit_Name(self, node: ast.Name) -> Item:
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
                raise NotFollowedError(SchedlangError(
                    f"the value of '{node.id}' is unknown: it is not assigned in this file, and "
                    f"`from {star[0]} import *` (line {star[1]}) may bind it", self.span(node),
                    hint=f"write its value in this file, or import it by name from {star[0]} (a "
                         "library is not read; a module file of the script beside it is)"))
            raise self._python_error(f"'{node.id}' is not assigned in this file (Python raises NameError)",
                                     node)
        if isinstance(item, Unread):
            raise NotFollowedError(item.error)
        return item.view(self.span(node))

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

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Item:
        operand = self._eval(node.operand)
        span = self.span(node)
        if isinstance(operand.raw, Symbol) and isinstance(node.op, (ast.USub, ast.UAdd)):
            if isinstance(node.op, ast.UAdd):
                return operand.view(span)
            result = -operand.raw.default
            return Item(symbols.negative(operand.raw, result, node.lineno) or result, span)
        value = operand.value
        if isinstance(node.op, ast.Not):
            return Item(not truth(operand, node.operand, self), span)
        if not is_number(value):
            self._not(node, f"unary {OPS[type(node.op)]} on {type_name(value)}")
        if isinstance(node.op, ast.Invert) and isinstance(value, float):
            raise self._python_error("bad operand for unary ~: float (Python raises TypeError)", node)
        op = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert}[type(node.op)]
        return Item(op(value), span)

    def _binop(self, op: ast.operator, left: Item, right: Item, node: ast.AST, inplace: bool = False) -> Item:
        carried = symbols.carried([left.raw, right.raw])
        if carried is not None:
            result = self._arith(op, *carried, node)
            made = symbols.binary(op, left.raw, right.raw, result, node.lineno)
            return Item(made or result, self.span(node))
        a, b, span = left.value, right.value, self.span(node)
        symbol = OPS[type(op)]
        if is_number(a) and is_number(b):
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
        self._not(node, f"{symbol} on {type_name(a)} and {type_name(b)}")
        raise AssertionError  # unreachable

    def _arith(self, op: ast.operator, a, b, node: ast.AST):
        if isinstance(op, ast.Pow) and is_int(a) and is_int(b) and b > 0 and abs(a) > 1 \
                and b * math.log10(abs(a)) > MAX_DIGITS:
            raise SchedlangError(f"this power has more than {MAX_DIGITS} digits", self.span(node))
        if isinstance(op, (ast.LShift, ast.RShift)) and is_int(b) and b > 4 * MAX_DIGITS:
            raise SchedlangError(f"this shift has more than {MAX_DIGITS} digits", self.span(node))
        function = ARITH.get(type(op))
        if function is None:
            self._not(node, f"the operator {OPS.get(type(op), '@')}")
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
        if is_int(result) and abs(result).bit_length() > 4 * MAX_DIGITS:
            raise SchedlangError(f"this number has more than {MAX_DIGITS} digits", self.span(node))
        return result

    def visit_Compare(self, node: ast.Compare) -> Item:
        left = self._eval(node.left)
        for op, right_node in zip(node.ops, node.comparators):
            right = self._eval(right_node)
            a, b = comparable(left, self), comparable(right, self)
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
                    ok = COMPARE[type(op)](a, b)
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
        raise self._python_error(f"a dict key must be a string or a number here, not {type_name(value)}",
                                 node)

    def _index(self, node: ast.Subscript):
        return self._key(self._eval(node.slice), node.slice)

    def _get_item(self, container: Item, key, node: ast.AST) -> Item:
        value = container.value
        if isinstance(value, dict):
            if key not in value:
                raise self._python_error(f"no key {key!r} (Python raises KeyError)", node)
            return value[key]
        if isinstance(value, (list, str)):
            if not is_int(key):
                raise self._python_error(f"{type_name(value)} indices must be integers (Python raises "
                                         "TypeError)", node)
            if not -len(value) <= key < len(value):
                raise self._python_error(f"index {key} out of range (Python raises IndexError)", node)
            return value[key] if isinstance(value, list) else Item(value[key], self.span(node))
        self._not(node, f"indexing {type_name(value)}")
        raise AssertionError  # unreachable

    def _slice(self, container: Item, node: ast.Subscript) -> Item:
        bounds = []
        for part in (node.slice.lower, node.slice.upper, node.slice.step):
            bound = None if part is None else self._eval(part).value
            if bound is not None and not is_int(bound):
                raise self._python_error("slice indices must be integers (Python raises TypeError)", part)
            bounds.append(bound)
        value = container.value
        if not isinstance(value, (list, str)):
            self._not(node, f"slicing {type_name(value)}")
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
        raise self._python_error(f"{type_name(target)} does not support item assignment (Python raises "
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
            raise self._python_error(f"{type_name(target)} does not support item deletion", node)

    def _update(self, out: dict, keys: dict, other: Item, node: ast.AST) -> None:
        value = other.value
        if not isinstance(value, dict):
            raise self._python_error(f"{type_name(value)} is not a mapping (Python raises TypeError)", node)
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
        raise self._python_error(f"{type_name(value)} is not iterable (Python raises TypeError)", node)

    def _no_cycle(self, container: Item, value: Item, node: ast.AST) -> None:
        """A dict or list that would hold itself (``a.append(a)``) is refused: every value the
        importers read is a tree."""
        stack, seen, goal = [value], set(), id(container.value)
        while stack:
            current = stack.pop()
            if isinstance(current, Unread):
                continue
            inner = current.raw
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
            value = current.raw
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

    def _named(self, name: str, item: Item) -> Item:
        """What binding ``name`` holds: a value computed from argparse defaults becomes a ``let`` of
        that name (``steps = 50_000 // args.batch_size``), so the imported file reads as the script."""
        if isinstance(item.raw, Symbol):
            return Item(item.raw.owner.let(name, item.raw), item.span)
        return item

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

