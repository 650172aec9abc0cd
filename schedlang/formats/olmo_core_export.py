"""The writer of ``--format olmo-core-json`` (``schedlang export``), and the names of OLMo-core
3.0.0's schedulers both directions read.

It goes back the way ``olmo_core_json`` reads: one ``olmo_core.*`` preset call becomes
``train_module.scheduler`` (every field that is not None, with its ``_CLASS_`` and ``type``, as
``Config.as_config_dict`` writes it; a ``SequentialScheduler``'s children and a
``ComposableScheduler``'s stages, and either's ``override_decay``, nested so), its lr
``train_module.optim.lr``, its ``t_max`` the trainer's ``trainer.max_duration`` and a shorter
``run`` the ``trainer.hard_stop``; a file whose batch is ``olmo_core.batch_size_schedule(...)``
(with the lr's ``batch_size_lr_factor``) becomes the ``BatchSizeSchedulerCallback``.  Each text
is proven by reading it back with the reader it is handed (``common/proof.py``), merged into the
original with ``--into``.  The writer imports no reader (the reader imports this module for the
names and the writer, as ``megatron_args`` does).
"""

from __future__ import annotations

import json

import sympy as sp

from ..errors import SchedlangError
from ..library.presets import PRESETS
from ..program import compile as compile_program
from ..syntax import ir
from ..syntax.parser import parse
from .common.into import document, dumped, offset
from .common.preset_call import PresetCall, json_number
from .common.proof import proven

MODULE = "olmo_core.optim.scheduler"
#: OLMo-core 3.0.0's schedulers with a preset of the same name, and their registered names.
REGISTERED = {"constant": "ConstantScheduler", "constant_with_warmup": "ConstantWithWarmup", "wsd": "WSD",
              "power_lr": "PowerLR", "linear_with_warmup": "LinearWithWarmup",
              "inv_sqrt_with_warmup": "InvSqrtWithWarmup", "cos_with_warmup": "CosWithWarmup",
              "half_cos_with_warmup": "HalfCosWithWarmup",
              "cos_with_warmup_and_linear_decay": "CosWithWarmupAndLinearDecay", "wsds": "WSDS",
              "exponential": "ExponentialScheduler"}
CLASSES = tuple(REGISTERED.values())
COMPOSITE = {"composable": "ComposableScheduler", "sequential": "SequentialScheduler"}
#: The classes whose own ``t_max`` field replaces the trainer's.
OWN_T_MAX = ("LinearWithWarmup", "CosWithWarmup", "HalfCosWithWarmup")


#: Where a Duration is written in config.json (``as_config_dict`` marks the dataclass).
DURATION = "olmo_core.train.common.Duration"


