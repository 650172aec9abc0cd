"""The plain-Python target: the reference every other backend is tested against.

A sympy ``PythonCodePrinter`` with the few changes exactness needs: ``floor``
and ``Mod`` of whole numbers become ``//`` and ``%`` on Python ints (never a
float division that can land a hair below a step boundary; the rules are
``codegen/integers.py``'s, shared with every target), integer bases of
powers become floats (``10 ** t`` must not grow a huge int), and the cycle
index of cosine restarts is computed with integers.
"""

from __future__ import annotations

import functools

import sympy as sp
from sympy.printing.pycode import PythonCodePrinter

from ..core.algebra import at, strict_bound, t
from ..core.clock import ClockCountBase
from ..core.functions import FUNCTIONS
from ..core.special import as_power
from .base import (
    AtomicPrinting,
    GeneratedModule,
    ModuleSpec,
    assemble,
    is_atomic,
    keyword_params,
    rounded,
)
from .counts import table_name, tables_source
from .integers import (
    ExactIntegerPrinting,
    first_step,
    integer_ratio,
    is_whole,
    step_ratio,
    whole_argument,
    whole_bound,
)
from .stable import even_power, reduced, stable_sum

_RESTART_INDEX = '''\
def _restart_index(t, first, mult):
    """Index of the restart cycle holding step t (cycle i lasts first * mult**i steps)."""
    index, start, length = 0, 0, first
    while start + length <= t:
        start, length, index = start + length, length * mult, index + 1
    return index
'''


_POW = '''\
def _pow(base, exponent):
    """base ** exponent in IEEE float64, as torch computes it: +-inf past 1.8e308, not an error."""
    try:
        return float(base) ** exponent
    except OverflowError:
        return -math.inf if base < 0 and exponent % 2 == 1 else math.inf
'''

_EXP = '''\
def _exp(x):
    """math.exp in IEEE float64, as torch computes it: inf past 1.8e308, not an error."""
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf
'''

_COUNT = '''\
def _count(k, table):
    """Samples or tokens consumed before step k: table = (first steps, counts before them,
    counts per step, the step past which the count holds), found by bisection."""
    firsts, befores, per_step, last = table
    k = min(k, last)
    lo, hi = 0, len(firsts) - 1
    while lo < hi:
        middle = (lo + hi + 1) // 2
        if firsts[middle] <= k:
            lo = middle
        else:
            hi = middle - 1
    return befores[lo] + per_step[lo] * (k - firsts[lo])
'''

#: Functions a generated module defines when its formulas use them, in a fixed order.
HELPERS = {"_restart_index": _RESTART_INDEX, "_pow": _POW, "_exp": _EXP, "_count": _COUNT}


def helpers_source(printer, gap: str = "\n") -> str:
    """The helper functions ``printer`` used, each once (deterministic order), ``gap`` before each,
    then the batch stages its clock counts read (``_print_ClockCountBase``)."""
    text = "".join(gap + text for name, text in HELPERS.items() if name in printer.helpers)
    return text + tables_source(printer.count_tables, gap)


