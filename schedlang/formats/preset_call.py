"""``.sched`` -> Composer YAML or HF TrainingArguments, from one preset call.

Composer's YAML and HF's arguments name *one* scheduler with its keywords, so
these exports take a program whose ``lr`` is one call of that library's presets
(``composer.CosineAnnealingWithWarmupScheduler(...)``, ``hf.cosine(...)``), possibly
through ``let`` names: every keyword maps to a key one to one.  Anything else
(a ``>>`` chain, core calls, arithmetic) is refused at the construct with the reason.
Arguments are written as numbers with the program's parameters bound, except
Composer time literals (``100ba``, ``0.1dur``, ``2ep``), which stay as written.
The text is read back by the matching importer and proven equal with
``schedlang.equivalent`` before it is returned.
"""

from __future__ import annotations

import json

import sympy as sp

from ..core.algebra import bind
from ..errors import SchedlangError
from ..library.presets import PRESETS
from ..library.stdlib import STEP_KINDS, Kind
from ..program import Program
from ..semantics.lower import lower
from ..syntax import ir
from ..syntax.parser import parse
from . import composer_yaml as cy
from .export import proven
from .numbers import yaml_float_text
from .source_text import comment_safe


def _number_text(value: sp.Expr) -> str:
    return str(int(value)) if value.is_Integer else yaml_float_text(float(value))


class _Call:
    """The ``lr`` schedule's preset call, its keywords and a way to read their bound values."""

    def __init__(self, source, filename: str, params: dict | None, library: str, example: str):
        module = parse(source, filename)
        lowered = lower(module)
        self.program = Program(lowered, params or {})
        refuse_group_params(self.program, library)
        self.lowered = lowered
        lets = {s.name: s.value for s in module.statements if isinstance(s, ir.Let)}
        decls = [s for s in module.statements if isinstance(s, ir.ScheduleDecl)]
        for decl in decls:
            if decl.name != "lr":
                raise SchedlangError(f"{library} schedules only the lr, not '{decl.name}'", decl.span,
                                     hint="export the lr schedule alone (--schedule lr)")
        node = decls[0].value if decls else None
        while isinstance(node, ir.Name) and node.id in lets:
            node = lets[node.id]
        if not (isinstance(node, ir.Call) and node.func.id.startswith(library.split("-")[0] + ".")):
            span = node.span if node is not None else None
            raise SchedlangError(f"{library} export needs the lr to be one {library.split('-')[0]}.* preset "
                                 "call", span, hint=f"e.g. schedule lr = {example}: the format names one "
                                                    "scheduler with its keywords")
        self.node = node
        self.name = node.func.id
        builtin = PRESETS[self.name]
        self.builtin = builtin
        self.given = {a.name: arg for a, arg in zip(builtin.args, node.args)}
        self.given.update({kw.name: kw.value for kw in node.keywords})

    def number(self, name: str) -> sp.Expr:
        node = self.given[name]
        segment = self.lowered.segment(node, "a number")
        if segment.depends_on_step:
            raise SchedlangError(f"'{name}' must be a number to export, not a schedule", node.span)
        value = bind(segment.expr, self.program.substitutions)
        if value.free_symbols:
            missing = sorted(str(s) for s in value.free_symbols)[0]
            raise SchedlangError(f"parameter '{missing}' has no value", node.span,
                                 hint=f"bind it with -D {missing}=... (the export writes numbers)")
        return value

    def param(self, name: str):
        value = self.program.values.get(name)
        if value is None or isinstance(value, sp.Basic):
            return value
        return sp.Rational(value)


def refuse_group_params(program: Program, library: str) -> None:
    """A ``group`` parameter has a value per optimizer param group, which one scheduler's
    keywords cannot say: binding it to its default would export a different schedule."""
    if program.group_params:
        name, info = next(iter(program.group_params.items()))
        raise SchedlangError(f"group parameter '{name}' has a value per param group, which "
                             f"{library} cannot say", info.span,
                             hint="remove it (or make it a float) to export the schedule shared by "
                                  "every group")


def _verify(original: Program, text: str, fmt: str, filename: str, params: dict | None) -> None:
    """The export's schedule (lr) read back and proven equal: ``export.proven``."""
    proven(original, text, fmt, filename, params=params, schedules=["lr"])


# -- Composer / llm-foundry YAML ------------------------------------------------------------


