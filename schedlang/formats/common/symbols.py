"""A training script's argparse defaults as parameters of the file it imports to.

``parser.add_argument("--lr", type=float, default=3e-4)`` then ``args.lr``: the imported
file says ``param args_lr: float = 0.0003`` and uses the name, so ``-D args_lr=1e-3`` is the
run started with ``--lr 1e-3``.  What the script computes from such values
(``steps = 50_000 // args.batch_size``) is a ``Symbol``: its ``.sched`` text (``floor(50000 /
batch_size)``), the value Python computes from the defaults, and the same value computed
exactly as the text means it.  A variable of the script that holds one becomes a ``let`` of
the same name, so the imported file reads as the script does.

Sound by construction: a symbol is only ever carried through the arithmetic written here
(``+ - * / // % **``, unary ``-``, ``int()``, ``float()``, ``min``, ``max``).  Anything else that
reads its value (an ``if`` on it, a comparison, an index, a call not followed) gets the
default and *freezes* the flags it comes from: they are written as ``let`` constants with the
line that read them, so ``-D`` refuses them instead of giving a file that is right only for the
defaults.  Where the text's exact arithmetic and Python's floats disagree on a whole number
(``int(0.29 * 100)`` is 28 in Python, 29 exactly), the value is Python's and its flags are
frozen the same way; elsewhere they differ by float rounding only (a few ulps).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from fractions import Fraction

from ...codegen.sched import sched_text
from ...limits import MAX_DIGITS
from ...semantics.names import LANGUAGE_NAMES
from .numbers import exact
from .statements import def_stmt, let_stmt, param_stmt

#: Names a script's ``param`` or ``let`` never takes: the language's (``semantics.names``) and the
#: other schedules an import writes, and the file's ``trunc``.
TAKEN = LANGUAGE_NAMES | {"momentum", "weight_decay", "trunc"}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
#: How tightly each form binds: a name or call, then ``**``, unary minus, ``* /``, ``+ -``.
ATOM, POWER, UNARY, PRODUCT, SUM = 5, 4, 3, 2, 1
#: ``int(x)`` truncates toward zero: ``floor`` above zero, ``ceil`` below (no ``if``, so the
#: core style prints it too).
TRUNC = ("floor(max(x, 0)) + ceil(min(x, 0))", "Python's int(x), toward zero")  # def trunc(x): its body
_MAX_EXPONENT = 64
#: The longest expression a value carries (a ``let`` per variable keeps real scripts far below).
MAX_TEXT = 2000
_TOLERANCE = Fraction(1, 10**12)


@dataclass
class Param:
    name: str
    flag: str
    kind: str  # "int" | "float"
    default: int | float
    line: int


@dataclass
class Symbols:
    """One script's parameters, the ``let``s its variables became, and the flags frozen (with why)."""

    params: dict[str, Param] = field(default_factory=dict)
    lets: dict[str, Symbol] = field(default_factory=dict)
    frozen: dict[str, str] = field(default_factory=dict)
    suffixes: dict[str, int] = field(default_factory=dict)
    frozen_lets: set = field(default_factory=set)
    #: The symbols turned into nodes of the imported file (``source_text.expression_node``), in
    #: order: what ``declarations`` declares (``source_text.declared``, handed this owner by the
    #: format whose reader made it: no state of the import is kept anywhere else).
    used: list = field(default_factory=list)

    def _free(self, wanted: str, prefix: str) -> str:
        name = wanted if _NAME.match(wanted) and wanted.isascii() else "value"
        if name in TAKEN:
            name = f"{prefix}_{name}"
        base, n = name, self.suffixes.get(name, 2)
        while name in TAKEN or name in self.params or name in self.lets:
            name, n = f"{base}_{n}", n + 1
        self.suffixes[base] = n  # the next try for that name: a file repeating one name stays linear
        return name

    def param(self, dest: str, flag: str, kind: str, default, line: int) -> Symbol:
        """The symbol of an argparse default (``args.lr`` -> ``args_lr``)."""
        name = self._free(dest, "args")
        self.params[name] = Param(name, flag, kind, default, line)
        return Symbol(self, name, ATOM, default, _exact(default), frozenset({name}), frozenset())

    def forget(self, symbol: Symbol) -> None:
        """Drop the parameter ``symbol`` is, replaced before anything read it (argparse's
        ``conflict_handler="resolve"``: the later ``--lr`` replaces the earlier one), so that the
        later one takes its name (``args_lr``, not ``args_lr_2``)."""
        self.params.pop(symbol.text, None)

    def let(self, variable: str, value: Symbol) -> Symbol:
        """``steps = 50_000 // args.batch_size``: the script's variable as a ``let``."""
        if _NAME.match(value.text):  # a parameter or a let already
            return value
        name = self._free(variable, "v")
        self.lets[name] = value
        return Symbol(self, name, ATOM, value.default, value.exact, frozenset(), frozenset({name}))

    def reach(self, symbol: Symbol, skip=frozenset()) -> tuple[set, set]:
        """The parameters and ``let``s ``symbol`` reads, through the ``let``s it names (a symbol
        holds only the names its own text has, so a chain of variables stays linear)."""
        params, lets, stack = set(symbol.params), set(), list(symbol.lets)
        while stack:
            name = stack.pop()
            if name in lets or name in skip:
                continue
            lets.add(name)
            params |= self.lets[name].params
            stack.extend(self.lets[name].lets)
        return params, lets

    def freeze(self, symbol: Symbol, why: str) -> None:
        params, lets = self.reach(symbol, self.frozen_lets)
        self.frozen_lets |= lets  # their parameters are frozen already: not walked again
        for name in params:
            self.frozen.setdefault(name, why)

    def declarations(self, used: list[Symbol]) -> tuple[list[tuple], list[tuple]]:
        """The statements the imported file needs for the symbols it writes, each a (statement or
        None for a comment alone, comment or None): the ``param``s, which a core-style file keeps
        too, and every statement: params, frozen flags, ``trunc`` and ``let``s in order."""
        params, lets = set(), set()
        for symbol in used:
            more_params, more_lets = self.reach(symbol, lets)
            params |= more_params
            lets |= more_lets
        params = [p for p in self.params if p in params]  # in the order the script adds them
        param_lines, frozen_lines = [], []
        for name in params:
            p = self.params[name]
            value = sched_text(exact(p.default))
            if name in self.frozen:
                frozen_lines.append((let_stmt(name, value), f"{p.flag} (line {p.line}), taken at its "
                                     f"default: {self.frozen[name]}"))
            else:
                param_lines.append((param_stmt(name, p.kind, value), f"{p.flag}, argparse default "
                                    f"(line {p.line})"))
        needs_trunc = any("trunc(" in s.text for s in [*used, *(self.lets[n] for n in lets)])
        let_lines = [(let_stmt(n, self.lets[n].text), None) for n in self.lets if n in lets]
        note = [(None, f"{p.flag} (line {p.line}) is taken at its default {p.default!r}: "
                       f"{self.frozen[p.name]}")
                for p in self.params.values() if p.name in self.frozen and p.name not in params]
        trunc = [(def_stmt("trunc", ("x",), TRUNC[0]), TRUNC[1])] if needs_trunc else []
        return param_lines, [*note, *param_lines, *frozen_lines, *trunc, *let_lines]


