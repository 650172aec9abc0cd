"""The torch target: branch-free code that traces into one static graph.

Lazy devices (Cerebras), ``torch.compile(fullgraph=True)`` and CUDA graphs all
need a schedule to be a fixed sequence of tensor ops with no Python decision
on a tensor.  So this printer turns a checked sympy expression into a
function body of straight-line torch code:

* ``Piecewise`` becomes nested ``torch.where`` with the last branch as the
  default.  ``where`` evaluates *every* branch at every step, so each branch
  that could blow up (``exp``, ``cos``, ``sqrt``, a power, a division) sees
  the step clamped into the interval where it is used, derived from the
  preceding ``t < c`` / ``t <= c`` conditions.  Nothing unused can be
  inf or NaN (which would poison gradients or trip NaN checks), and ``cos``
  never gets an argument far outside its segment.
* The step stays an int64 tensor.  Conditions, segment bounds, ``floor``,
  ``ceiling`` and ``Mod`` of whole-number ratios and the restart index are
  integer arithmetic (``torch.div(..., rounding_mode="floor")``,
  ``torch.remainder``), so boundaries are exact at any step; a float32 step
  counter would lose whole steps past 2**24.
* Values are computed in ``_compute`` (float64 unless asked otherwise) and
  cast to ``_dtype`` once at the end, so a float32 result is the correctly
  rounded float64 value even at step 2**31 - 1.
* Subtrees without ``t`` or parameters are folded to float literals;
  parameters become 0-d tensors at entry so every operand of ``where``,
  ``minimum`` and ``maximum`` is a tensor (never a Python number), and
  conditions on parameters alone are tensors too.  Tensors for constants
  are made with ``torch.full`` (a fill kernel), which is safe inside CUDA
  graph capture, unlike ``torch.tensor`` (a host-to-device copy).
"""

from __future__ import annotations

import sympy as sp
from sympy.core.relational import Relational

from ..core.algebra import at, t
from ..core.special import restart_index
from .array import ArrayPrinter, Scope, _literal
from .base import GeneratedModule, ModuleSpec, ParamSpec, assemble, keyword_params
from .integers import (
    integer_mod,
    integer_ratio,
    is_whole,
    rounded_inside,
    whole_argument,
    whole_bound,
    whole_mods,
)


