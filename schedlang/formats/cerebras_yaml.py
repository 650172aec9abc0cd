"""Cerebras ModelZoo YAML: the reader (YAML -> ``.sched`` source) and the format's declaration;
the writer (``.sched`` -> a ``schedulers:`` block) is ``cerebras_export``.

**Reading.** Two configuration formats are read, both as ModelZoo 2.10 reads them:

* the Trainer format, ``trainer.init.schedulers``: a list (or one) of
  single-key mappings ``{ClassName: {arguments}}``; class names match
  case-insensitively; LR and weight-decay schedulers share the list;
  ``SequentialLR`` / ``ChainedScheduler`` nest.  A bare top-level
  ``schedulers:`` block (what ``schedlang export`` writes) is read the same way.
* the legacy format, ``optimizer.learning_rate``: a number, a dict with
  ``scheduler: "Linear"`` or a list of such dicts (``main_scheduler`` picks
  SequentialLR or chained).

SequentialLR milestones are derived from the children's ``total_iters``
exactly as ModelZoo does; given milestones must agree.  Old key spellings are
renamed as ModelZoo's config converter does.  Every error points at the YAML
key or value it is about.

**Writing** (``export``, ``.sched`` -> ModelZoo YAML) is ``cerebras_export``: what it accepts, and
the loop length it writes for the file's ``run = N``.
"""

from __future__ import annotations

import re

from ..errors import SchedlangError, did_you_mean, warn
from ..syntax import ir
from . import cerebras_model as cm
from .cerebras_export import export
from .cerebras_loop import Run, run_of
from .cerebras_model import Sched
from .cerebras_to_sched import source
from .common.format import YAML, Format, reader
from .common.keys import yaml_keys
from .common.numbers import exact
from .common.yaml_source import Node
from .common.yaml_source import load as load_yaml


def read(text: str, filename: str = "<string>") -> list[Sched]:
    """The LR / weight-decay schedulers a ModelZoo YAML configures (LR first)."""
    return _schedulers_of(_root(text, filename))


def _root(text: str, filename: str) -> Node:
    root = load_yaml(text, filename)
    if not root.is_mapping:
        raise SchedlangError("expected a YAML mapping with `trainer:` (or `schedulers:`)", root.span)
    return root


def _read_with_run(text: str, filename: str = "<string>") -> tuple[list[Sched], Run | None]:
    """The schedulers and the run's length the config states (``_run``): what the reader writes."""
    root = _root(text, filename)
    return _schedulers_of(root), _run(root)


def _run(root: Node) -> Run | None:
    """The steps a fresh run trains by its loop: ``cerebras_loop.run_of``, ModelZoo's rule."""
    return run_of(root)


def _schedulers_of(root: Node) -> list[Sched]:
    found = _find(root)
    scheds = [s for s in found if s.target == "lr"] + [s for s in found if s.target != "lr"]
    seen: dict[str, Sched] = {}
    for s in scheds:
        for name in s.schedule_names:
            if name in seen:
                what = f"tag '{name.split('__', 1)[1]}'" if "__" in name else "every group"
                raise SchedlangError(f"a second {s.target} scheduler for {what}", s.span,
                                     hint="ModelZoo allows two only with different param_group_tags")
            seen[name] = s
    return scheds


def _find(root: Node) -> list[Sched]:
    values = root.value
    if "trainer" in values:
        trainer = values["trainer"]
        if trainer.is_list:
            raise SchedlangError("a list of trainers (a multi-phase run) is not supported", trainer.span,
                                 hint="import one phase: copy its `trainer:` entry into its own file")
        init = _mapping_at(_mapping_at(trainer, "trainer").value.get("init"), "trainer.init", trainer)
        return _from_init(init)
    if "schedulers" in values:
        return _schedulers(values["schedulers"])
    if "init" in values:
        return _from_init(_mapping_at(values["init"], "init", root))
    if "optimizer" in values:
        return _legacy(_mapping_at(values["optimizer"], "optimizer", root))
    raise SchedlangError("no schedulers found", root.span,
                         hint="expected `trainer: {init: {schedulers: [...]}}`, a `schedulers:` list, "
                              "or the legacy `optimizer: {learning_rate: ...}`")


def _mapping_at(node: Node | None, what: str, parent: Node | None = None) -> Node:
    if node is None:
        raise SchedlangError(f"`{what}` is missing", parent.span if parent else None)
    if not node.is_mapping:
        raise SchedlangError(f"`{what}` must be a mapping", node.span)
    return node