def export_composer(source, filename="<string>", params=None, verify=True, schedules=None) -> str:
    """An llm-foundry ``scheduler:`` block (``optimizer: {lr}``, ``max_duration`` when ``dur`` needs it)."""
    call = _Call(source, filename, params, "composer-yaml",
                 "composer.CosineAnnealingWithWarmupScheduler(t_warmup=100ba, lr=6e-4)")
    cls = call.name.split(".", 1)[1]
    lines = [f"# Written by `schedlang export --format composer-yaml` from {comment_safe(str(filename))}.",
             "scheduler:", f"  name: {cy.EXPORT_NAMES.get(cls, cls)}"]
    spec = {a.name: a for a in call.builtin.args}
    uses_dur = any(a.kind in STEP_KINDS and a.name not in call.given and "dur" in str(a.default)
                   for a in call.builtin.args)
    for name, node in call.given.items():
        if name == "lr":
            continue
        kind = spec[name].kind
        if kind in STEP_KINDS:
            lines.append(f"  {name}: {_time(call, name, node)}")
            uses_dur |= isinstance(node, ir.Duration) and node.unit == "dur"
        elif kind == Kind.VALUES:
            if not isinstance(node, ir.List):
                raise SchedlangError("write the milestones as a list [...] to export them", node.span)
            items = [_time(call, name, item) for item in node.items]
            lines.append(f"  {name}: [{', '.join(items)}]")
        elif kind == Kind.FLAG:
            flag = call.lowered.argument(call.builtin, spec[name], node)
            lines.append(f"  {name}: {'true' if flag else 'false'}")
        else:
            lines.append(f"  {name}: {_number_text(call.number(name))}")
    if "lr" in call.given:
        lines[1:1] = ["optimizer:", f"  lr: {_number_text(call.number('lr'))}"]
    if uses_dur:
        total = call.param("max_duration")
        if total is None:
            raise SchedlangError("a 'dur' time needs max_duration bound", call.node.span,
                                 hint="bind it with -D max_duration=... (batches)")
        lines.append(f"max_duration: {int(total)}ba")
    text = "\n".join(lines) + "\n"
    if verify:
        _verify(call.program, text, "composer-yaml", filename, params)
    return text


def _time(call: _Call, name: str, node: ir.Node) -> str:
    if isinstance(node, ir.Duration):
        if node.unit not in ("ba", "ep", "dur"):
            raise SchedlangError(f"'{node.text}' has no Composer-YAML import", node.span)
        return node.text
    segment = call.lowered.segment(node, "a number")
    value = bind(segment.expr, call.program.substitutions)
    if value.free_symbols or not value.is_Integer:
        raise SchedlangError(f"'{name}' must be a whole number of batches to export", node.span,
                             hint="bind its parameters with -D, or write it as 100ba / 0.1dur")
    return f"{int(value)}ba"


# -- HF TrainingArguments ---------------------------------------------------------------------


def export_hf(source, filename="<string>", params=None, verify=True, schedules=None) -> str:
    """TrainingArguments JSON: ``lr_scheduler_type``, ``learning_rate``, ``warmup_steps``,
    ``max_steps`` and ``lr_scheduler_kwargs`` (v5 spelling: a ratio is ``warmup_steps < 1``)."""
    call = _Call(source, filename, params, "hf-args", "hf.cosine(lr=2e-5, num_warmup_steps=100, "
                                                       "num_training_steps=1000)")
    kind = call.name.split(".", 1)[1]
    out: dict = {"lr_scheduler_type": kind}
    out["learning_rate"] = _json_number(call.number("lr")) if "lr" in call.given else 1
    kwargs = {}
    for name, node in call.given.items():
        if name in ("lr",):
            continue
        if name == "num_training_steps":
            out["max_steps"] = _json_number(call.number(name))
        elif name == "num_warmup_steps":
            steps = call.number(name)
            if steps != 0:
                out["warmup_steps"] = _json_number(steps)
        elif name == "warmup_ratio":
            out["warmup_steps"] = _json_number(call.number(name))
        elif isinstance(node, ir.String):
            kwargs[name] = node.value
        else:
            kwargs[name] = _json_number(call.number(name))
    if "max_steps" not in out and kind != "constant":
        if kind in ("constant_with_warmup", "inverse_sqrt") and "warmup_ratio" not in call.given:
            out["max_steps"] = 1  # unused by these types, but the Trainer needs a run length
        else:
            raise SchedlangError("HF needs num_training_steps (max_steps) for this type", call.node.span)
    if kwargs:
        if kind == "constant_with_warmup":
            raise SchedlangError("get_scheduler passes no kwargs to constant_with_warmup", call.node.span)
        out["lr_scheduler_kwargs"] = kwargs
    text = json.dumps(out, indent=2) + "\n"
    if verify:
        _verify(call.program, text, "hf-args", filename, params)
    return text


