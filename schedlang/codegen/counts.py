"""A count of samples or tokens (``core.clock.ClockCountBase``) in generated code: one table of
the batch stages per clock, and one lookup in it, in every target (issue 39 item 13).

A segment on the token clock is its formula at ``T(k) - start``, ``T`` the tokens consumed
before step ``k``.  Every target writes the stages as one module-level literal (``table_name``,
``table_literal``, ``tables_source``) and reads ``T(k)`` from it exactly in integers: the
reference by bisection in Python ints (``codegen/python.py``'s ``_count``), torch and JAX by
``searchsorted`` over the stages' first steps, then the stage's linear formula, in int64 (or
JAX's int32, refused where the count passes it; ``codegen/jax.py``'s ``_count``).  The whole
number is the reference's, and the float operations after it are the reference's too (the
same sympy expression through the same shared rules), so the array code differs from the
reference only where an elementwise function's last bit does (``tests/test_clock_tables.py``).

A branch per stage instead (``core.clock.expand_counts``, what the array targets printed before)
made a 1,000-stage ramp's torch class take 14 s to build and each call 34 ms
(``benchmarks/bench_batch_stages.py``, ``benchmarks/SPEED.md``).
"""

from __future__ import annotations

import hashlib

import sympy as sp

from ..core.algebra import t
from ..core.clock import UNITS, ClockCountBase, expand_counts
from .integers import is_whole


def table_literal(count) -> str:
    """``ClockCountBase`` ``count``'s stages as a literal: (first steps, counts before them, counts
    per step, the step past which the count holds); whole counts as ints, exact."""
    def number(value) -> str:
        return str(value) if isinstance(value, int) or value.denominator == 1 else \
            f"({value.numerator}/{value.denominator})"
    rows = [count.firsts, count.befores, count.per_step]
    return "(" + "".join("(" + ", ".join(map(number, row)) + ",), " for row in rows) + \
        f"{count.saturation})"


def table_name(count) -> str:
    """The module-level name of ``count``'s stage table: its clock's name and a digest of the
    table, so that bodies printed apart (``_printed_body`` is cached) never give two tables one
    name, and the same table always the same one."""
    digest = hashlib.sha1(table_literal(count).encode("ascii")).hexdigest()[:8]
    return f"_{count.__name__}_{digest}"


def tables_source(tables: dict, gap: str = "\n") -> str:
    """The module-level definitions of ``tables`` (count class -> name), ``gap`` before each."""
    return "".join(f"{gap}#: The batch stages a count of {UNITS[count.unit]} reads (see _count).\n"
                   f"{name} = {table_literal(count)}\n" for count, name in tables.items())


class CountPrinting:
    """What an array printer does with a count, mixed in before ``codegen/array.py``'s
    ``ArrayPrinter`` (``class TorchPrinter(CountPrinting, ArrayPrinter)``): its integer code, one
    lookup in its table (``_count_lookup``, each target's), and a rational multiple of it
    divided once.  ``count_tables`` collects the tables a function reads (class -> name)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.count_tables: dict = {}

    @classmethod
    def function_source(cls, name: str, expr: sp.Expr, params, helpers: set[str] | None = None,
                        tables: dict | None = None) -> str:
        """``ArrayPrinter.function_source``; a count in parts of a sample (a resumed run that
        measured tokens mid-sample) has no integer code: such an ``expr`` is printed with a
        branch per stage (``core.clock.expand_counts``)."""
        if any(not type(count).whole for count in expr.atoms(ClockCountBase)):
            expr = expand_counts(expr)
        return super().function_source(name, expr, params, helpers, tables)

    def int_code(self, expr: sp.Expr) -> str | None:
        if isinstance(expr, ClockCountBase):
            return self._count_code(expr)
        return super().int_code(expr)

    def _print_Mul(self, expr):
        ratio = self.count_ratio(expr)
        return super()._print_Mul(expr) if ratio is None else ratio

    def _count_code(self, count) -> str | None:
        """The count at a whole step, in integers: the step's stage found in the table, then that
        stage's linear formula, as the reference's ``_count`` computes it."""
        arg = count.args[0]
        step = self.int_code(arg)
        if step is None:
            return None
        name = self.count_tables.setdefault(type(count), table_name(type(count)))
        return self.bind(("count", count, self._step_key(count)),
                         self._count_lookup(name, step, self._count_reach(arg)))

    def _count_reach(self, arg: sp.Expr) -> int | None:
        """The last global step whose count a read at ``arg`` (the step plus a whole number)
        selects: the end of the branch it is read in; None where that is not a number."""
        shift, hi = arg - t, self.scope.hi
        if hi is None or not hi.is_number or not shift.is_Integer:
            return None
        return int(sp.floor(hi)) + int(shift)

    def _count_lookup(self, table: str, step: str, reach: int | None) -> str:
        """Integer code for the count at integer code ``step``, read from the module's table
        ``table``; ``reach``: see ``_count_reach``."""
        raise NotImplementedError

    def count_ratio(self, expr: sp.Expr) -> str | None:
        """A rational multiple of a count (``T(t)/1000``, a warmup in tokens) as one division of
        the whole number it multiplies, rounded once, as the reference writes it; else None."""
        coefficient, whole = expr.as_coeff_Mul()
        if not (coefficient.is_Rational and coefficient.q != 1 and whole.has(ClockCountBase)
                and is_whole(whole)):
            return None
        numerator = self._integer_in_float(coefficient.p * whole, lambda: None)
        return None if numerator is None else f"({numerator} / {float(coefficient.q)!r})"

    def _print_ClockCountBase(self, expr):  # noqa: N802 - sympy's printer naming
        def refuse():
            raise ValueError(f"no integer code for the count {expr}")
        return self._integer_in_float(expr, refuse)
