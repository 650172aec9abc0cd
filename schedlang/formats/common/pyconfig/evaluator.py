"""The evaluator of a Python file's expressions: one ``visit_<Node>`` per expression followed
(``Constant``, ``Name``, ``Dict``, ``BinOp``, ``Compare``, ...), computed as Python computes them;
calls are ``calling``'s, the containers' operations ``containers``'."""

from __future__ import annotations

import ast
import builtins
import math
import operator

from ....errors import SchedlangError
from ....limits import MAX_DIGITS, MAX_FILE_BYTES
from .. import symbols
from ..symbols import Symbol
from .calls import namespace_attribute
from .state import FileState
from .values import (
    ARITH,
    COMPARE,
    OPS,
    Imported,
    Instance,
    Item,
    Namespace,
    NotFollowedError,
    Unread,
    comparable,
    is_int,
    is_number,
    truth,
    type_name,
)


class Evaluator(FileState):
    """Expressions of a followed file: ``visit`` returns an ``Item``."""

    def _value_or_unread(self, node: ast.expr) -> Item:
        try:
            return self._eval(node)
        except NotFollowedError as exc:
            self._partial = True
            return Unread(exc.error)

    def _eval(self, node: ast.expr) -> Item:
        return self.visit(node)  # one visit_<Expression> below; the rest is generic_visit

    def _element(self, node: ast.expr) -> Item:
        """A container's element: one not followed is kept as such, read only if needed."""
        return self._value_or_unread(node)

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
