"""``.sched`` -> Megatron-LM's scheduler flags (``schedlang export --format megatron-args``): the
writer of the ``megatron-args`` format, a module of its own beside its reader (``megatron_args``,
which declares the format and hands this writer its reader for the proof) because the two
together pass the 800-line limit of a module."""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ..errors import SchedlangError
from ..library.presets import PRESETS
from ..syntax import ir
from .common.into import Original, blanked, offset, original, where
from .common.numbers import exact
from .common.preset_call import PerGroup, PresetCall, number_text, on_samples
from .common.proof import proven
from .common.source_text import comment_safe

#: ``megatron.OptimizerParamScheduler`` keyword -> Megatron-LM flag; a length's flag ends in the
#: run's unit (``-iters`` or ``-samples``, ``_Run``).
_MEGATRON_FLAGS = {"max_lr": "--lr", "min_lr": "--min-lr", "init_lr": "--lr-warmup-init",
                   "lr_warmup_steps": "--lr-warmup-", "lr_decay_steps": "--lr-decay-",
                   "lr_decay_style": "--lr-decay-style", "wsd_decay_steps": "--lr-wsd-decay-",
                   "lr_wsd_decay_style": "--lr-wsd-decay-style"}
#: The flags of the lr schedule: the export states it in full, so an original's occurrence of any
#: of them that the export does not write is removed by the merge (Megatron's default applies).
_LR_KEYS = ("lr", "min_lr", "lr_warmup_init", "lr_warmup_fraction", "lr_warmup_iters", "lr_warmup_samples",
            "lr_decay_iters", "lr_decay_samples", "lr_decay_style", "lr_wsd_decay_iters",
            "lr_wsd_decay_samples", "lr_wsd_decay_style", "decoupled_lr", "decoupled_min_lr")
#: The tag of the param groups ``--decoupled-lr`` gives their own lr (``schedule lr__decoupled``):
#: the embedding and output layers (megatron-core's ``is_embedding_or_output_parameter``).
DECOUPLED = "decoupled"
_GROUPS = PerGroup((DECOUPLED,), "Megatron-LM's flags give a param group an lr of its own only for the "
                   "embedding and output layers (--decoupled-lr, --decoupled-min-lr: schedule "
                   "lr__decoupled); --optimizer muon runs Muon and its Adam on the one --lr schedule, and "
                   "megatron-core's other ParamGroupOverrides are set in Python (the config_overrides of "
                   "get_megatron_optimizer), never by a flag")
_SHARED = ("megatron-core's ParamGroupOverride gives a group its own max_lr and min_lr, and every group "
           "shares the warmup (from --lr-warmup-init), the lengths and the decay style")
_WD_KEYS = ("weight_decay", "start_weight_decay", "end_weight_decay", "weight_decay_incr_style")
_BATCH_KEYS = ("global_batch_size", "rampup_batch_size", "step_batch_size_schedule",
               "decrease_batch_size_if_needed")


@dataclass
class _Run:
    """The run the flags are written for: the unit of the flags' lengths (``iters`` or
    ``samples``), the factor from the file's lengths to it, what the file's t counts, and the
    original command (``export --into``) with its batch."""

    unit: str = "iters"
    factor: sp.Expr = sp.Integer(1)
    t_unit: str = "iterations"
    original: Original | None = None
    args: object = None  # the original's ``megatron_args.Args``
    batch: int | None = None  # the original's constant --global-batch-size
    fraction: bool = False  # the original writes its warmup as --lr-warmup-fraction


