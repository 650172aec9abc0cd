"""A DeepSpeed config's ``scheduler`` block -> ``.sched`` source (``--format deepspeed-json``).

The engine builds ``getattr(deepspeed.runtime.lr_schedules, type)(optimizer,
**params)`` and, for any other ``type``, ``getattr(torch.optim.lr_scheduler,
type)(optimizer, **params)``; so do we, with the ``deepspeed.*`` and ``torch.*``
presets.  The optimizer's lr (which ``WarmupLR`` without ``warmup_max_lr``,
``WarmupCosineLR`` and the torch schedulers use) is read from
``optimizer.params.lr``.  ``OneCycle`` also cycles the momentum (``betas[0]``)
when the optimizer has betas: that becomes ``schedule momentum``.

Hugging Face's Trainer fills ``"auto"`` values from its own arguments; here
each becomes a required parameter of the file (``-D warmup_num_steps=...``).
A parameter DeepSpeed would reject (``TypeError``) is refused at its key; an
unknown ``warmup_type`` is what DeepSpeed warns about and replaces by ``log``:
the import does the same, warns at the key, and says so in a comment naming the line.

The file is read with the safe YAML loader (JSON is YAML), so every error
points at the line and column of the offending key or value.
"""

from __future__ import annotations

import ast
import copy
import json
import re
from dataclasses import replace

from ..errors import SchedlangError, Span, did_you_mean, warn
from ..library.presets import PRESETS, Rejected
from ..library.stdlib import Kind
from ..syntax import ir, unparse
from .common.by_proof import every
from .common.format import Format, reader
from .common.into import Original, document, dumped
from .common.json_source import load
from .common.keys import json_keys
from .common.numbers import exact
from .common.preset_call import PerGroup, PresetCall, json_number
from .common.proof import proven
from .common.pyconfig.literal import Item, Module, Unread, bindings, ended_before, to_node, unfollowed
from .common.source_text import (
    PARAMETERS,
    choices_of,
    comment_safe,
    declared,
    expression_node,
    header,
    option_node,
)
from .common.statements import Noted, call, module, noted, param_stmt, schedule_stmt
from .common.symbols import Symbol
from .common.yaml_source import Node
from .core_text import core_module

DEEPSPEED = ("WarmupLR", "WarmupDecayLR", "WarmupCosineLR", "OneCycle", "LRRangeTest")
#: Optimizers whose param groups have ``betas`` (OneCycle cycles betas[0] only then).
WITH_BETAS = ("adam", "adamw", "lamb", "onebitadam", "zerooneadam", "onebitlamb", "fusedadam", "cpuadam",
              "muadam", "muadamw", "lion")
STEP_KEYS = {"warmup_num_steps", "total_num_steps", "cycle_first_step_size", "cycle_second_step_size",
             "decay_step_size", "lr_range_test_step_size", "step_size", "T_max", "T_0", "total_iters",
             "total_steps", "steps_per_epoch", "epochs", "cycle_first_stair_count",
             "cycle_second_stair_count"}


def read(text: str, filename: str) -> Node:
    if filename.endswith(".py"):  # a dict in a Python file, followed as Python runs it

        return deepspeed_config(text, filename)
    root = load(text, filename)
    if not root.is_mapping:
        raise SchedlangError("a DeepSpeed config is a JSON object", root.span)
    return root