def export(source, filename="<string>", params=None, verify=True, schedules=None, *, read,
           into=None) -> str:
    """config.json keys of one ``olmo_core.*`` preset call and the file's ``run``:
    ``train_module.scheduler`` (the class's fields, ``_CLASS_`` and ``type``),
    ``train_module.optim.lr`` and ``trainer.max_duration`` (the trainer's ``t_max``: the preset's
    ``t_max`` in its units), with ``trainer.hard_stop`` where the run ends before it.  On the token
    clock the batch is ``data_loader.global_batch_size`` (tokens) and ``dataset.sequence_length``.

    ``into`` (the config.json the file came from): that document with the scheduler replaced
    whole, the optimizer's lr and the durations set (its ``hard_stop`` removed where the run is
    the horizon), proven so; its batch must be the file's.  Without it the keys alone."""

    text_in = source.decode("utf-8") if isinstance(source, bytes) else source
    stripped, ramp = _without_factor(text_in, filename)
    call = PresetCall(stripped, filename, params, "olmo_core",
                      "olmo_core.CosWithWarmup(lr=3e-4, t_max=10000, warmup=2000)",
                      writes=tuple(f"olmo_core.{name}" for name in CLASSES))  # a file no call: by proof
    name = call.name.split(".", 1)[1]
    if ramp is not None and ramp[1] is None and not own_lr(call):
        raise SchedlangError("OLMo-core's BatchSizeSchedulerCallback scales the initial lr by sqrt(new / "
                             "old) at each batch change, and this lr is not multiplied by that factor",
                             ramp[0].span,
                             hint="write the lr as the scheduler * olmo_core.batch_size_lr_factor(...), as "
                                  "the import does, or as an olmo_core.ComposableScheduler whose every stage "
                                  "gives start_lr (the first) and end_lr: it never reads the initial lr")
    if name not in CLASSES and name not in COMPOSITE.values():
        written = (*CLASSES, *COMPOSITE.values())
        raise SchedlangError(f"{call.name} is not written to config.json by this export", call.node.span,
                             hint="one of " + ", ".join(f"olmo_core.{c}" for c in written))
    block, t_max = _given_fields(call)
    _defaults(block, name, call.given)
    lr = json_number(call.number("lr")) if "lr" in call.given else 1
    tokens = block["units"] == "tokens"
    program = call.program
    callback = _callback(ramp, call) if ramp is not None else None
    if callback is not None:
        clock = (callback["batch_sizes"][0], program.clock.seq_len)
    else:
        clock = _batch(program, call) if tokens or _run_unit(program) == "tok" else None
    run = call.run()
    horizon, stop = _durations(name, t_max, run, program, clock, block, call, callback is not None)
    block["_CLASS_"] = f"{MODULE}.{name}"
    block["type"] = next(k for k, v in {**REGISTERED, **COMPOSITE}.items() if v == name)
    for child in block.get("schedulers", ()):  # OLMo-core reads the sequence's units, not a child's
        child["units"] = block["units"]
    out = {"train_module": {"optim": {"lr": lr}, "scheduler": block},
           "trainer": {"max_duration": horizon, **({"hard_stop": stop} if stop else {})}}
    if callback is not None:
        out["trainer"]["callbacks"] = {"batchwup": callback}
        out["train_module"]["optim"]["_CLASS_"] = "olmo_core.optim.adamw.AdamWConfig"  # the callback's lr
    if ramp is not None:

        program = compile_program(text_in, params, filename)
    if into is not None:
        text = _merged(into, out, clock, call)
    else:
        if clock is not None:
            out = {"dataset": {"sequence_length": clock[1]}, "data_loader": {"global_batch_size": clock[0]},
                   **out}
        text = json.dumps(out, indent=2) + "\n"
    if verify:
        proven(program, text, read, into.filename if into is not None else filename, params=params,
               schedules=["lr"], into=into.filename if into is not None else None)
    return text


def _given_fields(call: PresetCall) -> tuple[dict, int | None]:
    """The scheduler block of the call's keywords but ``lr`` (each written as config.json holds
    it), and its ``t_max``, which is the trainer's duration rather than a field."""
    block: dict = {"lr_field": "lr", "initial_lr_field": "initial_lr", "units": "steps"}
    t_max = None
    for key, node in call.given.items():
        if key == "lr":
            continue
        if key in ("schedulers", "stages", "override_decay", "schedulers_max", "schedulers_max_steps"):
            _composite_field(block, key, node, call)
        elif isinstance(node, ir.String):
            block[key] = node.value
        elif isinstance(node, ir.List):
            block[key] = [json_number(call.value(item, key)) for item in node.items]
        elif key == "t_max":
            t_max = int(call.number(key))
        else:
            block[key] = json_number(call.number(key))
    return block, t_max


def _defaults(block: dict, name: str, given: dict) -> None:
    """The class's fields the call leaves at a default that is not None, written as
    ``as_config_dict`` writes them (a field left out is read as None, by OLMo-core's config.json
    convention); ``decay_fraction``'s 0.1 is None beside a ``decay``, as OLMo-core requires."""

    for a in PRESETS[f"olmo_core.{name}"].args:
        if a.name in block or a.name in given or a.name in ("lr", "t_max") or a.default is None:
            continue
        if a.name == "decay_fraction" and ({"decay", "decay_steps"} & set(given)):
            continue
        if isinstance(a.default, sp.Basic) and a.default.is_number:
            block[a.name] = json_number(a.default)


