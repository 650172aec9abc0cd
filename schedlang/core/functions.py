"""The language's math functions: one row each, everything every stage needs to know.

Every stage reads the row: lowering builds the ``sympy`` node (``stdlib.MATH``), the
closed-form check allows it (``check.ALLOWED``), the Python reference prints it with
sympy's ``PythonCodePrinter`` (``math.<node>``), the array printers spell it
``torch.<array>`` / ``jnp.<array>`` (reducing the argument of a periodic one exactly, and
clamping the step of a ``hazard``: it can overflow or leave its domain off its segment),
the prover encloses it with ``interval`` (``core/exact_eval.py``, whose ``EXACT`` keeps the
exact values an enclosure would only approximate, such as ``cos(pi / 3)``), its float64
scan computes it with ``numpy.<array>``, its ``trigsimp`` step knows a circular or
hyperbolic node, the tracer of Python functions maps ``math.<name>`` for each of
``math_names``, the importers' core printer writes it back by ``name``, highlighting and
``schedlang.build`` take its name, and the reference page lists it.

Adding a function (``tests/test_function_recipe.py`` adds ``tanh`` this way to a copy of
the package and checks every stage):

1. one row here; ``interval`` names an ``mpmath.iv`` function or computes the enclosure
   from mpmath's interval context and the argument's enclosure (``mpmath.iv`` has no
   ``tanh``, ``sinh``, ``atan``, ...: ``lambda iv, x: 1 - 2 / (iv.exp(2 * x) + 1)``),
   ``array`` names the function in both ``torch`` and ``jax.numpy``; the node must be one
   sympy's ``PythonCodePrinter`` writes as a ``math`` function (``tanh``, ``asinh``, ``erf``
   are; one it does not know needs a ``_print_<node>`` in ``codegen/python.py``);
2. exact special values (if any) in ``core/exact_eval.EXACT``, keyed by the node;
3. regenerate ``python -m schedlang.cli.docgen`` (docs/stdlib.md),
   ``python tools/gen_editors.py`` (the TextMate grammar) and
   ``python -m schedlang.build.stub`` (build/__init__.pyi);
4. by hand, the prose that names the functions: SPEC §2 (the names the language
   reserves), docs/python.md and docs/import_export.md (the tracer's ``math`` names;
   ``tests/test_functions.py`` fails while these two miss a row);
5. to fuzz it, the independent oracle's own entry (``tests/fuzzing/exact.py`` computes each
   node with mpmath on its own, on purpose: its value, and its derivative for the error
   bound; it refuses a node it does not know) and the generator's list of functions
   (``tests/fuzzing/generator.py``).

``array`` / ``interval`` are None where a stage prints or evaluates the node its own
way: ``exp`` in the array printers (overflow to ``inf`` as IEEE does, and ``b ** x`` kept
as a power), ``sqrt`` (sympy's ``Pow(x, 1/2)``), ``floor``/``ceil`` (integer arithmetic for
whole ratios), ``min``/``max``/``clamp`` (not elementwise functions of one argument).
"""

from __future__ import annotations

from collections.abc import Callable
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
    interval: str | Callable | None = None  # the prover's enclosure: an mpmath.iv function's name,
    #                                 or ``(iv, x) -> enclosure`` of mpmath's interval context and x
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
    MathFunction("exp", sp.exp, node=sp.exp, hazard=True, interval="exp", math_names=("exp",)),
    MathFunction("log", sp.log, node=sp.log, array="log", hazard=True, interval="log"),
    MathFunction("sqrt", sp.sqrt, math_names=("sqrt",)),
    MathFunction("floor", sp.floor, node=sp.floor, math_names=("floor",)),
    MathFunction("ceil", sp.ceiling, node=sp.ceiling, math_names=("ceil",)),
    MathFunction("abs", sp.Abs, node=sp.Abs, array="abs", interval="fabs", math_names=("fabs",)),
    MathFunction("min", sp.Min, arity=None, node=sp.Min),
    MathFunction("max", sp.Max, arity=None, node=sp.Max),
    MathFunction("clamp", clamp, arity=3),
)

BY_NAME = {f.name: f for f in FUNCTIONS}
#: sympy node -> its row (the functions that build one node of their own).
BY_NODE = {f.node: f for f in FUNCTIONS if f.node is not None}
#: Nodes the array printers clamp the step for (see ``codegen.array.needs_clamp``).
HAZARDS = tuple(f.node for f in FUNCTIONS if f.hazard)
