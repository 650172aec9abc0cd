"""Python values as the nodes the parser makes for their text: ``0.1`` is the ``Number`` 1/10
(not the float's digits), ``-0.5`` a minus of ``0.5``, 1/3 a division, a string an option
value.  Sizes are held to a file's limits before any conversion, and a literal keeps the
text the user's Python wrote (``10e12``) so that ``to_source()`` reads as written."""

from __future__ import annotations

import numbers
import re
from decimal import Decimal
from fractions import Fraction

import sympy as sp

from ..errors import SchedlangError, Span
from ..limits import MAX_DIGITS, LimitError, decimal
from ..program import Schedule
from ..syntax import ir

_STRING = re.compile(r'[^"\\\n]*\Z')  # what a "string" of the grammar may hold


def literal_node(value, span: Span) -> ir.Node:
    if isinstance(value, bool):
        return ir.Bool(span, value)
    if isinstance(value, str):
        if not _STRING.match(value):
            raise SchedlangError(f"{value!r} cannot be a schedlang string", span,
                                 hint='an option value holds no ", \\ or line break')
        return ir.String(span, value)
    if isinstance(value, Schedule):
        raise SchedlangError("a compiled Schedule cannot be part of a built one", span,
                             hint="build the whole schedule with schedlang.build, or compare the two "
                                  "with schedlang.equivalent")
    try:
        number = exact_value(value)
    except LimitError as exc:
        raise SchedlangError(str(exc), span, hint=exc.hint) from None
    if number is None:
        raise SchedlangError(f"expected a number, got {type(value).__name__}", span,
                             hint="numbers, bools, strings (option values), lists and schedlang.build "
                                  "objects make a schedule")
    return _number(number, span)


def exact_value(value) -> Fraction | None:
    """A Python number as the exact value its digits say (``0.1`` is 1/10, as in a .sched file).

    Sizes are checked before any conversion, with the file's limits (``limits.decimal``):
    ``Decimal("1e-999999")`` as a ``Fraction`` is a denominator of a million digits, and
    ``10**5000`` has more digits than Python will print.  Raises ``LimitError``."""
    if isinstance(value, sp.Basic):
        if value.is_Rational:
            return _within_limits(Fraction(int(value.p), int(value.q)))
        if not value.is_Float:
            return None
        value = float(value)
    if isinstance(value, numbers.Integral):
        return _within_limits(Fraction(int(value)))
    if isinstance(value, Fraction):
        return _within_limits(value)
    if isinstance(value, Decimal):
        # its own text (``1E-999999``) is read as the parser reads a literal: digits and
        # exponent checked before 10**999999 is ever computed
        return decimal(str(value).replace("E", "e")) if value.is_finite() else None
    if isinstance(value, numbers.Real):
        value = float(value)
        return Fraction(repr(value)) if value - value == 0 else None  # not inf, not nan
    return None


def _within_limits(value: Fraction) -> Fraction:
    """``value`` if a literal could write it: numerator and denominator of at most
    ``MAX_DIGITS`` digits each (a quotient of two literals); else the parser's ``LimitError``."""
    for part in (value.numerator, value.denominator):
        bits = abs(part).bit_length()
        if bits > MAX_DIGITS * 4:  # > ~1200 digits: too many to print (Python stops at 4300)
            digits = int(bits * 0.30103) + 1
            raise LimitError(f"this number has about {digits} digits; schedlang reads at most {MAX_DIGITS}",
                             "write a long number with an exponent, e.g. 1.5e20")
        if bits > MAX_DIGITS * 3:
            decimal(str(abs(part)))  # the exact count, in the parser's own words
    return value


def _number(value: Fraction, span: Span) -> ir.Node:
    """The nodes the parser makes for the number's text: ``-0.5`` is ``-`` of ``0.5``, 1/3 a division."""
    if value < 0:
        return ir.Unary(span, "-", _number(-value, span))
    shown = written_text(span, value) or decimal_text(value)
    if shown is None:
        return ir.BinOp(span, "/", _number(Fraction(value.numerator), span),
                        _number(Fraction(value.denominator), span))
    try:
        exact = decimal(shown)  # the parser's digit limits
    except LimitError as exc:
        raise SchedlangError(str(exc), span, hint=exc.hint) from None
    return ir.Number(span, exact, shown)


def written_text(span: Span, value: Fraction) -> str | None:
    """The literal the user's Python wrote at ``span`` (``10e12``, ``2.2e-4``, ``4_096``), when it
    is a ``.sched`` literal too and says exactly ``value``: ``to_source()`` then keeps the text
    as written instead of the digits of the float (``10000000000000``).  The text is only read
    (``limits.decimal``), never evaluated; any other expression there gives None."""
    if span is None or span.line != span.end_line or not span.source.text:
        return None
    text = span.source.line(span.line)[span.column - 1:span.end_column - 1].strip().lstrip("+-").strip()
    try:
        return text if decimal(text) == value else None
    except (ValueError, LimitError):
        return None


def decimal_text(value: Fraction) -> str | None:
    """The shortest decimal that reads back as ``value`` exactly, or None when there is none."""
    if value.denominator == 1:
        return str(value.numerator)
    shown = repr(float(value))
    if "inf" not in shown and Fraction(shown) == value:
        return shown
    q, twos, fives = value.denominator, 0, 0
    while q % 2 == 0:
        q, twos = q // 2, twos + 1
    while q % 5 == 0:
        q, fives = q // 5, fives + 1
    if q != 1:
        return None
    places = max(twos, fives)
    digits = str(value.numerator * 10**places // value.denominator).rjust(places + 1, "0")
    return f"{digits[:-places]}.{digits[-places:]}"
