"""``Sched`` (a Cerebras scheduler) -> ``.sched`` source text, in one of two styles.

* ``presets`` (default): ``cerebras.LinearLR(initial_learning_rate=..., ...)``,
  the anchor's own class and keyword names, so the file reads like the config
  it came from; SequentialLR gets its (derived) milestones written out.
* ``core``: plain standard-library calls (``linear``, ``cosine``, ``>>``...),
  for people who want to leave the Cerebras vocabulary behind.

Both are exact: numbers are written so they read back as the same rationals.
Output is deterministic (argument order is the class signature's order).
"""

from __future__ import annotations

from ..codegen.sched import sched_text
from ..library.presets.cerebras import CORE_TWINS
from ..library.stdlib import REQUIRED, SCHEDULES
from . import cerebras_model as cm
from .cerebras_model import Sched
from .common.source_text import choices_of, comment_safe, header, option

INDENT = "    "


def source(scheds: list[Sched], origin: str, style: str = "presets",
           run: tuple[int, str] | None = None) -> str:
    """``.sched`` text of the schedulers; ``run``: the loop's steps and the keys they came from."""
    lines = [header(origin, "Cerebras ModelZoo YAML"),
             "# Values are absolute; step t = 0 is the first optimizer step."]
    if run is not None:
        lines.append(f"run = {run[0]}   # {run[1]}")
    for sched in scheds:
        lines.extend(f"# {comment_safe(note)}" for note in _notes(sched))
    if any(s.tags for s in scheds):
        lines.append("# A schedule named KEY__TAG sets KEY in the optimizer param groups tagged TAG "
                     "(param_group_tags); KEY alone, in the others.")
    if any(s.name == "ScalePerParamLR" for s in scheds):
        lines += [f"# ScalePerParam: each param group's own {cm.SCALE_PARAM} entry scales its value (a "
                  "group parameter);",
                  "# cstorch falls back to a group's adjust_val, then 1; this file reads "
                  f"{cm.SCALE_PARAM} only, then 1.",
                  f"param {cm.SCALE_PARAM}: group = 1"]
    for sched in scheds:
        body = _preset(sched, 0) if style == "presets" else _core(sched, 0)
        for name in sched.schedule_names:
            lines.append(f"schedule {name} = {body}")
    return "\n".join(lines) + "\n"


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


def _scaled(s: Sched, inner: str) -> str:
    """``ScalePerParamLR(scheduler)``: the schedule times each group's own factor."""
    return f"{cm.SCALE_PARAM} * ({inner})"


def _preset(s: Sched, depth: int, target: str | None = None) -> str:
    """``cerebras.X(...)`` with the anchor's names: the ``*WD`` twin and its keywords for weight decay."""
    if s.name == "ScalePerParamLR":
        return _scaled(s, _preset(s.children[0], depth, target or s.target))
    wd = (target or s.target) == "weight_decay"
    parts = []
    for name, kind, _ in cm.CLASSES[s.name]:
        key = cm.LR_TO_WD_ARGS.get(name, name) if wd else name
        if kind == "schedulers":
            inner = INDENT * (depth + 2)
            children = "".join(f"{inner}{_preset(c, depth + 2, target or s.target)},\n"
                               for c in s.children)
            parts.append(f"{key}=[\n{children}{INDENT * (depth + 1)}]")
        elif name == "milestones" and s.name == "SequentialLR" and not s.args.get(name):
            continue  # one child: cstorch takes milestones=[], the preset derives the same
        elif name in s.args and s.args[name] is not None:
            parts.append(f"{key}={_value(s.args[name], choices_of('cerebras.' + s.name, name))}")
    call = f"cerebras.{cm.LR_TO_WD[s.name] if wd else s.name}"
    if s.children:
        pad = INDENT * (depth + 1)
        return f"{call}(\n" + "".join(f"{pad}{p},\n" for p in parts) + f"{INDENT * depth})"
    return f"{call}({', '.join(parts)})"


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
    if name in s.args and s.args[name] is not None:
        return s.args[name]
    for arg_name, _, default in cm.CLASSES[s.name]:
        if arg_name == name:
            return default
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


def _core(s: Sched, depth: int) -> str:
    n = sched_text
    a = lambda name: _arg(s, name)  # noqa: E731
    name = s.name
    if name == "ScalePerParamLR":
        return _scaled(s, _core(s.children[0], depth))
    if name in CORE_TWINS:
        return _twin(s)
    if name == "InverseExponentialTimeDecayLR":
        ratio = f"t ** {n(a('step_exponent'))} / {n(a('total_iters'))}"
        if a("staircase"):
            ratio = f"floor({ratio})"
        return f"{n(a('initial_learning_rate'))} / (1 + {n(a('decay_rate'))} * {ratio})"
    if name == "InverseSquareRootDecayLR":
        return (f"{n(a('initial_learning_rate'))} * {n(a('scale'))} / "
                f"sqrt(max({n(a('warmup_steps'))}, t))")
    if name == "CosineAnnealingLR":  # periodic, like PyTorch: it rises again after T_max
        lo, hi = n(a("eta_min")), n(a("initial_learning_rate"))
        return f"{lo} + ({hi} - {lo}) * (1 + cos(pi * t / {n(a('T_max'))})) / 2"
    if name == "CosineAnnealingWarmRestarts":
        return f"cosine_restarts({n(a('initial_learning_rate'))}, {n(a('eta_min'))}, {n(a('T_0'))})"
    if name == "MultiplicativeLR":
        return f"{n(a('initial_learning_rate'))} * {n(a('coefficient'))} ** t"
    if name == "OneCycleLR":
        peak, initial = n(a("max_lr")), n(a("initial_learning_rate"))
        parts = [peak, n(a("total_steps")), f"pct_start={n(a('pct_start'))}",
                 f"div_factor={peak} / {initial}", f"final_div_factor={n(a('final_div_factor'))}"]
        if a("anneal_strategy") != "cos":
            parts.append('anneal="linear"')
        if a("three_phase"):
            parts.append("three_phase=true")
        return f"onecycle({', '.join(parts)})"
    if name == "SequentialLR":
        starts = [0, *s.args["milestones"]]
        pieces = []
        for i, child in enumerate(s.children):
            text = _core(child, depth + 1)
            if i < len(s.children) - 1:
                gap = starts[i + 1] - starts[i]
                if cm.own_length(child) != gap:
                    text = f"({text}) for {n(gap)}"
            elif child.name == "SequentialLR":
                text = f"({text})"
            pieces.append(text)
        return f"\n{INDENT * (depth + 1)}>> ".join(pieces)
    if name == "ChainedScheduler":
        first, *rest = s.children
        text = f"({_core(first, depth + 1)})"
        for child in rest:
            text += f" * ({_core(child, depth + 1)}) / {n(_arg(child, cm.INITIAL_ARG[child.name]))}"
        return text
    raise AssertionError(f"no core form for {name}")  # pragma: no cover - CLASSES and this agree