class TorchPrinter(ArrayPrinter):
    """sympy to straight-line torch statements; ``doprint`` returns the final expression.

    Statements that name intermediate tensors (clamped steps, integer
    indices, parameter tensors) accumulate in ``lines`` and are shared by
    every use in one function.
    """

    printmethod = "_torchcode"
    NS = "torch"

    def __init__(self, params: tuple[ParamSpec, ...] = ()):
        super().__init__({"fully_qualified_modules": True, "standard": "python3"})
        self.params = {p.symbol: p for p in params}
        self.lines: list[str] = []
        self.memo: dict[object, str] = {}
        self.scope = Scope()
        self.raw_step = False  # conditions read the unclamped step
        # The int64 code the symbol ``t`` stands for: the function's step, or inside a
        # branch of a Piecewise the branch's local step (see ``_localized``).
        self.step = "t"

    # -- statements ------------------------------------------------------------------

    def float_step(self) -> str:
        base = self.bind(("tf", self.step), f"{self.step}.to(_compute)")
        scope = self.scope
        if self.raw_step or scope.trivial:
            return base
        lo = self.float_code(scope.lo)
        hi = None if scope.hi is None else self.float_code(scope.hi)
        return self.bind(("tf", self.step, scope.lo, scope.hi), _clamp(base, lo, hi))

    def int_step(self) -> str:
        scope = self.scope
        if self.raw_step or scope.trivial:
            return self.step
        lo = self._int_bound(scope.lo)
        hi = None if scope.hi is None else self._int_bound(scope.hi)
        return self.bind(("ti", self.step, scope.lo, scope.hi), _clamp(self.step, lo, hi))

    def _int_bound(self, bound: sp.Expr) -> str:
        """A whole-number bound in int64; one of float parameters is rounded in float first."""
        code = self.int_code(bound)
        if code is None:
            saved, self.raw_step = self.raw_step, True
            try:
                code = f"({self.float_tensor(bound)}).to(torch.int64)"
            finally:
                self.raw_step = saved
        return code

    def param(self, symbol: sp.Symbol, integer: bool) -> str:
        name = self.params[symbol].py_name
        dtype = "torch.int64" if integer else "_compute"
        return self.bind(("p", symbol, integer),
                         f"torch.full((), {name}, dtype={dtype}, device=_dev)")

    def tensor(self, value: sp.Expr) -> str:
        """A 0-d tensor holding a number (for ``where``, ``minimum``: never a Python number)."""
        return self.bind(("c", value), f"torch.full((), {_literal(value)}, dtype=_compute, device=_dev)")

    # -- three kinds of code ------------------------------------------------------------

    def float_tensor(self, expr: sp.Expr) -> str:
        return self.tensor(expr) if expr.is_number else self._print(expr)

    def int_code(self, expr: sp.Expr) -> str | None:
        """int64 code for a whole-number expression, or None when it is not one we can do."""
        if expr.is_Integer:
            return str(int(expr))
        if not is_whole(expr):
            return None  # decided before printing parts, so no dead statements are left behind
        if expr == t:
            return self.int_step()
        if isinstance(expr, sp.Symbol):
            if expr in self.params and expr.is_integer:
                return self.param(expr, integer=True)
            return None
        if isinstance(expr, (sp.Add, sp.Mul)):
            parts = [self.int_code(a) for a in expr.args]
            if any(p is None for p in parts):
                return None
            joiner = " + " if isinstance(expr, sp.Add) else "*"
            return "(" + joiner.join(f"({p})" for p in parts) + ")"
        if isinstance(expr, (sp.Min, sp.Max)):
            parts = [self.int_code(a) for a in expr.args]
            if any(p is None for p in parts):
                return None
            return _min_max(expr, parts, [a.is_number for a in expr.args], self.int_tensor_literal)
        if isinstance(expr, (sp.floor, sp.ceiling)):
            code = self._int_rounding(expr)
            if code is None or code.lstrip("-").isdigit():  # ceiling(1499*(2n + 10)/(2n + 10))
                return code
            return self.bind(("i", expr, self._step_key(expr)), code)
        if isinstance(expr, sp.Mod):
            a, b = (self.int_code(x) for x in expr.args)
            if a is None or b is None:
                return None
            return self.bind(("i", expr, self._step_key(expr)),
                             f"torch.remainder({self._as_int_tensor(a, expr.args[0])}, {b})")
        if isinstance(expr, restart_index):
            return self._restart_index(expr)
        return None

    def int_tensor_literal(self, value) -> str:
        return self.bind(("ci", value), f"torch.full((), {int(value)}, dtype=torch.int64, device=_dev)")

    def _as_int_tensor(self, code: str, expr: sp.Expr) -> str:
        return self.int_tensor_literal(expr) if expr.is_Integer else code

    def _int_rounding(self, expr) -> str | None:
        arg = expr.args[0]
        inside = rounded_inside(expr)
        if inside is not None:
            return self.int_code(inside)
        if isinstance(arg, sp.Mod) and isinstance(expr, sp.floor):
            return self._floor_of_mod(arg)
        ratio = integer_ratio(arg)
        if ratio is None:
            return None
        numerator, denominator = ratio
        top, bottom = self.int_code(numerator), self.int_code(denominator)
        if top is None or bottom is None:
            return None
        if denominator == 1:
            return top
        if isinstance(expr, sp.floor):
            return f"torch.div({self._as_int_tensor(top, numerator)}, {bottom}, rounding_mode='floor')"
        negated = self._as_int_tensor(f"-({top})", -numerator)
        return f"(-torch.div({negated}, {bottom}, rounding_mode='floor'))"

    def _floor_of_mod(self, mod: sp.Mod) -> str | None:
        """``floor(Mod(N/D, M/E))`` in int64: ``remainder(N*E, M*D) // (D*E)``."""
        found = self._whole_remainder(mod)
        if found is None:
            return None
        remainder, denominator, bottom = found
        return remainder if denominator == 1 else f"torch.div({remainder}, {bottom}, rounding_mode='floor')"

    def _whole_remainder(self, mod: sp.Mod):
        """``(int64 code of remainder(N*E, M*D), D*E, its code)`` for ``Mod(N/D, M/E)``
        (see ``integer_mod``), or None when the parts are not whole-number code."""
        whole = integer_mod(mod)
        if whole is None:
            return None
        codes = [self.int_code(x) for x in whole]
        if any(c is None for c in codes):
            return None
        top = self._as_int_tensor(codes[0], whole[0])
        return f"torch.remainder({top}, {codes[1]})", whole[2], codes[2]

    def _restart_index(self, expr) -> str | None:
        """Exact cycle index: a float log estimate, corrected by one in integers.

        The estimate ``floor(log(t (m - 1) / T0 + 1) / log m)`` can be one off at
        cycle starts; comparing the integer start of cycles ``i`` and ``i + 1``
        with ``t`` fixes it.  Exact while ``T0 * m**(i + 1)`` fits in int64.
        """
        step, first, mult = expr.args
        first, mult = whole_argument(first), whole_argument(mult)
        if not is_whole(step):
            # Cycle starts are whole numbers: the cycle holding x is the one holding floor(x)
            # (a stretched schedule asks at t / k).  Mod(t/2, 7)/10 is Mod(t, 14)/20, whose
            # floor is integer division.
            step = sp.floor(whole_mods(step))
        s, f, m = (self.int_code(a) for a in (step, first, mult))
        if s is None or f is None or m is None:
            return None
        if step == 0:
            return "0"  # cycle 0 starts at step 0, whatever the period
        ratio = self.float_tensor(step * (mult - 1) / first + 1)
        log_m = self.float_code(sp.log(mult))
        guess = self.bind(("ri0", expr, self._step_key(expr)),
                          f"torch.floor(torch.log({ratio}) / {log_m}).to(torch.int64)")
        m_t = self._as_int_tensor(m, mult)

        def start(index: str) -> str:
            return f"torch.div(({f})*(torch.pow({m_t}, {index}) - 1), ({m}) - 1, rounding_mode='floor')"

        return self.bind(("ri", expr, self._step_key(expr)),
                         f"{guess} - ({start(guess)} > ({s})).to(torch.int64)"
                         f" + ({start(guess + ' + 1')} <= ({s})).to(torch.int64)")

    def bool_code(self, cond) -> str:
        """A bool tensor for a condition; comparisons of whole numbers stay in int64."""
        if cond == sp.true or cond == sp.false:
            return self.bind(("b", bool(cond)),
                             f"torch.full((), {bool(cond)}, dtype=torch.bool, device=_dev)")
        if isinstance(cond, sp.And):
            return "(" + " & ".join(self.bool_code(a) for a in cond.args) + ")"
        if isinstance(cond, sp.Or):
            return "(" + " | ".join(self.bool_code(a) for a in cond.args) + ")"
        if isinstance(cond, sp.Not):
            return f"(~{self.bool_code(cond.args[0])})"
        if not isinstance(cond, Relational):
            raise ValueError(f"cannot print condition {cond}")
        op = {sp.StrictLessThan: "<", sp.LessThan: "<=", sp.StrictGreaterThan: ">",
              sp.GreaterThan: ">=", sp.Eq: "==", sp.Ne: "!="}[type(cond)]
        lhs, rhs = cond.lhs, cond.rhs
        # A whole step against a fractional bound (``0.8 * total``): compare with the rounded
        # bound, in int64 when it is a whole-number ratio of parameters (exact past 2**24,
        # where a float32 ``t`` is not), else in floats as written.
        rounded = None
        if lhs.is_integer and rhs.is_integer is not True and op in ("<", "<=", ">", ">=") \
                and (rhs.is_number or rhs.free_symbols <= set(self.params)):
            rounded = whole_bound(op, rhs)
        saved, self.raw_step = self.raw_step, True
        try:
            left = self.int_code(lhs)
            right = None if rounded is None else self.int_code(rounded)
            if right is not None:
                rhs = rounded
            else:
                right = self.int_code(rhs)
            if left is None or right is None or (lhs.is_number and rhs.is_number):
                left, right = self.float_tensor(lhs), self.float_code(rhs)
            elif lhs.is_number:
                left = self.int_tensor_literal(lhs)
        finally:
            self.raw_step = saved
        return f"({left} {op} {right})"

    # -- sympy printer hooks (float context) ---------------------------------------------

    def _pow(self, base, exponent) -> str:
        return f"torch.pow({self.float_tensor(base)}, {self._print(exponent)})"

    def _print_logb(self, expr):
        return f"torch.log({self.float_tensor(expr.args[0])})"  # a parameter base; numbers fold

    def _integer_in_float(self, expr, fallback) -> str:
        """A whole-number node computed in int64, then converted; ``fallback()`` otherwise."""
        code = self.int_code(expr)
        if code is None:
            return fallback()
        if code.lstrip("-").isdigit():  # a whole number known here, e.g. restart_index(0, ...)
            return f"{float(code)!r}"
        return self.bind(("if", expr, self._step_key(expr)), f"({code}).to(_compute)")

    def _print_Mod(self, expr):
        a, b = expr.args
        return self._integer_in_float(expr, lambda: self._fraction_mod(expr) or
                                      f"torch.remainder({self.float_tensor(a)}, {self._print(b)})")

    def _fraction_mod(self, expr) -> str | None:
        """``Mod`` of whole-number ratios: an int64 remainder divided once (see ``integer_mod``)."""
        found = self._whole_remainder(expr)
        if found is None:
            return None
        remainder, denominator, _ = found
        value = self.bind(("i", expr, self._step_key(expr)), f"{remainder}.to(_compute)")
        return value if denominator == 1 else f"({value} / {self.float_code(denominator)})"

    def _print_Min(self, expr):
        return _min_max(expr, [self._print(a) for a in expr.args],
                        [a.is_number for a in expr.args], self.tensor)

    def _localized(self, value: sp.Expr) -> str:
        """A branch's value computed in its local step ``t - lo`` (int64), ``lo`` its first step.

        In the global step a segment that starts late cancels: ``1e-6 - 1e-8 * (t - 1e9)``
        expanded is ``10.000001 - 1e-8 * t``.  Substituting ``t -> t + lo`` in the exact
        formula undoes the expansion exactly, and the local step is exact in int64.
        """
        scope = self.scope
        lo = scope.lo
        if lo == 0 or t not in value.free_symbols or not lo.is_integer:
            return self.float_tensor(value)
        saved_raw, self.raw_step = self.raw_step, True
        try:
            lo_code = self.int_code(lo)
        finally:
            self.raw_step = saved_raw
        if lo_code is None:
            return self.float_tensor(value)
        step = self.bind(("local", self.step, lo), f"({self.step} - ({lo_code}))")
        saved_step, self.step = self.step, step
        hi = None if scope.hi is None else scope.hi - lo
        self.scope = Scope(sp.Integer(0), hi, scope.clamp, local=True)
        try:
            return self.float_tensor(at(value, t + lo))
        finally:
            self.step, self.scope = saved_step, scope


