"""A schedule class's ``__call__(self, step)`` read as a formula of the step, over ``ast``.

``tracer.from_python`` traces a *live* function with a symbolic step; a script is never run, so
a ``LearningRateSchedule`` subclass of a script (the Transformer tutorials' ``CustomSchedule``)
is traced here the same way on its syntax: ``step`` is the symbol ``t``, the instance's
attributes are the values its ``__init__`` gave them (followed by ``literal``), and
each statement of ``__call__`` is computed on sympy expressions:

* assignments to names, ``return``, a docstring;
* ``+ - * / // % **``, unary minus, numbers (exact: a float is its shortest decimal, as every
  import reads a float), ``self.<attribute>``, the module's numbers;
* the framework's math, one row per function in ``FUNCTIONS`` (``ops.rsqrt``,
  ``tf.math.minimum``, ``keras.ops.cos``, ``math.sqrt``, ``min`` / ``max``, ...), and a cast
  (``ops.cast(step, "float32")``) as the value itself.

What a trace cannot say (an ``if`` on the step decides once; a loop; a call it does not know) is
refused, at the class and naming it, with the line.  A formula that is not finite at step 0
where the framework's floats give a finite value there (``min(rsqrt(0), 0)`` is ``min(inf, 0) =
0``) is written with that value at step 0: ``if t < 1 then v0 else <formula>``.
"""

from __future__ import annotations

import ast
import math

import sympy as sp

from ....codegen.sched import text
from ....core.algebra import t
from ....errors import SchedlangError
from ..numbers import as_sympy, exact
from .values import Imported, Instance, Item, Namespace, Unread

#: The framework namespaces whose math functions a trace reads (after ``import ... as``).
_ROOTS = ("tensorflow", "keras", "math", "numpy", "jax", "builtins", "torch")


def _rsqrt(x):
    return 1 / sp.sqrt(x)


#: Each function by its last name: the sympy it builds, and the float it computes (IEEE: inf
#: for rsqrt(0), as the frameworks' float32).
FUNCTIONS = {
    "rsqrt": (_rsqrt, lambda x: math.inf if x == 0 else 1 / math.sqrt(x)),
    "sqrt": (sp.sqrt, math.sqrt), "exp": (sp.exp, math.exp), "log": (sp.log, lambda x: -math.inf if x == 0
                                                                     else math.log(x)),
    "cos": (sp.cos, math.cos), "sin": (sp.sin, math.sin), "abs": (sp.Abs, abs),
    "floor": (sp.floor, math.floor), "ceil": (sp.ceiling, math.ceil), "minimum": (sp.Min, min),
    "maximum": (sp.Max, max), "min": (sp.Min, min),
    "max": (sp.Max, max), "pow": (sp.Pow, lambda a, b: a ** b), "power": (sp.Pow, lambda a, b: a ** b),
    "square": (lambda x: x ** 2, lambda x: x * x), "float": (lambda x: x, float),
}
_CASTS = ("cast", "convert_to_tensor", "float32", "constant")


class _RefusedError(Exception):
    def __init__(self, why: str, node: ast.AST):
        super().__init__(why)
        self.why, self.node = why, node


