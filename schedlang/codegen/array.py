"""What the array targets (torch, JAX) print alike: one printer base, one table per target.

``TorchPrinter`` and ``JaxPrinter`` write the same branch-free straight-line code
(``where`` over every branch, each branch in its local step, clamped where it could
blow up; see ``codegen/torch.py``) in two array libraries whose elementwise
functions share their names (``cos``, ``floor``, ``where``, ...).  What is spelled
the same is printed here, with the library's module name ``NS`` and a small table
``NAMES`` of the names that differ (torch's ``pow`` for numpy's ``power``), as sympy's
``JaxPrinter(NumPyPrinter)`` does: the whole-number code (``int_code``, floors and
remainders of ratios), conditions, the local step of a branch, ``where``, powers and the
function around the code.  Each target writes only what really differs, as the hooks
``ArrayPrinter`` names: integer literals and types, clamps of the step, parameters,
floor division and remainder, the comparison of a whole number with a bound, and the
function's signature, prologue and return.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import sympy as sp
from sympy.core.relational import Relational
from sympy.printing.precedence import PRECEDENCE
from sympy.printing.pycode import PythonCodePrinter

from ..core.algebra import at, t
from ..core.functions import BY_NODE, FUNCTIONS, HAZARDS
from ..core.special import as_power, restart_index
from .base import AtomicPrinting, ParamSpec, is_atomic, keyword_params, rounded
from .integers import integer_mod, integer_ratio, is_whole, rounded_inside, step_ratio
from .stable import even_power, reduced, stable_sum

#: A ``Piecewise`` with more branches is printed one ``where`` statement per branch
#: (Python's parser refuses expressions nested ~200 deep; a schedule may have thousands).
MAX_INLINE_BRANCHES = 8




@dataclass(frozen=True)
class Scope:
    """The steps a sub-expression is used on: ``lo <= t <= hi`` (``hi`` None: no end).

    ``clamp`` says whether the expression needs the step clamped into that
    interval (it holds something hazardous); the bounds are kept either way
    so nested ``Piecewise`` can narrow them further.
    """

    lo: sp.Expr = sp.Integer(0)
    hi: sp.Expr | None = None
    clamp: bool = False
    local: bool = False  # the step is a branch's local step, which is negative before the branch

    @property
    def trivial(self) -> bool:
        return not self.clamp or (self.lo == 0 and self.hi is None and not self.local)


def needs_clamp(expr: sp.Basic) -> bool:
    """Whether evaluating ``expr`` off its own segment could misbehave."""
    if isinstance(expr, sp.Piecewise) or t not in expr.free_symbols:
        return False  # nested Piecewise clamp their own branches; constants are safe
    if isinstance(expr, HAZARDS):  # can overflow, go non-finite or lose precision off its segment
        return True
    if isinstance(expr, sp.Pow):
        base, exponent = expr.args
        if t in exponent.free_symbols:
            return True
        if t in base.free_symbols and not (exponent.is_Integer and exponent >= 0):
            return True
    return any(needs_clamp(a) for a in expr.args if isinstance(a, sp.Basic))


def last_step(cond) -> sp.Expr | None:
    """The largest whole step satisfying a canonical ``t < c`` / ``t <= c``, else None."""
    if isinstance(cond, (sp.StrictGreaterThan, sp.GreaterThan)) and cond.rhs == t:
        # sympy may keep ``t < c`` as ``c > t``: read it the other way round.
        flipped = sp.StrictLessThan if isinstance(cond, sp.StrictGreaterThan) else sp.LessThan
        cond = flipped(t, cond.lhs, evaluate=False)
    if isinstance(cond, (sp.StrictLessThan, sp.LessThan)) and cond.lhs == t \
            and t not in cond.rhs.free_symbols:
        c = cond.rhs
        if isinstance(cond, sp.StrictLessThan):
            return c - 1 if c.is_integer else sp.ceiling(c) - 1
        return c if c.is_integer else sp.floor(c)
    return None


def _smaller(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return sp.Min(a, b)


def float32_exact(number: sp.Expr) -> bool:
    """Whether float32 holds ``number`` exactly (a dyadic rational with a 24-bit mantissa)."""
    if not number.is_Rational:
        return False
    value = float(number)
    return sp.Rational(value) == number and struct.unpack("f", struct.pack("f", value))[0] == value


def float_literal(value: sp.Expr) -> str:
    """A float literal for a number (exact rationals, pi, e, ... rounded once).

    A non-finite number can only stand in a branch no admissible parameter value reaches
    (``check`` decides reachable ones when the parameters are bound): it prints as NaN.
    """
    if value.has(sp.zoo, sp.oo, -sp.oo, sp.nan) or not value.is_finite:
        return "float('nan')"
    number = rounded(value)
    text = repr(number)
    return f"({text})" if number < 0 else text


#: sympy's relations as the comparison operators of generated code.
OPERATORS = {sp.StrictLessThan: "<", sp.LessThan: "<=", sp.StrictGreaterThan: ">",
             sp.GreaterThan: ">=", sp.Eq: "==", sp.Ne: "!="}


#: How ``ArrayPrinter.int_code`` writes each kind of whole-number node: the method's name (a
#: target overrides two, ``_int_min_max`` and ``_restart_index``); no other kind is one we do.
_INT_CODE = ((sp.Symbol, "_int_symbol"), ((sp.Add, sp.Mul), "_int_ring"), ((sp.Min, sp.Max), "_int_min_max"),
             ((sp.floor, sp.ceiling, sp.Mod), "_int_rounded"), (restart_index, "_restart_index"))


class ArrayPrinter(AtomicPrinting, PythonCodePrinter):
    """sympy to straight-line array statements; ``doprint`` returns the final expression.

    Statements naming intermediate arrays (clamped and local steps, integer indices, parameters)
    accumulate in ``lines``, shared by every use in one function; ``helpers`` collects the
    module-level functions the code calls.  Everything both targets spell alike is here, with the
    array module named by ``NS`` and its few differing names in ``NAMES``; a target
    (``codegen/torch.py``, ``codegen/jax.py``) writes the rest: the stubs below (literals,
    conversions, the function's body), the steps and parameters (``int_step``, ``float_step``,
    ``param``), integer ``Min``/``Max``, remainder, floor division and rounded ratios
    (``_int_min_max``, ``_int_mod``, ``_int_div``, ``_rounded_ratio``), the restart index
    (``_restart_index``), a comparison (``_relation``) and float ``Min``/``Max`` (``_print_Min``).
    """

    NS = ""
    #: The target's name of an elementwise function where it is not numpy's.
    NAMES: dict[str, str] = {}
    #: What follows the parameters in a generated function's signature.
    SIGNATURE_TAIL = ""

    def __init__(self, params: tuple[ParamSpec, ...] = ()):
        super().__init__({"fully_qualified_modules": True, "standard": "python3"})
        self.params = {p.symbol: p for p in params}
        self.lines: list[str] = []
        self.memo: dict[object, str] = {}
        self.helpers: set[str] = set()
        self.scope = Scope()
        self.raw_step = False  # conditions read the unclamped step
        # The integer code the symbol ``t`` stands for: the function's step, or inside a
        # branch of a Piecewise the branch's local step (see ``_localized``).
        self.step = "t"

    def fn(self, name: str) -> str:
        """``NS.name`` in the target's spelling (``power`` is torch's ``pow``)."""
        return f"{self.NS}.{self.NAMES.get(name, name)}"

    # -- hooks each target writes ---------------------------------------------------------

    def int_literal(self, value, saturate: bool = False) -> str:
        """A whole number in integer code (``saturate``: a bound, which may be moved into range)."""
        raise NotImplementedError

    def ring_operand(self, code: str) -> str:
        """Integer ``code`` as an operand of ``+``, ``-`` and ``*``."""
        return code

    def as_float(self, code: str) -> str:
        """Integer array ``code`` converted to the compute float type."""
        raise NotImplementedError

    def is_plain(self, code: str) -> bool:
        """Whether integer ``code`` needs no name of its own (a literal, a name)."""
        raise NotImplementedError

    def float_tensor(self, expr: sp.Expr) -> str:
        """``expr`` where an array operand is needed (a target may wrap numbers)."""
        return self._print(expr)

    def bool_literal(self, value: bool) -> str:
        """A bool array holding ``value``."""
        raise NotImplementedError

    def body(self, value: str) -> list[str]:
        """The statements of a function returning ``value`` (after ``lines``)."""
        raise NotImplementedError

    def constant_body(self, expr: sp.Expr) -> list[str]:
        """The statements of a function whose value is the number ``expr`` at every step."""
        raise NotImplementedError

    def broadcast(self, value: str) -> str:
        """A step-free ``value`` (parameters only) spread over the steps' shape."""
        raise NotImplementedError

    # -- whole numbers --------------------------------------------------------------------

    def int_code(self, expr: sp.Expr) -> str | None:
        """Integer code for a whole-number expression, or None when it is not one we can do."""
        if expr.is_Integer:
            return self.int_literal(expr)
        if not is_whole(expr):
            return None  # decided before printing parts, so no dead statements are left behind
        if expr == t:
            return self.int_step()
        method = next((name for kinds, name in _INT_CODE if isinstance(expr, kinds)), None)
        return None if method is None else getattr(self, method)(expr)

    def _int_symbol(self, expr: sp.Symbol) -> str | None:
        """An integer parameter (any other symbol is not a whole number we print)."""
        return self.param(expr, integer=True) if expr in self.params and expr.is_integer else None

    def _int_ring(self, expr: sp.Add | sp.Mul) -> str | None:
        """A sum or product of whole numbers (ring operations), each in integer code."""
        parts = [self.int_code(a) for a in expr.args]
        joiner = " + " if isinstance(expr, sp.Add) else "*"
        return None if None in parts else "(" + joiner.join(self.ring_operand(p) for p in parts) + ")"

    def _int_rounded(self, expr) -> str | None:
        """``floor``, ``ceiling`` or ``Mod`` in integers, named once when it is not plain."""
        code = self._int_mod(*expr.args) if isinstance(expr, sp.Mod) else self._int_rounding(expr)
        if code is None or self.is_plain(code):
            return code
        return self.bind(("i", expr, self._step_key(expr)), code)

    def _int_rounding(self, expr) -> str | None:
        """``floor``/``ceiling`` in integers: of a ``Min``/``Max`` side by side, of a ``Mod``
        by its remainder, of a whole-number ratio by floor division (``_rounded_ratio``)."""
        arg = expr.args[0]
        inside = rounded_inside(expr)
        if inside is not None:
            return self.int_code(inside)
        if isinstance(arg, sp.Mod) and isinstance(expr, sp.floor):
            return self._floor_of_mod(arg)
        ratio = integer_ratio(arg)
        if ratio is None:
            return None
        return self._rounded_ratio(expr, *ratio)

    def _floor_of_mod(self, mod: sp.Mod) -> str | None:
        """``floor(Mod(N/D, M/E))`` in integers: ``remainder(N*E, M*D) // (D*E)`` (``integer_mod``)."""
        whole = integer_mod(mod)
        if whole is None:
            return None
        remainder = self._int_mod(whole[0], whole[1])
        bottom = self.int_code(whole[2])
        if remainder is None or bottom is None:
            return None
        return remainder if whole[2] == 1 else self._int_div(remainder, bottom)

    # -- conditions -----------------------------------------------------------------------

    def bool_code(self, cond) -> str:
        """A bool array for a condition; a relation reads the raw step (``_relation``)."""
        if cond == sp.true or cond == sp.false:
            return self.bind(("b", bool(cond)), self.bool_literal(bool(cond)))
        if isinstance(cond, sp.And):
            return "(" + " & ".join(self.bool_code(a) for a in cond.args) + ")"
        if isinstance(cond, sp.Or):
            return "(" + " | ".join(self.bool_code(a) for a in cond.args) + ")"
        if isinstance(cond, sp.Not):
            return f"(~{self.bool_code(cond.args[0])})"
        if not isinstance(cond, Relational):
            raise ValueError(f"cannot print condition {cond}")
        saved, self.raw_step = self.raw_step, True
        try:
            return self._relation(cond.lhs, OPERATORS[type(cond)], cond.rhs)
        finally:
            self.raw_step = saved

    # -- values (float context) -----------------------------------------------------------

    def _integer_in_float(self, expr, fallback) -> str:
        """A whole-number node computed in integers, then converted; ``fallback()`` otherwise."""
        code = self.int_code(expr)
        if code is None:
            return fallback()
        if code.strip("()").lstrip("-").isdigit():  # a whole number known here, e.g. restart_index(0, ...)
            return f"{float(code.strip('()'))!r}"
        return self.bind(("if", expr, self._step_key(expr)), self.as_float(f"({code})"))

    def _print_Mod(self, expr):
        a, b = expr.args
        return self._integer_in_float(expr, lambda: self._fraction_mod(expr) or
                                      f"{self.fn('remainder')}({self.float_tensor(a)}, {self._print(b)})")

    def _fraction_mod(self, expr) -> str | None:
        """``Mod`` of whole-number ratios: an integer remainder divided once (see ``integer_mod``)."""
        whole = integer_mod(expr)
        if whole is None:
            return None
        remainder = self._int_mod(whole[0], whole[1])
        if remainder is None:
            return None
        value = self.bind(("i", expr, self._step_key(expr)), self.as_float(remainder))
        return value if whole[2] == 1 else f"({value} / {self.float_code(whole[2])})"

    def _pow(self, base, exponent) -> str:
        return f"{self.fn('power')}({self.float_tensor(base)}, {self._print(exponent)})"

    def _print_logb(self, expr):
        return f"{self.fn('log')}({self.float_tensor(expr.args[0])})"  # a parameter base; numbers fold

    def _localized(self, value: sp.Expr) -> str:
        """A branch's value computed in its local step ``t - lo`` (integers), ``lo`` its first step.

        In the global step a segment that starts late cancels: ``1e-6 - 1e-8 * (t - 1e9)``
        expanded is ``10.000001 - 1e-8 * t``.  Substituting ``t -> t + lo`` in the exact
        formula undoes the expansion exactly, and the local step is exact in integers.
        """
        scope = self.scope
        lo = scope.lo
        if lo == 0 or t not in value.free_symbols or not lo.is_integer:
            return self.float_tensor(value)
        saved_raw, self.raw_step = self.raw_step, True
        try:
            lo_code = self.int_literal(lo, saturate=True) if lo.is_Integer else self.int_code(lo)
        finally:
            self.raw_step = saved_raw
        if lo_code is None:
            return self.float_tensor(value)
        step = self.bind(("local", self.step, lo), f"({self.step} - {self.ring_operand(lo_code)})")
        saved_step, self.step = self.step, step
        hi = None if scope.hi is None else scope.hi - lo
        self.scope = Scope(sp.Integer(0), hi, scope.clamp, local=True)
        try:
            return self.float_tensor(at(value, t + lo))
        finally:
            self.step, self.scope = saved_step, scope

    # -- one generated function -----------------------------------------------------------

    @classmethod
    def function_source(cls, name: str, expr: sp.Expr, params: tuple[ParamSpec, ...],
                        helpers: set[str] | None = None, tables: dict | None = None) -> str:
        """``def name(t, *, p=..., <SIGNATURE_TAIL>)``, values at an integer array of steps, its
        shape; ``helpers``, ``tables`` collect the helpers and count tables it reads."""
        printer = cls(params)
        if t not in expr.free_symbols and expr.is_number:
            body = printer.constant_body(expr)
        else:
            value = printer.doprint(expr)
            if t not in expr.free_symbols:
                value = printer.broadcast(value)
            body = printer.body(value)
        for sink, found in ((helpers, printer.helpers), (tables, printer.count_tables)):
            if sink is not None:
                sink.update(found)
        signature = f"def {name}(t, *{keyword_params(params)}{cls.SIGNATURE_TAIL}):"
        return signature + "\n" + "".join(f"    {line}\n" for line in body)

    def bind(self, key, code: str) -> str:
        """A name for ``code``, emitted once per ``key`` in this function."""
        name = self.memo.get(key)
        if name is None:
            name = f"_v{len(self.memo)}"
            self.memo[key] = name
            self.lines.append(f"{name} = {code}")
        return name

    def float_code(self, expr: sp.Expr) -> str:
        return self._print(expr)

    def _step_key(self, expr) -> str | None:
        """Which step variable ``expr`` reads, so equal nodes share one computation."""
        return self.int_step() if t in expr.free_symbols else None

    def _print(self, expr, **kwargs):
        if isinstance(expr, sp.Expr) and expr.is_number and not isinstance(expr, sp.Piecewise):
            return float_literal(expr)
        if isinstance(expr, sp.Pow):
            square = even_power(expr, self.clamped_steps())  # cos(x)**2: reduced up to its sign
            if square is not None:
                expr = square
        return super()._print(expr, **kwargs)

    def _print_Symbol(self, expr):
        if expr == t:
            return self.float_step()
        if expr in self.params:
            return self.param(expr, integer=False)
        raise ValueError(f"unexpected symbol {expr}")

    def _print_Add(self, expr, order=None):
        stable = stable_sum(expr)  # b + a cos(x) without cancellation (codegen/stable.py)
        if stable is not None:
            return self._print(stable)
        ratio = step_ratio(expr)  # ``(n - t)/n``, not ``1 - t/n`` (see step_ratio)
        if ratio is None:
            return super()._print_Add(expr, order=order)
        numerator, denominator = (self._print(x) for x in ratio)
        return f"({numerator}) / {denominator if is_atomic(denominator) else f'({denominator})'}"

    def _print_Mul(self, expr):
        numbers = [a for a in expr.args if a.is_number]
        if len(numbers) > 1:  # fold pi/500 and friends into one literal
            rest = [a for a in expr.args if not a.is_number]
            folded = sp.Float(rounded(sp.Mul(*numbers)), 17)
            return super()._print_Mul(sp.Mul(folded, *rest, evaluate=False))
        return super()._print_Mul(expr)

    def _print_Float(self, expr):
        return float_literal(expr)

    def _function(self, name):
        def printer(expr):
            return f"{self.NS}.{name}({self._print(expr.args[0])})"
        return printer

    def _print_elementwise(self, expr):
        """An elementwise math function, spelled as its row of ``functions.FUNCTIONS`` says
        (one ``_print_<node>`` per row, set below, as sympy's printers do for ``math``)."""
        return self._function(BY_NODE[type(expr)].array)(expr)

    def _print_periodic(self, expr):
        """``sin``/``cos``/``tan`` with the argument reduced in integers (``codegen/stable.py``)."""
        found = reduced(expr, steps=self.clamped_steps())
        if found is not None and not isinstance(found, type(expr)):
            return self._print(found)
        return self._function(BY_NODE[type(expr)].array)(found or expr)

    def clamped_steps(self):
        """``(lo, hi)`` when the step of this expression is clamped into those numbers, else None."""
        scope = self.scope
        if self.raw_step or scope.trivial or scope.hi is None or not (scope.lo.is_number
                                                                       and scope.hi.is_number):
            return None
        return scope.lo, scope.hi

    def _print_sinpi(self, expr):
        """``sin(pi W / E)``: the whole ``W`` converted once, times ``pi / E`` rounded once."""
        whole, denominator = expr.args
        code = self._integer_in_float(whole, lambda: self._print(whole))
        scale = self.float_code(sp.pi / denominator)
        scale, code = (c if is_atomic(c) else f"({c})" for c in (scale, code))
        return f"{self.NS}.sin({scale}*{code})"

    def _print_Pow(self, expr, rational=False):
        base, exponent = expr.args
        if exponent == sp.S.Half:
            return f"{self.NS}.sqrt({self._print(base)})"
        if exponent == -sp.S.Half:
            return f"(1.0/{self.NS}.sqrt({self._print(base)}))"
        if exponent == -1:
            return f"(1.0/{self.parenthesize(base, PRECEDENCE['Pow'])})"
        if exponent.is_Integer and exponent > 0 and t not in exponent.free_symbols:
            return f"{self.parenthesize(base, PRECEDENCE['Pow'])}**{int(exponent)}"
        return self._power(base, exponent)

    def _print_exp(self, expr):
        power = as_power(expr)
        if power is not None:
            return self._power(*power)
        return self._function("exp")(expr)

    def _power(self, base, exponent) -> str:
        """``base ** exponent``: IEEE inf past the float's range, as the reference's ``_pow``.

        A positive constant base that float32 cannot hold (``0.999``) is ``exp(x * log b)``
        with ``log b`` rounded once from the exact base: ``pow`` of the rounded base would
        carry its rounding times ``x`` (5e-5 relative at ``0.999 ** 1675`` in float32; 400
        ulps at ``0.97 ** 1000``), the product carries ``|x log b|`` ulps.  Bases float32
        holds (``0.5``, ``2``) stay powers (``_pow``), exact at whole exponents.
        """
        if base.is_number and base.is_positive and not float32_exact(base):
            log = float_literal(sp.log(base))
            return f"{self.NS}.exp({log}*{self.parenthesize(exponent, PRECEDENCE['Mul'])})"
        return self._pow(base, exponent)

    def _print_floor(self, expr):
        return self._integer_in_float(expr, lambda: f"{self.NS}.floor({self._print(expr.args[0])})")

    def _print_ceiling(self, expr):
        return self._integer_in_float(expr, lambda: f"{self.NS}.ceil({self._print(expr.args[0])})")

    def _print_restart_index(self, expr):
        def refuse():
            raise ValueError("restart_index needs whole-number arguments")
        return self._integer_in_float(expr, refuse)

    def _print_Max(self, expr):
        return self._print_Min(expr)

    def _print_Piecewise(self, expr):
        outer = self.scope
        lo = outer.lo
        branches: list[tuple[str, str | None]] = []
        args = expr.args
        for index, (value, cond) in enumerate(args):
            last = index == len(args) - 1
            bound = None if last else last_step(cond)
            hi = outer.hi if bound is None else _smaller(outer.hi, bound)
            if hi is not None and (lo - hi).is_positive:
                continue  # no step reaches this branch
            self.scope = Scope(lo, hi, clamp=outer.clamp or needs_clamp(value), local=outer.local)
            try:
                code = self._localized(value)
            finally:
                self.scope = outer
            branches.append((code, None if last else self.bool_code(cond)))
            if bound is not None:
                lo = sp.Max(lo, bound + 1)
        out = branches[-1][0]
        for code, cond in reversed(branches[:-1]):
            out = f"{self.NS}.where({cond}, {code}, {out})"
            if len(branches) > MAX_INLINE_BRANCHES:  # one statement per branch, not deep nesting
                out = self.bind(("w", len(self.memo)), out)
        return out

    def _print_Relational(self, expr):
        return self.bool_code(expr)

    def _print_NumberSymbol(self, expr):
        return float_literal(expr)

    def _print_Exp1(self, expr):
        return float_literal(expr)

    def _print_Pi(self, expr):
        return float_literal(expr)


for _row in FUNCTIONS:
    if _row.array is not None:
        setattr(ArrayPrinter, f"_print_{_row.node.__name__}",
                ArrayPrinter._print_periodic if _row.period else ArrayPrinter._print_elementwise)
