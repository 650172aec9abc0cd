"""The JAX target: branch-free ``jnp.where`` code, exact on int32 steps, usable as an optax schedule.

The structure is the torch printer's (``codegen/torch.py``): ``Piecewise`` becomes
nested ``jnp.where`` with every branch computed in its own local step ``t - lo``
and, where it could misbehave off its segment, on the step clamped into the
segment; conditions, bounds, ``floor``, ``ceiling``, ``Mod`` of whole-number
ratios and the restart index are integer arithmetic.  What differs is JAX's
default precision: without ``jax_enable_x64`` steps are int32 and values
float32, so this printer cannot lean on int64 and float64 headroom.

* Types are read when the function is traced: ``_i`` is the widest integer
  type JAX allows (int32, or int64 with x64), ``_f`` the widest float.  optax
  passes its int32 count; it is widened to ``_i``.  Values are computed in ``_f``
  and cast once to ``_dtype`` (default ``_f``).
* int32 arithmetic wraps modulo 2**32 (two's complement in XLA), so sums and
  products are exact whenever the *final* integer fits, whatever the
  intermediate values.  Only the operations that are not ring operations need
  their operands in range: comparisons, clamps, ``//``, ``%`` and conversion
  to float.  So:

  - a condition ``a*X + b < c`` (``X`` the step or another whole-number node,
    ``a``, ``b``, ``c`` rational) is solved for ``X`` at generation time and
    printed as ``X <= K`` or ``X > K`` with a whole ``K``.  A ``K`` outside
    the step type is *saturated* to it (``_sat``): for any ``X`` of that type
    ``X <= K`` and ``X <= sat(K)`` agree, which ``<`` against a saturated bound
    would not (``t < 2**31`` is true at ``t = 2**31 - 1``; ``t < sat(2**31)`` is
    not).  Segment offsets and clamp bounds saturate the same way (a segment
    that starts past the type's range is never selected).
  - ``floor((a*X + b) / D)`` is ``a*(X // D) + floor((a*(X % D) + b) / D)``:
    both divisions see operands bounded by ``|a| D + |b|``, so ``(t + 1) // 50``
    is right at ``t = 2**31 - 1`` where ``t + 1`` has wrapped.  ``Mod`` reduces
    ``a`` and ``b`` modulo the period first for the same reason.
  - the restart index counts the cycle starts ``<= t`` in a table of every start
    the step type can hold (``_restart_index``), so no power of the period
    multiplier overflows.
  - any other whole-number constant outside int32 goes through ``_wide``, which
    raises a clear error (enable x64) instead of wrapping silently.

* Values in float32 are rounded at each operation, not once at the end as in the
  torch target; the local steps keep that error relative to each segment (a
  segment at step 2e9 is computed at steps 0..n, not at 2e9 + 0..n).
* Parameters are keyword arguments with the file's defaults, converted with
  ``jnp.asarray`` to ``_i`` or ``_f`` at entry (so a traced value works too,
  except as a restart period, which must be a concrete number).
"""

from __future__ import annotations

import sympy as sp

from ..core.algebra import t
from .array import ArrayPrinter, float_literal
from .base import GeneratedModule, ModuleSpec, ParamSpec, assemble
from .counts import CountPrinting, tables_source
from .integers import (
    WholeNumberPrinter,
    is_whole,
    whole_argument,
    whole_bound,
)

#: The narrowest step type the code must be exact for (JAX's default int32).
INT32_MAX = 2**31 - 1

_SAT = '''\
def _sat(value, dtype):
    """A whole-number bound moved into dtype's range: ``x <= value`` keeps its truth for every x of dtype."""
    info = jnp.iinfo(dtype)
    return max(int(info.min), min(int(info.max), value))
'''