def export(source, filename="<string>", params=None, verify=True, schedules=None, *, read,
           into=None, understand) -> str:
    """Megatron-LM scheduler flags (one per line) for one ``megatron.OptimizerParamScheduler``
    call, its ``get_wd`` weight decay if the file has one (``--train-*`` is its ``wd_incr_steps``,
    else the decay length), and the batch flags of a file whose lr is ``on_samples(...)`` under
    ``batch = megatron.step_batch_size_schedule(...)`` (``--step-batch-size-schedule``,
    ``--seq-length``), ``megatron.rampup_batch_size(...)`` (``--rampup-batch-size``,
    ``--global-batch-size``) or a constant ``batch = N`` (``--global-batch-size``): the form
    ``import --format megatron-args`` writes.

    Lengths are written in the run's unit (``_run``): a file whose t counts iterations as
    ``--train-iters`` / ``--lr-*-iters``, or, ``into`` a command that trains by samples, as
    ``--train-samples`` / ``--lr-*-samples`` = iterations times its ``--global-batch-size``; a file
    on the sample clock in samples.  The proof reads the flags back merged into ``into`` (the
    original's schedule flags replaced, its others kept), or alone, where every other flag keeps
    Megatron-LM's default; the output says which.  ``understand(text, filename)`` is the reader's
    ``(args, plan, constant batch)`` of a command (``megatron_args.understood``, handed over by the
    format's declaration so that this module imports no reader)."""
    call = _call(source, filename, params, schedules)
    run = _run(call, original(into), understand)
    flags = _decoupled(call, _lr_flags(call, run))
    train = _train(call, run)
    _train_flag(call, run, flags, train)
    _warmup_fraction(call, flags, run)
    flags.update(_wd_flags(call, run, train))
    batch_flags, head = _megatron_batch(call)
    flags.update(batch_flags)
    merged, replaced = _merged(run, flags)
    text = _command(filename, run, replaced, head, flags)
    read_back = merged if run.original is not None else text  # what the proof imports
    _check_clock(call, run, read_back, understand)
    if verify:
        proven(call.program, read_back, read, filename, params=params,
               schedules=["lr", *call.others, *(f"lr__{t}" for t in call.groups)],
               into=run.original.filename if run.original is not None else None)
    return text


def _call(source, filename, params, schedules) -> PresetCall:
    """The file's ``megatron.OptimizerParamScheduler(...)`` lr (and its weight decay unless the
    export names schedules without it)."""
    wanted = ("weight_decay",) if not schedules or "weight_decay" in schedules else ()
    call = PresetCall(source, filename, params, "megatron-args",
                      'megatron.OptimizerParamScheduler(max_lr=3e-4, min_lr=3e-5, lr_warmup_steps=2000, '
                      'lr_decay_steps=100000, lr_decay_style="cosine")', others=wanted,
                      writes=("megatron.OptimizerParamScheduler",), groups=_GROUPS)
    if call.name != "megatron.OptimizerParamScheduler":
        raise SchedlangError(f"{call.name} is not a scheduler Megatron-LM configures by flags",
                             call.node.span, hint="export the lr: megatron.OptimizerParamScheduler(...)")
    return call


def _lr_flags(call: PresetCall, run: _Run) -> dict:
    """The lr's flags, in the order of the call's keywords (``_MEGATRON_FLAGS``; the weight-decay
    and checkpoint keywords do not change the lr)."""
    flags = {}
    for name, node in call.given.items():
        flag = _MEGATRON_FLAGS.get(name)
        if flag is None:
            continue
        if flag.endswith("-"):
            flag += run.unit
        flags[flag] = _lr_value(call, run, name, node)
    return flags


def _lr_value(call: PresetCall, run: _Run, name: str, node: ir.Node) -> str | None:
    """One keyword's flag value; None for a warmup written as a fraction of the decay, if it is
    one (where the original writes it so, or it is no whole number: ``_warmup_fraction``)."""
    if isinstance(node, ir.String):
        return node.value
    if name == "lr_warmup_steps":
        whole = (call.value(node, name) * run.factor).is_Integer
        if run.fraction or not whole:
            return None
    if name.endswith("_steps"):
        return _length(call, name, node, run)
    return number_text(call.number(name))


def _train_flag(call: PresetCall, run: _Run, flags: dict, train: str | None) -> None:
    """``--train-*``: the file's run; without one the decay length, unless the original's stays."""
    if train is not None:
        flags[f"--train-{run.unit}"] = train
    elif not _keeps_train(run, call):
        flags[f"--train-{run.unit}"] = flags[f"--lr-decay-{run.unit}"]