@dataclass(frozen=True, eq=False)
class Symbol:
    """A number the script computes from its argparse defaults: the ``.sched`` text that computes
    it, how tightly that text binds, Python's value at the defaults, the exact value of the text
    at the defaults, and the parameters and ``let``s its text names (``Symbols.reach`` follows the
    ``let``s to everything it reads)."""

    owner: Symbols
    text: str
    prec: int
    default: int | float
    exact: Fraction
    params: frozenset
    lets: frozenset

    def __repr__(self) -> str:
        return repr(self.default)

    @property
    def kind(self) -> str:
        return "int" if isinstance(self.default, int) else "float"


def _exact(value) -> Fraction:
    number = exact(value)
    return Fraction(int(number.p), int(number.q))


def _operand(value, prec: int, right: bool = False) -> str:
    """``value`` (a symbol or a Python number) as an operand of a form binding at ``prec``."""
    if isinstance(value, Symbol):
        text, own = value.text, value.prec
    else:
        text = sched_text(exact(value))
        own = UNARY if text.startswith("-") else ATOM
    return f"({text})" if own < prec or (right and own == prec and prec != POWER) else text


def _parts(value) -> tuple[Fraction, frozenset, frozenset]:
    if isinstance(value, Symbol):
        return value.exact, value.params, value.lets
    return _exact(value), frozenset(), frozenset()