def source(root: Node, origin: str, style: str = "presets") -> ir.Module:
    """The file of the config's ``scheduler`` block: the preset call DeepSpeed's engine makes
    (``schedule lr``, or one per Muon half), OneCycle's momentum, and a ``param`` for each
    ``"auto"`` and for an optimizer lr the config lacks; ``--lower`` prints each lowered."""
    kind, params = _scheduler_block(root)
    notes: list[str] = []
    decls: dict[str, ir.Node | Noted] = {}  # the parameters the config leaves to its caller
    optimizer = root.value.get("optimizer")
    lr = _optimizer_lr(optimizer, decls)
    preset, entry = _preset(kind, notes)
    args = _arguments(params, entry, kind.value, preset, decls, notes)
    if _takes_lr(entry, kind.value, args):
        lr = lr if lr is not None else _lr_parameter(kind, preset, decls)
        if lr is not None:
            args["lr"] = lr
    halves = _muon_lrs(optimizer)
    made = call(preset, span=kind.span, **args)
    schedules = [*_lr_schedules(made, halves, kind.value, root.key_spans.get("scheduler", kind.span), notes),
                 *_momentum(made, kind, optimizer, notes)]
    declared_params, lines = declared(root.symbols)
    head = _head(origin, notes, declared_params)
    preset_module = module(head, lines, list(decls.values()), schedules)
    if style == "presets":
        return preset_module
    return core_module(preset_module, head, [*declared_params, *decls.values()])


def _scheduler_block(root: Node) -> tuple[Node, Node | None]:
    """The ``scheduler`` block's ``type`` and ``params`` nodes, refused where the engine could not
    build a scheduler from them."""
    block = root.value.get("scheduler")
    if block is None:
        raise SchedlangError("the config has no \"scheduler\" block", Span(root.span.source, 1, 1, 1, 2),
                             hint="without one DeepSpeed uses the client's scheduler (the HF Trainer its "
                                  "own: import its arguments with --format hf-args)")
    if not block.is_mapping or "type" not in block.value:
        raise SchedlangError("\"scheduler\" needs a \"type\"", block.span)
    kind = block.value["type"]
    if not isinstance(kind.value, str):
        raise SchedlangError("the scheduler type is a name", kind.span)
    params = block.value.get("params")
    if params is not None and not params.is_mapping:
        raise SchedlangError("\"params\" must be an object of keyword arguments", params.span)
    return kind, params


def _preset(kind: Node, notes: list) -> tuple[str, object]:
    """The preset of the scheduler ``type`` names and its entry: DeepSpeed's own, else the torch
    scheduler the engine falls back to (noted: it steps at construction)."""
    name = kind.value
    if name in DEEPSPEED:
        preset = f"deepspeed.{name}"
    else:
        preset = f"torch.{name}"
        if preset not in PRESETS:
            known = [*DEEPSPEED, *(p.split(".", 1)[1] for p in PRESETS if p.startswith("torch."))]
            raise SchedlangError(f"'{name}' is neither a DeepSpeed nor a torch scheduler", kind.span,
                                 hint=did_you_mean(name, known) or "one of " + ", ".join(DEEPSPEED))
        notes.append(f"'{name}' is not a DeepSpeed scheduler: the engine falls back to "
                     f"torch.optim.lr_scheduler.{name}, which steps once at construction (torch's "
                     "convention).")
    entry = PRESETS[preset]
    if isinstance(entry, Rejected):
        raise SchedlangError(f"{preset} cannot be imported", kind.span, hint=entry.reason)
    return preset, entry


def _arguments(params: Node | None, entry, name: str, preset: str, decls: dict,
               notes: list) -> dict[str, ir.Node]:
    """The preset call's keywords as nodes at their values' spans, one per key of ``params`` the scheduler
    takes (a key it does not is DeepSpeed's ``TypeError``; a ``null`` its default, or refused)."""
    accepted = {a.name for a in entry.args}
    args: dict[str, ir.Node] = {}
    for key, node in (params.value.items() if params is not None else ()):
        key_span = params.key_spans[key]
        if key == "last_batch_iteration":
            _from_the_start(node)
            continue
        if key not in accepted or key == "lr":
            raise SchedlangError(f"{name}() has no parameter '{key}' (DeepSpeed raises TypeError)", key_span,
                                 hint=did_you_mean(key, accepted - {"lr"}) or entry.signature())
        if node.value is None:  # JSON null: Python's None, passed as the keyword
            _null(key, node, entry, name)
            continue  # None is the keyword's default: as if the key were left out
        args[key] = _value(key, node, key_span, decls, notes, preset)
    return args


