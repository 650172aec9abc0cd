"""OLMo-core 3.0.0's schedulers of schedulers: ``SequentialScheduler``, ``ComposableScheduler``
and the records they take, ``ComposableSchedulerStage`` and ``OverrideDecay``.

Both composites are ``get_lr(initial_lr, current, t_max)`` like every OLMo-core scheduler
(``olmo_core.py``: update ``k`` reads the counter ``k + 1`` in steps, the tokens through it
in tokens), so each is built as a formula in that counter and handed to ``olmo_core.olmo_lr``.

* ``SequentialScheduler(schedulers, schedulers_max)``: child ``i`` runs while the counter,
  less the maxima before it, is ``<= schedulers_max[i]``, called as
  ``get_lr(L_i, c_i, min(T_i, max_i))``; ``L_0`` is the sequence's ``lr`` and ``L_{i+1}``
  child ``i``'s ``get_lr(L_i, max_i, max_i)``; the last child gets what is left of ``t_max``.
  A child is rebuilt with those ``lr`` and ``t_max``: its own ``lr`` is not read (OLMo-core
  passes the sequence's), and ``t_max`` given to a child is its own field, which only
  ``LinearWithWarmup``, ``CosWithWarmup`` and ``HalfCosWithWarmup`` have.
* ``ComposableScheduler(stages)``: absolute stages, each a line or a cosine over its
  ``duration`` from its start (the previous stage's end unless given) to its end; the last
  end after them.  ``t_max`` is not read (OLMo-core warns that it ignores it).
* ``override_decay=olmo_core.OverrideDecay(start, duration, shape, end_lr | end_lr_fraction)``
  on either: from ``start`` on, a line or a cosine from the main schedule's value at
  ``start`` to the end lr over ``duration``, then that lr.

The records are presets too, so that a file writes them as OLMo-core's configs do; alone, a
stage is ``ComposableScheduler(stages=[stage])`` and an override the decay of a constant lr,
both at ``lr = 1`` in steps.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field

import sympy as sp

from ...core.algebra import at, shifted, tau  # formulas are built in the real-valued counter, not t
from ..stdlib import ArgumentError, Kind
from ._common import OPTION, SCHEDULES, C, L, PresetSegment, arg, preset
from .olmo_core import LR, T_MAX, UNIT, all_numbers, olmo_lr, show

SHAPES = ("linear", "cosine")
#: The schedulers with a ``t_max`` field of their own, which replaces the one they are passed.
OWN_T_MAX = ("olmo_core.LinearWithWarmup", "olmo_core.CosWithWarmup", "olmo_core.HalfCosWithWarmup")


@dataclass(frozen=True)
class OlmoSegment(PresetSegment):
    """An OLMo-core preset's schedule and what the composites read of it: ``get_lr``, the
    scheduler's formula in its counter at another ``(initial_lr, t_max)`` (a scheduler), or
    ``record``, a stage's or an override's fields."""

    get_lr: object = field(default=None, compare=False, repr=False)
    record: dict | None = field(default=None, compare=False, repr=False)


def _olmo_segment(segment: PresetSegment, **extra) -> OlmoSegment:
    fields = {f.name: getattr(segment, f.name) for f in dataclasses.fields(PresetSegment)}
    return OlmoSegment(**fields, **extra)


class Pending(sp.Dummy):
    """What a scheduler that reads ``t_max`` is without one: a child of a SequentialScheduler
    gets it from there; anywhere else the closed-form check refuses the symbol with ``hint``."""

    hint = ""

    def _sympystr(self, printer) -> str:
        return "t_max"  # as the refusal names it, not sympy's ``_t_max`` of a Dummy


def rebuildable(builtin):
    """An OLMo-core scheduler preset whose schedule remembers how to be built again with
    another ``lr`` and ``t_max``, as ``SequentialScheduler`` calls its children.  Without a
    ``t_max`` one that reads it is ``Pending``: a child of a sequence needs none."""
    build = builtin.build

    @functools.wraps(build)
    def call(**kwargs):
        get_lr = functools.partial(_child_lr, builtin.name, build, kwargs)
        try:
            return _olmo_segment(build(**kwargs), get_lr=get_lr)
        except ArgumentError as exc:
            if exc.argument != "t_max" or kwargs.get("t_max") is not None:
                raise
            pending = Pending("t_max")
            pending.hint = (f"{builtin.name}() without t_max: {exc.message}; give t_max=..., or make it "
                            "a child of olmo_core.SequentialScheduler, which passes its own")
            return OlmoSegment(pending, pending, label=builtin.name.split(".", 1)[1], get_lr=get_lr)

    return dataclasses.replace(builtin, build=call)


def _child_lr(name: str, build, kwargs: dict, initial_lr, t_max) -> sp.Expr:
    """``get_lr(initial_lr, c, t_max)`` in the counter ``c``: the preset built in tokens is
    that formula itself (read after its step, unshifted)."""
    own = kwargs.get("t_max")
    if own is not None and name not in OWN_T_MAX:
        raise ArgumentError("schedulers", f"{name} has no t_max field of its own: in a "
                                          "SequentialScheduler it gets the sequence's",
                            hint="leave t_max to the SequentialScheduler")
    return build(**{**kwargs, "lr": initial_lr, "t_max": t_max if own is None else own,
                    "units": "tokens"}).expr


def _interpolate(shape: str, start, end, current, duration):
    """OLMo-core's ``_interpolate_lr``."""
    if shape == "linear":
        return start + (end - start) * current / duration
    return end + (start - end) * (1 + sp.cos(sp.pi * current / duration)) / 2