def _made(owner: Symbols, text: str, prec: int, result, exact_value: Fraction | None,
          operands, line: int) -> Symbol | None:
    """The symbol of an operation, or None (the operands frozen) where the text's exact value and
    Python's disagree beyond float rounding (and on any whole number)."""
    params = frozenset().union(*(_parts(o)[1] for o in operands))
    lets = frozenset().union(*(_parts(o)[2] for o in operands))
    if exact_value is not None and (len(text) > MAX_TEXT or max(
            exact_value.numerator.bit_length(), exact_value.denominator.bit_length()) > 4 * MAX_DIGITS):
        exact_value = None  # a function of the file applied over and over: the text doubles each time
    made = Symbol(owner, text, prec, result, exact_value, params, lets) if exact_value is not None else None
    python = _exact(result) if isinstance(result, int) or result == result and abs(result) != float("inf") \
        else None
    if made is None or python is None or (python != exact_value if isinstance(result, int)
                                          else abs(python - exact_value) > _TOLERANCE * abs(python)):
        for operand in operands:
            if isinstance(operand, Symbol):
                owner.freeze(operand, f"line {line} computes a value whose exact form differs from "
                                      "Python's float arithmetic there, or that no expression carries")
        return None
    return made


def _floor(value: Fraction) -> int:
    return value.numerator // value.denominator


def binary(op: ast.operator, a, b, result, line: int) -> Symbol | None:
    """``a op b`` (one of them a symbol, the other a symbol or a number; ``result`` Python's value)."""
    owner = (a if isinstance(a, Symbol) else b).owner
    x, y = _parts(a)[0], _parts(b)[0]
    if isinstance(op, (ast.Add, ast.Sub)):
        sign = "+" if isinstance(op, ast.Add) else "-"
        text = f"{_operand(a, SUM)} {sign} {_operand(b, SUM, right=True)}"
        return _made(owner, text, SUM, result, x + y if sign == "+" else x - y, (a, b), line)
    if isinstance(op, (ast.Mult, ast.Div)):
        sign = "*" if isinstance(op, ast.Mult) else "/"
        value = x * y if sign == "*" else (x / y if y else None)
        return _made(owner, f"{_operand(a, PRODUCT)} {sign} {_operand(b, PRODUCT, right=True)}", PRODUCT,
                     result, value, (a, b), line)
    if isinstance(op, ast.FloorDiv) and y:
        text = f"floor({_operand(a, PRODUCT)} / {_operand(b, PRODUCT, right=True)})"
        return _made(owner, text, ATOM, result, Fraction(_floor(x / y)), (a, b), line)
    if isinstance(op, ast.Mod) and y:
        quotient = f"floor({_operand(a, PRODUCT)} / {_operand(b, PRODUCT, right=True)})"
        text = f"{_operand(a, SUM)} - {_operand(b, PRODUCT)} * {quotient}"
        return _made(owner, text, SUM, result, x - y * _floor(x / y), (a, b), line)
    if isinstance(op, ast.Pow) and y.denominator == 1 and abs(y) <= _MAX_EXPONENT and (x or y >= 0):
        text = f"{_operand(a, ATOM)} ** {_operand(b, POWER)}"
        return _made(owner, text, POWER, result, x ** int(y), (a, b), line)
    return _made(owner, "", ATOM, result, None, (a, b), line)


def carried(values) -> list | None:
    """The defaults of ``values`` when one of them is a ``Symbol`` and the rest are numbers (not
    bools): an operation on them carries the symbol.  None otherwise (the values are read)."""
    if not any(isinstance(v, Symbol) for v in values):
        return None
    if not all(isinstance(v, Symbol) or isinstance(v, (int, float)) and not isinstance(v, bool)
               for v in values):
        return None
    return [v.default if isinstance(v, Symbol) else v for v in values]


def negative(a: Symbol, result, line: int) -> Symbol | None:
    return _made(a.owner, f"-{_operand(a, POWER)}", UNARY, result, -a.exact, (a,), line)


def converted(kind: type, a: Symbol, result, line: int) -> Symbol | None:
    """``int(x)`` (Python truncates toward zero: the file's ``trunc``) or ``float(x)``."""
    if kind is float or a.kind == "int":
        return _made(a.owner, a.text, a.prec, result, a.exact, (a,), line)
    whole = _floor(a.exact) if a.exact >= 0 else -_floor(-a.exact)
    return _made(a.owner, f"trunc({a.text})", ATOM, result, Fraction(whole), (a,), line)


def extreme(function, values: list, result, line: int) -> Symbol | None:
    """``min(...)`` / ``max(...)`` of numbers, one of them a symbol at least."""
    owner = next(v for v in values if isinstance(v, Symbol)).owner
    exacts = [_parts(v)[0] for v in values]
    text = f"{function.__name__}({', '.join(_operand(v, SUM) for v in values)})"
    return _made(owner, text, ATOM, result, function(exacts), values, line)
