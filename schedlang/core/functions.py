"""The language's math functions: one row each, everything every stage needs to know.

Lowering builds the ``sympy`` node (``stdlib.MATH``), the closed-form check allows it
(``check.ALLOWED``), the array printers spell it ``torch.<array>`` / ``jnp.<array>`` and
clamp the step of a ``hazard`` (it can overflow or leave its domain off its segment),
the interval evaluator of the prover computes it with ``mpmath.iv.<interval>``, the
tracer of Python functions maps ``math.<name>`` for each of ``math_names``, and the
core printer of the importers writes it back by ``name``.  Adding ``tanh`` is one row
(SPEC §2 lists the names the language reserves).

``array`` / ``interval`` are None where a stage prints or evaluates the node its own
way: ``exp`` (overflow to ``inf`` as IEEE does, and ``b ** x`` kept as a power),
``sqrt`` (sympy's ``Pow(x, 1/2)``), ``floor``/``ceil`` (integer arithmetic for whole
ratios), ``min``/``max``/``clamp`` (not elementwise functions of one argument).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp


def clamp(x, lo, hi):
    """``min(max(x, lo), hi)``."""
    return sp.Min(sp.Max(x, lo), hi)


@dataclass(frozen=True)
class MathFunction:
    name: str                       # in schedlang source
    build: object                   # arguments -> the sympy expression
    arity: int | None = 1           # None: two or more
    node: type | None = None        # the sympy node it builds (None: it builds other nodes)
    array: str | None = None        # torch / jax.numpy spelling of an elementwise function
    hazard: bool = False            # array code clamps the step into the node's segment
    interval: str | None = None     # mpmath.iv function for the prover's enclosures
    math_names: tuple[str, ...] = ()  # Python ``math`` functions the tracer reads as this one
    period: int | None = None       # the period as a multiple of pi: printers reduce the argument
    #                                 of a periodic function exactly (``codegen/stable.py``)


FUNCTIONS = (
    MathFunction("sin", sp.sin, node=sp.sin, array="sin", hazard=True, interval="sin", math_names=("sin",),
                 period=2),
    MathFunction("cos", sp.cos, node=sp.cos, array="cos", hazard=True, interval="cos", math_names=("cos",),
                 period=2),
    MathFunction("tan", sp.tan, node=sp.tan, array="tan", hazard=True, interval="tan", math_names=("tan",),
                 period=1),
    MathFunction("exp", sp.exp, node=sp.exp, hazard=True, math_names=("exp",)),
    MathFunction("log", sp.log, node=sp.log, array="log", hazard=True),
    MathFunction("sqrt", sp.sqrt, math_names=("sqrt",)),
    MathFunction("floor", sp.floor, node=sp.floor, math_names=("floor",)),
    MathFunction("ceil", sp.ceiling, node=sp.ceiling, math_names=("ceil",)),
    MathFunction("abs", sp.Abs, node=sp.Abs, array="abs", math_names=("fabs",)),
    MathFunction("min", sp.Min, arity=None, node=sp.Min),
    MathFunction("max", sp.Max, arity=None, node=sp.Max),
    MathFunction("clamp", clamp, arity=3),
)

BY_NAME = {f.name: f for f in FUNCTIONS}
#: sympy node -> its row (the functions that build one node of their own).
BY_NODE = {f.node: f for f in FUNCTIONS if f.node is not None}
#: Nodes the array printers clamp the step for (see ``codegen.array.needs_clamp``).
HAZARDS = tuple(f.node for f in FUNCTIONS if f.hazard)