_WIDE = '''\
def _wide(value, dtype):
    """A whole-number constant as dtype, or a clear error where it does not fit (no silent wrap)."""
    info = jnp.iinfo(dtype)
    if not int(info.min) <= value <= int(info.max):
        raise OverflowError(f"the schedule computes with the whole number {value}, which {dtype} steps "
                            "cannot hold: enable jax_enable_x64 (jax.config.update('jax_enable_x64', True))")
    return value
'''

_RESTART_INDEX = '''\
def _restart_index(s, first, mult):
    """Index of the restart cycle holding step s (cycle i lasts first * mult**i steps).

    Counts the cycle starts after 0 that are <= s, from a table of every start that
    s's integer type can hold (at most 31 for int32): no power overflows.  first and
    mult must be concrete numbers (they fix the table), not traced values.
    """
    first, mult = int(first), int(mult)
    top = int(jnp.iinfo(s.dtype).max)
    starts, start, length = [], first, first * mult
    while start <= top:
        starts.append(start)
        start, length = start + length, length * mult
    if not starts:
        return jnp.zeros_like(s)
    return jnp.sum(s[..., None] >= jnp.asarray(starts, s.dtype), axis=-1, dtype=s.dtype)
'''

_COUNT = '''\
def _count(k, table, dtype, reach):
    """Samples or tokens consumed before the steps k (dtype): each step's stage by binary search
    in the table (first steps, counts before them, counts per step, the step past which the
    count holds), then that stage's linear formula.  The count is computed exactly or not at
    all: where the schedule reads it up to step reach (None: at every step dtype holds) and it
    passes dtype's range there, a clear error (enable x64), never a silent wrap."""
    firsts, befores, per_step, last = table
    top = int(jnp.iinfo(dtype).max)
    hold, used = last, len(firsts)  # the last step whose count dtype holds, the stages up to it
    for index in range(len(firsts)):
        if befores[index] > top:
            hold, used = firsts[index] - 1, index
            break
        room = firsts[index] + (top - befores[index]) // per_step[index]
        if index + 1 == len(firsts) or room < firsts[index + 1]:
            hold, used = min(last, room), index + 1
            break
    limit = top if reach is None else reach
    if min(limit, last) > hold:
        raise OverflowError(f"the schedule reads a count of samples or tokens up to step {min(limit, last)}, "
                            f"past what {dtype} holds (from step {hold + 1}): enable jax_enable_x64 "
                            "(jax.config.update('jax_enable_x64', True))")
    k = jnp.clip(k, 0, hold)
    firsts = jnp.asarray(firsts[:used], dtype)
    index = jnp.searchsorted(firsts, k, side="right") - 1
    rate = jnp.asarray([min(p, top) for p in per_step[:used]], dtype)
    return jnp.asarray(befores[:used], dtype)[index] + rate[index] * (k - firsts[index])
'''

#: Functions a generated module defines when its formulas use them, in a fixed order.
HELPERS = {"_sat": _SAT, "_wide": _WIDE, "_restart_index": _RESTART_INDEX, "_count": _COUNT}

def _fits(bound: sp.Expr) -> bool:
    """Whether a generation-time bound on an intermediate fits int32 (parameters: trusted)."""
    return not bound.is_number or bound <= INT32_MAX


_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