def _from_the_start(node: Node) -> None:
    """``last_batch_iteration`` at its default (-1): any other value resumes a run part-way."""
    if node.value != -1:
        raise SchedlangError("last_batch_iteration resumes a run part-way; it is not a schedule",
                             node.span, hint="leave it at -1 (the default)")


def _takes_lr(entry, name: str, args: dict) -> bool:
    """Whether the call scales the optimizer's lr: it has an ``lr`` (WarmupLR only without its
    own ``warmup_max_lr``)."""
    return any(a.name == "lr" for a in entry.args) and (name != "WarmupLR" or "warmup_max_lr" not in args)


def _lr_parameter(kind: Node, preset: str, decls: dict) -> ir.Name | None:
    """Where the config gives no optimizer lr and the scheduler scales it (WarmupLR,
    WarmupCosineLR, a torch scheduler): the parameter ``optimizer_lr``; None for the others."""
    if kind.value not in ("WarmupLR", "WarmupCosineLR") and not preset.startswith("torch."):
        return None
    declared_at = param_stmt("optimizer_lr", "float", where="optimizer_lr > 0", span=kind.span)
    decls.setdefault("optimizer_lr", noted(declared_at, "the optimizer's lr (the config has none)"))
    return ir.Name(kind.span, "optimizer_lr")


def _lr_schedules(call: ir.Call, halves: dict | None, name: str, at: Span,
                  notes: list) -> list[ir.ScheduleDecl]:
    """``schedule lr``; for DeepSpeed's Muon whose halves' lrs differ and a scheduler that scales
    each group's own lr, one ``lr__HALF`` per half, the call at that half's lr."""
    if halves is None:
        return [schedule_stmt("lr", call, at)]
    if not any(k.name == "lr" for k in call.keywords):
        notes.append(f"Muon: the scheduler block sets every param group's lr ({name} has an lr of its own), "
                     "so muon_lr and adam_lr are overwritten from the first step (DeepSpeed #7713): both "
                     "halves run this one schedule.")
        return [schedule_stmt("lr", call, at)]
    notes.append("Muon: DeepSpeed splits each param group into a Muon half (lr__muon, at muon_lr) and "
                 f"an Adam half (lr__adam, at adam_lr); {name} scales each half's own lr.")
    return [schedule_stmt(f"lr__{half}", _at_lr(call, own), at) for half, own in halves.items()]


def _at_lr(call: ir.Call, lr: ir.Node) -> ir.Call:
    """``call`` with its ``lr=`` keyword given ``lr`` (a node at the half's own key) in its place."""
    return replace(call, keywords=tuple(replace(k, span=lr.span, value=lr) if k.name == "lr" else k
                                        for k in call.keywords))


def _momentum(call: ir.Call, kind: Node, optimizer: Node | None, notes: list) -> list[ir.ScheduleDecl]:
    """OneCycle's ``schedule momentum`` (``get_mom`` of the same keywords) where it cycles the
    momentum: ``cycle_momentum`` left true and an optimizer with betas (or none named)."""
    cycles = next((k.value for k in call.keywords if k.name == "cycle_momentum"), None)
    if kind.value != "OneCycle" or not (cycles is None or isinstance(cycles, ir.Bool) and cycles.value):
        return []
    opt_type = _optimizer_type(optimizer)
    if opt_type is not None and opt_type.replace("_", "").lower() not in WITH_BETAS:
        notes.append(f"OneCycle leaves the momentum alone: {opt_type} has no betas (DeepSpeed warns).")
        return []
    if opt_type is None:
        notes.append("OneCycle cycles betas[0] only when the optimizer has betas (Adam-like); "
                     "the config names no optimizer, so the momentum schedule assumes it does.")
    get_mom = replace(call, func=replace(call.func, id=f"{call.func.id}.get_mom"))
    return [schedule_stmt("momentum", get_mom, kind.span)]


