"""``schedlang.from_python(fn)``: a LambdaLR-style Python function -> a ``Schedule``.

Most hand-written schedules live in Python as ``lambda step: ...`` for
``torch.optim.lr_scheduler.LambdaLR``.  We *trace* such a function: call it
once with a symbolic step, an object whose arithmetic builds the sympy
expression instead of a number.  Nothing is parsed or evaluated as text; the
user's own function object runs, in a copy of its globals where ``math``,
``min``, ``max``, ``int`` and ``float`` understand the symbolic step.

Tracing can only see what the function *computes*, not what it *decides*: a
Python ``if``/``while``/``and``/``or`` on the step runs once, during tracing,
so it would silently freeze one branch.  Every such place (``__bool__`` of a
condition on the step, ``int()`` of a non-whole value, ``range(step)``, a
float conversion inside a library we cannot see into) raises a
``SchedlangError`` pointing at the line of the user's source, with the
schedlang form to write instead.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import math
import sys
import types
from fractions import Fraction

import sympy as sp

from .core.algebra import Segment, t
from .core.functions import FUNCTIONS
from .core.special import geometric
from .errors import SchedlangError, Source, Span, python_span
from .program import Program
from .semantics.lower import Lowered
from .semantics.params import ParamInfo, param_symbol, to_number

_THIS_FILE = __file__


class _RefusedError(Exception):
    """Raised inside tracing; ``from_python`` turns it into a located ``SchedlangError``."""

    def __init__(self, message: str, hint: str | None = None, kind: str = ""):
        super().__init__(message)
        self.message, self.hint, self.kind = message, hint, kind


def _exact(value) -> sp.Expr:
    if isinstance(value, Traced):
        return value.expr
    if isinstance(value, bool):
        raise _RefusedError("a bool cannot be used as a number here")
    if isinstance(value, int):
        return sp.Integer(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _RefusedError(f"the value {value} is not finite")
        fraction = Fraction(repr(value))
        return sp.Rational(fraction.numerator, fraction.denominator)
    if isinstance(value, Fraction):
        return sp.Rational(value.numerator, value.denominator)
    if isinstance(value, sp.Basic):
        return value
    raise TypeError


def _show(expr) -> str:
    """A sympy expression in schedlang-like syntax, for hints."""
    return str(expr).replace("floor(", "floor(").replace("ceiling(", "ceil(").replace("Min(", "min(") \
        .replace("Max(", "max(").replace("&", "and").replace("|", "or")


def _binary(op):
    def forward(self, other):
        try:
            return Traced(op(self.expr, _exact(other)))
        except TypeError:
            return NotImplemented

    def backward(self, other):
        try:
            return Traced(op(_exact(other), self.expr))
        except TypeError:
            return NotImplemented

    return forward, backward


def _compare(op):
    def method(self, other):
        try:
            return Condition(op(self.expr, _exact(other)))
        except TypeError:
            return NotImplemented

    return method


class Traced:
    """A number that depends on the step: arithmetic builds sympy, decisions are refused."""

    __slots__ = ("expr",)
    __hash__ = None

    def __init__(self, expr):
        self.expr = expr

    __add__, __radd__ = _binary(lambda a, b: a + b)
    __sub__, __rsub__ = _binary(lambda a, b: a - b)
    __mul__, __rmul__ = _binary(lambda a, b: a * b)
    __truediv__, __rtruediv__ = _binary(lambda a, b: a / b)
    __floordiv__, __rfloordiv__ = _binary(lambda a, b: sp.floor(a / b))
    __mod__, __rmod__ = _binary(sp.Mod)
    __pow__, __rpow__ = _binary(geometric)
    __lt__ = _compare(sp.Lt)
    __le__ = _compare(sp.Le)
    __gt__ = _compare(sp.Gt)
    __ge__ = _compare(sp.Ge)
    __eq__ = _compare(sp.Eq)
    __ne__ = _compare(sp.Ne)

    def __neg__(self):
        return Traced(-self.expr)

    def __pos__(self):
        return self

    def __abs__(self):
        return Traced(sp.Abs(self.expr))

    def __floor__(self):
        return Traced(sp.floor(self.expr))

    def __ceil__(self):
        return Traced(sp.ceiling(self.expr))

    def __trunc__(self):
        raise _RefusedError("math.trunc() of a value that depends on the step",
                       f"use floor({_show(self.expr)}) (the same for values >= 0)")

    def __round__(self, ndigits=None):
        raise _RefusedError("round() of a value that depends on the step",
                       f"use floor({_show(self.expr)} + 0.5) if you mean rounding half up")

    def __bool__(self):
        if self.expr.free_symbols:
            raise _RefusedError("the truth value of a number that depends on the step",
                           "compare it explicitly, e.g. `if t > 0 then ... else ...` in schedlang",
                           kind="if")
        return bool(self.expr != 0)

    def __int__(self):
        raise _RefusedError("int() of a value that depends on the step",
                       f"use floor({_show(self.expr)}); int() truncates, a schedule needs the closed form")

    def __index__(self):
        raise _RefusedError("the step used as a count or an index (range(step), a[step], ...)",
                       "a loop over the steps has no closed form: write the sum or product in closed "
                       "form, e.g. a geometric decay v * gamma ** t")

    def __float__(self):
        raise _RefusedError("a float of a value that depends on the step, inside code schedlang cannot see",
                       "call math functions through the `math` module or a plain `from math import ...` "
                       "in the traced function's module; other libraries (numpy, torch) cannot be traced")

    def __repr__(self):
        return f"Traced({self.expr})"


class Condition:
    """A comparison involving the step: usable only by ``min``/``max``-free code that never branches."""

    __slots__ = ("expr",)
    __hash__ = None

    def __init__(self, expr):
        self.expr = expr

    def __bool__(self):
        if self.expr in (sp.true, sp.false):
            return self.expr == sp.true
        raise _RefusedError(f"Python decides `{_show(self.expr)}` once, while tracing, but it depends on the "
                       "step", f"write `if {_show(self.expr)} then ... else ...` in schedlang, or use "
                       "min/max", kind="if")


# -- symbolic-aware replacements placed in the traced function's globals ------------------------


def _unary(name, sym, real):
    def call(x, *rest):
        if isinstance(x, Traced) or any(isinstance(r, Traced) for r in rest):
            args = [_exact(x), *(_exact(r) for r in rest)]
            return Traced(sym(*args))
        return real(x, *rest)

    call.__name__ = name
    return call


def _log(x, base=None):
    if isinstance(x, Traced) or isinstance(base, Traced):
        value = sp.log(_exact(x))
        return Traced(value if base is None else value / sp.log(_exact(base)))
    return math.log(x) if base is None else math.log(x, base)


def _trunc(x):
    if isinstance(x, Traced):
        return x.__trunc__()
    return math.trunc(x)


_MATH = {
    # the language's functions, by the ``math`` names their rows list (functions.FUNCTIONS)
    **{name: _unary(name, row.build, getattr(math, name)) for row in FUNCTIONS for name in row.math_names},
    "pow": _unary("pow", geometric, math.pow), "log": _log,
    "log2": _unary("log2", lambda a: sp.log(a) / sp.log(2), math.log2),
    "log10": _unary("log10", lambda a: sp.log(a) / sp.log(10), math.log10),
    "trunc": _trunc,
    "pi": Traced(sp.pi), "e": Traced(sp.E), "tau": Traced(2 * sp.pi),
}
#: ``from math import cos, pi`` binds the very objects of ``math``: found by identity.
_BY_IDENTITY = {id(getattr(math, name)): fn for name, fn in _MATH.items() if hasattr(math, name)}


def _is_math(value) -> bool:
    return any(value is getattr(math, name, None) for name in _MATH)


class _MathProxy(types.ModuleType):
    """``math`` as the traced function sees it: symbolic where the step is involved."""

    def __getattr__(self, name):
        if name in _MATH:
            return _MATH[name]
        return getattr(math, name)


def _extreme(name, sym, real):
    def call(*args, **kwargs):
        values = args[0] if len(args) == 1 else args
        if not kwargs:
            values = list(values)
            if any(isinstance(v, Traced) for v in values):
                return Traced(sym(*(_exact(v) for v in values)))
            return real(values)
        return real(*args, **kwargs)

    call.__name__ = name
    return call


class _IntMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, int)

    def __call__(cls, x=0, *args):
        if isinstance(x, Traced):
            if x.expr.is_integer or isinstance(x.expr, (sp.floor, sp.ceiling)):
                return x  # already whole: int() changes nothing
            raise _RefusedError("int() of a value that depends on the step",
                           f"use floor({_show(x.expr)}): int() truncates, and a schedule needs the "
                           "closed form")
        return int(x, *args)


class _FloatMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, float)

    def __call__(cls, x=0.0):
        return x if isinstance(x, Traced) else float(x)


class _int(metaclass=_IntMeta):  # noqa: N801 - stands in for the builtin
    pass


class _float(metaclass=_FloatMeta):  # noqa: N801 - stands in for the builtin
    pass


def _patched_builtins() -> dict:
    patched = dict(builtins.__dict__)
    patched.update(min=_extreme("min", sp.Min, min), max=_extreme("max", sp.Max, max), int=_int,
                   float=_float)
    return patched


def _patch(fn):
    """``fn`` rebound to globals where math/min/max/int/float understand the traced step.

    Functions of the same module that ``fn`` calls are rebound to the same
    globals, so helpers work too.  ``functools.partial`` and bound methods are
    unwrapped.
    """
    if isinstance(fn, functools.partial):
        return functools.partial(_patch(fn.func), *fn.args, **fn.keywords)
    if isinstance(fn, types.MethodType):
        return types.MethodType(_patch(fn.__func__), fn.__self__)
    if not isinstance(fn, types.FunctionType):
        return fn
    original = fn.__globals__
    new_globals: dict = {}
    for key, value in original.items():
        if value is math:
            value = _MathProxy("math")
        elif id(value) in _BY_IDENTITY and _is_math(value):
            value = _BY_IDENTITY[id(value)]
        new_globals[key] = value
    new_globals["__builtins__"] = _patched_builtins()
    for key, value in list(new_globals.items()):
        if isinstance(value, types.FunctionType) and value.__globals__ is original:
            new_globals[key] = _rebind(value, new_globals)
    return _rebind(fn, new_globals)


def _rebind(fn: types.FunctionType, new_globals: dict) -> types.FunctionType:
    closure = fn.__closure__
    if closure:
        cells = []
        for cell in closure:
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell
                cells.append(cell)
                continue
            if value is math:
                value = _MathProxy("math")
            elif id(value) in _BY_IDENTITY and _is_math(value):
                value = _BY_IDENTITY[id(value)]
            elif any(value is b for b in (min, max, int, float)):
                value = _patched_builtins()[value.__name__]
            cells.append(types.CellType(value))
        closure = tuple(cells)
    new = types.FunctionType(fn.__code__, new_globals, fn.__name__, fn.__defaults__, closure)
    new.__kwdefaults__ = fn.__kwdefaults__
    return new


# -- the API ------------------------------------------------------------------------------------


def _signature(fn):
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def from_python(fn, params: dict | None = None, name: str = "lr"):
    """Trace ``fn(step)`` into a ``Schedule`` named ``name``.

    Arguments of ``fn`` after the step become schedule parameters (symbols, so
    the result stays general, e.g. for ``scheduler_class``); their values are
    the defaults of ``fn`` overridden by ``params``.
    """
    if not callable(fn):
        raise SchedlangError(f"from_python needs a function, not {type(fn).__name__}")
    params = dict(params or {})
    span = _def_span(fn)
    infos: dict[str, ParamInfo] = {}
    call_kwargs = {}
    signature = _signature(fn)
    if signature is not None:
        infos, call_kwargs = _parameters(signature, params, span)
    if params:
        raise SchedlangError(f"the function has no argument '{next(iter(params))}'", span)
    result = _trace(fn, call_kwargs, span)
    try:
        expr = _exact(result)
    except (TypeError, _RefusedError):
        raise SchedlangError(f"the function returned {type(result).__name__}, not a number", span) from None
    expr = expr.xreplace({f: _exact(float(f)) for f in expr.atoms(sp.Float)})
    lowered = Lowered(infos, {name: (Segment(expr), span)}, [])
    return Program(lowered, {})[name]


def _parameters(signature, params: dict, span: Span) -> tuple[dict[str, ParamInfo], dict]:
    """The schedule parameters the function's arguments after the step become (their values
    taken out of ``params``, else their defaults), and the symbolic keyword arguments to call
    it with: apart from tracing, as it only reads the signature."""
    infos: dict[str, ParamInfo] = {}
    call_kwargs = {}
    positional = [p for p in signature.parameters.values()
                  if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if not positional:
        raise SchedlangError("the function takes no step argument", span)
    for p in positional[1:]:
        if p.name in params:
            value = params.pop(p.name)
        elif p.default is not inspect.Parameter.empty:
            value = p.default
        else:
            raise SchedlangError(f"no value for the function's argument '{p.name}'", span,
                                 hint=f"pass params={{'{p.name}': ...}}")
        if isinstance(value, bool) or not isinstance(value, (int, float, Fraction)):
            raise SchedlangError(f"argument '{p.name}' must be a number to become a parameter, "
                                 f"not {type(value).__name__}", span)
        type_ = "int" if isinstance(value, int) else "float"
        symbol = param_symbol(p.name, type_)
        infos[p.name] = ParamInfo(p.name, type_, symbol, to_number(value, p.name), None, span)
        call_kwargs[p.name] = Traced(symbol)
    return infos, call_kwargs


def _trace(fn, call_kwargs: dict, span: Span):
    """What the patched function returns for the symbolic step, its failures turned into
    SchedlangErrors pointing at the line that caused them."""
    traced = _patch(fn)
    try:
        return traced(Traced(t), **call_kwargs)
    except _RefusedError as exc:
        where = _culprit(exc.__traceback__) or span
        hint = exc.hint
        if exc.kind == "if" and where.source.line(where.line).strip().startswith("while "):
            hint = "a loop on the step has no closed form: write the result directly, e.g. v * 0.9 ** t"
        raise SchedlangError(_worded(exc, where), where, hint=hint) from None
    except SchedlangError:
        raise
    except Exception as exc:  # the user's code failed on the symbolic step
        raise SchedlangError(f"cannot trace the function: {type(exc).__name__}: {exc}",
                             _culprit(exc.__traceback__) or span,
                             hint="only arithmetic, math functions, min and max can use the step") from None


def _def_span(fn) -> Span:
    target = fn
    while isinstance(target, functools.partial):
        target = target.func
    target = getattr(target, "__func__", target)
    code = getattr(target, "__code__", None)
    if code is None:
        return Span(Source("", "<function>"), 1, 1, 1, 2)
    return _line_span(code.co_filename, code.co_firstlineno, None)


def _line_span(filename: str, lineno: int, positions) -> Span:
    return python_span(filename, lineno, positions)


def _worded(exc: _RefusedError, where: Span) -> str:
    """Name the Python construct the refused decision came from, read off the culprit line."""
    if exc.kind != "if":
        return exc.message
    line = where.source.line(where.line).strip()
    for keyword, what in (("if ", "an `if`"), ("elif ", "an `elif`"), ("while ", "a `while` loop"),
                          ("assert ", "an `assert`")):
        if line.startswith(keyword):
            return f"{what} on the step: {exc.message}"
    if " if " in line:
        return f"a conditional expression on the step: {exc.message}"
    return exc.message


def _culprit(tb) -> Span | None:
    """The span of the innermost frame of the user's code in a traceback (column-precise on 3.11+)."""
    found = None
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename != _THIS_FILE and not _is_library(code.co_filename):
            found = tb
        tb = tb.tb_next
    if found is None:
        return None
    code = found.tb_frame.f_code
    positions = None
    if sys.version_info >= (3, 11):
        try:
            positions = list(code.co_positions())[found.tb_lasti // 2]
        except (IndexError, ValueError):
            positions = None
    span = _line_span(code.co_filename, found.tb_lineno, positions)
    return span


def _is_library(filename: str) -> bool:
    return "site-packages" in filename and "/sympy/" in filename
