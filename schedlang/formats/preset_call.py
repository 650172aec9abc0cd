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
from .numbers import exact, yaml_float_text
from .source_text import comment_safe


def _number_text(value: sp.Expr) -> str:
    return str(int(value)) if value.is_Integer else yaml_float_text(float(value))


class _Call:
    """The ``lr`` schedule's preset call, its keywords and a way to read their bound values."""

    def __init__(self, source, filename: str, params: dict | None, library: str, example: str,
                 others: tuple[str, ...] = ()):
        module = parse(source, filename)
        self.module = module
        lowered = lower(module)
        self.program = Program(lowered, params or {})
        refuse_group_params(self.program, library)
        self.lowered = lowered
        lets = {s.name: s.value for s in module.statements if isinstance(s, ir.Let)}
        decls = [s for s in module.statements if isinstance(s, ir.ScheduleDecl)]
        self.others = {}  # name -> the node of a schedule the format also carries (``others``)
        for decl in decls:
            if decl.name in others:
                self.others[decl.name] = _unlet(decl.value, lets)
                continue
            if decl.name != "lr":
                raise SchedlangError(f"{library} schedules only the lr, not '{decl.name}'", decl.span,
                                     hint="export the lr schedule alone (--schedule lr)")
        lr = [d for d in decls if d.name == "lr"]
        node = _unlet(lr[0].value, lets) if lr else None
        self.on_samples = on_samples(node) is not None
        if self.on_samples and library == "megatron-args":  # Megatron's class counts samples
            node = _unlet(on_samples(node), lets)
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

    def value(self, node: ir.Node, name: str) -> sp.Expr:
        """A number argument ``node`` (named ``name`` in messages), its parameters bound."""
        segment = self.lowered.segment(node, "a number")
        value = bind(segment.expr, self.program.substitutions)
        if segment.depends_on_step or value.free_symbols:
            raise SchedlangError(f"'{name}' must be a number to export", node.span,
                                 hint="bind its parameters with -D (the export writes numbers)")
        return value

    def param(self, name: str):
        value = self.program.values.get(name)
        if value is None or isinstance(value, sp.Basic):
            return value
        return sp.Rational(value)


def _unlet(node, lets: dict):
    while isinstance(node, ir.Name) and node.id in lets:
        node = lets[node.id]
    return node


