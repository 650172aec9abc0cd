"""``Sched`` (a Cerebras scheduler) -> a ``.sched`` file (an ``ir.Module`` of ``statements``, each
statement at the YAML key it states), in one of two styles.

* ``presets`` (default): ``cerebras.LinearLR(initial_learning_rate=..., ...)``,
  the anchor's own class and keyword names, so the file reads like the config
  it came from; SequentialLR gets its (derived) milestones written out.
* ``core``: plain standard-library calls (``linear``, ``cosine``, ``>>``...),
  for people who want to leave the Cerebras vocabulary behind.

Both are exact: numbers are written so they read back as the same rationals.
Output is deterministic (argument order is the class signature's order).
"""

from __future__ import annotations

from dataclasses import replace

import sympy as sp

from ..codegen.sched import sched_text
from ..library.presets.cerebras import CORE_TWINS
from ..library.stdlib import REQUIRED, SCHEDULES
from ..syntax import ir
from . import cerebras_model as cm
from .cerebras_loop import Run
from .cerebras_model import Sched
from .common.source_text import choices_of, comment_safe, header, option
from .common.statements import expression, module, noted, param_stmt, run_stmt, schedule_stmt

#: What a file with tagged schedulers says about their names.
TAGS_NOTE = ("# A schedule named KEY__TAG sets KEY in the optimizer param groups tagged TAG "
             "(param_group_tags); KEY alone, in the others.")
#: What a file with a ``ScalePerParamLR`` says about its ``group`` parameter.
SCALE_NOTES = (f"# ScalePerParam: each param group's own {cm.SCALE_PARAM} entry scales its value (a "
               "group parameter);",
               "# cstorch falls back to a group's adjust_val, then 1; this file reads "
               f"{cm.SCALE_PARAM} only, then 1.")


def source(scheds: list[Sched], origin: str, style: str = "presets", run: Run | None = None) -> ir.Module:
    """The file of the schedulers (each schedule at its class's key); ``run``: the loop's steps,
    the keys they came from and the key that counts (``cerebras_loop.run_of``)."""
    return module(header(origin, "Cerebras ModelZoo YAML"),
                  "# Values are absolute; step t = 0 is the first optimizer step.",
                  [] if run is None else noted(run_stmt(str(run.steps), run.span), run.keys),
                  [f"# {comment_safe(note)}" for sched in scheds for note in _notes(sched)],
                  [TAGS_NOTE] if any(s.tags for s in scheds) else [],
                  _group_param(scheds), [_schedules(sched, style) for sched in scheds])


def _group_param(scheds: list[Sched]) -> list:
    """``param adjust_learning_rate: group = 1`` and its notes, where a ``ScalePerParamLR`` reads it."""
    scaling = [s for s in scheds if s.name == "ScalePerParamLR"]
    if not scaling:
        return []
    return [*SCALE_NOTES, param_stmt(cm.SCALE_PARAM, "group", "1", span=scaling[0].span)]


def _schedules(sched: Sched, style: str) -> list[ir.ScheduleDecl]:
    """The schedule of each name the scheduler drives (``lr``, or ``lr__TAG`` per tag), at its class."""
    body = _scaled(sched, style) if sched.name == "ScalePerParamLR" else _body(sched, style)
    return [schedule_stmt(name, body, sched.span) for name in sched.schedule_names]


def _body(s: Sched, style: str, target: str | None = None) -> ir.Node:
    """The schedule of one scheduler (not ``ScalePerParamLR``, which wraps the whole schedule), in
    ``style``; ``target``: the outer scheduler's (lr or weight_decay)."""
    return expression(_preset(s, target) if style == "presets" else _core(s))


def _scaled(s: Sched, style: str) -> ir.Node:
    """``ScalePerParamLR(scheduler)``: the schedule times each group's own factor (the ``group``
    parameter), the schedule in parentheses as the file has always written it."""
    inner = _body(s.children[0], style, s.target)
    factor = expression(cm.SCALE_PARAM)
    return ir.BinOp(s.span or factor.span, "*", factor, replace(inner, parens=1))


def _notes(sched: Sched) -> list[str]:
    notes = []
    if sched.name == "SequentialLR":
        shown = ", ".join(str(int(m)) for m in sched.args["milestones"])
        cls = "SequentialWD" if sched.target == "weight_decay" else "SequentialLR"
        notes.append(f"{sched.target}: {cls} milestones [{shown}] derived from total_iters, as "
                     "ModelZoo does.")
    if sched.name == "CosineAnnealingWarmRestarts":
        notes.append("CosineAnnealingWarmRestarts follows PyTorch's SGDR; cstorch 2.10 computes the wrong "
                     "phase after the first period.")
    if sched.name == "OneCycleLR":
        notes.append("OneCycleLR holds its final value after total_steps; cstorch 2.10 extrapolates.")
    for child in sched.children:
        notes.extend(_notes(child))
    return notes


# -- presets style ------------------------------------------------------------------------


def _preset(s: Sched, target: str | None = None) -> str:
    """``cerebras.X(...)`` with the anchor's names: the ``*WD`` twin and its keywords for weight decay."""
    wd = (target or s.target) == "weight_decay"
    parts = []
    for name, kind, _ in cm.CLASSES[s.name]:
        key = cm.LR_TO_WD_ARGS.get(name, name) if wd else name
        if kind == "schedulers":
            parts.append(f"{key}=[{', '.join(_preset(c, target or s.target) for c in s.children)}]")
        elif name == "milestones" and s.name == "SequentialLR" and not s.args.get(name):
            continue  # one child: cstorch takes milestones=[], the preset derives the same
        elif name in s.args and s.args[name] is not None:
            parts.append(f"{key}={_value(s.args[name], choices_of('cerebras.' + s.name, name))}")
    return f"cerebras.{cm.LR_TO_WD[s.name] if wd else s.name}({', '.join(parts)})"