def _count(value, name: str, minimum: int):
    if not all_numbers(value):
        raise ArgumentError(name, f"'{name}' must be a number here (it decides where the schedule changes)")
    if not value.is_integer or value < minimum:
        raise ArgumentError(name, f"'{name}' must be a whole number >= {minimum}, not {show(value)} "
                                  "(OLMo-core checks it)")
    return value


def _one_of(value, fraction, name: str, *, required: bool, what: str):
    """OLMo-core's ``value`` or ``value_fraction`` (exactly one, or at most one), each >= 0."""
    if value is not None and fraction is not None:
        raise ArgumentError(f"{name}_fraction", f"give '{name}' or '{name}_fraction', not both "
                                                f"({what}; OLMo-core refuses both)")
    if required and value is None and fraction is None:
        raise ArgumentError(name, f"give exactly one of '{name}' or '{name}_fraction' ({what}; "
                                  "OLMo-core requires one)")
    for given, label in ((value, name), (fraction, f"{name}_fraction")):
        if given is not None and all_numbers(given) and given < 0:
            raise ArgumentError(label, f"'{label}' must be >= 0, not {show(given)} (OLMo-core checks it)")
    return value, fraction


def _resolve(initial_lr, value, fraction):
    """``_resolve_lr_from_initial``: the absolute lr, or ``initial_lr * fraction``."""
    return value if value is not None else initial_lr * fraction


def _stages_pairs(initial_lr, stages: list[dict]):
    """``ComposableScheduler._main_schedule_lr``: (value, condition) per stage, and the end."""
    pairs, offset, previous = [], sp.Integer(0), initial_lr
    for stage in stages:
        start = previous if stage["start_lr"] is None and stage["start_lr_fraction"] is None else \
            _resolve(initial_lr, stage["start_lr"], stage["start_lr_fraction"])
        end = _resolve(initial_lr, stage["end_lr"], stage["end_lr_fraction"])
        pairs.append((_interpolate(stage["shape"], start, end, tau - offset, stage["duration"]),
                      sp.Lt(tau, offset + stage["duration"])))
        previous, offset = end, offset + stage["duration"]
    return pairs, previous


def _with_override(main: sp.Expr, override: dict | None, initial_lr) -> sp.Expr:
    """The main formula, replaced from ``override["start"]`` by the override's decay."""
    if override is None:
        return main
    start, duration = override["start"], override["duration"]
    end = _resolve(initial_lr, override["end_lr"], override["end_lr_fraction"])
    decay = _interpolate(override["shape"], at(main, start), end, tau - start, duration)
    return sp.Piecewise((main, sp.Lt(tau, start)), (decay, sp.Lt(tau, start + duration)), (end, True))


def _records(items, kind: str, name: str, each: str = "each of ") -> list[dict]:
    found = []
    for item in items:
        record = getattr(item, "record", None)
        if record is None or record["kind"] != kind:
            raise ArgumentError(name, f"{each}'{name}' must be an olmo_core.{kind}(...)")
        found.append(record)
    return found


def _override(override_decay) -> dict | None:
    if override_decay is None:
        return None
    return _records([override_decay], "OverrideDecay", "override_decay", each="")[0]


def composable_scheduler_stage(duration, shape, start_lr, start_lr_fraction, end_lr, end_lr_fraction):
    """One stage: a line or a cosine over ``duration`` from its start (the previous stage's
    end unless ``start_lr`` / ``start_lr_fraction`` is given) to ``end_lr`` or
    ``end_lr_fraction * lr``.  Alone: ``ComposableScheduler(stages=[stage])`` at ``lr = 1``."""
    _one_of(start_lr, start_lr_fraction, "start_lr", required=False, what="a stage's start")
    _one_of(end_lr, end_lr_fraction, "end_lr", required=True, what="a stage's end")
    record = {"kind": "ComposableSchedulerStage", "duration": _count(duration, "duration", 1),
              "shape": shape, "start_lr": start_lr, "start_lr_fraction": start_lr_fraction,
              "end_lr": end_lr, "end_lr_fraction": end_lr_fraction}
    pairs, end = _stages_pairs(sp.Integer(1), [record])
    built = olmo_lr([*pairs, (end, True)], "steps", record["duration"], "ComposableSchedulerStage")
    return _olmo_segment(built, record=record)


