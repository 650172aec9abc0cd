"""The values a Python configuration file builds, as ``literal`` follows it.

An ``Item`` is a value with the span that built it; ``Unread`` one that was not followed
(reading it is its error); ``Imported`` a name an import binds; ``Call`` a call to a class a
format reads (a Keras schedule); ``Function`` a function of the file; ``Parser`` and
``Namespace`` what ``argparse`` builds.  Then the operator tables and the small predicates the
evaluator and the builtins share.
"""

from __future__ import annotations

import ast
import operator

from ....errors import SchedlangError, Span
from ....limits import MAX_YAML_VALUES
from ..symbols import Symbol

#: Names that let a file change any variable behind the statements' backs.
DYNAMIC = ("exec", "eval", "globals", "locals", "vars", "setattr", "delattr", "__import__", "__builtins__",
           "compile", "__dict__")
HINT = ("schedlang follows assignments, x[...] = ..., x += ..., .append/.update, if/else on values it "
         "computes, arithmetic and names assigned earlier; write the value out that way")


class Item:
    """A value the file builds, with the span that built it (and its keys' spans for a dict).

    ``value`` is a number, string, bool, None, ``dict`` of Items, ``list`` of Items (a tuple
    too, with ``frozen``), an ``Imported`` name or a ``Call``.  A number a script computes from
    its argparse defaults is held as a ``Symbol`` (``raw``): reading ``value`` gives its default
    and freezes the flags it comes from (``common/symbols.py``), so only the arithmetic that
    carries symbols reads ``raw``.
    """

    def __init__(self, value, span: Span | None, keys: dict | None = None, frozen: bool = False):
        self._value, self.span = value, span
        self.keys = keys if keys is not None else {}
        self.frozen = frozen

    @property
    def value(self):
        if isinstance(self._value, Symbol):
            where = f"line {self.span.line}" if self.span is not None else "the file"
            self._value.owner.freeze(self._value, f"{where} reads its value where no parameter is carried "
                                                  "(a test, a comparison, an index, a call)")
            return self._value.default
        return self._value

    @property
    def raw(self):
        """The value, a ``Symbol`` kept as one (no flag frozen)."""
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

    @property
    def raw(self):
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

    def __init__(self, resolve: bool = False):
        self.values: dict[str, Item] = {}
        #: the option strings added (``--lr``, ``-l``): argparse refuses one added twice
        #: (``ArgumentError: conflicting option string``) unless ``conflict_handler="resolve"``
        self.options: set[str] = set()
        self.resolve = resolve

    def __repr__(self) -> str:
        return "argparse.ArgumentParser"


class Namespace:
    """An object read by its attributes: what ``parser.parse_args()`` returns for a command line
    that gives no option (the defaults, by destination: ``args.lr``), a ``SimpleNamespace(...)``
    or an instance of a dataclass of the file (``kind`` names which; ``frozen``: a
    ``@dataclass(frozen=True)``, whose attributes Python refuses to assign)."""

    def __init__(self, values: dict[str, Item], kind: str = "argparse.Namespace", frozen: bool = False):
        self.values, self.kind, self.frozen = values, kind, frozen

    def __repr__(self) -> str:
        return self.kind


class Subclass:
    """A class of the file whose one base is a class the format reads (a Keras
    ``LearningRateSchedule``): an instance is built by following its ``__init__`` (``init``, a
    ``Function``, or None), and its other methods (``methods``) are read by the format (the
    schedule's ``__call__``, traced with a symbolic step)."""

    def __init__(self, node: ast.ClassDef, base: str, init: Function | None, home):
        self.node, self.base, self.init, self.home = node, base, init, home
        self.methods = {f.name: f for f in node.body if isinstance(f, ast.FunctionDef)}

    @property
    def name(self) -> str:
        return self.node.name

    def __repr__(self) -> str:
        return f"the class {self.node.name}"


class Instance:
    """An instance of a ``Subclass``: the attributes its ``__init__`` assigned (``self.d_model``),
    read by attribute as a ``Namespace``'s."""

    def __init__(self, cls: Subclass, namespace: Namespace):
        self.cls, self.namespace = cls, namespace

    def __repr__(self) -> str:
        return f"a {self.cls.name}"


