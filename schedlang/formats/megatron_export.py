"""``.sched`` -> Megatron-LM's scheduler flags (``schedlang export --format megatron-args``): the
writer of the ``megatron-args`` format, a module of its own beside its reader (``megatron_args``,
which declares the format and hands this writer its reader for the proof) because the two
together pass the 800-line limit of a module."""

from __future__ import annotations

from ..errors import SchedlangError
from ..library.presets import PRESETS
from ..syntax import ir
from .common.numbers import exact
from .common.preset_call import PresetCall, number_text, on_samples
from .common.proof import proven

#: ``megatron.OptimizerParamScheduler`` keyword -> Megatron-LM flag, in samples: the class's
#: ``num_steps`` counts samples, so the flags name exactly the class's own lengths.
_MEGATRON_FLAGS = {"max_lr": "--lr", "min_lr": "--min-lr", "init_lr": "--lr-warmup-init",
                   "lr_warmup_steps": "--lr-warmup-samples", "lr_decay_steps": "--lr-decay-samples",
                   "lr_decay_style": "--lr-decay-style", "wsd_decay_steps": "--lr-wsd-decay-samples",
                   "lr_wsd_decay_style": "--lr-wsd-decay-style"}


def export(source, filename="<string>", params=None, verify=True, schedules=None, *, read) -> str:
    """Megatron-LM scheduler flags (sample-based, one per line) for one
    ``megatron.OptimizerParamScheduler`` call, its ``get_wd`` weight decay if the file has one
    (``--train-samples`` is its ``wd_incr_steps``, else the decay length), and the batch flags of
    a file whose lr is ``on_samples(...)`` under ``batch = megatron.step_batch_size_schedule(...)``
    (``--step-batch-size-schedule``, ``--seq-length``), ``megatron.rampup_batch_size(...)``
    (``--rampup-batch-size``, ``--global-batch-size``) or a constant ``batch = N``
    (``--global-batch-size``): the form ``import --format megatron-args`` writes."""
    wanted = ("weight_decay",) if not schedules or "weight_decay" in schedules else ()
    call = PresetCall(source, filename, params, "megatron-args",
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
            flags[flag] = number_text(call.number(name))
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
        proven(call.program, text, read, filename, params=params,
               schedules=["lr", *call.others])
    return text


def _warmup_fraction(call: PresetCall, flags: dict) -> None:
    """A warmup of a fractional number of samples as ``--lr-warmup-fraction`` (Megatron-LM
    multiplies it by the decay samples), when a decimal fraction gives it exactly."""
    if flags.get("--lr-warmup-samples", "") is not None:
        return
    del flags["--lr-warmup-samples"]
    node = call.given["lr_warmup_steps"]
    warmup = call.value(node, "lr_warmup_steps")
    decay = call.value(call.given["lr_decay_steps"], "lr_decay_steps")
    fraction = number_text(warmup / decay)
    if exact(fraction) * decay != warmup:
        _samples(call, "lr_warmup_steps", node)  # refused: not a whole number of samples
    flags["--lr-warmup-fraction"] = fraction


def _samples(call: PresetCall, name: str, node: ir.Node) -> str:
    value = call.value(node, name)
    if not value.is_Integer:
        raise SchedlangError(f"'{name}' is {number_text(value)} samples; Megatron-LM's sample "
                             "flags are whole numbers", node.span)
    return number_text(value)


def _megatron_wd(call: PresetCall) -> dict:
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
            flags["--weight-decay"] = number_text(value)
        return flags
    flags["--weight-decay-incr-style"] = style
    flags["--start-weight-decay"] = number_text(start)
    flags["--end-weight-decay"] = number_text(end)
    return flags


def _megatron_batch(call: PresetCall) -> tuple[dict, list[str]]:
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
        return _step_schedule_flags(call, node, seq_len)
    if isinstance(node, ir.Call) and node.func.id == "megatron.rampup_batch_size":
        return _rampup_flags(call, node, seq_len)
    if not clocked:  # batch = N
        return {"--global-batch-size": str(call.program.clock.batch_at(0))}, []
    raise SchedlangError("Megatron-LM takes a changing batch as --step-batch-size-schedule (or, before "
                         "megatron-core 0.18, --rampup-batch-size)", node.span,
                         hint='write batch = megatron.step_batch_size_schedule("0:16 2.4B:320") '
                              "(thresholds floor to samples as Megatron's do)")


def _step_schedule_flags(call: PresetCall, node: ir.Call, seq_len) -> tuple[dict, list[str]]:
    """``megatron.step_batch_size_schedule(...)`` as ``--step-batch-size-schedule`` (and ``--seq-length``)."""
    text = node.args[0] if node.args else next(k.value for k in node.keywords if k.name == "schedule")
    flags = {}
    length = next((k.value for k in node.keywords if k.name == "seq_length"), None)
    length = call.value(length, "seq_length") if length is not None else seq_len
    if length is not None:
        flags["--seq-length"] = number_text(length)
    if "'" in text.value:
        raise SchedlangError("the schedule has a quote, which a command line cannot carry here",
                             text.span)
    flags["--step-batch-size-schedule"] = f"'{text.value}'"
    return flags, ["# --step-batch-size-schedule: Megatron-LM main (megatron-core 0.18 and later)."]


def _rampup_flags(call: PresetCall, node: ir.Call, seq_len) -> tuple[dict, list[str]]:
    """``megatron.rampup_batch_size(...)`` as ``--rampup-batch-size`` and ``--global-batch-size``."""
    names = ("start", "increment", "samples", "global_batch_size")
    given = dict(zip(names + ("micro_batch_size", "data_parallel_size"), node.args))
    given.update({k.name: k.value for k in node.keywords})
    for extra in ("micro_batch_size", "data_parallel_size"):
        if extra in given:
            raise SchedlangError(f"Megatron-LM takes '{extra}' from the parallel layout, not from a "
                                 "schedule flag", given[extra].span, hint="drop it to export")
    values = [number_text(call.value(given[name], name)) for name in names]
    flags = {"--rampup-batch-size": " ".join(values[:3]), "--global-batch-size": values[3]}
    if seq_len is not None:
        flags["--seq-length"] = number_text(seq_len)
    return flags, ["# --rampup-batch-size: megatron-core 0.17 and earlier; megatron-core 0.18 and",
                   "# later (Megatron-LM main) accept it and ignore it (a constant batch)."]