def _composite_field(block: dict, key: str, node, call) -> None:
    """A SequentialScheduler's or ComposableScheduler's field as ``as_config_dict`` writes it:
    each child scheduler a block of its own (``_CLASS_``, ``type``, its fields), each stage and the
    override a record with its ``_CLASS_``, ``schedulers_max`` without the last scheduler's maximum
    (which ``__post_init__`` drops), the deprecated ``schedulers_max_steps`` as the
    ``schedulers_max`` it is moved to."""
    if key == "override_decay":
        block[key] = _record(node, call, "OverrideDecay")
    elif key == "stages":
        block[key] = [_record(item, call, "ComposableSchedulerStage") for item in node.items]
    elif key == "schedulers":
        block[key] = [_child(item, call) for item in node.items]
    else:
        maxima = [int(call.value(item, key)) for item in node.items]
        count = len(call.given["schedulers"].items)
        block["schedulers_max"] = maxima[:count - 1] if len(maxima) == count else maxima


def _arguments(node, name: str) -> dict:
    if not isinstance(node, ir.Call) or node.func.id != name:
        raise SchedlangError(f"config.json writes a {name}(...) here", node.span)
    given = {a.name: arg for a, arg in zip(PRESETS[name].args, node.args)}
    given.update({kw.name: kw.value for kw in node.keywords})
    return given


def _record(node, call, kind: str) -> dict:
    """A ``ComposableSchedulerStage`` or ``OverrideDecay`` call as its config (the shape's
    default written, as ``as_config_dict`` writes every field that is not None)."""
    given = _arguments(node, f"olmo_core.{kind}")
    out: dict = {}
    for a in PRESETS[f"olmo_core.{kind}"].args:  # in the dataclass's order, as it writes them
        value = given.get(a.name)
        if a.name == "shape":
            out[a.name] = value.value if value is not None else "linear"
        elif value is not None:
            out[a.name] = json_number(call.value(value, a.name))
    return {**out, "_CLASS_": f"{MODULE}.{kind}"}


def _child(node, call) -> dict:
    """One scheduler of a SequentialScheduler as its block (its units set to the sequence's)."""
    name = node.func.id.split(".", 1)[1] if isinstance(node, ir.Call) else ""
    if name not in CLASSES:
        raise SchedlangError("each of schedulers is written to config.json as one of OLMo-core's plain "
                             "schedulers", node.span,
                             hint="one of " + ", ".join(f"olmo_core.{c}" for c in CLASSES))
    given = _arguments(node, node.func.id)
    out: dict = {"lr_field": "lr", "initial_lr_field": "initial_lr", "units": "steps"}  # the sequence's
    for key, value in given.items():
        if key in ("lr", "units"):
            continue  # not read of a child: the sequence passes its lr and counts in its units
        if isinstance(value, ir.String):
            out[key] = value.value
        elif isinstance(value, ir.List):
            out[key] = [json_number(call.value(item, key)) for item in value.items]
        else:
            out[key] = json_number(call.value(value, key))
    _defaults(out, name, given)
    return {**out, "_CLASS_": f"{MODULE}.{name}", "type": next(k for k, v in REGISTERED.items() if v == name)}


#: ``_CLASS_`` of OLMo-core's batch-size callback, as config.json names it.
CALLBACK = "olmo_core.train.callbacks.batch_size_scheduler.BatchSizeSchedulerCallback"


def _without_factor(text: str, filename: str):
    """A file whose batch is ``olmo_core.batch_size_schedule(...)`` and whose lr is a preset call
    times ``olmo_core.batch_size_lr_factor(...)`` is OLMo-core's BatchSizeSchedulerCallback: the
    text with the factor cut off (the preset call, for ``PresetCall``) and the two calls; any
    other file as it is, and None."""

    module = parse(text, filename)
    batch = next((s.value for s in module.statements if isinstance(s, ir.BatchDecl)), None)
    ramp = batch if isinstance(batch, ir.Call) and batch.func.id == "olmo_core.batch_size_schedule" else None
    decl = next((s for s in module.statements if isinstance(s, ir.ScheduleDecl) and s.name == "lr"), None)
    value = decl.value if decl is not None else None
    right = value.right if isinstance(value, ir.BinOp) and value.op == "*" else None
    factor = right if isinstance(right, ir.Call) and right.func.id == "olmo_core.batch_size_lr_factor" \
        else None
    if ramp is None and factor is None:
        return text, None
    if ramp is None:
        raise SchedlangError("the lr's olmo_core.batch_size_lr_factor(...) is OLMo-core's "
                             "BatchSizeSchedulerCallback's, and the file's batch is not its schedule",
                             factor.span, hint="declare `batch = olmo_core.batch_size_schedule(batch_sizes="
                                               "[...], schedule=[...])`, as the import does")
    if factor is None:  # an lr of its own stages (checked on the call): the callback's factor leaves it be
        return text, (ramp, None)
    start = offset(text, value.left.span.end_line, value.left.span.end_column)
    end = offset(text, value.span.end_line, value.span.end_column)
    return text[:start] + text[end:], (ramp, factor)