def _wd_flags(call: PresetCall, run: _Run, train: str | None) -> dict:
    """The weight decay's flags; its ``wd_incr_steps`` is ``--train-*``, which must be the run's."""
    wd = _megatron_wd(call, run)
    if train is not None and "--weight-decay-incr-style" not in wd:
        wd.pop(f"--train-{run.unit}", None)  # a constant weight decay: its wd_incr_steps changes nothing
    if train is not None and wd.get(f"--train-{run.unit}", train) != train:
        raise SchedlangError(f"the run is --train-{run.unit} {train} but the weight decay's wd_incr_steps is "
                             f"{wd[f'--train-{run.unit}']}: Megatron-LM passes --train-{run.unit} as both",
                             call.program.run_length.span,
                             hint="make wd_incr_steps the run's length, or drop `run = ...`")
    return wd


def _command(filename, run: _Run, replaced: list[str], head: list[str], flags: dict) -> str:
    """The output: the comments saying what was written and proved, then the flags, one a line
    (after ``python pretrain_gpt.py`` when there is no original command)."""
    lines = [f"# Megatron-LM scheduler flags written by schedlang from {comment_safe(str(filename))}:",
             f"# lengths in {_UNIT_WORDS[run.unit]}, {_why(run)}.", *_proof_lines(run, replaced), *head]
    if run.original is None:
        lines.append("python pretrain_gpt.py \\")
    items = [f"    {flag} {value}" for flag, value in flags.items()]
    lines += [item + " \\" for item in items[:-1]] + items[-1:]
    return "\n".join(lines) + "\n"


_UNIT_WORDS = {"iters": "iterations", "samples": "samples"}


def _decoupled(call: PresetCall, flags: dict) -> dict:
    """``flags`` with ``--decoupled-lr`` (and ``--decoupled-min-lr`` where it is not ``--min-lr``)
    after ``--lr`` / ``--min-lr``, for a file with ``schedule lr__decoupled``: the lr's class with
    its own max and min lr, proven equal to that schedule (``PresetCall.group_values``)."""
    if DECOUPLED not in call.groups:
        return flags
    style = call.given.get("lr_decay_style")
    changed = {"max_lr": lambda s: s.peak}
    if not (isinstance(style, ir.String) and style.value == "constant"):  # constant never reads min_lr
        changed["min_lr"] = lambda s: s.floor
    values = call.group_values(DECOUPLED, changed, _SHARED)
    group = {"--decoupled-lr": number_text(values["max_lr"])}
    if "min_lr" in values and number_text(values["min_lr"]) != flags.get("--min-lr", "0"):
        group["--decoupled-min-lr"] = number_text(values["min_lr"])
    after = "--min-lr" if "--min-lr" in flags else "--lr"
    out = {}
    for flag, value in flags.items():
        out[flag] = value
        if flag == after:
            out.update(group)
    return out


def _why(run: _Run) -> str:
    if run.original is None:
        return ("as the file's t counts them" if run.unit == "iters" else
                "as OptimizerParamScheduler counts them (the lr is on_samples(...))")
    source = "--train-iters" if "train_iters" in run.args.flags else "--train-samples"
    if run.unit == "iters":
        return f"as {run.original.filename} trains ({source})"
    if run.t_unit == "iterations":
        return (f"as {run.original.filename} trains ({source}): the file's iterations times its "
                f"--global-batch-size {run.batch}")
    return f"as {run.original.filename} trains ({source}) and the file's t counts them"


def _proof_lines(run: _Run, replaced: list[str]) -> list[str]:
    if run.original is None:
        if run.unit == "iters":
            return ["# Proved alone, every other flag at Megatron-LM's default: in iterations the schedule",
                    "# is the same at any constant --global-batch-size (no --rampup-batch-size or",
                    "# --step-batch-size-schedule); add them to your pretrain command."]
        return ["# Proved alone, every other flag at Megatron-LM's default (the batch flags are",
                "# written here); add them to your pretrain command."]
    lines = [f"# Proved merged into {comment_safe(run.original.filename)}: these flags take the place of its",
             *("# " + line for line in _wrapped([comment_safe(r) for r in replaced]))]
    kept = [f"--{k.replace('_', '-')} {run.args.flags[k].text}" for k in (*_BATCH_KEYS, "seq_length",
                                                                          "train_iters", "train_samples")
            if k in run.args.flags and k.replace("_", "-") not in " ".join(replaced)]
    lines.append("# its other flags are kept" + (f" ({comment_safe(', '.join(kept))})." if kept else "."))
    return lines


