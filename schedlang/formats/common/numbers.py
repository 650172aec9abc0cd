"""Exact numbers in and out of imported configurations.

Configuration files carry decimals (``0.001``, ``6.0e-05``); schedlang keeps
them exact (``0.001`` is 1/1000), so a value read from YAML, written into a
``.sched`` file and read back is the same rational number, and exporting it
again gives the same text.  PyYAML reads ``6e-05`` (no dot) as a *string*
(YAML 1.1), so numeric strings are accepted as numbers here and every float
we write into YAML has a dot.
"""

from __future__ import annotations

from fractions import Fraction

import sympy as sp

from ...limits import decimal


class PythonString(str):
    """A string of a Python file (a config or a script read over ``ast``): text, never a number.
    YAML's unquoted ``6e-05`` is a string only because PyYAML reads it so, and is taken as the
    number it spells; Python keeps ``"1e-3"`` a string (argparse passes a string default through
    ``type=`` only, and Keras or DeepSpeed then fail on it), so it is not read as 0.001."""

    __slots__ = ()


def exact(value) -> sp.Rational | None:
    """A YAML scalar (int, float or numeric string) as an exact rational; None if not a number
    (a ``PythonString`` included)."""
    if isinstance(value, bool) or value is None or isinstance(value, PythonString):
        return None
    if isinstance(value, int):
        return sp.Integer(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return None
        fraction = Fraction(repr(value))
    elif isinstance(value, str):
        try:
            fraction = decimal(value)  # within the digit limits: never 10 ** 999999999
        except ValueError:
            return None
    else:
        return None
    return sp.Rational(fraction.numerator, fraction.denominator)


def as_sympy(value) -> sp.Basic:
    """A value that is already a number or a formula (a sympy expression, an int, a float) as a
    sympy expression, the way ``sympify`` would convert it, with text refused: nothing read from
    a file or a checkpoint is ever parsed as Python or sympy syntax here."""
    if isinstance(value, sp.Basic):
        return value
    if isinstance(value, bool):
        return sp.true if value else sp.false
    if isinstance(value, int):
        return sp.Integer(value)
    if isinstance(value, float):
        return sp.Float(value)
    if isinstance(value, Fraction):
        return sp.Rational(value.numerator, value.denominator)
    raise TypeError(f"not a number or a formula: {type(value).__name__}")


def yaml_number(value: sp.Expr):
    """A number as a YAML scalar: ``int`` when whole and written without a dot, else a float."""
    if value.is_Integer:
        return int(value)
    return float(value)


def yaml_float_text(value: float) -> str:
    """A float the way YAML 1.1 (PyYAML) reads back as a float: ``6.0e-05``, never ``6e-05``."""
    text = repr(float(value))
    if "e" in text and "." not in text.split("e")[0]:
        mantissa, exponent = text.split("e")
        text = f"{mantissa}.0e{exponent}"
    return text


def decimal_text(value: Fraction) -> str:
    """An exact number as a literal of the language: a decimal where there is one."""
    if value.denominator == 1:
        return str(value.numerator)
    d, twos, fives = value.denominator, 0, 0
    while d % 2 == 0:
        d, twos = d // 2, twos + 1
    while d % 5 == 0:
        d, fives = d // 5, fives + 1
    if d != 1:
        return f"({value.numerator} / {value.denominator})"
    digits = max(twos, fives)
    text = f"{abs(value.numerator) * 10**digits // value.denominator:0{digits + 1}d}"
    text = (text[:-digits] + "." + text[-digits:]).rstrip("0").rstrip(".")
    return ("-" if value < 0 else "") + text


#: How far the float64 rounding of a written number may move an exported schedule: relative,
#: at every step (proven).  The written number itself is what it reads back as (``float64_of``),
#: and the read-back is proven equal to the call with those numbers exactly.
FLOAT64_RTOL = Fraction(1, 10**12)


def float64_of(value: Fraction) -> Fraction:
    """The number a float writer's text reads back as: the float64 nearest ``value``, as the
    shortest decimal ``repr`` prints (JSON, YAML, TOML and flags all write that text)."""
    return Fraction(repr(float(value)))


def writable(value: Fraction) -> bool:
    """Whether ``value`` is written exactly as a float's text (``0.001``; not ``1/3``)."""
    return float64_of(value) == value