def _head(origin: str, notes: list, params: list) -> list[str]:
    """The comment lines above the statements: the header, DeepSpeed's step count, the notes."""
    kept = ", a dict in a Python file followed, never run" if origin.endswith(".py") else ""
    return [header(origin, f"DeepSpeed config, \"scheduler\" block{kept}"),
            "# t counts optimizer steps: DeepSpeed steps the scheduler after each optimizer step, and",
            "# step t runs with last_batch_iteration = t - 1 (the constructor's value at t = 0).",
            *(f"# note: {comment_safe(n)}" for n in notes), *([PARAMETERS] if params else [])]


def _optimizer_type(optimizer: Node | None) -> str | None:
    if optimizer is None or not optimizer.is_mapping or "type" not in optimizer.value:
        return None
    return str(optimizer.value["type"].value)


#: The halves of DeepSpeed's Muon param groups (``DeepSpeedEngine._muon_param_groups``): the tag
#: of each (``lr__muon``, ``lr__adam``) and the optimizer key of its own lr.
MUON_HALVES = {"muon": "muon_lr", "adam": "adam_lr"}


def _muon_lrs(optimizer: Node | None) -> dict[str, ir.Node] | None:
    """Each half's lr where the optimizer is DeepSpeed's Muon and its halves' lrs differ
    (``muon_lr`` / ``adam_lr``, each else the shared ``lr``); None otherwise."""
    if (_optimizer_type(optimizer) or "").lower() != "muon":
        return None
    params = optimizer.value.get("params")
    if params is None or not params.is_mapping:
        return None
    found = {}
    for half, key in MUON_HALVES.items():
        node = params.value.get(key, params.value.get("lr"))
        if node is None:
            return None
        if not isinstance(node.value, Symbol) and exact(node.value) is None:
            raise SchedlangError(f"the optimizer's {key} must be a number", node.span)
        found[half] = expression_node(node.value, node.span, f"the optimizer's {key}")
    return found if len({unparse.expression(lr) for lr in found.values()}) > 1 else None


def _optimizer_lr(optimizer: Node | None, decls: dict) -> ir.Node | None:
    if optimizer is None or not optimizer.is_mapping:
        return None
    params = optimizer.value.get("params")
    if params is None or not params.is_mapping or "lr" not in params.value:
        return None
    node = params.value["lr"]
    if node.value == "auto":
        decls["learning_rate"] = noted(param_stmt("learning_rate", "float", where="learning_rate > 0",
                                                  span=params.key_spans["lr"]),
                                       "\"auto\": the HF Trainer's learning_rate")
        return ir.Name(node.span, "learning_rate")
    if not isinstance(node.value, Symbol) and exact(node.value) is None:
        raise SchedlangError("the optimizer's lr must be a number", node.span)
    return expression_node(node.value, node.span, "the optimizer's lr")


def _null(key: str, node: Node, entry, name: str) -> None:
    """A ``null`` value is what DeepSpeed passes on: None.  Where None is the keyword's own default
    (``warmup_max_lr``: the optimizer's lr; ``cycle_second_step_size``: the first's) it means that;
    anywhere else DeepSpeed refuses it (``warmup_num_steps``: ``ValueError``) or fails on it."""
    arg = next(a for a in entry.args if a.name == key)
    if arg.default is None:
        return
    if key == "warmup_num_steps":
        raise SchedlangError(f"warmup_num_steps is null: DeepSpeed's {name} raises ValueError (it must be a "
                             "positive integer, got None)", node.span,
                             hint=f"leave the key out for DeepSpeed's default ({arg.default}), or give a "
                                  "whole number of steps > 0")
    raise SchedlangError(f"{key} is null: DeepSpeed passes None to {name}(), which computes with it "
                         "(a TypeError)", node.span,
                         hint=f"leave the key out for its default ({arg.default})")


