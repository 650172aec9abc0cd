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
from ..codegen.classes import check_class_name
from ..codegen.emit import BUILDERS, emit
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
    (``initial_lr``, ``initial_<key>``), the PyTorch and Composer convention.  The
    optimizer is one, or a dict of named ones driven on one clock (``lr__muon`` drives
    the groups of the one named ``muon``); a param group no schedule drives is refused
    (docs/torch.md, "Every param group is driven").

    ``target="cerebras"``: a subclass of ``cerebras.pytorch.optim.lr_scheduler.LRScheduler``
    (a plain-torch stand-in when cstorch is not installed) for one schedule
    (``schedule=``, default ``lr``) with ``_get_closed_form_lr``/``_get_closed_form``.
    """
    if target not in ("torch", "cerebras"):
        raise SchedlangError(f"scheduler classes target 'torch' or 'cerebras', not {target!r}")
    spec = program.module_spec(measured=BUILDERS[target].measured)
    check_class_name(name, spec)
    source = emit(spec, target, class_name=name, relative=relative, schedule=schedule)
    module = load_generated(GeneratedModule(source, {}), f"schedlang_{target}_scheduler")
    module._SchedlangWarning = SchedlangWarning  # what its classes warn with, in-process
    base = getattr(module, name)
    keys = list(program.schedules) if target == "torch" else ["lr"]
    names = {p.py_name: p.name for p in spec.params}
    group_params = [p.name for p in spec.params if p.group]
    checked: set = set()  # parameter values this class has already checked

    def init(self, optimizer, *args, **kwargs):
        given = {names[k]: v for k, v in kwargs.items() if k in names}
        _check_params(program, given, checked)
        groups = _groups(module, optimizer, target)
        _check_groups(module, groups, keys, relative and kwargs.get("last_epoch", -1) != -1, target)
        for optimizer_name, index, group in groups:
            own = {name: group[name] for name in group_params if name in group}
            if own:
                _check_params(program, given | own, checked, _label(optimizer_name, index) + ": ")
        base.__init__(self, optimizer, *args, **kwargs)

    init.__signature__ = inspect.signature(base.__init__)
    init.__name__ = init.__qualname__ = "__init__"
    cls = type(name, (base,), {"__init__": init, "__doc__": base.__doc__,
                               "__module__": base.__module__, "program": program})
    cls.__qualname__ = name
    return cls


def _label(optimizer_name, index: int) -> str:
    where = "optimizer" if optimizer_name is None else f"optimizer {optimizer_name!r}"
    return f"{where} param group {index}"


def _groups(module, optimizer, target: str) -> list:
    """``[(optimizer name, index, group)]`` of one optimizer or a dict of named ones (the
    torch class's own ``_named_optimizers``, its errors as ``SchedlangError``)."""
    if isinstance(optimizer, dict) and target != "torch":
        raise SchedlangError("the Cerebras class drives one optimizer, not a dict of them",
                             hint="make one Cerebras class per optimizer, or use target='torch'")
    if target != "torch":
        groups = getattr(optimizer, "param_groups", None)
        if groups is None:
            raise SchedlangError(f"{type(optimizer).__name__} is not an optimizer (it has no param_groups)")
        return [(None, index, group) for index, group in enumerate(groups)]
    for each in (optimizer.values() if isinstance(optimizer, dict) else (optimizer,)):
        if getattr(each, "param_groups", None) is None:
            raise SchedlangError(f"{type(each).__name__} is not an optimizer (it has no param_groups)")
    try:
        return module._param_groups(module._named_optimizers(optimizer))
    except (TypeError, ValueError) as exc:
        raise SchedlangError(str(exc), hint="pass one optimizer, or a dict of them by name: "
                             "Scheduler({'muon': muon, 'adamw': adamw}, ...)") from None


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


def _check_groups(module, groups: list, keys, resuming_relative: bool, target: str) -> None:
    """Every key a group is driven on must be in it (``KEY__TAG`` schedules drive ``KEY``), and
    every group must be driven (the torch class's ``_check_driven``)."""
    drivers = []
    for optimizer_name, index, group in groups:
        try:
            driven = module._drivers(keys, group, optimizer_name) if target == "torch" else {"lr": "lr"}
        except ValueError as exc:
            raise SchedlangError(f"{_label(optimizer_name, index)}: {exc}",
                                 hint="give each group tags that select one schedule per key") from None
        drivers.append(driven)
        for key in driven:
            if ENTRIES.get(key, (key,))[0] not in group:
                present = ", ".join(sorted(k for k in group if k != "params"))
                raise SchedlangError(
                    f"{_label(optimizer_name, index)} has no '{key}' for the schedule of that name",
                    hint=f"the group has: {present}; a schedule sets the param-group key of its "
                         "name, so rename it or use an optimizer with that hyperparameter")
            if resuming_relative and f"initial_{key}" not in group:
                raise SchedlangError(f"{_label(optimizer_name, index)} has no 'initial_{key}' to "
                                     "resume a relative schedule from")
    if target == "torch":
        try:
            module._check_driven(keys, groups, drivers)
        except ValueError as exc:
            if "drives no param group" in str(exc):
                raise SchedlangError(str(exc), hint=(
                    "a schedule KEY__TAG drives the groups tagged TAG (their \"tags\" entry, or "
                    "their optimizer's name in a dict of optimizers): check the name, or drop the "
                    "schedule")) from None
            raise SchedlangError(str(exc), hint=(
                "every param group is driven: tag the group (its \"tags\" entry; a dict of "
                "optimizers tags each group with its optimizer's name) and write `schedule KEY__TAG "
                "= ...`, or an untagged `schedule KEY = ...` for the rest; a group meant to keep "
                "its own value says so with \"unscheduled\": True (or the keys)")) from None
