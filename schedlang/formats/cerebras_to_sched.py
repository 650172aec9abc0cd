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

import sympy as sp

from ..library.presets.cerebras import CORE_TWINS
from ..library.stdlib import REQUIRED, SCHEDULES
from ..syntax import ir
from . import cerebras_model as cm
from .cerebras_loop import Run
from .cerebras_model import Sched
from .common.source_text import choices_of, comment_safe, header, option_node
from .common.statements import (
    boolean,
    call,
    formula,
    module,
    noted,
    number,
    param_stmt,
    run_stmt,
    schedule_stmt,
    string,
)

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
                  [] if run is None else noted(run_stmt(number(run.steps, run.span), run.span), run.keys),
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
    return _preset(s, target) if style == "presets" else _core(s)


def _scaled(s: Sched, style: str) -> ir.Node:
    """``ScalePerParamLR(scheduler)``: the schedule times each group's own factor (the ``group``
    parameter), the schedule in parentheses as the file has always written it."""
    return formula(f"{cm.SCALE_PARAM} * (INNER)", s.span, INNER=_body(s.children[0], style, s.target))


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


def _preset(s: Sched, target: str | None = None) -> ir.Call:
    """``cerebras.X(...)`` with the anchor's names: the ``*WD`` twin and its keywords for weight decay."""
    wd = (target or s.target) == "weight_decay"
    keywords = {}
    for name, kind, _ in cm.CLASSES[s.name]:
        key = cm.LR_TO_WD_ARGS.get(name, name) if wd else name
        if kind == "schedulers":
            keywords[key] = ir.List(_span(s, name), tuple(_preset(c, target or s.target) for c in s.children))
        elif name == "milestones" and s.name == "SequentialLR" and not s.args.get(name):
            continue  # one child: cstorch takes milestones=[], the preset derives the same
        elif name in s.args and s.args[name] is not None:
            keywords[key] = _value(s, name, s.args[name], choices_of('cerebras.' + s.name, name))
    return call(f"cerebras.{cm.LR_TO_WD[s.name] if wd else s.name}", span=s.span, **keywords)


def _span(s: Sched, name: str):
    """Where argument ``name`` of ``s`` was read (its value), or the class's name for a default."""
    return s.arg_spans.get(name) or s.span


def _value(s: Sched, name: str, value, choices: tuple[str, ...] = ()) -> ir.Node:
    """The value of ``s``'s argument ``name`` (``value``: the config's, a default, or one the
    import derives from it) as a node at the configuration's value; a list's items each at their
    own (the last one's for an item the import adds)."""
    span = _span(s, name)
    if isinstance(value, bool):
        return boolean(value, span)
    if isinstance(value, str):  # cerebras_yaml.read refused any other string, at the value
        return option_node(value, choices, span)
    if isinstance(value, list):
        items = s.item_spans.get(name, ())
        return ir.List(span, tuple(number(v, items[min(i, len(items) - 1)] if items else span)
                                   for i, v in enumerate(value)))
    return number(value, span)


# -- core style ---------------------------------------------------------------------------


def _arg(s: Sched, name: str):
    """An argument's value, or the class's default where the config leaves it out (a default that
    is a Python int as sympy's: ``eta_min`` 0, ``scale`` 1)."""
    if name in s.args and s.args[name] is not None:
        return s.args[name]
    for arg_name, _, default in cm.CLASSES[s.name]:
        if arg_name == name:
            return sp.Integer(default) if type(default) is int else default
    raise KeyError(name)


def _given(s: Sched, name: str) -> ir.Node:
    """``_arg`` as a node at the value it was read from (the class's name for a default)."""
    return _value(s, name, _arg(s, name))


def _twin(s: Sched) -> ir.Call:
    """The standard-library call of a class in ``CORE_TWINS``: required arguments in order,
    optional ones by keyword where they differ from the builtin's default."""
    builtin_name, mapping = CORE_TWINS[s.name]
    builtin = SCHEDULES[builtin_name]
    args, keywords = [], {}
    for arg in builtin.args:
        if arg.name not in mapping:
            continue
        value = _arg(s, mapping[arg.name])
        if s.name == "PiecewiseConstantLR" and arg.name == "values" \
                and len(value) == len(_arg(s, "milestones")):
            value = [*value, value[-1]]  # cstorch holds the last value past the last milestone
        if arg.default is REQUIRED:
            args.append(_value(s, mapping[arg.name], value, arg.choices))
        elif value is not None and value != arg.default:
            keywords[arg.name] = _value(s, mapping[arg.name], value, arg.choices)
    return call(builtin_name, *args, span=s.span, **keywords)