def _wrapped(items: list[str], width: int = 96) -> list[str]:
    """``a, b, c;`` in lines of at most ``width``, never inside an item (``--lr (1:60)``)."""
    lines = [""]
    for i, item in enumerate(items):
        item += ";" if i == len(items) - 1 else ","
        if lines[-1] and len(lines[-1]) + 1 + len(item) > width:
            lines.append("")
        lines[-1] = f"{lines[-1]} {item}".lstrip()
    return lines


def _run(call: PresetCall, into: Original | None, understand) -> _Run:
    """The unit the flags are written in, for ``into`` (None: the file alone)."""
    if into is None:
        return _Run(unit="samples" if call.on_samples else "iters",
                    t_unit="samples" if call.on_samples else "iterations")
    args, p, batch = understand(into.text, into.filename)
    mode = "iters" if "train_iters" in args.flags else "samples"
    run = _Run(original=into, args=args, batch=batch, fraction="lr_warmup_fraction" in args.flags)
    if p.batch is not None and not call.on_samples:
        flag = "step_batch_size_schedule" if "step_batch_size_schedule" in args.flags else "rampup_batch_size"
        at = args.flags[flag].span
        raise SchedlangError(f"{into.filename} changes its batch (--{flag.replace('_', '-')} at "
                             f"{where(at)}): Megatron steps its scheduler by each iteration's batch, and "
                             "this file's lr counts iterations", call.node.span,
                             hint="import the run again: its lr is on_samples(megatron."
                                  "OptimizerParamScheduler(...)) with lengths in samples")
    if call.on_samples:
        run.unit, run.t_unit = "samples", "samples"
    elif p.per_iteration:
        run.unit = mode
        run.factor = sp.Integer(1) if mode == "iters" else sp.Integer(batch)
    else:  # the original's import counts samples (inverse-square-root's clamps, or no batch)
        run.t_unit = "samples"
        run.unit = mode
        run.factor = sp.Integer(1) if mode == "samples" else sp.Rational(1, batch)
    return run


def _train(call: PresetCall, run: _Run) -> str | None:
    """The file's ``run = ...`` as ``--train-iters`` / ``--train-samples`` (None: the file has no
    run), the length Megatron-LM's ``update_train_iters`` turns back into the same iterations:
    the iterations, or times the constant ``--global-batch-size`` (``train_samples // G``); on the
    sample clock the run's length as written in samples, else the weight decay's ``wd_incr_steps``
    (Megatron-LM's ``--train-samples``), else the samples the run consumes; the proof reads the
    flags back and checks that they train the same iterations."""
    steps = call.run()
    if steps is None:
        return None
    if call.on_samples:
        length = call.program.run_length
        if length.unit == "sp":  # as written: the original's --train-samples
            return number_text(length.amount.xreplace(call.program.substitutions))
        wd = call.others.get("weight_decay")
        if wd is not None:  # Megatron passes --train-samples as wd_incr_steps: the import's own number
            return _megatron_wd(call, run)[f"--train-{run.unit}"]
        return number_text(sp.Integer(call.program.run_samples))
    value = steps * run.factor
    if not value.is_Integer:
        raise SchedlangError(f"the run of {steps} iterations is {number_text(value)} samples; "
                             f"--train-{run.unit} is a whole number", call.program.run_length.span)
    return number_text(value)


def _keeps_train(run: _Run, call: PresetCall) -> bool:
    """Whether the original's --train-* stays (same unit, and no weight decay writes it)."""
    return run.original is not None and f"train_{run.unit}" in run.args.flags \
        and "weight_decay" not in call.others