def _from_init(init: Node) -> list[Sched]:
    if "schedulers" in init.value:
        return _schedulers(init.value["schedulers"])
    optimizer = init.value.get("optimizer")
    if optimizer is not None and optimizer.is_mapping and len(optimizer.value) == 1:
        (opt_name, opt_args), = optimizer.value.items()
        if opt_args.is_mapping:
            for key in ("lr", "learning_rate"):
                if key in opt_args.value:
                    value = _number(opt_args.value[key], key)
                    return [Sched("ConstantLR", {"learning_rate": value}, span=opt_args.key_spans[key],
                                  arg_spans={"learning_rate": opt_args.value[key].span})]
    raise SchedlangError("no `schedulers:` and no optimizer learning rate found", init.span,
                         hint="add `schedulers:` under `trainer.init`")


def _schedulers(node: Node) -> list[Sched]:
    items = node.value if node.is_list else [node]
    return [_one(item) for item in items]


def _one(item: Node, target: str | None = None, inherited: tuple[str, ...] = ()) -> Sched:
    """One ``{ClassName: {arguments}}``; ``inherited``: the tags a child may repeat (cstorch's
    ``ScalePerParamLR`` requires its scheduler to carry its own ``param_group_tags``)."""
    if not item.is_mapping or len(item.value) != 1:
        raise SchedlangError("each scheduler is a mapping with one key, the class name", item.span,
                             hint="e.g. `- LinearLR: {initial_learning_rate: 0.0, end_learning_rate: "
                                  "0.001, total_iters: 1000}`")
    (name, args), = item.value.items()
    tags = ()
    if target is None and args is not None and args.is_mapping and "param_group_tags" in args.value:
        tags = _tags(args.value["param_group_tags"])
    return _build(name, item.key_spans[name], args, target=target, tags=tags, inherited=inherited)


_TAG = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _tags(node: Node) -> tuple[str, ...]:
    """``param_group_tags``: one tag or a list; each becomes part of a schedule name (``lr__TAG``)."""
    items = node.value if node.is_list else [node]
    tags = []
    for item in items:
        tag = item.value
        if tag is None:
            continue
        if not isinstance(tag, str) or not _TAG.fullmatch(tag) or "__" in tag:
            raise SchedlangError(f"param group tag {tag!r} cannot name a schedule", item.span,
                                 hint="schedlang writes a tagged schedule as `schedule lr__TAG`: use tags "
                                      "that are identifiers without a double underscore")
        if tag in tags:
            raise SchedlangError(f"'{tag}' is tagged twice", item.span,
                                 hint="cstorch raises ValueError for duplicate tags")
        tags.append(tag)
    if not tags:
        raise SchedlangError("param_group_tags names no group", node.span)
    return tuple(tags)


def _build(name: str, name_span, args: Node | None, target: str | None = None, legacy: bool = False,
           skip: tuple[str, ...] = (), tags: tuple[str, ...] = (), inherited: tuple[str, ...] = ()) -> Sched:
    """The scheduler ``name: args`` (``target``: the enclosing composite's, None at the top;
    ``skip``: the keys a legacy entry spends on naming the class)."""
    lr_name, kind = _class(name, name_span, target, legacy)
    sched = Sched(lr_name, target=kind, span=name_span, tags=tags)
    given = _given(name, args)
    for key, value in given.items():
        if key not in skip:
            _argument(sched, name, key, value, args.key_spans[key], target=target, legacy=legacy,
                      inherited=inherited)
    _check_required(sched, name)
    _finish(sched, name, given, args)
    return sched


def _class(name: str, name_span, target: str | None, legacy: bool) -> tuple[str, str]:
    """``(LR class, target)`` of a class name, matched as ModelZoo matches it; an unknown, refused or
    misplaced class is an error at the name."""
    found = cm.lookup(name, legacy=legacy)
    if found is None:
        raise SchedlangError(f"unknown Cerebras scheduler '{name}'", name_span,
                             hint=did_you_mean(name, [*cm.CLASSES, *cm.CLASS_ALIASES]) or
                             did_you_mean(name, cm.known_names()) or
                             "see cerebras.pytorch.optim.lr_scheduler for the class names")
    lr_name, kind = found
    if lr_name in cm.UNSUPPORTED:
        raise SchedlangError(f"{name} cannot be imported", name_span, hint=cm.UNSUPPORTED[lr_name])
    if target is not None and kind != target:
        raise SchedlangError(f"{name} schedules {kind}, but it is inside a {target} composite", name_span)
    return found


def _given(name: str, args: Node | None) -> dict:
    """The keys of a scheduler's arguments (none for ``{}`` or nothing)."""
    if args is None or args.value is None:
        return {}
    if not args.is_mapping:
        raise SchedlangError(f"the arguments of {name} must be a mapping", args.span)
    return args.value