def traced(module, instance: Instance, span) -> str:
    """The ``.sched`` formula of ``instance``'s ``__call__``, or a ``SchedlangError`` at its class
    naming it and why the trace is not closed form."""
    cls = instance.cls
    function = cls.methods.get("__call__")
    where = cls.home.span(cls.node)
    if function is None:
        raise SchedlangError(f"{cls.name} has no __call__ method, so it gives no learning rate", where)
    try:
        formula = _body(module, instance, function, symbolic=True, step=t)
        at_zero = _body(module, instance, function, symbolic=False, step=0.0)
    except _RefusedError as exc:
        raise SchedlangError(f"the LearningRateSchedule {cls.name} is not read: its __call__ {exc.why} (line "
                             f"{exc.node.lineno}), which has no closed form traced with a symbolic step",
                             where, hint="write the schedule with keras.optimizers.schedules classes, or as "
                                         "a .sched formula of t") from None
    formula = as_sympy(formula)  # the traced value: a number or a formula, never text
    try:
        finite = bool(formula.subs(t, 0).is_finite)
    except (TypeError, ValueError):  # min(zoo, 0): sympy cannot compare an infinity
        finite = False
    if not finite:
        if at_zero is None or not math.isfinite(at_zero):
            raise SchedlangError(f"the LearningRateSchedule {cls.name} is not finite at step 0", where,
                                 hint="the optimizer's first update uses schedule(0)")
        return f"if t < 1 then {text(exact(at_zero))} else {text(formula)}"
    return text(formula)


def _body(module, instance: Instance, function: ast.FunctionDef, symbolic: bool, step):
    arguments = function.args
    names = [a.arg for a in [*arguments.posonlyargs, *arguments.args]]
    if len(names) != 2 or arguments.vararg or arguments.kwarg or arguments.kwonlyargs:
        raise _RefusedError("does not take (self, step)", function)
    local = {names[0]: instance, names[1]: step}
    for stmt in function.body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            local[stmt.targets[0].id] = _value(module, stmt.value, local, symbolic)
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) \
                and stmt.target.id in local:
            given = _value(module, stmt.value, local, symbolic)
            local[stmt.target.id] = _arith(stmt.op, local[stmt.target.id], given, stmt, symbolic)
        elif isinstance(stmt, ast.Return) and stmt.value is not None:
            return _value(module, stmt.value, local, symbolic)
        else:
            kind = {ast.If: "has an if (it would decide once, on one step)", ast.For: "has a loop",
                    ast.While: "has a loop"}.get(type(stmt), f"has a statement a trace does not follow "
                                                            f"({type(stmt).__name__})")
            raise _RefusedError(kind, stmt)
    raise _RefusedError("returns nothing", function)


def _value(module, node: ast.expr, local: dict, symbolic: bool):
    """The value of an expression of ``__call__``: a number (exact when ``symbolic``, else a
    float) or formula, a dtype name or a dotted path (read by the call), or the instance."""
    return _VALUES.get(type(node), _unfollowed)(module, node, local, symbolic)


def _constant(module, node: ast.Constant, local: dict, symbolic: bool):
    """A number (not a bool), or a string: a dtype name."""
    if isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return exact(node.value) if symbolic else float(node.value)
    if isinstance(node.value, str):
        return node.value  # a dtype name
    return _unfollowed(module, node, local, symbolic)


def _name(module, node: ast.Name, local: dict, symbolic: bool):
    """A local of ``__call__`` (the step among them), else a number of the module."""
    if node.id in local:
        return local[node.id]
    return _number(module, module.env.get(node.id), node, symbolic)


def _attribute(module, node: ast.Attribute, local: dict, symbolic: bool):
    """``self.<attribute>`` (a number ``__init__`` gave it), ``math.pi``, or a framework's dotted
    path (a dtype, a function)."""
    base = _value(module, node.value, local, symbolic) if not _dotted(module, node.value) else None
    if isinstance(base, Instance):
        return _number(module, base.namespace.values.get(node.attr), node, symbolic)
    path = _dotted(module, node)
    if path in ("math.pi", "numpy.pi"):
        return sp.pi if symbolic else math.pi
    if path is not None:
        return path  # a dtype (tf.float32) or a function, read by the call
    raise _RefusedError(f"reads .{node.attr} of what is not the instance", node)


def _binary(module, node: ast.BinOp, local: dict, symbolic: bool):
    return _arith(node.op, _value(module, node.left, local, symbolic), _value(module, node.right, local,
                                                                              symbolic), node, symbolic)