class ReferencePrinter(ExactIntegerPrinting, AtomicPrinting, PythonCodePrinter):
    """sympy to Python using ``math`` only."""

    def __init__(self):
        super().__init__({"fully_qualified_modules": True, "standard": "python3"})
        self.helpers: set[str] = set()  # names in HELPERS the printed code calls
        self.count_tables: dict = {}  # ClockCountBase class -> the name of its table in the module
        self._local_steps: dict[sp.Dummy, str] = {}  # local-step symbols -> their code

    def _print_Add(self, expr, order=None):
        stable = stable_sum(expr)
        if stable is not None:
            return self._print(stable)
        ratio = step_ratio(expr)
        if ratio is None:
            return super()._print_Add(expr, order=order)
        numerator, denominator = (self._print(x) for x in ratio)
        return f"({numerator}) / {denominator if is_atomic(denominator) else f'({denominator})'}"

    def _print_Mul(self, expr):
        # a rational multiple of a count (``T(t)/1000``, a warmup in tokens): one division of
        # the whole number it multiplies, rounded once, as ``step_ratio`` writes a sum
        coefficient, whole = expr.as_coeff_Mul()
        if coefficient.is_Rational and coefficient.q != 1 and whole.has(ClockCountBase) and is_whole(whole):
            numerator = self._print(coefficient.p * whole)
            return f"({numerator}) / {coefficient.q}"
        return super()._print_Mul(expr)

    def _print_Pow(self, expr, rational=False):
        base, exponent = expr.args
        square = even_power(expr)
        if square is not None:
            return self._print(square)
        if not exponent.is_number:  # grows with the step: may pass float64's range
            self.helpers.add("_pow")
            return f"_pow({self._print(base)}, {self._print(exponent)})"
        return super()._print_Pow(expr, rational=rational)

    def _print_logb(self, expr):
        base = expr.args[0]
        if base.is_number:  # log of the exact base, rounded once
            return repr(rounded(sp.log(base)))
        return f"math.log({self._print(base)})"

    def _print_exp(self, expr):
        power = as_power(expr)
        if power is not None:
            return self._print_Pow(sp.Pow(*power, evaluate=False))
        self.helpers.add("_exp")
        return f"_exp({self._print(expr.args[0])})"

    def _print_Relational(self, expr):
        op, lhs, rhs = expr.rel_op, expr.lhs, expr.rhs
        if op not in ("<", "<=", ">", ">=") or (is_whole(lhs) and rhs.is_integer):
            return super()._print_Relational(expr)
        if is_whole(lhs) and integer_ratio(rhs) is not None:  # t < ceil(11*total/20)
            return super()._print_Relational(type(expr)(lhs, whole_bound(op, rhs), evaluate=False))
        difference = integer_ratio(lhs - rhs)  # 14*total/25 < 100 as 14*total - 2500 < 0
        if difference is not None and difference[1].is_number and difference[1] > 0:
            return super()._print_Relational(type(expr)(difference[0], 0, evaluate=False))
        return super()._print_Relational(expr)

    def _print_Piecewise(self, expr):
        # Branches are tried in order; the last one is the default whatever its condition,
        # because schedlang only builds Piecewise whose branches cover every step.  Each
        # branch after a whole-number bound ``t < c`` is written in its local step ``t - c``
        # as the ``if`` statements of ``body_lines`` are: ``t/3 - 1000000100/3`` in floats
        # cancels, ``(t - 1000000100)/3`` does not.
        starts = [sp.Integer(0)] + [first_step(strict_bound(cond)) for _, cond in expr.args[:-1]]
        values = [self._local(value, start) for (value, _), start in zip(expr.args, starts)]
        out = values[-1]
        for value, (_, cond) in zip(reversed(values[:-1]), reversed(expr.args[:-1])):
            out = f"(({value}) if ({self._print(cond)}) else {out})"
        return out

    def _local(self, value, start) -> str:
        """``value`` printed with the step written ``(t - start)`` (a whole-number ``start``,
        possibly of integer parameters: Python's ints keep it exact)."""
        if start is None or start.is_integer is not True or start == 0 or t not in value.free_symbols:
            return self._print(value)
        step = sp.Dummy("local", integer=True, nonnegative=True)
        self._local_steps[step] = f"(t - ({self._print(start)}))"
        return self._print(at(value, step + start).xreplace({t: step}))

    def _print_Dummy(self, expr):
        return self._local_steps.get(expr) or super()._print_Dummy(expr)

    def _print_periodic(self, expr):
        """A periodic function (a row of ``functions.FUNCTIONS`` with a ``period``: ``sin``/``cos``/
        ``tan``) with the argument reduced in Python ints (``codegen/stable.py``)."""
        found = reduced(expr)
        if found is not None and not isinstance(found, type(expr)):
            return self._print(found)
        name = type(expr).__name__
        return f"math.{name}({self._print((found or expr).args[0])})"

    def _print_sinpi(self, expr):
        whole, denominator = expr.args
        scale = sp.pi / denominator
        if scale.is_number:
            scale_code = repr(rounded(scale))
        else:
            scale_code = f"(math.pi / ({self._print(denominator)}))"
        return f"math.sin({scale_code}*({self._print(whole)}))"

    def _print_ClockCountBase(self, expr):  # noqa: N802 - sympy's printer naming
        self.helpers.add("_count")
        name = self.count_tables.setdefault(type(expr), table_name(type(expr)))
        return f"_count({self._print(expr.args[0])}, {name})"

    def _print_restart_index(self, expr):
        self.helpers.add("_restart_index")
        step, first, mult = expr.args
        args = [step, whole_argument(first), whole_argument(mult)]
        return f"_restart_index({', '.join(self._print(a) for a in args)})"


def function_source(name: str, expr: sp.Expr, params, printer: ReferencePrinter,
                    leading: str = "t") -> str:
    """``def name(t, *, p=default, ...): return <expr>``; every function takes every parameter.
    ``leading``: the positional arguments (a measured form takes ``t, _samples, _tokens``)."""
    args = keyword_params(params)
    signature = f"def {name}({leading}{', *' + args if args else ''}):"
    renamed = expr.xreplace({p.symbol: sp.Symbol(p.py_name, **p.symbol.assumptions0) for p in params
                             if p.py_name != p.symbol.name})
    body, helpers, tables = _printed_body(renamed)
    printer.helpers |= helpers
    printer.count_tables.update(tables)
    return signature + "\n" + body