def own_lr(call) -> bool:
    """Whether a ``ComposableScheduler`` call never reads the initial lr: the first stage's
    ``start_lr`` and every stage's (and the override's) ``end_lr`` absolute, no fraction but 0."""
    if call.name != "olmo_core.ComposableScheduler" or "stages" not in call.given:
        return False
    records = [_arguments(item, "olmo_core.ComposableSchedulerStage") for item in call.given["stages"].items]
    if "override_decay" in call.given:
        records.append(_arguments(call.given["override_decay"], "olmo_core.OverrideDecay"))

    def fraction(given, key) -> bool:
        return key in given and call.value(given[key], key) != 0

    first = records[0] if records else {}
    return bool(records) and ("start_lr" in first or "start_lr_fraction" in first) and not any(
        fraction(r, "start_lr_fraction") or fraction(r, "end_lr_fraction") for r in records)


def _callback(ramp, call) -> dict:
    """The BatchSizeSchedulerCallback block of ``olmo_core.batch_size_schedule(...)``."""

    batch, factor = ramp
    names = ("batch_sizes", "schedule", "units")
    given = {**dict(zip(names, batch.args)), **{k.name: k.value for k in batch.keywords}}
    units = given["units"].value if "units" in given else "tokens"
    factor_units = units if factor is None else next(
        (k.value.value for k in factor.keywords if k.name == "units"), factor.args[0].value if factor.args
        else "tokens")
    if factor_units != units:
        raise SchedlangError(f"the lr factor counts {factor_units}, the batch schedule {units}", factor.span)
    sizes = [int(call.value(item, "batch_sizes")) for item in given["batch_sizes"].items]
    points = [json_number(call.value(item, "schedule")) for item in given["schedule"].items]
    return {"batch_sizes": sizes, "schedule": [_duration(p, units) for p in points], "enabled": True,
            "_CLASS_": CALLBACK}


def _run_unit(program) -> str | None:
    return program.run_length.unit if program.run_length is not None else None


def _batch(program, call) -> tuple[int, int]:
    """(tokens a step, tokens a sample) of a constant batch; OLMo-core's data loader has one."""
    clock = program.clock
    if len(clock.table) != 1 or clock.seq_len is None:
        raise SchedlangError("OLMo-core's config.json states one batch in tokens: the file needs a constant "
                             "`batch` and `param seq_len`", call.node.span,
                             hint="a batch that changes is OLMo-core's BatchSizeSchedulerCallback: write it "
                                  "as olmo_core.batch_size_schedule(...), which the export writes as the "
                                  "callback")
    return clock.table[0][1] * clock.seq_len, clock.seq_len


def _duration(value: int, unit: str) -> dict:
    return {"value": value, "unit": unit, "_CLASS_": DURATION}