class JaxPrinter(CountPrinting, ArrayPrinter):
    """sympy to straight-line ``jnp`` statements (``ArrayPrinter``): integers of JAX's widest
    type ``_i`` kept exact by wrap-safe forms, values in ``_f``."""

    printmethod = "_jaxcode"
    NS = "jnp"
    SIGNATURE_TAIL = ", _dtype=None"

    # -- statements ------------------------------------------------------------------

    def int_literal(self, value, saturate: bool = False) -> str:
        """A whole number; outside int32 through ``_sat`` (where saturating is exact) or ``_wide``."""
        number = int(value)
        if abs(number) <= INT32_MAX:
            return str(number) if number >= 0 else f"({number})"
        helper = "_sat" if saturate else "_wide"
        self.helpers.add(helper)
        return f"{helper}({number}, _i)"

    def int_step(self) -> str:
        scope = self.scope
        if self.raw_step or scope.trivial:
            return self.step
        lo = self._int_bound(scope.lo)
        if scope.hi is None:
            return self.bind(("ti", self.step, scope.lo, None), f"jnp.maximum({self.step}, {lo})")
        hi = self._int_bound(scope.hi)
        return self.bind(("ti", self.step, scope.lo, scope.hi), f"jnp.clip({self.step}, {lo}, {hi})")

    def float_step(self) -> str:
        """The (clamped) step as a float: clamped in integers first, so bounds are exact."""
        step = self.int_step()
        return self.bind(("tf", step), f"{step}.astype(_f)")

    def _int_bound(self, bound: sp.Expr) -> str:
        """A whole-number bound (saturated); one of float parameters is rounded in float first."""
        saved, self.raw_step = self.raw_step, True
        try:
            if bound.is_Integer:
                return self.int_literal(bound, saturate=True)
            code = self.int_code(bound)
            return code if code is not None else f"({self._print(bound)}).astype(_i)"
        finally:
            self.raw_step = saved

    def param(self, symbol: sp.Symbol, integer: bool) -> str:
        name = self.params[symbol].py_name
        return self.bind(("p", symbol, integer), f"jnp.asarray({name}, {'_i' if integer else '_f'})")

    # -- what the base asks of a target ---------------------------------------------------

    def as_float(self, code: str) -> str:
        return f"{code}.astype(_f)"

    def is_plain(self, code: str) -> bool:
        return code.isidentifier()

    def bool_literal(self, value: bool) -> str:
        return f"jnp.asarray({value})"

    # -- whole numbers (wrap-exact: the module docstring) ---------------------------------

    def _int_min_max(self, expr) -> str | None:
        is_min = isinstance(expr, sp.Min)
        numbers = [a for a in expr.args if a.is_number]
        parts = [self.int_code(a) for a in expr.args if not a.is_number]
        if any(p is None for p in parts):
            return None
        if not parts:
            return self.int_literal((min if is_min else max)(numbers))
        out = parts[0]
        for other in parts[1:]:
            out = f"jnp.{'minimum' if is_min else 'maximum'}({out}, {other})"
        if numbers:
            bound = (min if is_min else max)(numbers)
            # min(x, K) with K past the type's top is x, as is min(x, sat(K)); not so for max.
            exact = (bound > 0) == is_min
            out = f"jnp.{'minimum' if is_min else 'maximum'}({out}, {self.int_literal(bound, exact)})"
        return out

    def linear(self, expr: sp.Expr):
        """``(a, X, b)`` with ``expr == a*X + b``: ``a`` a nonzero rational, ``X`` a whole-number
        expression of the step, ``b`` free of the step; None when ``expr`` is not of that form."""
        b, rest = expr.as_independent(t, as_Add=True)
        if rest == 0:
            return None
        a, x = rest.as_coeff_Mul()
        if isinstance(x, sp.Add):
            content, x = x.primitive()
            a = a * content
        if not a.is_Rational or not x.is_integer or x.is_number:
            return None
        return a, x, b

    def _rounded_ratio(self, expr, numerator: sp.Expr, denominator: sp.Expr) -> str | None:
        if denominator == 1:
            return self.int_code(numerator)
        if isinstance(expr, sp.floor):
            return self.floor_div(numerator, denominator)
        code = self.floor_div(-numerator, denominator)
        return None if code is None else f"(-{code})"

    def floor_div(self, numerator: sp.Expr, denominator: sp.Expr) -> str | None:
        """``floor(N / D)`` of whole numbers, right even where ``N`` itself wraps (see the docstring)."""
        if denominator.is_number and denominator < 0:
            numerator, denominator = -numerator, -denominator
        d = self.int_code(denominator)
        form = self.linear(numerator)
        if d is None:
            return None
        code_x = None if form is None or not (form[0].is_Integer and form[2].is_integer) \
            else self.int_code(form[1])
        if code_x is not None:
            a, x, b = form
            if a == 1 and b == 0:
                return self._int_div(code_x, d)
            carry = sp.Integer(0)
            if b.is_Integer and denominator.is_Integer:
                carry, b = divmod(b, denominator)  # b's whole multiples of D leave the division
            if _fits(abs(a) * denominator + abs(b)):  # the inner numerator's bound
                q = self.bind(("q", x, denominator, self._step_key(x)), self._int_div(code_x, d))
                r = self.bind(("r", x, denominator, self._step_key(x)), f"({code_x} % {d})")
                scaled = r if a == 1 else f"{self.int_literal(a)}*{r}"
                top = scaled if b == 0 else f"{scaled} + {self.int_code(b)}"
                total = q if a == 1 else f"{self.int_literal(a)}*{q}"
                out = f"({total} + ({top}) // {d}"
                return out + (")" if carry == 0 else f" + {self.int_literal(carry)})")
        n = self.int_code(numerator)
        return None if n is None else self._int_div(n, d)

    @staticmethod
    def _int_div(n: str, d: str) -> str:
        return f"({n} // {d})"

    def _int_mod(self, a: sp.Expr, b: sp.Expr) -> str | None:
        """``a mod b`` of whole numbers (the sign of ``b``), reduced before it can wrap."""
        m = self.int_code(b)
        if m is None:
            return None
        form = self.linear(a)
        if form is not None and form[0].is_Integer and b.is_Integer and b > 0 and form[2].is_Integer:
            k, x, c = form
            k, c = k % b, c % b
            code_x = self.int_code(x)
            if code_x is not None and _fits(k * b + c if k != 1 else 2 * b):
                r = self.bind(("r", x, b, self._step_key(x)), f"({code_x} % {m})")
                if k == 1 and c == 0:
                    return r
                scaled = r if k == 1 else f"{self.int_literal(k)}*{r}"
                return f"({scaled} % {m})" if c == 0 else f"(({scaled} + {self.int_literal(c)}) % {m})"
        n = self.int_code(a)
        return None if n is None else f"({n} % {m})"

    def _restart_index(self, expr) -> str | None:
        step, first, mult = expr.args
        first, mult = whole_argument(first), whole_argument(mult)
        if not is_whole(step):
            # Cycle starts are whole numbers: the cycle holding x is the one holding floor(x).
            step = sp.floor(step)
        s = self.int_code(step)
        if s is None or not is_whole(first) or not is_whole(mult):
            return None
        if step == 0:
            return "0"  # cycle 0 starts at step 0, whatever the period
        self.helpers.add("_restart_index")
        args = ", ".join(self._python_code(a) for a in (first, mult))
        return self.bind(("ri", expr, self._step_key(expr)), f"_restart_index({s}, {args})")

    def _python_code(self, expr: sp.Expr) -> str:
        """Plain Python for a step-free whole number over the raw parameters (concrete at trace time)."""
        if expr.is_Integer:
            return str(int(expr))
        renamed = expr.xreplace({s: sp.Symbol(p.py_name, **s.assumptions0) for s, p in self.params.items()})
        return WholeNumberPrinter().doprint(renamed)

    def _count_lookup(self, table: str, step: str, reach: int | None) -> str:
        self.helpers.add("_count")
        return f"_count({step}, {table}, _i, {reach})"

    # -- conditions ---------------------------------------------------------------------

    def _relation(self, lhs, op: str, rhs) -> str:
        """``lhs op rhs`` as a bool array; a linear condition on a whole number is solved (docstring)."""
        form = self.linear(lhs - rhs)
        if form is not None:
            a, x, b = form  # a*x + b op 0, so x op' -b/a
            code_x = self.int_code(x)
            if code_x is not None:
                found = self._solved(code_x, _FLIP[op] if a < 0 else op, -b / a)
                if found is not None:
                    return found
        left, right = self.int_code(lhs), self.int_code(rhs)
        if left is None or right is None or (lhs.is_number and rhs.is_number):
            left, right = self.float_code(lhs), self.float_code(rhs)
        return f"({left} {op} {right})"

    def _solved(self, x: str, op: str, bound: sp.Expr) -> str | None:
        """``x op bound`` for a whole ``x`` as ``x <= K`` / ``x > K`` (``K`` whole, saturated)."""
        if op in ("==", "!="):
            if bound.is_number and not bound.is_integer:
                return self.bool_code(sp.false if op == "==" else sp.true)
            same = self._solved(x, "<=", bound)
            other = self._solved(x, ">=", bound)
            if same is None or other is None:
                return None
            return f"({same} & {other})" if op == "==" else f"(~({same} & {other}))"
        # x < c  <=>  x <= ceil(c) - 1;  x <= c  <=>  x <= floor(c);  > and >= likewise.
        k = whole_bound(op, bound) - (1 if op in ("<", ">=") else 0)
        if k.is_Integer:
            code = self.int_literal(k, saturate=True)
        else:
            code = self.int_code(k)
            if code is None:
                return None
        return f"({x} <= {code})" if op in ("<", "<=") else f"({x} > {code})"

    # -- values (float context) ---------------------------------------------------------

    def _print_Min(self, expr):
        name = "minimum" if isinstance(expr, sp.Min) else "maximum"
        numbers = [a for a in expr.args if a.is_number]
        parts = [self._print(a) for a in expr.args if not a.is_number]
        if numbers:
            parts.append(float_literal((min if name == "minimum" else max)(numbers, key=float)))
        out = parts[0]
        for other in parts[1:]:
            out = f"jnp.{name}({out}, {other})"
        return out

    # -- the function around the code -----------------------------------------------------

    def constant_body(self, expr: sp.Expr) -> list[str]:
        return self.body(f"jnp.full(t.shape, {float_literal(expr)}, _f)")

    def broadcast(self, value: str) -> str:
        return f"jnp.broadcast_to(jnp.asarray({value}, _f), t.shape)"

    def body(self, value: str) -> list[str]:
        return [*_PROLOGUE, *self.lines, f"return ({value}).astype(_f if _dtype is None else _dtype)"]


