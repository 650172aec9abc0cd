"""Integer-valued helper functions that have no exact sympy spelling.

Cosine restarts with a period multiplier ``m > 1`` need the index of the
cycle that holds step ``t``: the largest ``i`` with ``T0 (m^i - 1)/(m - 1) <= t``.
Written with ``log`` it floors wrongly at exact cycle starts in floating point,
so it is a function of its own, evaluated exactly on integers here and
printed by each backend as an integer computation.
"""

from __future__ import annotations

import sympy as sp


def restart_index_int(step: int, first: int, mult: int) -> int:
    """Exact cycle index for integer ``step >= 0``, ``first >= 1``, ``mult >= 2``."""
    index, start, length = 0, 0, first
    while start + length <= step:
        start += length
        length *= mult
        index += 1
    return index


class restart_index(sp.Function):  # noqa: N801 - sympy function classes are lower case
    """``restart_index(t, T0, m)``: index of the restart cycle that holds step ``t``."""

    is_integer = True
    is_nonnegative = True
    nargs = 3

    @classmethod
    def eval(cls, step, first, mult):
        if all(arg.is_Integer for arg in (step, first, mult)) and step >= 0 and first >= 1 and mult >= 2:
            return sp.Integer(restart_index_int(int(step), int(first), int(mult)))
        return None

    def _eval_is_finite(self):
        return True


def restart_start(index, first, mult):
    """The first step of cycle ``index``: ``T0 (m^i - 1) / (m - 1)``."""
    return first * (mult**index - 1) / (mult - 1)