def _unary(module, node: ast.UnaryOp, local: dict, symbolic: bool):
    """``-x`` and ``+x`` (``not`` and ``~`` are not followed)."""
    if not isinstance(node.op, (ast.USub, ast.UAdd)):
        return _unfollowed(module, node, local, symbolic)
    operand = _operand(_value(module, node.operand, local, symbolic), node)
    return -operand if isinstance(node.op, ast.USub) else operand


def _unfollowed(module, node: ast.expr, local: dict, symbolic: bool):
    """Refused: a decision (made once, on one step) or an expression a trace does not follow."""
    what = {ast.Compare: "compares (a decision made once, on one step)",
            ast.IfExp: "has an if expression (it would decide once, on one step)",
            ast.BoolOp: "has and / or (a decision made once)"}
    why = what.get(type(node), f"computes {type(node).__name__}, which a trace does not follow")
    raise _RefusedError(why, node)


def _number(module, item: Item | None, node: ast.AST, symbolic: bool):
    if item is None or isinstance(item, Unread):
        if isinstance(item, Unread):
            raise item.error
        raise _RefusedError(f"reads '{ast.unparse(node)}', which is not assigned", node)
    value = item.value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _RefusedError(f"reads '{ast.unparse(node)}', which is not a number here", node)
    return exact(value) if symbolic else float(value)


def _dotted(module, node: ast.expr) -> str | None:
    path = module._path(node)
    return path if path is not None and path.split(".")[0] in _ROOTS else None


def _operand(value, node):
    if isinstance(value, (str, Instance, Namespace, Imported)):
        raise _RefusedError(f"uses {value!r} as a number", node)
    return value


def _arith(op, a, b, node, symbolic: bool):
    a, b = _operand(a, node), _operand(b, node)
    if isinstance(op, ast.Add):
        return a + b
    if isinstance(op, ast.Sub):
        return a - b
    if isinstance(op, ast.Mult):
        return a * b
    if isinstance(op, ast.Div):
        if not symbolic and b == 0:
            return math.copysign(math.inf, a) if a != 0 else math.nan
        return a / b
    if isinstance(op, ast.Pow):
        if not symbolic and a == 0 and b < 0:
            return math.inf
        return a ** b
    if isinstance(op, ast.FloorDiv):
        return sp.floor(a / b) if symbolic else a // b
    if isinstance(op, ast.Mod):
        return sp.Mod(a, b) if symbolic else a % b
    raise _RefusedError("uses an operator a trace does not follow", node)


def _call(module, node: ast.Call, local: dict, symbolic: bool):
    path = _dotted(module, node.func)
    name = path.rsplit(".", 1)[-1] if path is not None else None
    if name not in FUNCTIONS and name not in _CASTS:
        raise _RefusedError(f"calls {ast.unparse(node.func)}(), which a trace does not know", node)
    if node.keywords and name not in _CASTS:
        raise _RefusedError(f"calls {ast.unparse(node.func)}() with keywords", node)
    args = [_value(module, a, local, symbolic) for a in node.args]
    if name in _CASTS:
        return _operand(args[0], node) if args else _refuse_call(node)
    build, compute = FUNCTIONS[name]
    args = [_operand(a, node) for a in args]
    if name in ("min", "max", "minimum", "maximum") and len(args) < 2 or \
            name not in ("min", "max", "minimum", "maximum") and len(args) != (2 if name in ("pow", "power")
                                                                              else 1):
        raise _RefusedError(f"calls {ast.unparse(node.func)}() with {len(args)} arguments", node)
    return build(*args) if symbolic else compute(*args)


def _refuse_call(node):
    raise _RefusedError(f"calls {ast.unparse(node.func)}() with no value", node)


#: How ``_value`` reads each kind of expression (any other is refused, ``_unfollowed``).
_VALUES = {ast.Constant: _constant, ast.Name: _name, ast.Attribute: _attribute, ast.BinOp: _binary,
           ast.UnaryOp: _unary, ast.Call: _call}
