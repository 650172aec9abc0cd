"""The dicts and lists of a followed file: indexing, slicing, item assignment and deletion,
``update``, iteration and ``deepcopy`` as Python does them, every value counted against the
budget; a value holding itself refused; what a statement not followed may change marked
(``tainted``) and refused where it is read."""

from __future__ import annotations

import ast

from ....errors import SchedlangError
from ....limits import MAX_YAML_DEPTH
from .state import FileState
from .values import Call, Item, Namespace, Parser, Unread, contents, is_int, type_name


class Containers(FileState):
    """The containers' operations, and what was changed behind the reader's back."""

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

    def check_untainted(self, item: Item) -> None:
        """Refuse a value holding a dict or list that a statement not followed may have changed,
        or nesting deeper than ``MAX_YAML_DEPTH`` (what reads it afterwards may recurse)."""
        seen: set[int] = set()
        stack = [(item, 0)]
        while stack:
            current, depth = stack.pop()
            if isinstance(current, Unread):
                continue
            value = current.raw
            if isinstance(value, (dict, list, Call, Parser, Namespace)):
                if depth > MAX_YAML_DEPTH:
                    raise SchedlangError(f"this value nests more than {MAX_YAML_DEPTH} levels deep",
                                         item.span)
                if id(value) in seen:
                    continue
                seen.add(id(value))
                if id(value) in self.tainted:
                    raise self.tainted[id(value)][1]
                stack.extend((child, depth + 1) for child in contents(value))

    def _mark(self, item: Item, error: SchedlangError, calls: bool = True) -> None:
        """Mark the dicts and lists of ``item`` (and its ``Call``s unless it was only handed
        to a function: a format's object is taken as fixed once built) as changed."""
        kinds = (dict, list, Call, Parser, Namespace) if calls else (dict, list, Parser, Namespace)
        stack = [item]
        while stack:
            current = stack.pop()
            if isinstance(current, Unread):
                continue
            value = current.raw
            if isinstance(value, kinds) and id(value) not in self.tainted:
                self.tainted[id(value)] = (value, error)
                stack.extend(contents(value))