def _value(key: str, node: Node, key_span: Span, decls: dict, notes: list, preset: str) -> ir.Node:
    """One keyword's value as a node at the value's span; ``"auto"`` a parameter of the file,
    declared at its key."""
    value = node.value
    if value == "auto":
        type_ = "int" if key in STEP_KEYS else "float"
        decls[key] = noted(param_stmt(key, type_, where=f"{key} > 0", span=key_span),
                           "\"auto\": filled by the HF Trainer")
        return ir.Name(node.span, key)
    if isinstance(value, bool):
        return ir.Bool(node.span, value)
    if key in ("warmup_type", "mode", "anneal_strategy"):
        return _option(key, node, notes, preset)
    if node.is_list:
        if any(not isinstance(item.value, Symbol) and exact(item.value) is None for item in node.value):
            raise SchedlangError(f"{key} must be a list of numbers", node.span)
        return ir.List(node.span, tuple(expression_node(item.value, item.span, key) for item in node.value))
    return expression_node(value, node.span, key)


def _option(key: str, node: Node, notes: list, preset: str) -> ir.String:
    """A string keyword from the preset's choices; an unknown ``warmup_type`` is DeepSpeed's ``log``,
    with its warning (at the key) and a note."""
    value = node.value
    if key == "warmup_type" and value not in ("log", "linear"):
        notes.append(f"{node.span.location}: warmup_type {value!r} is neither 'log' nor 'linear'; "
                     "DeepSpeed warns and uses 'log', and so does this file.")
        warn(f"warmup_type {value!r} is neither 'log' nor 'linear': DeepSpeed warns and uses 'log' "
             "(lr_schedules.py), and so does the imported file", node.span,
             hint='write "warmup_type": "log" (or "linear") to say which')
        value = "log"
    return option_node(value, choices_of(preset, key), node.span, key)


# -- the same, in a Python training script (followed over ast, never run) ------------------------------


_DEEPSPEED_KEYS = ("scheduler", "optimizer", "train_batch_size", "train_micro_batch_size_per_gpu",
                   "zero_optimization")


def deepspeed_config(text: str, filename: str):
    """The DeepSpeed config a ``.py`` file keeps as a dict (``ds_config = {...}`` or
    ``config = dict(...)``), at module level or built in a function the script calls
    (``def main(): ...`` under ``if __name__ == "__main__":``): the dict with a
    ``"scheduler"`` key (or, without one, with DeepSpeed's other keys), as a ``Node`` for
    ``deepspeed_json.source``."""
    module = Module(text, filename, script=True)
    found: dict[int, tuple[str, Item, bool]] = {}  # one dict seen under several names is one
    for name, item in bindings(module):
        if isinstance(item, Unread) or not isinstance(item.raw, dict):
            continue
        keys = set(item.value)
        if "scheduler" in keys or keys & set(_DEEPSPEED_KEYS):
            found.setdefault(id(item.value), (name, item, "scheduler" in keys))
    with_scheduler = [(name, item) for name, item, has in found.values() if has]
    chosen = with_scheduler or [(name, item) for name, item, _ in found.values()]
    if not chosen:
        ended_before(module, "DeepSpeed config")
        for name in ("ds_config", "deepspeed_config", "config"):
            if isinstance(module.env.get(name), Unread):  # json.load(...), say: its own error
                raise module.env[name].error
        unfollowed(module, [n for n in ast.walk(module.tree) if _deepspeed_dict(n)], "DeepSpeed config")
        raise SchedlangError("no DeepSpeed config in this file: no dict with a \"scheduler\" key", Span(
            module.source, 1, 1, 1, 2), hint="ds_config = {\"scheduler\": {\"type\": \"WarmupLR\", "
                                              "\"params\": {...}}, ...}; a config kept in a JSON file is "
                                              "imported from that file")
    if len(chosen) > 1:
        raise SchedlangError("more than one dict here looks like a DeepSpeed config: "
                             + ", ".join(name for name, _ in chosen), chosen[1][1].span,
                             hint="keep the one to import in the file")
    name, item = chosen[0]
    root = to_node(module.get(name) if module.env.get(name) is item else _checked(module, item))
    root.symbols = module.symbols
    return root


def _checked(module: Module, item: Item) -> Item:
    module.check_untainted(item)
    return item


def _deepspeed_dict(node: ast.AST) -> bool:
    """A dict display or ``dict(...)`` call with a ``scheduler`` key, read from the syntax."""
    if isinstance(node, ast.Dict):
        return any(isinstance(k, ast.Constant) and k.value == "scheduler" for k in node.keys)
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict" \
        and any(k.arg == "scheduler" for k in node.keywords)