def _merged(run: _Run, flags: dict) -> tuple[str, list[str]]:
    """The original with the schedule's flags removed and ``flags`` put in their place (at the
    first removed one), and the removed occurrences (``--lr (1:60)``); without an original, ""."""
    if run.original is None:
        return "", []
    written = {flag[2:].replace("-", "_") for flag in flags}
    owned = set(_LR_KEYS) | written | {f"train_{u}" for u in ("iters", "samples") if u != run.unit}
    if f"train_{run.unit}" in written:
        owned.add(f"train_{run.unit}")
    if any(k in written for k in _BATCH_KEYS):
        owned |= set(_BATCH_KEYS)
    if any(k in written for k in _WD_KEYS):
        owned |= set(_WD_KEYS)
    gone = [(key, at, value) for key, at, value in run.args.occurrences if key in owned]
    replaced = [f"--{key.replace('_', '-')} ({where(at)})" for key, at, _ in gone]
    text = run.original.text
    blank = blanked(text, [(at, value or at) for _, at, value in gone])
    at = gone[0][1]  # --lr is always there: the import needs it
    cut = offset(text, at.line, at.column)
    yaml = run.original.filename.lower().endswith((".yaml", ".yml"))
    if yaml:  # one `--flag: value` line each, at the first removed key's indentation
        indent = "\n" + " " * (at.column - 1)
        inserted = indent.join(f"{flag}: {_yaml_value(value)}" for flag, value in flags.items()) + indent
    else:
        inserted = " ".join(f"{flag} {value}" for flag, value in flags.items()) + " "
    merged = blank[:cut] + inserted + blank[cut:]
    return merged, replaced


def _yaml_value(value: str) -> str:
    if value.startswith("'"):
        return value
    if " " in value:
        return "[" + ", ".join(value.split()) + "]"
    return value


def _check_clock(call: PresetCall, run: _Run, merged: str, understand) -> None:
    """The merged command's import counts what the file's t counts, or the file cannot be
    written for that run (inverse-square-root's clamps are in samples)."""
    try:
        _, p, _ = understand(merged, run.original.filename if run.original is not None else "flags.sh")
    except SchedlangError:
        return  # the proof reports it, located
    per_sample = p.batch is None and not p.per_iteration
    if run.t_unit == "iterations" and per_sample:
        node = call.given.get("lr_warmup_steps", call.node)
        at = (f"at --global-batch-size {run.batch} of {run.original.filename}" if run.original is not None
              else "at any --global-batch-size but 1")
        raise SchedlangError("inverse-square-root with less than one iteration of warmup: Megatron-LM clamps "
                             f"max(W, 1) and max(n, 1) in samples, so {at} the run is not this "
                             "per-iteration schedule", node.span,
                             hint="a warmup of at least one iteration; or import the run again, per sample, "
                                  "and export that with --into the command")


def _warmup_fraction(call: PresetCall, flags: dict, run: _Run) -> None:
    """A warmup as ``--lr-warmup-fraction`` (Megatron-LM multiplies it by the decay length), when a
    decimal fraction gives it exactly: where it is no whole number of the unit, or where the
    original writes it so."""
    key = f"--lr-warmup-{run.unit}"
    if flags.get(key, "") is not None:
        return
    del flags[key]
    node = call.given["lr_warmup_steps"]
    warmup = call.value(node, "lr_warmup_steps")
    decay = call.value(call.given["lr_decay_steps"], "lr_decay_steps")
    fraction = number_text(warmup / decay)
    if exact(fraction) * decay != warmup:
        flags[key] = _length(call, "lr_warmup_steps", node, run)  # refused unless a whole number
        return
    flags["--lr-warmup-fraction"] = fraction


def _length(call: PresetCall, name: str, node: ir.Node, run: _Run) -> str:
    """A length of the file in the run's unit, a whole number as Megatron's flags are."""
    value = call.value(node, name) * run.factor
    if not value.is_Integer:
        raise SchedlangError(f"'{name}' is {number_text(value)} {_UNIT_WORDS[run.unit]} of the run; "
                             f"Megatron-LM's --*-{run.unit} flags are whole numbers", node.span)
    return number_text(value)


def _megatron_wd(call: PresetCall, run: _Run) -> dict:
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
    flags = {f"--train-{run.unit}": _length(call, "wd_incr_steps", given["wd_incr_steps"], run)}
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
