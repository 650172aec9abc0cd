"""``Program.scheduler_class``: a live scheduler class from a program, in this process.

The class is exactly the one ``schedlang compile --target torch|cerebras``
writes (emitted, then loaded through the one audited loader), wrapped in a
thin subclass that checks, before anything touches the optimizer, what only
schedlang can check: the constructor's parameter values against the file's
``where`` clauses, durations and finiteness, and that every param group has
the keys the file schedules.  Both raise ``SchedlangError``.
"""

from __future__ import annotations

import inspect

from ..codegen.base import GeneratedModule
from ..codegen.emit import check_class_name, emit, pick_schedule
from ..codegen.load import load as load_generated
from ..codegen.templates import ENTRIES
from ..errors import SchedlangError, SchedlangWarning


def scheduler_class(program, name: str = "Scheduler", target: str = "torch", relative: bool = False,
                    schedule: str | None = None):
    """A scheduler class setting the file's schedules on every optimizer param group.

    ``target="torch"``: a ``torch.optim.lr_scheduler.LRScheduler`` subclass that
    sets every schedule of the file on the param-group key of its name (``lr``,
    ``weight_decay``, ``momentum``, ...).  Its constructor is
    ``(optimizer, *, <each parameter, with its default when it has one>, last_epoch=-1)``.
    Values are absolute; ``relative=True`` multiplies each group's initial value
    (``initial_lr``, ``initial_<key>``), the PyTorch and Composer convention.

    ``target="cerebras"``: a subclass of ``cerebras.pytorch.optim.lr_scheduler.LRScheduler``
    (a plain-torch stand-in when cstorch is not installed) for one schedule
    (``schedule=``, default ``lr``) with ``_get_closed_form_lr``/``_get_closed_form``.
    """
    if target not in ("torch", "cerebras"):
        raise SchedlangError(f"scheduler classes target 'torch' or 'cerebras', not {target!r}")
    spec = program.module_spec()
    check_class_name(name, spec)
    key = pick_schedule(program, schedule) if target == "cerebras" else None
    source = emit(program, target, program.filename, name, relative=relative, schedule=key)
    module = load_generated(GeneratedModule(source, {}), f"schedlang_{target}_scheduler")
    module._SchedlangWarning = SchedlangWarning  # what its classes warn with, in-process
    base = getattr(module, name)
    keys = list(program.schedules) if target == "torch" else ["lr"]
    drivers = getattr(module, "_drivers", lambda schedules, group: {k: k for k in schedules})
    names = {p.py_name: p.name for p in spec.params}
    group_params = [p.name for p in spec.params if p.group]
    checked: set = set()  # parameter values this class has already checked

    def init(self, optimizer, *args, **kwargs):
        given = {names[k]: v for k, v in kwargs.items() if k in names}
        _check_params(program, given, checked)
        _check_groups(optimizer, keys, relative and kwargs.get("last_epoch", -1) != -1, drivers)
        for index, group in enumerate(optimizer.param_groups):
            own = {name: group[name] for name in group_params if name in group}
            if own:
                _check_params(program, given | own, checked, f"optimizer param group {index}: ")
        base.__init__(self, optimizer, *args, **kwargs)

    init.__signature__ = inspect.signature(base.__init__)
    init.__name__ = init.__qualname__ = "__init__"
    cls = type(name, (base,), {"__init__": init, "__doc__": base.__doc__,
                               "__module__": base.__module__, "program": program})
    cls.__qualname__ = name
    return cls


def _check_params(program, given: dict, checked: set, where: str = "") -> None:
    """Bind the constructor's values (and a param group's own ``group`` parameters) like
    ``compile(params=...)`` would (``Program.rebind``): same errors."""
    if not given:
        return
    key = tuple(sorted((n, repr(v)) for n, v in given.items()))
    if key not in checked:
        try:
            program.rebind(given)
        except SchedlangError as exc:
            if not where:
                raise
            raise SchedlangError(where + exc.message, exc.span, hint=exc.hint) from None
        checked.add(key)


def _check_groups(optimizer, keys, resuming_relative: bool, drivers) -> None:
    """Every key a group is driven on must be in it (``KEY__TAG`` schedules drive ``KEY``)."""
    groups = getattr(optimizer, "param_groups", None)
    if groups is None:
        raise SchedlangError(f"{type(optimizer).__name__} is not an optimizer (it has no param_groups)")
    for index, group in enumerate(groups):
        try:
            driven = drivers(keys, group)
        except ValueError as exc:
            raise SchedlangError(f"optimizer param group {index}: {exc}",
                                 hint="give each group tags that select one schedule per key") from None
        for key in driven:
            if ENTRIES.get(key, (key,))[0] not in group:
                present = ", ".join(sorted(k for k in group if k != "params"))
                raise SchedlangError(
                    f"optimizer param group {index} has no '{key}' for the schedule of that name",
                    hint=f"the group has: {present}; a schedule sets the param-group key of its "
                         "name, so rename it or use an optimizer with that hyperparameter")
            if resuming_relative and f"initial_{key}" not in group:
                raise SchedlangError(f"optimizer param group {index} has no 'initial_{key}' to "
                                     "resume a relative schedule from")