def _argument(sched: Sched, name: str, key: str, value: Node, key_span, *, target: str | None,
              legacy: bool, inherited: tuple[str, ...]) -> None:
    """One key of ``sched``'s arguments, renamed as ModelZoo renames it, checked and converted."""
    spec = {a[0]: a for a in cm.CLASSES[sched.name]}
    canonical = _canonical(key, sched.target, spec)
    if canonical == "param_group_tags":
        _check_child_tags(value, key_span, target, inherited)
        return
    if canonical == "last_epoch":
        raise SchedlangError(f"'{key}' is not supported", key_span,
                             hint="schedlang schedules start from step 0")
    if canonical not in spec:
        _unknown_key(name, key, key_span, sched.target, spec, legacy)
        return
    if canonical in sched.args:
        _repeated_key(sched, key, canonical, key_span, legacy)
    sched.args[canonical] = _convert(spec[canonical], value, sched, sched.target)
    sched.arg_spans[canonical] = value.span
    if value.is_list and spec[canonical][1] == "list":
        sched.item_spans[canonical] = [item.span for item in value.value]


def _canonical(key: str, kind: str, spec: dict) -> str:
    """The LR class's name of a key: a weight-decay twin's generic name mapped back, an old spelling
    renamed (``KEY_ALIASES``)."""
    canonical = cm.WD_ARGS.get(key, key) if kind == "weight_decay" else key
    if canonical not in spec and cm.KEY_ALIASES.get(canonical) in spec:
        return cm.KEY_ALIASES[canonical]
    return canonical


def _check_child_tags(value: Node, key_span, target: str | None, inherited: tuple[str, ...]) -> None:
    """``param_group_tags`` among the arguments: at the top ``_one`` read them (the schedule's name
    says which groups it drives); ScalePerParamLR's scheduler repeats its tags, as cstorch
    requires; any other child must set none."""
    if target is None or (inherited and set(_tags(value)) == set(inherited)):
        return
    raise SchedlangError("param_group_tags belongs on the outer scheduler", key_span,
                         hint="ModelZoo pushes a composite's tags down to its children; children "
                              "must not set their own")


def _unknown_key(name: str, key: str, key_span, kind: str, spec: dict, legacy: bool) -> None:
    """A key the class has no argument of: an error, or in the legacy format a warning (the pre-2.x
    converter passed on the keys it knew and dropped the rest)."""
    names = [cm.LR_TO_WD_ARGS.get(a, a) if kind == "weight_decay" else a for a in spec]
    hint = did_you_mean(key, names) or "its arguments: " + ", ".join(names)
    if not legacy:
        raise SchedlangError(f"{name} has no argument '{key}'", key_span, hint=hint)
    warn(f"{name} has no argument '{key}'; ignored, as ModelZoo's legacy format did", key_span, hint=hint)


def _repeated_key(sched: Sched, key: str, canonical: str, key_span, legacy: bool) -> None:
    """A second key for one argument (an old and a new spelling): an error, or in the legacy format
    a warning (the later value wins, as ModelZoo's legacy converter read it)."""
    if not legacy:
        raise SchedlangError(f"'{key}' gives {canonical} a second time", key_span)
    warn(f"'{key}' gives {canonical} a second time; the later value wins, as ModelZoo's "
         "legacy converter read it", key_span,
         hint=f"the first is at line {sched.arg_spans[canonical].line}; delete one")


def _check_required(sched: Sched, name: str) -> None:
    for arg_name, _, default in cm.CLASSES[sched.name]:
        if default is cm.REQ and arg_name not in sched.args:
            shown = cm.LR_TO_WD_ARGS.get(arg_name, arg_name) if sched.target == "weight_decay" else arg_name
            raise SchedlangError(f"{name} is missing '{shown}'", sched.span)


def _convert(spec, value: Node, sched: Sched, target: str):
    """An argument's value as the model holds it (a composite's schedulers become its children)."""
    arg_name, kind, default = spec
    if kind == "schedulers":
        sched.children = _children(arg_name, value, sched, target)
        return None
    if value.value is None and default is None:
        return None
    return _CONVERTERS[kind](arg_name, value)


