"""Parameters: what a declaration is (``ParamInfo``, its symbols) and the one place values meet it.

A file's ``param`` statements are lowered into ``ParamInfo``s; every way a value reaches them
(``compile(params=)``, ``-D``, scheduler constructors, ``equivalent(params=)``, ``from_python``'s
arguments, a resumed run's values) goes through ``to_number`` and ``bind_params`` here, so an
``int`` is a whole number >= 0 and a ``where`` clause holds whichever door the value came in by.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import sympy as sp

from ..errors import SchedlangError, Span
from ..limits import MAX_DIGITS, LimitError, decimal

#: ``group``: a float that each optimizer param group may override with its own entry of the
#: same name (a scheduler class reads it per group; everywhere else it is a float).
PARAM_TYPES = ("int", "float", "group")


@dataclass
class ParamInfo:
    """A declared parameter: its symbol, type, default, constraint and source span.

    ``where`` is written in ``plain_symbol``s, which assume nothing but the type: in the
    parameter's own ``symbol`` (positive when the clause says so) ``p > 0`` would already
    read ``True`` and could never be checked.  ``Program.constraints`` gives the clauses in
    the symbols the schedules use, for the prover.
    """

    name: str
    type: str
    symbol: sp.Symbol
    default: sp.Expr | None
    where: sp.Basic | None
    span: Span | None

    @property
    def per_group(self) -> bool:
        """A ``group`` parameter: each optimizer param group may override it (``PARAM_TYPES``)."""
        return self.type == "group"


def plain_symbol(name: str, type_: str) -> sp.Symbol:
    """A parameter as ``where`` clauses see it: its type and nothing more (see ``ParamInfo``)."""
    return sp.Symbol(name, integer=True) if type_ == "int" else sp.Symbol(name, real=True)


def param_symbol(name: str, type_: str, positive: bool = False) -> sp.Symbol:
    """A parameter as the schedules see it: an ``int`` is >= 0 (SPEC), and ``positive`` when its
    ``where`` clause says so, so that sympy simplifies ``abs(p)`` to ``p``."""
    if type_ == "int":
        return sp.Symbol(name, integer=True, positive=True) if positive else sp.Symbol(
            name, integer=True, nonnegative=True)
    return sp.Symbol(name, positive=True) if positive else sp.Symbol(name, real=True)


def to_number(value, name: str = "value") -> sp.Expr:
    """A user-supplied number as an exact sympy number (``0.1`` is ``1/10``); never evaluated."""
    if isinstance(value, bool):
        raise SchedlangError(f"{name} must be a number, not {value}")
    if isinstance(value, sp.Basic):
        if not value.is_number:
            raise SchedlangError(f"{name} must be a number, not {value}")
        return value
    if isinstance(value, int):
        return sp.Integer(value)
    if isinstance(value, (float, str, Fraction)):
        fraction = value if isinstance(value, Fraction) else _fraction(str(value), name)
        return sp.Rational(fraction.numerator, fraction.denominator)
    raise SchedlangError(f"{name} must be a number, not {type(value).__name__}")


def bind_params(params: dict[str, ParamInfo], given: dict, base: dict | None = None) -> dict[str, sp.Expr]:
    """Values of a file's parameters: ``given`` over ``base`` over the defaults, each checked.

    The one place where values meet declarations (``compile(params=)``, ``-D``, scheduler
    constructors, ``equivalent(params=)``): an ``int`` is a whole number >= 0, and every
    ``where`` clause whose parameters are all bound must hold.  The schedules' symbols
    assume what the clauses say (``abs(p)`` is ``p`` when ``where p > 0``), so a value
    that breaks a clause never reaches them.  Names not declared in ``params`` are ignored.
    """
    values: dict[str, sp.Expr] = {}
    substitutions = {}
    for name, info in params.items():
        if name in given:
            value = to_number(given[name], f"parameter '{name}'")
        elif base is not None and name in base:
            value = base[name]
        elif info.default is not None:
            value = info.default.xreplace(substitutions)
        else:
            continue
        if info.type == "int" and value.is_number and not (value.is_integer and value >= 0):
            raise SchedlangError(f"parameter '{name}' is an int (a whole number >= 0), not {_show(value)}",
                                 info.span)
        values[name] = value
        substitutions[info.symbol] = value
    plain = {plain_symbol(n, params[n].type): v for n, v in values.items()}
    for name, info in params.items():
        if info.where is not None and info.where.xreplace(plain) == sp.false:
            shown = ", ".join(f"{n} = {_show(v)}" for n, v in values.items()
                              if plain_symbol(n, params[n].type) in info.where.free_symbols)
            raise SchedlangError(f"parameter '{name}' must satisfy {info.where} ({shown})", info.span)
    return values


def _fraction(text: str, name: str) -> Fraction:
    """A decimal (or ``p/q``) within the digit limits: 5000 digits are "too long", not "not a number"."""
    try:
        return decimal(text)
    except LimitError as exc:
        raise SchedlangError(f"{name}: {exc}", hint=exc.hint) from None
    except ValueError:
        pass
    try:
        if len(text) <= 2 * MAX_DIGITS + 1:  # p/q, each part within the digit limit
            return Fraction(text.strip().replace("_", ""))
    except (ValueError, ZeroDivisionError):
        pass
    raise SchedlangError(f"{name} must be a number, not {text!r}", hint="write it like 500, 0.1 or 3e-4")


def _show(value: sp.Expr) -> str:
    return str(int(value)) if value.is_Integer else f"{float(value):g}" if value.is_number else str(value)