def _core(s: Sched) -> ir.Node:
    """The standard-library form of one scheduler: its twin's call, or its own formula."""
    if s.name in CORE_TWINS:
        return _twin(s)
    return _FORMULAS[s.name](s)  # every class read but LambdaLR (refused) and ScalePerParamLR (_scaled)


def _inverse_exponential(s: Sched) -> ir.Node:
    text = "LR / (1 + RATE * floor(t ** P / N))" if _arg(s, "staircase") else "LR / (1 + RATE * t ** P / N)"
    return formula(text, s.span, LR=_given(s, "initial_learning_rate"), RATE=_given(s, "decay_rate"),
                   P=_given(s, "step_exponent"), N=_given(s, "total_iters"))


def _inverse_square_root(s: Sched) -> ir.Node:
    return formula("LR * SCALE / sqrt(max(WARM, t))", s.span, LR=_given(s, "initial_learning_rate"),
                   SCALE=_given(s, "scale"), WARM=_given(s, "warmup_steps"))


def _cosine_annealing(s: Sched) -> ir.Node:
    """Periodic, like PyTorch: it rises again after T_max."""
    return formula("LO + (HI - LO) * (1 + cos(pi * t / T)) / 2", s.span, LO=_given(s, "eta_min"),
                   HI=_given(s, "initial_learning_rate"), T=_given(s, "T_max"))


def _warm_restarts(s: Sched) -> ir.Node:
    return call("cosine_restarts", *(_given(s, a) for a in ("initial_learning_rate", "eta_min", "T_0")),
                span=s.span)


def _multiplicative(s: Sched) -> ir.Node:
    return formula("LR * C ** t", s.span, LR=_given(s, "initial_learning_rate"), C=_given(s, "coefficient"))


def _one_cycle(s: Sched) -> ir.Node:
    """``onecycle``; its ``div_factor`` the peak over the start, at the start (what a 0 there is)."""
    peak = _given(s, "max_lr")
    keywords = {"pct_start": _given(s, "pct_start"),
                "div_factor": formula("MAX / LR", _span(s, "initial_learning_rate"), MAX=peak,
                                      LR=_given(s, "initial_learning_rate")),
                "final_div_factor": _given(s, "final_div_factor")}
    if _arg(s, "anneal_strategy") != "cos":
        keywords["anneal"] = string("linear", _span(s, "anneal_strategy"))
    if _arg(s, "three_phase"):
        keywords["three_phase"] = _given(s, "three_phase")
    return call("onecycle", peak, _given(s, "total_steps"), span=s.span, **keywords)


def _sequential(s: Sched) -> ir.Node:
    """``a >> b >> ...``: a child cut or held to its milestone's gap (``for``) where it does not
    end there by itself (the gap at its ``total_iters``); a nested SequentialLR last in
    parentheses, as it was nested."""
    starts = [0, *s.args["milestones"]]
    pieces, values = [], {}
    for i, child in enumerate(s.children):
        name = f"S{i}"
        values[name] = _core(child)
        if i < len(s.children) - 1:
            gap = starts[i + 1] - starts[i]
            if cm.own_length(child) != gap:
                values[f"N{i}"] = number(gap, _span(child, "total_iters"))
                name = f"({name}) for N{i}"
        elif child.name == "SequentialLR":
            name = f"({name})"
        pieces.append(name)
    return formula(" >> ".join(pieces), s.span, **values)


def _chained(s: Sched) -> ir.Node:
    """The first scheduler times each later one normalised by its initial value, as cstorch chains."""
    values, text = {"S0": _core(s.children[0])}, "(S0)"
    for i, child in enumerate(s.children[1:], 1):
        values[f"S{i}"], values[f"I{i}"] = _core(child), _given(child, cm.INITIAL_ARG[child.name])
        text += f" * (S{i}) / I{i}"
    return formula(text, s.span, **values)


#: The classes with no standard-library twin, each its own formula.
_FORMULAS = {"InverseExponentialTimeDecayLR": _inverse_exponential,
             "InverseSquareRootDecayLR": _inverse_square_root, "CosineAnnealingLR": _cosine_annealing,
             "CosineAnnealingWarmRestarts": _warm_restarts, "MultiplicativeLR": _multiplicative,
             "OneCycleLR": _one_cycle, "SequentialLR": _sequential, "ChainedScheduler": _chained}