def _children(arg_name: str, value: Node, sched: Sched, target: str) -> list[Sched]:
    """A composite's schedulers: ScalePerParamLR's one ``scheduler`` (with its tags), or a
    SequentialLR / ChainedScheduler's non-empty list; neither holds a ScalePerParamLR."""
    if arg_name == "scheduler":  # ScalePerParamLR: one scheduler
        items = value.value if value.is_list else [value]
        if len(items) != 1:
            raise SchedlangError("'scheduler' must be one scheduler", value.span,
                                 hint="e.g. `scheduler: {CosineDecayLR: {...}}`")
        child = _one(items[0], target, inherited=sched.tags)
        if child.name == "ScalePerParamLR":
            raise SchedlangError("ScalePerParamLR inside ScalePerParamLR", items[0].span,
                                 hint="give the groups' factors once")
        return [child]
    if not value.is_list or not value.value:
        raise SchedlangError(f"'{arg_name}' must be a non-empty list of schedulers", value.span)
    children = [_one(item, target) for item in value.value]
    if any(child.name == "ScalePerParamLR" for child in children):
        raise SchedlangError(f"ScalePerParamLR inside a {sched.name}", value.span,
                             hint="ScalePerParamLR wraps the whole schedule: put the "
                                  f"{sched.name} inside it")
    return children


def _flag(arg_name: str, value: Node) -> bool:
    if not isinstance(value.value, bool):
        raise SchedlangError(f"'{arg_name}' must be true or false", value.span)
    return value.value


def _option(arg_name: str, value: Node) -> str:
    if value.value not in cm.CHOICES[arg_name]:
        raise SchedlangError(f"'{value.value}' is not a valid {arg_name}", value.span,
                             hint="one of " + ", ".join(cm.CHOICES[arg_name]))
    return value.value


def _number_list(arg_name: str, value: Node) -> list:
    """A non-empty list of numbers; milestones are positive whole steps."""
    if not value.is_list or not value.value:
        raise SchedlangError(f"'{arg_name}' must be a non-empty list of numbers", value.span)
    numbers = [_number(item, f"an item of {arg_name}") for item in value.value]
    if arg_name == "milestones":
        for item, number in zip(value.value, numbers):
            _check_steps(number, item, "a milestone", allow_zero=False)
    return numbers


def _steps(arg_name: str, value: Node):
    number = _number(value, arg_name)
    _check_steps(number, value, f"'{arg_name}'")
    return number


#: The reading of each argument kind but ``schedulers`` (``cerebras_model.CLASSES``' kinds).
_CONVERTERS = {"flag": _flag, "option": _option, "list": _number_list, "steps": _steps,
               "value": lambda arg_name, value: _number(value, arg_name)}


def _number(node: Node, what: str):
    number = exact(node.value)
    if number is None:
        raise SchedlangError(f"{what} must be a number, not {node.value!r}", node.span)
    return number


def _check_steps(number, node: Node, what: str, allow_zero: bool = False) -> None:
    if not number.is_Integer or number < 0 or (number == 0 and not allow_zero):
        raise SchedlangError(f"{what} must be a positive whole number of steps, not {node.value!r}",
                             node.span)


def _finish(sched: Sched, name: str, given: dict, args: Node | None) -> None:
    """Class-level rules: ModelZoo milestones, Chained children, cstorch's own refusals."""
    if sched.name == "SequentialLR":
        sched.args["milestones"] = _milestones(sched, name)
    elif sched.name == "ChainedScheduler":
        for child in sched.children[1:]:
            _check_chained(child, name)
    elif sched.name == "CosineAnnealingWarmRestarts" and sched.args.get("T_mult", 1) != 1:
        raise SchedlangError("Cerebras supports only T_mult = 1", sched.arg_spans["T_mult"],
                             hint="cstorch raises ValueError for any other T_mult")
    elif sched.name == "PiecewiseConstantLR":
        _check_piecewise(sched)


def _check_chained(child: Sched, name: str) -> None:
    """A scheduler after a ChainedScheduler's first: cstorch multiplies by its value over its
    initial value (``torch.div``), so it needs an initial value, and one that is not 0 (a 0 makes
    every value infinite or NaN; refused here at the value, which the generated file could not say)."""
    if child.name not in cm.INITIAL_ARG:
        raise SchedlangError(f"{child.name} cannot follow the first scheduler of a {name}",
                             child.span, hint="ChainedScheduler divides by each later "
                                              "scheduler's initial value, which it has none of "
                                              "(Cerebras raises AttributeError)")
    initial = cm.INITIAL_ARG[child.name]
    if child.args.get(initial) == 0:
        shown = cm.LR_TO_WD_ARGS.get(initial, initial) if child.target == "weight_decay" else initial
        raise SchedlangError(f"{child.name} starts at 0 ({shown}), but a {name} divides by the initial "
                             "value of each scheduler after its first", child.arg_spans[initial],
                             hint="cstorch's torch.div by 0 makes every value infinite or NaN: start it "
                                  "above 0, or put it first")


