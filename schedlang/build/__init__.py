"""The language as Python objects: ``from schedlang import build as sb`` (SPEC §9, docs/python.md).

    peak = sb.param("peak", float, default=3e-4, where="peak > 0")
    lr = sb.warmup(sb.linear, 500) >> sb.cosine(peak, 0.1 * peak, 9500)
    lr(250); lr.to_source(); sb.program(lr=lr).scheduler_class("GPT")

Every name of the language is here, derived from its one table: the core and extra
built-ins (``stdlib.SCHEDULES``), the math functions (``functions.FUNCTIONS``), ``t``,
``pi``, ``e``, each preset library as a namespace (``sb.torch.StepLR``), and ``param``,
``program``, ``if_``, ``and_``, ``or_``, ``not_``, ``jump`` (``a >> sb.jump(b)``: the language's
``a >> jump b``) and ``time`` (``500ba``).  A piece is checked as it
is built, by the compiler's own lowering; a mistake is a ``SchedlangError`` at the Python line.
"""

from __future__ import annotations

from ..errors import did_you_mean as _did_you_mean
from ..library import stdlib as _stdlib
from ..library.clock_calls import Role as _Role
from ..library.clock_calls import of_role as _of_role
from ..library.presets import LIBRARIES as _LIBRARIES
from ..syntax import ir as _ir
from ..syntax.parser import parse as _parse
from . import site as _site
from .conditions import and_, if_, not_, or_
from .parameters import param
from .pieces import (
    BuildAttributeError,
    BuiltProgram,
    Expr,
    Function,
    Jump,
    Namespace,
    Param,
    Shape,
    jump,
    program,
    stages,
)
from .text import python_text as _python_text
from .times import time

#: Names that stand for a value rather than a function; each use is a fresh piece at its own line.
_VALUES = ("t", *_stdlib.CONSTANTS)

_FUNCTIONS = {name: Function(name) for name in (*_stdlib.SCHEDULES, *_stdlib.MATH, *_of_role(_Role.ON_CLOCK))}
#: The shapes that are not also a function's name (``sb.megatron_exponential``).
_SHAPES = {name: Shape(name) for name in _stdlib.COOLDOWN_SHAPES if name not in _FUNCTIONS}
_NAMESPACES = {library: Namespace(library) for library in _LIBRARIES}
globals().update(_FUNCTIONS)
globals().update(_SHAPES)
globals().update(_NAMESPACES)


def to_python(source: str) -> str:
    """The ``.sched`` program ``source`` written as ``schedlang.build`` code that builds the same
    program (``from schedlang import build as sb`` assumed): a file moved into Python."""
    return _python_text(_parse(source))


def __getattr__(name: str):
    if name in _VALUES:
        span = _site.caller().span
        return Expr(_ir.Name(span, name), {})
    known = [*_FUNCTIONS, *_SHAPES, *_NAMESPACES, *_VALUES, *__all__]
    raise BuildAttributeError(f"schedlang.build has no '{name}'", _site.caller().span,
                              hint=_did_you_mean(name, known) or "see docs/python.md for the names")


def __dir__():
    return sorted({*globals(), *_VALUES})


__all__ = ["BuildAttributeError", "BuiltProgram", "Expr", "Function", "Jump", "Namespace", "Param", "Shape",
           "and_", "if_", "jump", "not_", "or_", "param", "program", "stages", "time", "to_python",
           *_FUNCTIONS, *_SHAPES, *_NAMESPACES]