def _clamp(code: str, lo: str, hi: str | None) -> str:
    """One bound per ``clamp``: Dynamo (torch 2.13) fails to trace a ``clamp`` with a
    number for one bound and a tensor for the other (a parameter's end)."""
    clamped = f"torch.clamp({code}, min={lo})"
    return clamped if hi is None else f"torch.clamp({clamped}, max={hi})"


def _min_max(expr, parts: list[str], literal: list[bool], make_tensor) -> str:
    """``Min``/``Max`` with tensors only: ``minimum``/``maximum``, literals as clamp bounds."""
    is_min = isinstance(expr, sp.Min)
    tensors = [p for p, lit in zip(parts, literal) if not lit]
    numbers = [a for a, lit in zip(expr.args, literal) if lit]
    if not tensors:
        return make_tensor((min if is_min else max)(numbers, key=float))
    out = tensors[0]
    for other in tensors[1:]:
        out = f"torch.{'minimum' if is_min else 'maximum'}({out}, {other})"
    if numbers:
        bound = (min if is_min else max)(numbers, key=float)
        text = str(int(bound)) if bound.is_Integer else _literal(bound)
        out = f"torch.clamp({out}, {'max' if is_min else 'min'}={text})"
    return out


def function_source(name: str, expr: sp.Expr, params: tuple[ParamSpec, ...]) -> str:
    """``def name(t, *, p=default, ..., _dtype=torch.float64, _compute=torch.float64)``.

    ``t`` is an int64 tensor of steps (any shape, any device); the result has
    its shape and device and dtype ``_dtype``.
    """
    printer = TorchPrinter(params)
    args = keyword_params(params)
    signature = f"def {name}(t, *{args}, _dtype=torch.float64, _compute=torch.float64):"
    if t not in expr.free_symbols and expr.is_number:
        body = [f"return torch.full(t.shape, {_literal(expr)}, dtype=_dtype, device=t.device)"]
    else:
        value = printer.doprint(expr)
        if t not in expr.free_symbols:
            value = f"torch.zeros(t.shape, dtype=_compute, device=_dev) + {value}"
        body = ["_dev = t.device", *printer.lines, f"return ({value}).to(_dtype)"]
    return signature + "\n" + "".join(f"    {line}\n" for line in body)


def generate(spec: ModuleSpec) -> GeneratedModule:
    """A standalone module of torch functions, one per schedule, and ``SCHEDULES``."""
    bodies = [function_source(s.py_name, s.expr, spec.params) for s in spec.schedules]
    return assemble(spec, "torch", ["import torch\n", *("\n\n" + b for b in bodies)])