def _milestones(sched: Sched, name: str) -> list:
    """A SequentialLR's milestones, which ModelZoo derives from its children's total_iters."""
    derived = cm.milestones_from_total_iters(sched.children)
    if derived is None:
        missing = next(c for c in sched.children[:-1] if "total_iters" not in c.args)
        raise SchedlangError(f"{missing.name} has no total_iters, so ModelZoo cannot place it in "
                             f"a {name}", missing.span,
                             hint="ModelZoo derives SequentialLR milestones from the total_iters of "
                                  "every scheduler but the last")
    given_ms = sched.args.get("milestones")
    if given_ms is not None and list(given_ms) != derived:
        raise SchedlangError(f"milestones {[int(m) for m in given_ms]} disagree with the "
                             f"total_iters of the schedulers ({[int(m) for m in derived]})",
                             sched.arg_spans["milestones"],
                             hint="ModelZoo requires milestones to equal the cumulative total_iters; "
                                  "leave them out")
    return derived


def _check_piecewise(sched: Sched) -> None:
    values, milestones = sched.args["learning_rates"], sched.args["milestones"]
    if len(values) not in (len(milestones), len(milestones) + 1):
        raise SchedlangError(f"{len(values)} values for {len(milestones)} milestones",
                             sched.arg_spans["learning_rates"],
                             hint="give one more value than milestones")
    if any(b <= a for a, b in zip(milestones, milestones[1:])):
        raise SchedlangError("milestones must increase", sched.arg_spans["milestones"])


# -- legacy: optimizer.learning_rate ------------------------------------------------------


def _legacy(optimizer: Node) -> list[Sched]:
    """The schedule, wrapped in ``ScalePerParamLR`` when ``adjust_learning_rate`` gives
    per-layer factors, as ModelZoo's ``convert_lr_scheduler`` does."""
    sched = _legacy_schedule(optimizer)
    if "adjust_learning_rate" in optimizer.value:
        sched = Sched("ScalePerParamLR", children=[sched], span=optimizer.key_spans["adjust_learning_rate"])
    return [sched]


def _legacy_schedule(optimizer: Node) -> Sched:
    if "learning_rate" not in optimizer.value:
        raise SchedlangError("the optimizer has no learning_rate", optimizer.span)
    lr = optimizer.value["learning_rate"]
    if lr.is_list:
        if not lr.value:
            raise SchedlangError("learning_rate is an empty list", lr.span)
        children = [_legacy_one(item) for item in lr.value]
        if len(children) == 1:
            return children[0]
        main = "SequentialLR"
        for item in lr.value:
            chosen = item.value.get("main_scheduler")
            if chosen is not None and str(chosen.value).lower() in ("chained", "chainedlr"):
                main = "ChainedScheduler"
        sched = Sched(main, children=children, span=optimizer.key_spans["learning_rate"])
        _finish(sched, main, {}, None)
        return sched
    if lr.is_mapping:
        return _legacy_one(lr)
    value = _number(lr, "learning_rate")
    return Sched("ConstantLR", {"learning_rate": value}, span=optimizer.key_spans["learning_rate"],
                 arg_spans={"learning_rate": lr.span})


def _legacy_one(item: Node) -> Sched:
    if not item.is_mapping or "scheduler" not in item.value:
        raise SchedlangError("a legacy learning_rate entry needs `scheduler: NAME`", item.span)
    name_node = item.value["scheduler"]
    return _build(str(name_node.value), name_node.span, item, legacy=True,
                  skip=("scheduler", "main_scheduler"))


def _source(config: tuple[list[Sched], Run | None], origin: str, style: str = "presets") -> ir.Module:
    """The reader's file: the schedulers (``cerebras_to_sched.source``) and the loop's ``run``."""
    scheds, run = config
    return source(scheds, origin, style, run=run)


# -- the declaration (``formats/__init__.py`` lists this module) ----------------------------------


def recognizes(text: str, suffix: str) -> bool:
    """ModelZoo's ``trainer.init.schedulers``, or a cstorch class as a nested key (``- SequentialLR:``,
    as the export writes it); the legacy layout (``optimizer: learning_rate: ...``) is the YAML
    fallback."""
    top, nested = yaml_keys(text)
    return ("trainer" in top and "init" in nested) or bool(nested & (set(cm.CLASSES) | set(cm.WD_CLASSES)
                                                                   | set(cm.CLASS_ALIASES)))


FORMAT = Format("cerebras-yaml",
                "Cerebras ModelZoo YAML (trainer.init.schedulers, or the legacy optimizer.learning_rate)",
                YAML, recognizes, reader("cerebras-yaml", _read_with_run, _source), export, fallback=YAML)