def _json_number(value: sp.Expr):
    if value.is_Integer:
        return int(value)
    return float(value)


# -- DeepSpeed config ------------------------------------------------------------------------


def export_deepspeed(source, filename="<string>", params=None, verify=True, schedules=None) -> str:
    """A DeepSpeed config with the ``scheduler`` block (``type`` and ``params``) of one
    ``deepspeed.*`` preset call; its ``lr=`` (the optimizer's lr, which ``WarmupLR`` without
    ``warmup_max_lr`` and ``WarmupCosineLR`` scale) becomes ``optimizer.params.lr``."""
    call = _Call(source, filename, params, "deepspeed-json",
                 "deepspeed.WarmupDecayLR(total_num_steps=10000, warmup_max_lr=3e-4)")
    kind = call.name.split(".", 1)[1]
    if "." in kind:
        raise SchedlangError(f"{call.name} is a curve DeepSpeed derives from its scheduler, not one "
                             "it can be configured with", call.node.span,
                             hint="export the lr schedule (deepspeed.OneCycle(...)) instead")
    spec = {a.name: a for a in call.builtin.args}
    out: dict = {}
    scheduler_params: dict = {}
    for name, node in call.given.items():
        if name == "lr":
            out["optimizer"] = {"type": "AdamW", "params": {"lr": _json_number(call.number(name))}}
        elif isinstance(node, ir.String):
            scheduler_params[name] = node.value
        elif spec[name].kind == Kind.FLAG:
            scheduler_params[name] = bool(call.lowered.argument(call.builtin, spec[name], node))
        else:
            scheduler_params[name] = _json_number(call.number(name))
    out["scheduler"] = {"type": kind, "params": scheduler_params}
    text = json.dumps(out, indent=2) + "\n"
    if verify:
        _verify(call.program, text, "deepspeed-json", filename, params)
    return text


# -- Megatron-LM command line -----------------------------------------------------------------

#: ``megatron.OptimizerParamScheduler`` keyword -> Megatron-LM flag, in samples: the class's
#: ``num_steps`` counts samples, so the flags name exactly the class's own lengths.
_MEGATRON_FLAGS = {"max_lr": "--lr", "min_lr": "--min-lr", "init_lr": "--lr-warmup-init",
                   "lr_warmup_steps": "--lr-warmup-samples", "lr_decay_steps": "--lr-decay-samples",
                   "lr_decay_style": "--lr-decay-style", "wsd_decay_steps": "--lr-wsd-decay-samples",
                   "lr_wsd_decay_style": "--lr-wsd-decay-style"}


def export_megatron(source, filename="<string>", params=None, verify=True, schedules=None) -> str:
    """Megatron-LM scheduler flags (sample-based, one per line) for one
    ``megatron.OptimizerParamScheduler`` call; ``--train-samples`` is the decay length."""
    call = _Call(source, filename, params, "megatron-args",
                 'megatron.OptimizerParamScheduler(max_lr=3e-4, min_lr=3e-5, lr_warmup_steps=2000, '
                 'lr_decay_steps=100000, lr_decay_style="cosine")')
    if call.name != "megatron.OptimizerParamScheduler":
        raise SchedlangError(f"{call.name} is not a scheduler Megatron-LM configures by flags",
                             call.node.span, hint="export the lr: megatron.OptimizerParamScheduler(...)")
    flags = {}
    for name, node in call.given.items():
        flag = _MEGATRON_FLAGS.get(name)
        if flag is None:
            continue  # the weight-decay and checkpoint keywords do not change the lr
        if isinstance(node, ir.String):
            flags[flag] = node.value
            continue
        value = call.number(name)
        if name.endswith("_steps") and not value.is_Integer:
            raise SchedlangError(f"'{name}' is {_number_text(value)} samples; Megatron-LM's sample "
                                 "flags are whole numbers", node.span)
        flags[flag] = _number_text(value)
    flags["--train-samples"] = flags["--lr-decay-samples"]
    lines = ["# Megatron-LM scheduler flags written by schedlang (lengths in samples, as",
             "# OptimizerParamScheduler counts them); add them to your pretrain command.",
             "python pretrain_gpt.py \\"]
    items = [f"    {flag} {value}" for flag, value in flags.items()]
    lines += [item + " \\" for item in items[:-1]] + items[-1:]
    text = "\n".join(lines) + "\n"
    if verify:
        _verify(call.program, text, "megatron-args", filename, params)
    return text