def _value(value, choices: tuple[str, ...] = ()) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):  # cerebras_yaml.read refused any other string, at the value
        return option(value, choices)
    if isinstance(value, list):
        return "[" + ", ".join(sched_text(v) for v in value) + "]"
    return sched_text(value)


# -- core style ---------------------------------------------------------------------------


def _arg(s: Sched, name: str):
    """An argument's value, or the class's default where the config leaves it out (a default that
    is a Python int as sympy's, which ``sched_text`` writes: ``eta_min`` 0, ``scale`` 1)."""
    if name in s.args and s.args[name] is not None:
        return s.args[name]
    for arg_name, _, default in cm.CLASSES[s.name]:
        if arg_name == name:
            return sp.Integer(default) if type(default) is int else default
    raise KeyError(name)


def _twin(s: Sched) -> str:
    """The standard-library call of a class in ``CORE_TWINS``: required arguments in order,
    optional ones by keyword where they differ from the builtin's default."""
    builtin_name, mapping = CORE_TWINS[s.name]
    builtin = SCHEDULES[builtin_name]
    parts = []
    for arg in builtin.args:
        if arg.name not in mapping:
            continue
        value = _arg(s, mapping[arg.name])
        if s.name == "PiecewiseConstantLR" and arg.name == "values" \
                and len(value) == len(_arg(s, "milestones")):
            value = [*value, value[-1]]  # cstorch holds the last value past the last milestone
        if arg.default is REQUIRED:
            parts.append(_value(value, arg.choices))
        elif value is not None and value != arg.default:
            parts.append(f"{arg.name}={_value(value, arg.choices)}")
    return f"{builtin_name}({', '.join(parts)})"


def _core(s: Sched) -> str:
    """The standard-library form of one scheduler: its twin's call, or its own formula."""
    if s.name in CORE_TWINS:
        return _twin(s)
    return _FORMULAS[s.name](s)  # every class read but LambdaLR (refused) and ScalePerParamLR (_scaled)


def _inverse_exponential(s: Sched) -> str:
    n = sched_text
    ratio = f"t ** {n(_arg(s, 'step_exponent'))} / {n(_arg(s, 'total_iters'))}"
    if _arg(s, "staircase"):
        ratio = f"floor({ratio})"
    return f"{n(_arg(s, 'initial_learning_rate'))} / (1 + {n(_arg(s, 'decay_rate'))} * {ratio})"


def _inverse_square_root(s: Sched) -> str:
    n = sched_text
    return (f"{n(_arg(s, 'initial_learning_rate'))} * {n(_arg(s, 'scale'))} / "
            f"sqrt(max({n(_arg(s, 'warmup_steps'))}, t))")


def _cosine_annealing(s: Sched) -> str:
    """Periodic, like PyTorch: it rises again after T_max."""
    lo, hi = sched_text(_arg(s, "eta_min")), sched_text(_arg(s, "initial_learning_rate"))
    return f"{lo} + ({hi} - {lo}) * (1 + cos(pi * t / {sched_text(_arg(s, 'T_max'))})) / 2"


def _warm_restarts(s: Sched) -> str:
    args = (_arg(s, "initial_learning_rate"), _arg(s, "eta_min"), _arg(s, "T_0"))
    return f"cosine_restarts({', '.join(sched_text(a) for a in args)})"


def _multiplicative(s: Sched) -> str:
    return f"{sched_text(_arg(s, 'initial_learning_rate'))} * {sched_text(_arg(s, 'coefficient'))} ** t"


def _one_cycle(s: Sched) -> str:
    n = sched_text
    peak, initial = n(_arg(s, "max_lr")), n(_arg(s, "initial_learning_rate"))
    parts = [peak, n(_arg(s, "total_steps")), f"pct_start={n(_arg(s, 'pct_start'))}",
             f"div_factor={peak} / {initial}", f"final_div_factor={n(_arg(s, 'final_div_factor'))}"]
    if _arg(s, "anneal_strategy") != "cos":
        parts.append('anneal="linear"')
    if _arg(s, "three_phase"):
        parts.append("three_phase=true")
    return f"onecycle({', '.join(parts)})"


def _sequential(s: Sched) -> str:
    """``a >> b >> ...``: a child cut or held to its milestone's gap (``for``) where it does not
    end there by itself; a nested SequentialLR last in parentheses, as it was nested."""
    starts = [0, *s.args["milestones"]]
    pieces = []
    for i, child in enumerate(s.children):
        text = _core(child)
        if i < len(s.children) - 1:
            gap = starts[i + 1] - starts[i]
            if cm.own_length(child) != gap:
                text = f"({text}) for {sched_text(gap)}"
        elif child.name == "SequentialLR":
            text = f"({text})"
        pieces.append(text)
    return " >> ".join(pieces)


def _chained(s: Sched) -> str:
    """The first scheduler times each later one normalised by its initial value, as cstorch chains."""
    first, *rest = s.children
    text = f"({_core(first)})"
    for child in rest:
        text += f" * ({_core(child)}) / {sched_text(_arg(child, cm.INITIAL_ARG[child.name]))}"
    return text


#: The classes with no standard-library twin, each its own formula.
_FORMULAS = {"InverseExponentialTimeDecayLR": _inverse_exponential,
             "InverseSquareRootDecayLR": _inverse_square_root, "CosineAnnealingLR": _cosine_annealing,
             "CosineAnnealingWarmRestarts": _warm_restarts, "MultiplicativeLR": _multiplicative,
             "OneCycleLR": _one_cycle, "SequentialLR": _sequential, "ChainedScheduler": _chained}
