"""``sb.time``: the language's time literals (``500ba``, ``2ep``, ``0.3dur``, ``1e9tok``), counted
as Composer counts them.  A unit other than ``ba`` names the parameter that converts it, so
``time`` takes that parameter (``per``) and the piece carries its declaration."""

from __future__ import annotations

from ..errors import SchedlangError, did_you_mean
from ..limits import LimitError, decimal
from ..semantics.lower_expressions import TIME_UNITS
from ..syntax import ir
from . import site as sites
from .declarations import ParamDecl
from .literals import decimal_text, exact_value, written_text
from .pieces import Expr, Param


def time(amount, unit: str, per: Param | None = None) -> Expr:
    """A time literal of the language, ``500ba`` (``time(500, "ba")``) or ``2ep`` (``time(2, "ep",
    steps_per_epoch)``): a number of steps counted as Composer counts them (``docs/language.md``).

    Every unit but ``ba`` is converted by a parameter the program must declare, which ``per``
    is: ``steps_per_epoch`` for ``ep``, ``max_duration`` for ``dur``, ``batch_size`` for ``sp``,
    ``tokens_per_batch`` for ``tok``.  Inside ``scale()`` a time keeps Composer's meaning.
    ``sp`` and ``tok`` without ``per`` are lengths on the run's sample or token clock: the
    program names its batch schedule (``sb.program(..., batch=sb.stages(...))``, SPEC §12).
    """
    site = sites.caller()
    if unit not in TIME_UNITS:
        raise SchedlangError(f"unknown time unit {unit!r}", site.argument(1),
                             hint=did_you_mean(str(unit), TIME_UNITS) or "one of " + ", ".join(TIME_UNITS))
    needed = TIME_UNITS[unit][0]
    params: dict[str, ParamDecl] = {}
    if needed is not None and not (per is None and unit in ("sp", "tok")):
        if not isinstance(per, Param) or needed not in per.params or per.node.id != needed:
            raise SchedlangError(f"a time in {unit} counts {TIME_UNITS[unit][1]}: pass the '{needed}' "
                                 "parameter", site.span,
                                 hint=f'{needed} = sb.param("{needed}", int); '
                                      f'sb.time(..., "{unit}", {needed})')
        params = per.params
    value = exact_value(amount)
    if value is None or value < 0:
        raise SchedlangError(f"a time is a number >= 0, not {amount!r}", site.argument(0))
    shown = written_text(site.argument(0), value) or decimal_text(value)
    if shown is None:
        raise SchedlangError(f"{amount!r} has no decimal form for a time literal", site.argument(0))
    try:
        exact = decimal(shown)
    except LimitError as exc:
        raise SchedlangError(str(exc), site.argument(0), hint=exc.hint) from None
    return Expr(ir.Duration(site.span, exact, unit, f"{shown}{unit}"), params)