def on_samples(node):
    """The schedule inside ``on_samples(...)``, or None."""
    if isinstance(node, ir.Call) and node.func.id == "on_samples" and len(node.args) == 1 \
            and not node.keywords:
        return node.args[0]
    return None


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
    ``megatron.OptimizerParamScheduler`` call, its ``get_wd`` weight decay if the file has one
    (``--train-samples`` is its ``wd_incr_steps``, else the decay length), and the batch flags of
    a file whose lr is ``on_samples(...)`` under ``batch = megatron.step_batch_size_schedule(...)``
    (``--step-batch-size-schedule``, ``--seq-length``), ``megatron.rampup_batch_size(...)``
    (``--rampup-batch-size``, ``--global-batch-size``) or a constant ``batch = N``
    (``--global-batch-size``): the form ``import --format megatron-args`` writes."""
    wanted = ("weight_decay",) if not schedules or "weight_decay" in schedules else ()
    call = _Call(source, filename, params, "megatron-args",
                 'megatron.OptimizerParamScheduler(max_lr=3e-4, min_lr=3e-5, lr_warmup_steps=2000, '
                 'lr_decay_steps=100000, lr_decay_style="cosine")', others=wanted)
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
        if name == "lr_warmup_steps" and not call.value(node, name).is_Integer:
            flags[flag] = None  # a fraction of the decay, if it is one (_warmup_fraction)
        elif name.endswith("_steps"):
            flags[flag] = _samples(call, name, node)
        else:
            flags[flag] = _number_text(call.number(name))
    flags["--train-samples"] = flags["--lr-decay-samples"]
    _warmup_fraction(call, flags)
    flags.update(_megatron_wd(call))
    batch_flags, head = _megatron_batch(call)
    flags.update(batch_flags)
    lines = ["# Megatron-LM scheduler flags written by schedlang (lengths in samples, as",
             "# OptimizerParamScheduler counts them); add them to your pretrain command.", *head,
             "python pretrain_gpt.py \\"]
    items = [f"    {flag} {value}" for flag, value in flags.items()]
    lines += [item + " \\" for item in items[:-1]] + items[-1:]
    text = "\n".join(lines) + "\n"
    if verify:
        proven(call.program, text, "megatron-args", filename, params=params,
               schedules=["lr", *call.others])
    return text


def _warmup_fraction(call: _Call, flags: dict) -> None:
    """A warmup of a fractional number of samples as ``--lr-warmup-fraction`` (Megatron-LM
    multiplies it by the decay samples), when a decimal fraction gives it exactly."""
    if flags.get("--lr-warmup-samples", "") is not None:
        return
    del flags["--lr-warmup-samples"]
    node = call.given["lr_warmup_steps"]
    warmup = call.value(node, "lr_warmup_steps")
    decay = call.value(call.given["lr_decay_steps"], "lr_decay_steps")
    fraction = _number_text(warmup / decay)
    if exact(fraction) * decay != warmup:
        _samples(call, "lr_warmup_steps", node)  # refused: not a whole number of samples
    flags["--lr-warmup-fraction"] = fraction


def _samples(call: _Call, name: str, node: ir.Node) -> str:
    value = call.value(node, name)
    if not value.is_Integer:
        raise SchedlangError(f"'{name}' is {_number_text(value)} samples; Megatron-LM's sample "
                             "flags are whole numbers", node.span)
    return _number_text(value)


def _megatron_wd(call: _Call) -> dict:
    """The flags of ``schedule weight_decay = megatron.OptimizerParamScheduler.get_wd(...)``
    (on the lr's clock): Megatron-LM passes ``wd_incr_steps = --train-samples``."""
    node = call.others.get("weight_decay")
    if node is None:
        return {}
    inner = on_samples(node)
    if (inner is not None) != call.on_samples:
        raise SchedlangError("the weight decay and the lr count different things: Megatron steps both "
                             "by the same samples", node.span,
                             hint="write both on_samples(...), or neither")
    node = inner if inner is not None else node
    if not (isinstance(node, ir.Call) and node.func.id == "megatron.OptimizerParamScheduler.get_wd"):
        raise SchedlangError("megatron-args exports a weight decay written as one "
                             "megatron.OptimizerParamScheduler.get_wd(...) call", node.span,
                             hint="export the lr alone (--schedule lr)")
    builtin = PRESETS[node.func.id]
    given = {a.name: arg for a, arg in zip(builtin.args, node.args)}
    given.update({kw.name: kw.value for kw in node.keywords})
    style = given.get("wd_incr_style")
    style = style.value if isinstance(style, ir.String) else "constant"
    start = call.value(given["start_wd"], "start_wd") if "start_wd" in given else None
    end = call.value(given["end_wd"], "end_wd") if "end_wd" in given else None
    flags = {"--train-samples": _samples(call, "wd_incr_steps", given["wd_incr_steps"])}
    if style == "constant":
        if start is not None and end is not None and start != end:
            raise SchedlangError("a constant weight decay has one value; Megatron-LM uses --weight-decay "
                                 "for both ends", node.span)
        value = start if start is not None else end
        if value is not None:
            flags["--weight-decay"] = _number_text(value)
        return flags
    flags["--weight-decay-incr-style"] = style
    flags["--start-weight-decay"] = _number_text(start)
    flags["--end-weight-decay"] = _number_text(end)
    return flags


def _megatron_batch(call: _Call) -> tuple[dict, list[str]]:
    """The batch flags of the file's ``batch = ...`` when the lr is ``on_samples(...)``."""
    batches = [s for s in call.module.statements if isinstance(s, ir.BatchDecl)]
    if not batches:
        return {}, []
    decl = batches[0]
    clocked = call.program.clock is not None and not call.program.clock.constant
    if not call.on_samples:
        if clocked:
            raise SchedlangError("under a changing batch Megatron's scheduler counts samples: its lr is "
                                 "on_samples(megatron.OptimizerParamScheduler(...))", call.node.span,
                                 hint="lengths in samples, as `schedlang import --format megatron-args` "
                                      "writes them")
        return {}, []
    node = decl.value
    seq_len = call.param("seq_len")
    if isinstance(node, ir.Call) and node.func.id == "megatron.step_batch_size_schedule":
        text = node.args[0] if node.args else next(k.value for k in node.keywords if k.name == "schedule")
        flags = {}
        length = next((k.value for k in node.keywords if k.name == "seq_length"), None)
        length = call.value(length, "seq_length") if length is not None else seq_len
        if length is not None:
            flags["--seq-length"] = _number_text(length)
        if "'" in text.value:
            raise SchedlangError("the schedule has a quote, which a command line cannot carry here",
                                 text.span)
        flags["--step-batch-size-schedule"] = f"'{text.value}'"
        return flags, ["# --step-batch-size-schedule: Megatron-LM main (megatron-core 0.18 and later)."]
    if isinstance(node, ir.Call) and node.func.id == "megatron.rampup_batch_size":
        names = ("start", "increment", "samples", "global_batch_size")
        given = dict(zip(names + ("micro_batch_size", "data_parallel_size"), node.args))
        given.update({k.name: k.value for k in node.keywords})
        for extra in ("micro_batch_size", "data_parallel_size"):
            if extra in given:
                raise SchedlangError(f"Megatron-LM takes '{extra}' from the parallel layout, not from a "
                                     "schedule flag", given[extra].span, hint="drop it to export")
        values = [_number_text(call.value(given[name], name)) for name in names]
        flags = {"--rampup-batch-size": " ".join(values[:3]), "--global-batch-size": values[3]}
        if seq_len is not None:
            flags["--seq-length"] = _number_text(seq_len)
        return flags, ["# --rampup-batch-size: megatron-core 0.17 and earlier; megatron-core 0.18 and",
                       "# later (Megatron-LM main) accept it and ignore it (a constant batch)."]
    if not clocked:  # batch = N
        return {"--global-batch-size": str(call.program.clock.batch_at(0))}, []
    raise SchedlangError("Megatron-LM takes a changing batch as --step-batch-size-schedule (or, before "
                         "megatron-core 0.18, --rampup-batch-size)", node.span,
                         hint='write batch = megatron.step_batch_size_schedule("0:16 2.4B:320") '
                              "(thresholds floor to samples as Megatron's do)")
