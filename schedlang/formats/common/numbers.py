"""Exact numbers in and out of imported configurations.

Configuration files carry decimals (``0.001``, ``6.0e-05``); schedlang keeps
them exact (``0.001`` is 1/1000), so a value read from YAML, written into a
``.sched`` file and read back is the same rational number, and exporting it
again gives the same text.  PyYAML reads ``6e-05`` (no dot) as a *string*
(YAML 1.1), so numeric strings are accepted as numbers here and every float
we write into YAML has a dot.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import sympy as sp

from ...limits import decimal


def exact(value) -> sp.Rational | None:
    """A YAML scalar (int, float or numeric string) as an exact rational; None if not a number."""
    if isinstance(value, bool) or value is None:
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


def _terminates(r: sp.Rational) -> bool:
    q = int(r.q)
    for p in (2, 5):
        while q % p == 0:
            q //= p
    return q == 1


def sched_text(value: sp.Expr) -> str:
    """A number as schedlang source that reads back as exactly the same value."""
    if value.is_Integer:
        return str(int(value))
    if value.is_Rational:
        if value < 0:
            return "-" + sched_text(-value)
        shortest = repr(float(value))
        if "inf" not in shortest and Fraction(shortest) == Fraction(int(value.p), int(value.q)):
            return shortest
        if _terminates(value):
            text = format(Decimal(int(value.p)) / Decimal(int(value.q)), "f")
            return text
        return f"{int(value.p)} / {int(value.q)}"
    raise ValueError(f"not an exact number: {value}")


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
