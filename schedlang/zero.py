"""Proving that a branch-free difference of two schedules is zero on an interval of steps.

Only transformations that preserve value are used (expand, cancel, trigsimp,
simplify), so ending at ``0`` is a proof; sympy's ``equals`` is *not* used,
because it may answer from random numerical samples.

Step functions need more than algebra.  Two sufficient tricks, tried in order:

* *generalise*: rewrite ``Mod(x, k)`` as ``x - k*floor(x/k)`` and replace every
  ``floor``/``ceiling``/``restart_index`` by a fresh symbol; if the difference
  vanishes for every value of those symbols it vanishes at the real ones;
* *residues*: with numeric periods of least common multiple ``L``, write
  ``t = start + L*q + r`` for each ``r < L``; the floors then split into a
  part linear in ``q`` and a number, and each residue class is checked alone.

A short interval (a few steps) is checked step by step instead.
"""

from __future__ import annotations

import math

import sympy as sp

from .schedule_algebra import t
from .special import restart_index

MAX_RESIDUES = 120
MAX_SHORT = 24
_q = sp.Symbol("q_", integer=True, nonnegative=True)


def is_zero(d: sp.Expr) -> bool:
    """Whether ``d`` is identically zero (a proof, or False when none is found)."""
    if d == 0:
        return True
    if d.is_number and d.is_zero is False:
        return False
    e = sp.expand(d)
    if e == 0:
        return True
    try:
        if sp.cancel(sp.together(e)) == 0:
            return True
        if e.has(sp.sin, sp.cos, sp.tan) and sp.expand(sp.trigsimp(e)) == 0:
            return True
        return sp.simplify(e) == 0
    except (NotImplementedError, TypeError, ValueError, RecursionError, ZeroDivisionError):
        return False


def _step_atoms(e: sp.Expr):
    return e.atoms(sp.floor, sp.ceiling, restart_index, sp.Mod)


def generalised(d: sp.Expr) -> sp.Expr:
    """``d`` with Mod written by floor and every step function a fresh symbol."""
    d = d.replace(lambda x: isinstance(x, sp.Mod), lambda x: x.args[0] - x.args[1] * sp.floor(
        x.args[0] / x.args[1]))
    atoms = sorted(d.atoms(sp.floor, sp.ceiling, restart_index), key=sp.default_sort_key)
    fresh = {a: sp.Symbol(f"g{i}_", integer=True) for i, a in enumerate(atoms)}
    return d.xreplace(fresh)


def periods(e: sp.Expr) -> int | None:
    """Least common multiple of the step periods of the floors/Mods in ``e``, if all numeric."""
    lcm = 1
    for atom in _step_atoms(e):
        if isinstance(atom, restart_index):
            return None
        arg = atom.args[0] / atom.args[1] if isinstance(atom, sp.Mod) else atom.args[0]
        if isinstance(atom, sp.Mod) and not atom.args[1].is_Rational:
            return None
        slope = sp.expand(arg).coeff(t, 1)
        if t in sp.expand(arg - slope * t).free_symbols or not slope.is_Rational:
            return None
        if slope != 0:
            lcm = math.lcm(lcm, int(slope.q))
    return lcm


def zero_on(d: sp.Expr, start: sp.Expr, stop: sp.Expr | None) -> bool:
    """Whether ``d`` is zero at every integer ``t`` in ``[start, stop)`` (``stop`` None: forever)."""
    if t not in d.free_symbols:
        return is_zero(d)
    length = None if stop is None else sp.expand(stop - start)
    if length is not None and length.is_Integer and int(length) <= MAX_SHORT:
        return all(is_zero(d.subs(t, start + k)) for k in range(int(length)))
    if is_zero(d):
        return True
    if not _step_atoms(d):
        return False
    if is_zero(generalised(d)):
        return True
    period = periods(d)
    if period is None or period > MAX_RESIDUES or not start.is_Integer:
        return False
    for r in range(period):
        shifted = d.subs(t, start + period * _q + r)
        if not is_zero(shifted) and not is_zero(generalised(shifted)):
            return False
    return True