_PROLOGUE = [
    "_i = jax.dtypes.canonicalize_dtype(jnp.int64)",
    "_f = jax.dtypes.canonicalize_dtype(jnp.float64)",
    "t = jnp.asarray(t)",
    "if not jnp.issubdtype(t.dtype, jnp.integer):",
    "    raise TypeError(f'steps must be whole numbers (an integer array), not {t.dtype}')",
    "t = t.astype(_i)",
]


def function_source(name: str, expr: sp.Expr, params: tuple[ParamSpec, ...],
                    helpers: set[str] | None = None, tables: dict | None = None) -> str:
    """``def name(t, *, p=default, ..., _dtype=None)``: values at an integer array of steps.

    The result has the steps' shape and dtype ``_dtype`` (default: float32, or
    float64 with x64).  ``helpers`` collects the module helpers the body calls, ``tables`` the
    stage tables its counts read.
    """
    return JaxPrinter.function_source(name, expr, params, helpers, tables)


def generate(spec: ModuleSpec) -> GeneratedModule:
    """A standalone module of JAX functions, one per schedule, and ``SCHEDULES``."""
    used: set[str] = set()
    tables: dict = {}
    bodies = [function_source(s.py_name, s.expr, spec.params, used, tables) for s in spec.schedules]
    helpers = ["\n\n" + text for name, text in HELPERS.items() if name in used]
    helpers.append(tables_source(tables, gap="\n\n"))
    imports = "import jax\nimport jax.numpy as jnp\n"
    return assemble(spec, "jax", [imports, *helpers, *("\n\n" + b for b in bodies)])