# -- the writer (``schedlang export --format deepspeed-json``) -----------------------------------


def export(source, filename="<string>", params=None, verify=True, schedules=None, *, read,
           into=None) -> str:
    """A DeepSpeed config with the ``scheduler`` block (``type`` and ``params``) of one
    ``deepspeed.*`` preset call; its ``lr=`` (the optimizer's lr, which ``WarmupLR`` without
    ``warmup_max_lr`` and ``WarmupCosineLR`` scale) becomes ``optimizer.params.lr``.

    ``into`` (the config the file came from): the output is that config with its ``scheduler``
    block replaced whole (another type's params would be a TypeError) and, where the lr is given,
    its own optimizer's ``params.lr`` set (its type and other params kept), proven so; without
    it the two blocks alone, proven on DeepSpeed's defaults for every other key."""
    writes = tuple(n for n in every("deepspeed") if n.count(".") == 1)  # no derived curve
    if _muon_file(source, filename):
        return _export_muon(source, filename, params, verify, read, into, writes)
    call = PresetCall(source, filename, params, "deepspeed-json",
                      "deepspeed.WarmupDecayLR(total_num_steps=10000, warmup_max_lr=3e-4)",
                      others=("momentum",) if not schedules or "momentum" in schedules else (),
                      writes=writes, groups=PerGroup((), _MUON_LACKS))
    momentum = call.others.get("momentum")  # what the import writes for OneCycle: derived from its block
    if momentum is not None and not (isinstance(momentum, ir.Call) and call.name == "deepspeed.OneCycle"
                                     and momentum.func.id == "deepspeed.OneCycle.get_mom"):
        raise SchedlangError("DeepSpeed derives the momentum from a OneCycle block; this momentum is not "
                             "that", momentum.span, hint="export the lr alone (--schedule lr)")
    kind = call.name.split(".", 1)[1]
    if "." in kind:
        raise SchedlangError(f"{call.name} is a curve DeepSpeed derives from its scheduler, not one "
                             "it can be configured with", call.node.span,
                             hint="export the lr schedule (deepspeed.OneCycle(...)) instead")
    out: dict = {}
    if "lr" in call.given:
        out["optimizer"] = {"type": "AdamW", "params": {"lr": json_number(call.number("lr"))}}
    out["scheduler"] = {"type": kind, "params": _scheduler_params(call)}
    text = json.dumps(out, indent=2) + "\n" if into is None else _merged(call, into, out)
    if call.program.run_length is not None:
        warn("the run's length is not written: a DeepSpeed config does not state it (the training "
             "loop around deepspeed.initialize decides how many steps it runs)", call.program.run_length.span)
    if verify:
        proven(call.program, text, read, into.filename if into is not None else filename, params=params,
               schedules=["lr", *call.others], into=into.filename if into is not None else None, runs=False)
    return text


_MUON_LACKS = ("DeepSpeed's config gives a param group an lr of its own only as a half of its Muon "
               "optimizer: muon_lr for the Muon half (schedule lr__muon), adam_lr for the auxiliary Adam "
               "(schedule lr__adam), one scheduler block driving both")
#: The schedulers that scale each param group's own lr (WarmupLR without warmup_max_lr); the others
#: set one lr curve for every group (a per-group list needs one value per group of the optimizer
#: built, which the config cannot know).
_PER_GROUP = ("deepspeed.WarmupCosineLR", "deepspeed.WarmupLR")


def _scheduler_params(call) -> dict:
    """The scheduler block's ``params``: every argument of the preset call but the lr (which
    the optimizer block holds), strings as written, flags as booleans, numbers as JSON."""
    spec = {a.name: a for a in call.builtin.args}
    params: dict = {}
    for name, node in call.given.items():
        if name == "lr":
            continue
        if isinstance(node, ir.String):
            params[name] = node.value
        elif spec[name].kind == Kind.FLAG:
            params[name] = bool(call.lowered.argument(call.builtin, spec[name], node))
        else:
            params[name] = json_number(call.number(name))
    return params


