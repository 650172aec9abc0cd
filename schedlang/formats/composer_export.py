"""Composer / llm-foundry YAML's writer (``schedlang export --format composer-yaml``): a
``.sched`` schedule as the one Composer scheduler it is, proven equal when read back; the reader
and the declaration are ``composer_yaml``."""

from __future__ import annotations

import copy

from ..core.algebra import bind
from ..errors import SchedlangError
from ..library.stdlib import STEP_KINDS, Kind
from ..syntax import ir
from .common.by_proof import every
from .common.into import Original, document, dumped
from .common.preset_call import PresetCall, number_text
from .common.proof import proven
from .common.source_text import comment_safe
from .composer_names import EXPORT_NAMES

# -- the writer (``schedlang export --format composer-yaml``) ------------------------------------


def export(source, filename="<string>", params=None, verify=True, schedules=None, *, read,
           into=None) -> str:
    """An llm-foundry ``scheduler:`` block (``optimizer: {lr}``, ``max_duration`` when ``dur`` needs it)."""
    call = PresetCall(source, filename, params, "composer-yaml",
                  "composer.CosineAnnealingWithWarmupScheduler(t_warmup=100ba, lr=6e-4)",
                  writes=every("composer"))
    keys = _keys(call)
    title = f"# Written by `schedlang export --format composer-yaml` from {comment_safe(str(filename))}."
    if into is None:
        text = "\n".join([title, "# Proved alone: every other key at Composer's / llm-foundry's default (no",
                          "# scale_schedule_ratio); put these keys in your run's YAML in place of its own.",
                          *keys]) + "\n"
        merged = text
    else:
        merged = _merged(into, "\n".join(keys) + "\n")
        text = "\n".join([title, *_merged_notes(into), *keys]) + "\n"
    if verify:
        proven(call.program, merged, read, into.filename if into is not None else filename, params=params,
               schedules=["lr"], into=into.filename if into is not None else None)
    return text


def _keys(call: PresetCall) -> list[str]:
    """The YAML written, a line each: the optimizer's lr, the ``scheduler:`` block, the batch keys
    of a schedule in samples or tokens and ``max_duration`` (the run's, or the one ``dur`` reads)."""
    cls = call.name.split(".", 1)[1]
    lines = ["scheduler:", f"  name: {EXPORT_NAMES.get(cls, cls)}"]
    spec = {a.name: a for a in call.builtin.args}
    uses_dur = any(a.kind in STEP_KINDS and a.name not in call.given and "dur" in str(a.default)
                   for a in call.builtin.args)
    for name, node in call.given.items():
        if name != "lr":
            lines.append(f"  {name}: {_value(call, spec[name], node)}")
            uses_dur |= spec[name].kind in STEP_KINDS and isinstance(node, ir.Duration) and node.unit == "dur"
    if "lr" in call.given:  # read after the arguments, so that their errors come first
        lines = ["optimizer:", f"  lr: {number_text(call.number('lr'))}", *lines]
    batch_keys = _batch_keys(call)
    lines += batch_keys
    run = _max_duration_of_run(call, uses_dur, bool(batch_keys))
    if run is not None:
        lines.append(f"max_duration: {run}")
    elif uses_dur:
        total = call.param("max_duration")
        if total is None:
            raise SchedlangError("a 'dur' time needs max_duration bound", call.node.span,
                                 hint="bind it with -D max_duration=... (batches)")
        lines.append(f"max_duration: {int(total)}ba")
    return lines


def _merged_notes(into: Original) -> list[str]:
    """What a file proven merged into ``into`` says of its keys."""
    return [f"# Proved merged into {comment_safe(into.filename)}: these keys take the place of its",
            "# scheduler / schedulers block (top level or under trainer:), its optimizer's lr and",
            "# whichever of max_duration, global_train_batch_size, max_seq_len are written here",
            "# (where it has them); its other keys are kept."]


def _max_duration_of_run(call: PresetCall, uses_dur: bool, on_clock: bool) -> str | None:
    """The file's ``run = ...`` as ``max_duration`` (None: no run): in batches, or as written in
    samples or tokens when the written keys carry the batch that counts them (``on_clock``); a
    ``dur`` time counts against ``max_duration``, so the run must be the ``max_duration`` it reads."""
    steps = call.run()
    if steps is None:
        return None
    length = call.program.run_length
    if uses_dur:
        total = call.param("max_duration")
        if length.unit is not None or total is None or int(total) != steps:
            shown = "unbound" if total is None else f"{int(total)} batches"
            raise SchedlangError(f"Composer's 'dur' counts against max_duration, the run's length; this run "
                                 f"is {steps} steps and max_duration is {shown}", length.span,
                                 hint="write run = max_duration (batches)")
    if length.unit is not None and on_clock:
        return f"{number_text(length.amount.xreplace(call.program.substitutions))}{length.unit}"
    return f"{steps}ba"


