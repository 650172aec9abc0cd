"""The Cerebras target: the torch functions, every op out of place (lazy tensors trace them),
and a class shaped like ``cerebras.pytorch.optim.lr_scheduler.LRScheduler`` (a plain-torch
stand-in base when cstorch is absent) driving one schedule (``templates.CEREBRAS_CLASS``)."""

from __future__ import annotations

from ..errors import SchedlangError
from . import python as python_codegen
from .base import ModuleSpec, ScheduleSpec, header, keyword_params, main_schedule_name
from .classes import Module, check_class_name, class_params, params_check_source, source_phrase
from .torch import functions_source


def class_module(spec: ModuleSpec, class_name: str, schedule: str | None = None) -> Module:
    """Torch functions and a Cerebras-shaped class setting ``schedule`` (``main_schedule_name``'s
    rule: named, else ``lr``, else the only one) on every param group's ``lr``."""
    name = check_class_name(class_name, spec)
    group = next((p for p in spec.params if p.group), None)
    if group is not None:
        raise SchedlangError(f"the Cerebras class sets one value in every param group; group parameter "
                             f"'{group.name}' needs a value per group", group.span,
                             hint="use --target torch: its class reads each group's own entry")
    key = main_schedule_name([s.name for s in spec.schedules], schedule,
                             purpose="a Cerebras LRScheduler sets one schedule")
    chosen = next(s for s in spec.schedules if s.name == key)
    parts = [header(spec, "cerebras"), "import math\n\nimport torch\n"]
    parts += functions_source(spec, python_codegen.ReferencePrinter())
    parts.append(params_check_source(spec))
    return Module("".join(parts), "cerebras", dict(
        class_name=name, key=key, source=source_phrase(spec), mode="absolute",
        signature=keyword_params(spec.params), params=class_params(spec), function=chosen.py_name,
        total_iters=total_iters_code(chosen, spec)))


def total_iters_code(schedule: ScheduleSpec, spec: ModuleSpec) -> str:
    """Python code (in the constructor's parameters) for the schedule's duration, or ``None``."""
    duration = schedule.duration
    if duration is None:
        return "None"
    renamed = duration.xreplace({p.symbol: type(p.symbol)(p.py_name, **p.symbol.assumptions0)
                                 for p in spec.params if p.py_name != p.symbol.name})
    code = python_codegen.ReferencePrinter().doprint(renamed)
    return code if duration.is_Integer else f"round({code})"