def _muon_file(source, filename: str) -> bool:
    """Whether the file schedules an ``lr__TAG``: the two halves of DeepSpeed's Muon."""
    from ..syntax.parser import parse  # lazy: only an export with per-group lrs parses its file
    from .common.preset_call import split_tag  # lazy: with the parse above

    return any(isinstance(s, ir.ScheduleDecl) and split_tag(s.name)[0] == "lr" and split_tag(s.name)[1]
               for s in parse(source, filename).statements)


def _export_muon(source, filename, params, verify, read, into, writes) -> str:
    """``lr__muon`` and ``lr__adam`` as DeepSpeed's Muon optimizer (``muon_lr``, ``adam_lr``) under
    one scheduler that scales each half's own lr: the Muon half's scheduler (found by proof where
    the file does not call it), and the Adam half's lr proven to be that scheduler at its own lr."""
    from ..syntax.parser import parse  # lazy: only an export with per-group lrs parses its file
    from .common.preset_call import refuse_group, split_tag  # lazy: only a per-group export

    decls = {s.name: s for s in parse(source, filename).statements if isinstance(s, ir.ScheduleDecl)}
    halves = PerGroup(tuple(MUON_HALVES), _MUON_LACKS)
    for name, decl in decls.items():
        key, tag = split_tag(name)
        if tag is not None and (key != "lr" or tag not in MUON_HALVES):
            refuse_group("deepspeed-json", decl, key, tag, halves)
        if tag is None:
            raise SchedlangError(f"'{name}' beside lr__muon / lr__adam: DeepSpeed's Muon optimizer has two "
                                 "halves, each with its own lr schedule, and nothing else is scheduled",
                                 decl.span,
                                 hint="schedule lr__muon and lr__adam (the Muon half and the auxiliary Adam)")
    for half in MUON_HALVES:
        if f"lr__{half}" not in decls:
            other = decls[next(f"lr__{h}" for h in MUON_HALVES if f"lr__{h}" in decls)]
            raise SchedlangError(f"DeepSpeed's Muon optimizer splits every param group into a Muon and an "
                                 f"Adam half, and the file schedules only '{other.name}'", other.span,
                                 hint=f"add schedule lr__{half} (one scheduler block drives both halves)")
    call = PresetCall(source, filename, params, "deepspeed-json", "deepspeed.WarmupCosineLR(total_num_steps="
                      "10000, warmup_num_steps=100, lr=0.02)", writes=writes,
                      groups=PerGroup(("adam",), _MUON_LACKS), primary="lr__muon")
    if call.name not in _PER_GROUP or "lr" not in call.given or "warmup_max_lr" in call.given:
        raise SchedlangError(f"lr__muon is {call.found or call.name + '(...)'}, which sets one lr curve for "
                             "every param group: DeepSpeed's config then overwrites muon_lr and adam_lr "
                             "(DeepSpeed #7713); a per-group list needs one value per param group of the "
                             "optimizer DeepSpeed builds, which the config cannot know",
                             decls["lr__muon"].value.span,
                             hint="WarmupCosineLR, or WarmupLR without warmup_max_lr, scale each half's own "
                                  "lr: give both halves such a schedule")
    adam = call.group_values("adam", {"lr": lambda s: s.peak},
                             "one scheduler block drives both halves, each at its own lr")["lr"]
    scheduler_params = _scheduler_params(call)
    out = {"optimizer": {"type": "Muon", "params": {"muon_lr": json_number(call.number("lr")),
                                                    "adam_lr": json_number(adam)}},
           "scheduler": {"type": call.name.split(".", 1)[1], "params": scheduler_params}}
    text = json.dumps(out, indent=2) + "\n" if into is None else _merged_muon(call, into, out)
    if call.program.run_length is not None:
        warn("the run's length is not written: a DeepSpeed config does not state it (the training "
             "loop around deepspeed.initialize decides how many steps it runs)", call.program.run_length.span)
    if verify:
        label = into.filename if into is not None else filename
        names = [f"lr__{half}" for half in MUON_HALVES]
        back = parse(read(text, label, "presets"), label).statements
        missing = [n for n in names if not any(isinstance(s, ir.ScheduleDecl) and s.name == n for s in back)]
        if missing:
            raise SchedlangError(f"internal error: the export does not read back as '{missing[0]}'",
                                 hint="please report this with the file")
        proven(call.program, text, read, label, params=params, schedules=names,
               into=into.filename if into is not None else None, runs=False)
    return text