def override_decay(start, duration, shape, end_lr, end_lr_fraction):
    """From the counter ``start`` on, a line or a cosine from the main schedule's value there
    to ``end_lr`` (or ``end_lr_fraction * lr``) over ``duration``, then that lr; the
    ``override_decay`` of a SequentialScheduler or ComposableScheduler.  Alone: the decay of a
    constant lr of 1."""
    _one_of(end_lr, end_lr_fraction, "end_lr", required=True, what="an override's end")
    record = {"kind": "OverrideDecay", "start": _count(start, "start", 0),
              "duration": _count(duration, "duration", 1), "shape": shape,
              "end_lr": end_lr, "end_lr_fraction": end_lr_fraction}
    formula = _with_override(sp.Integer(1), record, sp.Integer(1))
    return _olmo_segment(olmo_lr([(formula, True)], "steps", record["start"] + record["duration"],
                                 "OverrideDecay"), record=record)


def composable_scheduler(lr, units, t_max, stages, override_decay):
    """The stages one after another from the counter 0, the last end lr after them;
    ``override_decay`` replaces them from its ``start``.  ``t_max`` is not read: given, it is
    the trainer's run (the preset holds from there); else the preset ends where the schedule
    stops changing."""
    records = _records(stages, "ComposableSchedulerStage", "stages")
    override = _override(override_decay)
    pairs, end = _stages_pairs(lr, records)
    formula = _with_override(sp.Piecewise(*pairs, (end, True)), override, lr)
    length = sum((r["duration"] for r in records), sp.Integer(0))
    if override is not None:
        length = override["start"] + override["duration"]
    return olmo_lr([(formula, True)], units, length if t_max is None else t_max, "ComposableScheduler")


def sequential_scheduler(lr, units, t_max, schedulers, schedulers_max, schedulers_max_steps,
                         override_decay):
    """Child ``i`` while the counter less the maxima before it is ``<= schedulers_max[i]``,
    from the lr the child before ended at; the last child until ``t_max`` (the module's
    docstring); ``override_decay`` replaces the sequence from its ``start``."""
    maxima = schedulers_max if schedulers_max is not None else schedulers_max_steps
    if maxima is None:
        raise ArgumentError("schedulers_max", "give 'schedulers_max' (OLMo-core requires it)")
    if t_max is None:
        raise ArgumentError("t_max", "SequentialScheduler reads t_max, the trainer's max_steps "
                                     "(units=\"steps\") or max_tokens (units=\"tokens\")",
                            hint="give t_max=...")
    maxima = [_count(m, "schedulers_max", 0) for m in maxima]
    if len(maxima) == len(schedulers):
        maxima = maxima[:-1]  # OLMo-core: the last scheduler runs to the end, its value ignored
    if len(maxima) + 1 != len(schedulers):
        raise ArgumentError("schedulers_max", "give a maximum for every scheduler but the last "
                                              f"({len(schedulers) - 1}), not {len(maxima)} "
                                              "(OLMo-core checks it)")
    children = []
    for child in schedulers:
        if getattr(child, "get_lr", None) is None:
            raise ArgumentError("schedulers", "each of 'schedulers' must be an olmo_core scheduler "
                                              "(olmo_core.CosWithWarmup(...), ...)")
        children.append(child.get_lr)
    pairs, initial, offset, left = [], lr, sp.Integer(0), t_max
    for get_lr, most in zip(children, maxima):
        pairs.append((shifted(get_lr(initial, sp.Min(left, most)), offset), sp.Lt(tau, offset + most + 1)))
        initial = at(get_lr(initial, most), most)
        offset, left = offset + most, left - most
    if all_numbers(left) and left <= 0:
        raise ArgumentError("schedulers_max", f"the maxima add up to {show(offset)}, which leaves the "
                                              f"last scheduler no room before t_max={show(t_max)} "
                                              "(OLMo-core asserts it)")
    pairs.append((shifted(children[-1](initial, left), offset), True))
    formula = _with_override(sp.Piecewise(*pairs), _override(override_decay), lr)
    return olmo_lr([(formula, True)], units, t_max, "SequentialScheduler")


SHAPE = arg("shape", OPTION, "linear", SHAPES)
OVERRIDE = arg("override_decay", Kind.SCHEDULE, None)

COMPOSITES = [
    preset("olmo_core.SequentialScheduler", sequential_scheduler, LR, UNIT, T_MAX,
           arg("schedulers", SCHEDULES), arg("schedulers_max", L, None),
           arg("schedulers_max_steps", L, None), OVERRIDE),
    preset("olmo_core.ComposableScheduler", composable_scheduler, LR, UNIT, T_MAX,
           arg("stages", SCHEDULES), OVERRIDE),
    preset("olmo_core.ComposableSchedulerStage", composable_scheduler_stage, arg("duration", C), SHAPE,
           arg("start_lr", C, None), arg("start_lr_fraction", C, None), arg("end_lr", C, None),
           arg("end_lr_fraction", C, None)),
    preset("olmo_core.OverrideDecay", override_decay, arg("start", C), arg("duration", C), SHAPE,
           arg("end_lr", C, None), arg("end_lr_fraction", C, None)),
]