class DataClass:
    """A ``@dataclass`` of the file: the ``__init__`` it generates (a ``Function`` whose parameters
    are the fields in order, with their defaults: an ``Unread`` for a ``default_factory``), bound
    as any function of the file is (``calls.bind_arguments``)."""

    def __init__(self, name: str, fields: dict[str, Item | None], frozen: bool):
        arguments = ast.arguments(posonlyargs=[], args=[ast.arg(arg=f) for f in fields], vararg=None,
                                  kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
        generated = ast.FunctionDef(name=name, args=arguments, body=[], decorator_list=[])
        self.name, self.frozen = name, frozen
        self.init = Function(generated, {k: v for k, v in fields.items() if v is not None})

    def __repr__(self) -> str:
        return f"the dataclass {self.name}"


class Returned(Exception):  # noqa: N818 - the control flow of `return`, not an error
    def __init__(self, item: Item):
        super().__init__("return")
        self.item = item


class Exit(Exception):  # noqa: N818 - the control flow of a program that ends, not an error
    """The program ends here (``raise``, ``sys.exit()``, ``assert`` of a false value): nothing
    after it runs.  ``error`` says where, for what is then never built."""

    def __init__(self, error: SchedlangError):
        super().__init__(error.message)
        self.error = error


class MayExit(Exit):  # noqa: N818
    """A statement not followed may end the program here (``if flag: sys.exit()`` on a value not
    known): what follows it may or may not run, so it is not known either."""


class NotFollowedError(Exception):
    def __init__(self, error: SchedlangError):
        super().__init__(error.message)
        self.error = error


ARITH = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
          ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
          ast.LShift: operator.lshift, ast.RShift: operator.rshift, ast.BitAnd: operator.and_,
          ast.BitOr: operator.or_, ast.BitXor: operator.xor}
OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
        ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
        ast.MatMult: "@", ast.USub: "-", ast.UAdd: "+", ast.Invert: "~"}
COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
            ast.Gt: operator.gt, ast.GtE: operator.ge}
KINDS = {ast.For: "for loop", ast.AsyncFor: "for loop", ast.While: "while loop", ast.With: "with block",
          ast.AsyncWith: "with block", ast.Try: "try block", ast.FunctionDef: "function definition",
          ast.AsyncFunctionDef: "function definition", ast.ClassDef: "class definition", ast.If: "if",
          ast.Assign: "assignment", ast.AugAssign: "assignment", ast.AnnAssign: "assignment",
          ast.Expr: "statement", ast.Global: "global statement", ast.Raise: "raise", ast.Assert: "assert",
          ast.ImportFrom: "import", ast.Delete: "del", ast.Match: "match"}
EXPRESSIONS = {ast.ListComp: "a comprehension", ast.DictComp: "a comprehension", ast.SetComp: "a set",
                ast.GeneratorExp: "a generator", ast.Lambda: "a lambda", ast.Set: "a set",
                ast.NamedExpr: "an assignment expression", ast.Await: "await", ast.Starred: "a starred value"}


def contents(value) -> list:
    """The items a container holds: a dict's or a namespace's values, a list's items, a call's
    arguments."""
    if isinstance(value, dict):
        return list(value.values())
    if isinstance(value, list):
        return list(value)
    if isinstance(value, (Parser, Namespace)):
        return list(value.values.values())
    return [*value.args, *value.kwargs.values()]


def truth(item: Item, node: ast.AST, module) -> bool:
    value = item.value
    if isinstance(value, (Imported, Call)):
        return True
    return bool(value)


def comparable(item: Item, module):
    value = item.value
    if isinstance(value, (Imported, Call)):
        raise NotFollowedError(SchedlangError("comparing an imported object is not followed", item.span,
                                               hint=HINT))
    if isinstance(value, (dict, list)):
        module.check_untainted(item)
        plain = item.plain()
        module.budget -= len(repr(plain)) // 8  # comparing walks the whole value: counted
        if module.budget < 0:
            raise SchedlangError(f"following this file makes more than {MAX_YAML_VALUES} values", item.span)
        return plain
    return value


def is_number(value) -> bool:
    return isinstance(value, (int, float))  # bool too: Python computes True + 1


def is_int(value) -> bool:
    return isinstance(value, int)


def type_name(value) -> str:
    if isinstance(value, Imported):
        return value.path
    return {dict: "dict", list: "list"}.get(type(value), type(value).__name__)


def short(path: str) -> str:
    return path.removeprefix("builtins.")