def _merged_muon(call: PresetCall, into: Original, out: dict) -> str:
    """``out`` put into the original config: its scheduler block replaced, its Muon optimizer's
    ``muon_lr`` and ``adam_lr`` set (its other params kept)."""
    if into.filename.endswith(".py"):
        raise SchedlangError(f"{into.filename} keeps its DeepSpeed config in Python, which an export "
                             "does not rewrite", hint="export --into the JSON config, or without --into "
                                                      "and copy the blocks into the dict")
    data = copy.deepcopy(document(into))
    optimizer = data.get("optimizer")
    kind = optimizer.get("type") if isinstance(optimizer, dict) else None
    if not isinstance(kind, str) or kind.lower() != "muon":
        raise SchedlangError(f"{into.filename} does not optimize with DeepSpeed's Muon (its optimizer is "
                             f"{kind!r}): lr__muon and lr__adam are the lrs of Muon's two halves",
                             call.module.statements[0].span,
                             hint="set \"optimizer\": {\"type\": \"Muon\", ...}")
    data["scheduler"] = out["scheduler"]
    params = optimizer.get("params")
    optimizer["params"] = {**(params if isinstance(params, dict) else {}), **out["optimizer"]["params"]}
    return dumped(into, data)


def _merged(call: PresetCall, into: Original, out: dict) -> str:
    """``out``'s blocks put into the original config ``into``."""
    if into.filename.endswith(".py"):
        raise SchedlangError(f"{into.filename} keeps its DeepSpeed config in Python, which an export "
                             "does not rewrite", hint="export --into the JSON config, or without --into "
                                                      "and copy the blocks into the dict")
    data = copy.deepcopy(document(into))
    data["scheduler"] = out["scheduler"]
    if "optimizer" in out:
        optimizer = data.get("optimizer")
        if not isinstance(optimizer, dict):
            raise SchedlangError(f"{into.filename} has no optimizer block: DeepSpeed then steps the client's "
                                 "optimizer, whose lr this config cannot set", call.given["lr"].span,
                                 hint="add an optimizer block to the config, or leave lr= to the "
                                      "scheduler (warmup_max_lr=, ...)")
        params = optimizer.get("params")
        lr = out["optimizer"]["params"]["lr"]
        optimizer["params"] = {**(params if isinstance(params, dict) else {}), "lr": lr}
    return dumped(into, data)


# -- the declaration (``formats/__init__.py`` lists this module) ----------------------------------


#: A DeepSpeed dict in a Python script: a ``"scheduler"`` key, or ``scheduler = dict(...)`` / ``{...}``.
_PYTHON_SCHEDULER = re.compile(r"""["']scheduler["']\s*:|\bscheduler\s*=\s*(dict|\{)""")
_JSON_KEYS = {"scheduler", "zero_optimization", "train_batch_size", "train_micro_batch_size_per_gpu"}


def recognizes(text: str, suffix: str) -> bool:
    """A config's own keys (``"scheduler"``, ``"zero_optimization"``, the batch sizes), or in a
    ``.py`` file a ``scheduler`` dict."""
    if suffix == ".py":
        return bool(_PYTHON_SCHEDULER.search(text))
    return bool(json_keys(text) & _JSON_KEYS)


FORMAT = Format("deepspeed-json", "DeepSpeed config JSON (\"scheduler\" block), or that dict in a .py file",
                (".json", ".py"), recognizes, reader("deepspeed-json", read, source), export)