def _merged(into: Original, body: str) -> str:
    """The original run YAML with the written keys (``body``) put in: the scheduler block replaced
    wherever it is (two would be refused, as Composer's last-one-wins LambdaLRs), the lr set in the
    original's own optimizer, the run-length and batch keys replaced where the original has them."""
    import yaml  # lazy: PyYAML (the writer already needs it to read back)

    data = copy.deepcopy(document(into))
    written = yaml.safe_load(body)
    trainer = data.get("trainer") if isinstance(data.get("trainer"), dict) else {}
    for holder in (data, trainer):
        for key in ("scheduler", "schedulers"):
            holder.pop(key, None)
    data["scheduler"] = written["scheduler"]
    if "optimizer" in written:
        lr = written["optimizer"]["lr"]
        optimizers = data.get("optimizers")
        if isinstance(data.get("optimizer"), dict):
            data["optimizer"]["lr"] = lr
        elif isinstance(optimizers, dict) and len(optimizers) == 1 \
                and isinstance(next(iter(optimizers.values())), dict):
            next(iter(optimizers.values()))["lr"] = lr
        else:
            data["optimizer"] = {"lr": lr}
    variables = data.get("variables") if isinstance(data.get("variables"), dict) else {}
    for key in ("max_duration", "global_train_batch_size", "max_seq_len"):
        if key in written:
            holder = next((h for h in (data, trainer, variables) if key in h), data)
            holder[key] = written[key]
    return dumped(into, data)


def _value(call: PresetCall, arg, node: ir.Node) -> str:
    """A keyword's YAML value: a time, a list of times (milestones), a flag or a number."""
    if arg.kind in STEP_KINDS:
        return _time(call, arg.name, node)
    if arg.kind == Kind.VALUES:
        if not isinstance(node, ir.List):
            raise SchedlangError("write the milestones as a list [...] to export them", node.span)
        return f"[{', '.join(_time(call, arg.name, item) for item in node.items)}]"
    if arg.kind == Kind.FLAG:
        return "true" if call.lowered.argument(call.builtin, arg, node) else "false"
    return number_text(call.number(arg.name))


def _batch_keys(call: PresetCall) -> list[str]:
    """``global_train_batch_size`` (and ``max_seq_len``) of a file whose lengths count samples or
    tokens: the batch that turns them back into the run's clock on import.  Composer has no batch
    ramp, so the batch must be constant."""
    units = {n.unit for n in ir.walk(call.node) if isinstance(n, ir.Duration) and n.unit in ("sp", "tok")}
    decl = _batch_decl(call)
    if not units or decl is None:
        return []
    clock = call.program.clock
    if len(clock.stages) != 1:
        raise SchedlangError("Composer has no batch ramp: a file whose batch changes has no "
                             "composer-yaml export", decl.span,
                             hint="export a run with a constant `batch = N`")
    lines = [f"global_train_batch_size: {clock.stages[0].batch}"]
    if "tok" in units:
        lines.append(f"max_seq_len: {clock.seq_len}")
    return lines


def _batch_decl(call: PresetCall) -> ir.BatchDecl | None:
    return next((s for s in call.module.statements if isinstance(s, ir.BatchDecl)), None)


def _time(call: PresetCall, name: str, node: ir.Node) -> str:
    if isinstance(node, ir.Duration):
        if node.unit in ("sp", "tok") and _batch_decl(call) is not None:  # a count on the run's clock
            return f"{int(node.value)}{node.unit}"
        if node.unit not in ("ba", "ep", "dur"):
            raise SchedlangError(f"'{node.text}' has no Composer-YAML import", node.span,
                                 hint="a length in samples or tokens exports from a file that "
                                      "declares its batch (`batch = N`)")
        return node.text
    segment = call.lowered.segment(node, "a number")
    value = bind(segment.expr, call.program.substitutions)
    if value.free_symbols or not value.is_Integer:
        raise SchedlangError(f"'{name}' must be a whole number of batches to export", node.span,
                             hint="bind its parameters with -D, or write it as 100ba / 0.1dur")
    return f"{int(value)}ba"
