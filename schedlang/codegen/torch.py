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

The module around these functions (their plain-Python twins, the parameter checks, the
scheduler class) is ``class_module`` at the end of this file: what ``compile --target torch``
prints and, with the bound values folded in, what ``Schedule.torch`` loads.
"""

from __future__ import annotations

import ast

import sympy as sp

from . import python as python_codegen
from . import templates
from .array import ArrayPrinter, float_literal
from .base import ModuleSpec, ParamSpec, header, keyword_params, schedules_table
from .classes import Module, check_class_name, class_params, params_check_source, source_phrase
from .counts import CountPrinting
from .integers import is_whole, whole_argument, whole_bound, whole_mods


def count_helpers(tables) -> str:
    """What a torch module defines after the stage tables its functions read (their names,
    ``codegen/counts.py``'s literals): the helpers that read them, and each table made on the
    CPU at import (so a function compiled before its first call is not compiled again once the
    table exists)."""
    made = "".join(f"_count_tables({name}, torch.device('cpu'))\n" for name in tables)
    return _COUNT_HELPERS + "\n\n" + made


_COUNT_HELPERS = '''

#: (a stage table's id, device) -> its first steps, counts before them and counts per step as
#: int64 tensors on that device.  The tables are this module's globals, alive as long as it.
_COUNT_TABLES = {}


def _count_tables(table, device):
    """``table``'s rows as int64 tensors on ``device``, made once per device: on the CPU when
    this module is imported, on the scheduler class's counters' devices when it is built (so
    no copy to the device happens in a CUDA graph capture or a compiled step), on any other
    device at its first call."""
    key = (id(table), device)
    found = _COUNT_TABLES.get(key)
    if found is None:
        found = tuple(torch.tensor(row, dtype=torch.int64, device=device) for row in table[:3])
        _COUNT_TABLES[key] = found
    return found


def _count_tensor(k, table, device):
    """Samples or tokens consumed before the steps ``k`` (int64): each step's stage by binary
    search in the table (``torch.searchsorted``), then that stage's linear formula in int64,
    as _count computes it.  ``torch.gather``: a tensor index and ``torch.take`` do not trace
    under ``torch.compile(fullgraph=True)`` (inductor)."""
    firsts, befores, per_step = _count_tables(table, device)
    k = torch.clamp(k.to(torch.int64), 0, table[3])  # steps of any integer type
    index = (torch.searchsorted(firsts, k, right=True) - 1).reshape(-1)

    def row(values):
        return torch.gather(values, 0, index).reshape(k.shape)
    return row(befores) + row(per_step) * (k - row(firsts))
'''


class TorchPrinter(CountPrinting, ArrayPrinter):
    """sympy to straight-line torch statements (``ArrayPrinter``): int64 steps and whole
    numbers, values in ``_compute``, every operand of ``where``/``minimum`` a tensor."""

    printmethod = "_torchcode"
    NS = "torch"
    NAMES = {"power": "pow"}
    SIGNATURE_TAIL = ", _dtype=torch.float64, _compute=torch.float64"

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
        return self.bind(("c", value), f"torch.full((), {float_literal(value)}, dtype=_compute, device=_dev)")

    def float_tensor(self, expr: sp.Expr) -> str:
        return self.tensor(expr) if expr.is_number else self._print(expr)

    # -- what the base asks of a target ---------------------------------------------------

    def int_literal(self, value, saturate: bool = False) -> str:
        return str(int(value))  # int64 holds every whole number a checked schedule uses

    def ring_operand(self, code: str) -> str:
        return f"({code})"

    def as_float(self, code: str) -> str:
        return f"{code}.to(_compute)"

    def is_plain(self, code: str) -> bool:
        return code.lstrip("-").isdigit()

    def bool_literal(self, value: bool) -> str:
        return f"torch.full((), {value}, dtype=torch.bool, device=_dev)"

    # -- whole numbers in int64 -------------------------------------------------------------

    def int_tensor_literal(self, value) -> str:
        return self.bind(("ci", value), f"torch.full((), {int(value)}, dtype=torch.int64, device=_dev)")

    def _as_int_tensor(self, code: str, expr: sp.Expr) -> str:
        return self.int_tensor_literal(expr) if expr.is_Integer else code


    def _int_min_max(self, expr) -> str | None:
        parts = [self.int_code(a) for a in expr.args]
        if any(p is None for p in parts):
            return None
        return _min_max(expr, parts, [a.is_number for a in expr.args], self.int_tensor_literal)

    def _int_mod(self, a: sp.Expr, b: sp.Expr) -> str | None:
        top, modulus = self.int_code(a), self.int_code(b)
        if top is None or modulus is None:
            return None
        return f"torch.remainder({self._as_int_tensor(top, a)}, {modulus})"

    @staticmethod
    def _int_div(n: str, d: str) -> str:
        return f"torch.div({n}, {d}, rounding_mode='floor')"

    def _rounded_ratio(self, expr, numerator: sp.Expr, denominator: sp.Expr) -> str | None:
        top, bottom = self.int_code(numerator), self.int_code(denominator)
        if top is None or bottom is None:
            return None
        if denominator == 1:
            return top
        if isinstance(expr, sp.floor):
            return self._int_div(self._as_int_tensor(top, numerator), bottom)
        negated = self._as_int_tensor(f"-({top})", -numerator)
        return f"(-{self._int_div(negated, bottom)})"


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

    def _count_lookup(self, table: str, step: str, reach: int | None) -> str:
        return f"_count_tensor({step}, {table}, _dev)"

    # -- conditions ---------------------------------------------------------------------

    def _relation(self, lhs, op: str, rhs) -> str:
        """``lhs op rhs`` as a bool tensor; comparisons of whole numbers stay in int64."""
        # A whole step against a fractional bound (``0.8 * total``): compare with the rounded
        # bound, in int64 when it is a whole-number ratio of parameters (exact past 2**24,
        # where a float32 ``t`` is not), else in floats as written.
        rounded = None
        if lhs.is_integer and rhs.is_integer is not True and op in ("<", "<=", ">", ">=") \
                and (rhs.is_number or rhs.free_symbols <= set(self.params)):
            rounded = whole_bound(op, rhs)
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
        return f"({left} {op} {right})"

    # -- values (float context) ---------------------------------------------------------

    def _print_Min(self, expr):
        return _min_max(expr, [self._print(a) for a in expr.args],
                        [a.is_number for a in expr.args], self.tensor)

    # -- the function around the code -----------------------------------------------------

    def constant_body(self, expr: sp.Expr) -> list[str]:
        return [f"return torch.full(t.shape, {float_literal(expr)}, dtype=_dtype, device=t.device)"]

    def broadcast(self, value: str) -> str:
        return f"torch.zeros(t.shape, dtype=_compute, device=_dev) + {value}"

    def body(self, value: str) -> list[str]:
        return ["_dev = t.device", *self.lines, f"return ({value}).to(_dtype)"]


def _clamp(code: str, lo: str, hi: str | None) -> str:
    """One ``clamp`` when both bounds are numbers (one pass over the array instead of two);
    one bound per ``clamp`` otherwise: Dynamo (torch 2.13) fails to trace a ``clamp`` with a
    number for one bound and a tensor for the other (a parameter's end)."""
    if hi is not None and _is_number(lo) and _is_number(hi):
        return f"torch.clamp({code}, {lo}, {hi})"
    clamped = f"torch.clamp({code}, min={lo})"
    return clamped if hi is None else f"torch.clamp({clamped}, max={hi})"


def _is_number(code) -> bool:
    """Whether generated code is a plain number (``0``, ``98999``, ``(-2)``, ``1e-05``)."""
    try:
        float(str(code).strip("()"))
    except ValueError:
        return False
    return True


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
        text = str(int(bound)) if bound.is_Integer else float_literal(bound)
        out = f"torch.clamp({out}, {'max' if is_min else 'min'}={text})"
    return out


def function_source(name: str, expr: sp.Expr, params: tuple[ParamSpec, ...],
                    in_place: bool = False, tables: dict | None = None) -> str:
    """``def name(t, *, p=default, ..., _dtype=torch.float64, _compute=torch.float64)``.

    ``t`` is an int64 tensor of steps (any shape, any device); the result has
    its shape and device and dtype ``_dtype``.  ``in_place``: see ``in_place_source``.
    ``tables`` collects the stage tables the function reads (``ArrayPrinter.count_tables``):
    the module defines them and ``COUNT_HELPERS``.
    """
    source = TorchPrinter.function_source(name, expr, params, tables=tables)
    return in_place_source(source) if in_place else source


# -- in-place arithmetic on temporaries ---------------------------------------------------------

#: torch functions of one tensor that always return a new floating tensor, and have an
#: in-place twin (``x.sin_()``) running the same kernel.
_FLOAT_FUNCTIONS = frozenset({"sin", "cos", "tan", "exp", "log", "sqrt", "log1p", "expm1", "tanh"})
_IN_PLACE_OPS = {ast.Mult: "mul_", ast.Add: "add_", ast.Sub: "sub_", ast.Div: "div_", ast.Pow: "pow_"}
_COMMUTING = (ast.Mult, ast.Add)
_RESULTS = frozenset({*_IN_PLACE_OPS.values(), "neg_", *(f + "_" for f in _FLOAT_FUNCTIONS)})


def in_place_source(source: str) -> str:
    """``source`` (a generated torch function, one statement a line) with arithmetic on a
    temporary done in place: ``0.0009*torch.sin(x)**2 + 0.0001`` becomes
    ``torch.sin(x).pow_(2).mul_(0.0009).add_(0.0001)``.

    On 1M steps every temporary is an 8 MB allocation, written once and read once; reusing it
    makes ``Schedule.torch`` about a third faster than the same ops out of place (issue 39
    item 15; ``benchmarks/bench_speed.py``).  The values are the same bits: each in-place op
    runs the kernel its out-of-place form runs, on the same elements (``c*x`` and ``x*c``
    round alike).  Only what is safe by construction is rewritten: the operand is a
    temporary (the result of an arithmetic operator or of a ``_FLOAT_FUNCTIONS`` call, never a
    name, which may be shared, nor ``.to()``, which may return its input) whose dtype is
    floating (so the in-place op keeps the dtype the out-of-place one gives), and the other
    operand a Python number (so it keeps the shape).  Parameters are fresh 0-d tensors
    without gradients (``TorchPrinter.param``), so no autograd graph sees the writes."""
    lines = []
    for line in source.splitlines(keepends=True):
        body = line.strip()
        if not body or body.startswith(("def ", "#")):
            lines.append(line)
            continue
        rewriting = _InPlace()
        statement = rewriting.visit(ast.parse(body).body[0])
        if rewriting.changed:
            indent = line[:len(line) - len(line.lstrip())]
            lines.append(indent + ast.unparse(statement) + "\n")
        else:
            lines.append(line)
    return "".join(lines)


class _InPlace(ast.NodeTransformer):
    """The rewriting of ``in_place_source``, bottom-up over one statement.  Each expression it
    returns is marked: ``TENSOR`` (surely a tensor: the step, a ``_v`` name, a torch call or
    arithmetic with one), ``FRESH`` (a new floating tensor no one else holds)."""

    def __init__(self):
        self.changed = False

    def visit(self, node):
        node = super().visit(node)
        if isinstance(node, ast.expr):
            node.kind = _kind(node)
        return node

    def visit_BinOp(self, node):
        self.generic_visit(node)
        method = _IN_PLACE_OPS.get(type(node.op))
        if method is not None and _number(node.right) and _is(node.left, FRESH):
            return self._method(node.left, method, node.right)
        if isinstance(node.op, _COMMUTING) and _number(node.left) and _is(node.right, FRESH):
            return self._method(node.right, method, node.left)
        return node

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.USub) and _is(node.operand, FRESH):
            return self._method(node.operand, "neg_")
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        name = _torch_function(node)
        if name in _FLOAT_FUNCTIONS and len(node.args) == 1 and not node.keywords \
                and _is(node.args[0], FRESH):
            return self._method(node.args[0], name + "_")
        return node

    def _method(self, tensor, name, *args):
        self.changed = True
        return ast.Call(func=ast.Attribute(value=tensor, attr=name, ctx=ast.Load()),
                        args=list(args), keywords=[])


TENSOR, FRESH = 1, 3  # FRESH implies TENSOR


def _is(node, kind) -> bool:
    return getattr(node, "kind", 0) & kind == kind


def _number(node) -> bool:
    """A Python int or float literal (``2``, ``(-2)``, ``1e-05``)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _float_number(node) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) is float


def _torch_function(node) -> str | None:
    func = node.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "torch":
        return func.attr
    return None


def _kind(node) -> int:
    """``node``'s mark (see ``_InPlace``), from its children's (already marked)."""
    if isinstance(node, ast.Name):
        return TENSOR if node.id == "t" or node.id.startswith("_v") else 0
    if isinstance(node, ast.Call):
        func = node.func
        if _torch_function(node) is not None:
            return FRESH if func.attr in _FLOAT_FUNCTIONS else TENSOR
        if isinstance(func, ast.Attribute) and _is(func.value, TENSOR):
            return FRESH if func.attr in _RESULTS and _is(func.value, FRESH) else TENSOR
        return 0
    if isinstance(node, ast.BinOp):
        left, right = node.left, node.right
        if not (_is(left, TENSOR) or _is(right, TENSOR)):
            return 0
        if type(node.op) not in _IN_PLACE_OPS:
            return TENSOR
        if isinstance(node.op, ast.Div) or _float_number(left) or _float_number(right) \
                or _is(left, FRESH) or _is(right, FRESH):
            return FRESH  # true division, a float operand, a floating tensor: floating
        return TENSOR
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return getattr(node.operand, "kind", 0)
    return 0


# -- the module: functions, their plain-Python twins and the scheduler class -------------------

def functions_source(spec: ModuleSpec, printer, in_place: bool = False) -> list[str]:
    """The torch function of every schedule, after the stage tables their counts read (written
    with ``printer``'s, the reference twins', each once) and the helpers that read them (the
    first item); ``in_place``: arithmetic on temporaries in place (``in_place_source``: eager
    torch; the Cerebras module keeps every op out of place, as its lazy tensors trace them)."""
    tables: dict = {}
    functions = ["\n\n" + function_source(s.py_name, s.expr, spec.params, in_place, tables)
                 for s in spec.schedules]
    printer.count_tables.update(tables)
    helpers = python_codegen.helpers_source(printer, gap="\n\n")
    return [helpers + (count_helpers(tables.values()) if tables else ""), *functions]


def class_module(spec: ModuleSpec, class_name: str, relative: bool = False) -> Module:
    """Torch functions, plain-Python twins (for float param groups), the measured forms
    (``ScheduleSpec.measured``: what the class evaluates once it is given measured counts,
    eagerly, in Python) and the scheduler class."""
    if not spec.measured:
        raise ValueError("the torch class evaluates the measured forms: build its spec with measured=True")
    class_name = check_class_name(class_name, spec)
    printer = python_codegen.ReferencePrinter()
    references = ["\n\n" + python_codegen.function_source(f"_reference_{s.py_name}", s.expr,
                                                          spec.params, printer)
                  for s in spec.schedules]
    counted = [s for s in spec.schedules if s.measured is not None]
    references += ["\n\n" + python_codegen.function_source(f"_measured_{s.py_name}", s.measured,
                                                           spec.params, printer, "t, _samples, _tokens")
                   for s in counted]
    parts = [header(spec, "torch"), "import math\n\nimport torch\n"]
    functions = functions_source(spec, printer, in_place=True)
    parts += functions[:1] + references + functions[1:]
    parts.append(params_check_source(spec))
    parts.append(schedules_table(spec))
    keys = ", ".join(f"``{s.name}``" for s in spec.schedules)
    return Module("".join(parts), "torch", dict(
        class_name=class_name, keys=keys, source=source_phrase(spec),
        mode="multiples of each group's initial value (relative)" if relative else "absolute",
        table=", ".join(f"{s.name!r}: ({s.py_name}, _reference_{s.py_name})" for s in spec.schedules),
        relative=bool(relative), signature=keyword_params(spec.params), params=class_params(spec),
        group_params=repr({p.py_name: p.name for p in spec.params if p.group}),
        entries=repr(templates.ENTRIES), stages=repr(spec.stages), seq_len=repr(spec.seq_len),
        measured="{" + ", ".join(f"{s.name!r}: _measured_{s.py_name}" for s in counted) + "}",
        count_ends=repr(spec.count_ends), batches=repr(spec.batches),
        count_tables="(" + "".join(f"{name}, " for name in printer.count_tables.values()) + ")"))