def _durations(name, t_max, run, program, clock, block, call, ramp=False):
    """``max_duration`` (the horizon the trainer gives the scheduler as ``t_max``) and the
    ``hard_stop`` that ends a shorter run, or the reason the run cannot be said.  A run longer
    than the horizon is said only by the classes with their own ``t_max`` field."""
    tokens = block["units"] == "tokens"
    horizon = None if t_max is None else _duration(t_max, "tokens" if tokens else "steps")
    if run is None:
        if horizon is None:
            raise SchedlangError("OLMo-core's trainer needs the run's length (max_duration)", call.node.span,
                                 hint="add `run = N` (steps, or Ntok) to the file")
        return horizon, None
    run_duration = _run_duration(run, program)
    if horizon is None or name == "WSDS":
        return run_duration, None
    if ramp:
        return _ramp_durations(horizon, run_duration, program)
    horizon_steps = -(-t_max // clock[0]) if tokens else t_max
    if run <= horizon_steps:
        return horizon, (None if run == horizon_steps else run_duration)
    if name in OWN_T_MAX:  # its own t_max field, and the run's length as max_duration
        block["t_max"] = t_max
        return run_duration, None
    raise SchedlangError(f"the run is {run} steps, longer than the horizon t_max gives the trainer "
                         f"({horizon_steps} steps): OLMo-core's max_duration is both",
                         call.given["t_max"].span,
                         hint="make t_max the run's length, or end the run within it")


def _run_duration(run: int, program) -> dict:
    """The file's ``run`` as a Duration: in tokens where it counts them, else its steps."""
    if _run_unit(program) == "sp":
        raise SchedlangError("OLMo-core's durations are in steps or tokens, not samples",
                             program.run_length.span, hint="write the run in steps or tok")
    if _run_unit(program) == "tok":
        return _duration(int(program.run_length.amount.xreplace(program.substitutions)), "tokens")
    return _duration(run, "steps")


def _ramp_durations(horizon: dict, run_duration: dict, program) -> tuple[dict, dict | None]:
    """With a batch-size schedule, the run and the horizon compared in one unit (their steps
    depend on every batch): the run ends at the horizon or before it, as its ``hard_stop``."""
    if run_duration["unit"] != horizon["unit"]:
        raise SchedlangError("with a batch-size schedule, give the run in the scheduler's units "
                             f"({horizon['unit']})", program.run_length.span)
    if run_duration["value"] <= horizon["value"]:
        return horizon, (None if run_duration["value"] == horizon["value"] else run_duration)
    raise SchedlangError("the run is longer than t_max, the trainer's max_duration",
                         program.run_length.span)


def _merged(into, out: dict, clock, call) -> str:
    """``out`` merged into the original config.json: the scheduler replaced whole (another class's
    fields would not fit), the optimizer's lr and the durations set (a ``hard_stop`` the run does
    not have removed: it would end the run early); its batch must be the file's."""

    data = document(into)
    module = data.get("train_module")
    trainer = data.get("trainer")
    if not isinstance(module, dict) or not isinstance(module.get("optim"), dict) \
            or not isinstance(trainer, dict):
        raise SchedlangError(f"{into.filename} has no train_module.optim and trainer: it is not an "
                             "OLMo-core config.json", call.node.span)
    if clock is not None and "callbacks" not in out["trainer"]:
        loader = data.get("data_loader") if isinstance(data.get("data_loader"), dict) else {}
        if loader.get("global_batch_size") != clock[0]:
            raise SchedlangError(f"the file's batch is {clock[0]} tokens a step, {into.filename}'s "
                                 f"global_batch_size {loader.get('global_batch_size')}", call.node.span,
                                 hint="the export writes the schedule and the run, not the data: make the "
                                      "batch the config's")
    module["optim"] = {**module["optim"], "lr": out["train_module"]["optim"]["lr"]}
    module["scheduler"] = out["train_module"]["scheduler"]
    trainer.pop("hard_stop", None)
    callbacks = trainer.get("callbacks") if isinstance(trainer.get("callbacks"), dict) else {}
    ramps = [k for k, v in callbacks.items() if isinstance(v, dict) and str(v.get("_CLASS_", "")).endswith(
        "BatchSizeSchedulerCallback") and v.get("enabled", True) is not False]
    added = out["trainer"].pop("callbacks", None)
    if ramps and added is None:
        raise SchedlangError(f"{into.filename} changes the batch (its BatchSizeSchedulerCallback), the file "
                             "does not", call.node.span,
                             hint="write the file's batch as olmo_core.batch_size_schedule(...), as the "
                                  "import does")
    if added is not None:
        trainer["callbacks"] = {**{k: v for k, v in callbacks.items() if k not in ramps},
                                (ramps[0] if ramps else "batchwup"): added["batchwup"]}
    trainer.update(out["trainer"])
    return dumped(into, data)