@functools.lru_cache(maxsize=64)
def _printed_body(expr: sp.Expr) -> tuple[str, frozenset[str], tuple]:
    """The body text of a function returning ``expr``, the helpers it calls and the count tables
    it reads (``(class, name)`` pairs, which the module defines once).

    Cached: the same schedule is printed by ``compile`` (the reference module every check
    loads) and again by the torch target (the class's plain-Python twins); printing a long
    schedule costs seconds (the stable forms of every piece), its text depends only on the
    expression (whose symbols carry their assumptions, so equal expressions print alike).
    """
    printer = ReferencePrinter()
    lines = body_lines(expr, printer, 1)
    return "".join(f"{line}\n" for line in lines), frozenset(printer.helpers), \
        tuple(printer.count_tables.items())


def body_lines(expr: sp.Expr, printer: ReferencePrinter, depth: int, start=0) -> list[str]:
    """Statements returning ``expr``: a top-level ``Piecewise`` becomes ``if`` statements.

    A schedule of a thousand segments would otherwise be a conditional expression
    nested a thousand deep, past what Python's parser accepts.  When every branch
    reads ``t < c`` with increasing numbers ``c``, the ``if``s form a balanced tree
    (about log2(segments) comparisons per step); otherwise they are tried in order.
    Each branch is computed in its own local step (``t - start``, whole numbers),
    so ``constant(1, 10**9) >> linear(1e-6, 0, 100)`` loses nothing to cancellation.
    """
    pad = "    " * depth
    if not isinstance(expr, sp.Piecewise):
        return _local_return(expr, printer, pad, start)
    pairs = list(expr.args)
    # Branches that end before ``start`` are reached by no step here (``if t < 5`` inside
    # the ``t >= 100`` branch of an outer ``if``): they are left out, not written (their
    # formula may not even be real at these steps).
    while len(pairs) > 1 and (strict_bound(pairs[0][1]) is not None
                              and (strict_bound(pairs[0][1]) - start).is_nonpositive):
        pairs.pop(0)
    if len(pairs) == 1:
        return body_lines(pairs[0][0], printer, depth, start)
    bounds = [strict_bound(c) for _, c in pairs[:-1]]
    if all(b is not None and b.is_Integer for b in bounds) and all(x < y for x, y in zip(bounds, bounds[1:])):
        return _bisect_lines([e for e, _ in pairs], [start, *bounds], printer, depth)
    lines = []
    for value, cond in pairs[:-1]:
        lines.append(f"{pad}if {printer.doprint(cond)}:")
        lines.extend(body_lines(value, printer, depth + 1, start))
        bound = first_step(strict_bound(cond))
        start = start if bound is None else bound
    return lines + body_lines(pairs[-1][0], printer, depth, start)


def _local_return(expr: sp.Expr, printer: ReferencePrinter, pad: str, start) -> list[str]:
    """``return expr``, written in the local step ``t - start`` when that changes the formula."""
    if start == 0 or t not in expr.free_symbols:
        return [f"{pad}return {printer.doprint(expr)}"]
    local = at(expr, t + start)
    return [f"{pad}t = t - ({printer.doprint(start)})", f"{pad}return {printer.doprint(local)}"]


def _bisect_lines(values, starts, printer, depth) -> list[str]:
    """``values[i]`` for ``starts[i] <= t < starts[i + 1]``, by halving the list."""
    if len(values) == 1:
        return body_lines(values[0], printer, depth, starts[0])
    middle = len(values) // 2
    pad = "    " * depth
    return [f"{pad}if t < {printer.doprint(starts[middle])}:",
            *_bisect_lines(values[:middle], starts[:middle], printer, depth + 1),
            *_bisect_lines(values[middle:], starts[middle:], printer, depth)]


for _row in FUNCTIONS:
    if _row.period:
        setattr(ReferencePrinter, f"_print_{_row.node.__name__}", ReferencePrinter._print_periodic)


def generate(spec: ModuleSpec) -> GeneratedModule:
    """A standalone module defining one function per schedule and ``SCHEDULES``."""
    printer = ReferencePrinter()
    bodies = [function_source(s.py_name, s.expr, spec.params, printer) for s in spec.schedules]
    return assemble(spec, "python", ["import math\n", helpers_source(printer), *("\n\n" + b for b in bodies)])
