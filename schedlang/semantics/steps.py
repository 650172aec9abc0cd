"""What a number of steps may be: whole, within int64, 0 only for a length (SPEC §1).

Lowering checks durations it can decide (numbers), ``Program`` the ones parameters decide
once they are bound; both use these functions, and ``zero_length_call`` is the one place
that gives a length of 0 its meaning.
"""

from __future__ import annotations

import dataclasses
import math

import sympy as sp

from ..core.algebra import Segment, breakpoints
from ..errors import SchedlangError, Span
from ..library import stdlib
from ..library.stdlib import Builtin, Kind
from ..limits import MAX_STEP


def check_steps(expr: sp.Expr, span: Span, zero_ok: bool = False) -> None:
    """A bound duration must be a whole number of steps: ``>= 0`` for a length, ``> 0`` for a period."""
    if expr in (sp.oo, sp.zoo, sp.nan) or not expr.is_finite:
        raise SchedlangError("a duration must be a finite number of steps", span)
    if not expr.is_integer:
        value = float(expr)
        raise SchedlangError(f"a duration must be a whole number of steps, not {_show(value)}", span,
                             hint=f"round it, e.g. {math.floor(value)} or {math.ceil(value)}")
    if expr < 0 or (expr == 0 and not zero_ok):
        what = "a length must be at least 0" if zero_ok else "a period must be positive"
        raise SchedlangError(f"{what}, not {expr}", span)
    refuse_huge_step(expr, span, "a duration")


def zero_length_call(builtin: Builtin, kwargs: dict):
    """``builtin(**kwargs)``, where a length of 0 gives a zero-length segment (SPEC §1).

    The formulas divide by their length (``t / n``), so a 0 is built as a positive
    placeholder ``n`` and the result is the segment's end value ``f(n)``, taken while ``n``
    is still a symbol and only then set to 0: ``linear(v0, v1, 0)`` holds ``v1``,
    ``warmup(linear, 0) >> b`` is ``b``.
    """
    kinds = {a.name: a.kind for a in builtin.args}
    zero = {name: sp.Dummy(name, integer=True, positive=True) for name, value in kwargs.items()
            if kinds[name] == Kind.DURATION and value == 0}
    if not zero:
        return builtin.build(**kwargs)
    built = builtin.build(**(kwargs | zero))
    to_zero = {d: 0 for d in zero.values()}
    if isinstance(built, (stdlib.Warmup, stdlib.Cooldown)):
        return dataclasses.replace(built, steps=sp.Integer(0))
    if built.duration is None or built.duration.xreplace(to_zero) != 0:
        # the 0 is not the length of what was built (a preset's ``t_warmup=0``): the
        # builtin's own formula says what a 0 there means
        return builtin.build(**kwargs)
    return Segment(built.end_value().xreplace(to_zero), sp.Integer(0))


def check_within_steps(name: str, duration, breakpoints, span: Span | None) -> None:
    """A whole schedule (``>>`` adds durations up; ``if t < c``) must also fit in ``MAX_STEP``."""
    ends = [sp.Integer(duration)] if isinstance(duration, int) else []
    last = _last_change(breakpoints + ends)
    if last > MAX_STEP:
        raise _past_last_step(f"schedule '{name}'", last, span)


def refuse_call_past_steps(name: str, built, arguments: list, span: Span) -> None:
    """A call whose numbers put a change of its formula past ``MAX_STEP`` (a preset's
    ``warmup_num_steps=1e30``), refused where the call is lowered: at the argument that does it
    (the largest number given beyond ``MAX_STEP``; ``arguments`` holds ``(value, span)`` pairs),
    else at the call, so that an imported configuration's error is at its own value."""
    duration = getattr(built, "duration", None)
    ends = [duration] if isinstance(duration, sp.Basic) and duration.is_number else []
    last = _last_change(breakpoints(getattr(built, "expr", None)) + ends)
    if last <= MAX_STEP:
        return
    beyond = [(value, where) for value, where in arguments
              if isinstance(value, sp.Basic) and value.is_comparable and abs(value) > MAX_STEP]
    where = max(beyond, key=lambda pair: abs(pair[0]))[1] if beyond else span
    raise _past_last_step(name, last, where)


def _last_change(steps: list) -> sp.Expr:
    return max([b for b in steps if b.is_comparable], default=sp.Integer(0))


def _past_last_step(what: str, last: sp.Expr, span: Span | None) -> SchedlangError:
    shown = _show(float(last)) if last > 10**12 else str(last)
    return SchedlangError(f"{what} changes at step {shown}, beyond the largest step "
                          f"{MAX_STEP} (2**{MAX_STEP.bit_length() - 1})", span,
                          hint="torch counts steps in int64; no training run is this long")


def refuse_huge_step(expr: sp.Expr, span: Span, what: str = "a step") -> None:
    """Steps are int64 in torch: a duration of 10**30 would overflow there, long after `check`."""
    if expr.is_number and expr.is_comparable and expr > MAX_STEP:
        raise SchedlangError(f"{what} must be at most {MAX_STEP} steps "
                             f"(2**{MAX_STEP.bit_length() - 1})", span,
                             hint="torch counts steps in int64; no training run is this long")


def _show(value: float) -> str:
    return f"{value:g}"
