"""OLMo-core's experiment config JSON -> ``.sched`` source (``--format olmo-core-json``).

What an OLMo-core user has is the ``config.json`` its ``ConfigSaverCallback`` writes into every
checkpoint directory: ``ExperimentConfig.as_config_dict()``, i.e. every dataclass field that is not
``None`` (``exclude_none``), each config marked with its ``_CLASS_`` (``module.Class``) and, for a
registered one, its ``type``.  The schedule lives in three places of it, read here as OLMo-core
3.0.0 reads them:

* ``train_module.scheduler``: one ``olmo_core.optim.scheduler`` class with its fields, written as
  the ``olmo_core.*`` preset of that class (its arguments are the fields, one to one; a field the
  JSON leaves out is the ``None`` it was, which is the preset's default too);
* ``train_module.optim.lr``: the optimizer's lr, the ``initial_lr`` the scheduler scales (OLMo-core
  resets each group's ``initial_lr`` to it after loading a checkpoint: it is a ``fixed_field``);
* ``trainer.max_duration`` ``{"value": N, "unit": "steps" | "tokens" | "epochs"}`` (and
  ``trainer.hard_stop``): the run.  ``Trainer.max_steps`` is ``N`` in steps and ``ceil(N /
  global_batch_size)`` in tokens; ``max_tokens`` is ``N`` in tokens and ``N * global_batch_size``
  in steps; the scheduler's ``t_max`` is ``max_steps`` (``units="steps"``) or ``max_tokens``
  (``units="tokens"``), unless ``LinearWithWarmup`` / ``CosWithWarmup`` / ``HalfCosWithWarmup``
  set their own.  The trainer stops at the first step whose tokens seen reach a token duration,
  which is what ``run = Ntok`` says; ``hard_stop`` stops it earlier without changing ``t_max``
  (the run then cuts the schedule, and ``check`` says so).

``data_loader.global_batch_size`` counts tokens; with ``dataset.sequence_length`` (else
``train_module.max_sequence_length``) it is the file's ``param seq_len`` and ``batch`` (samples),
written when the token clock is used; an enabled ``BatchSizeSchedulerCallback`` is the file's
``batch = olmo_core.batch_size_schedule(...)`` and the lr's ``olmo_core.batch_size_lr_factor``.
``SequentialScheduler`` and ``ComposableScheduler`` (schedulers of schedulers, with their
``override_decay``) are the presets of the same names, their nested configs (each child
scheduler, ``ComposableSchedulerStage`` and ``OverrideDecay`` with its ``_CLASS_``) the preset
calls they nest; a child's ``units`` and lr are not read (the sequence passes its own).  An
``epochs`` duration (its steps depend on the dataset, which config.json does not size), a
sequence inside a sequence and per-group lrs are refused, located.

The writer (``olmo_core_export``: ``export --format olmo-core-json [--into config.json]``) goes
back the same way: one ``olmo_core.*`` call (a composite with its nested calls) becomes the
scheduler block (every field that is not None, as
``as_config_dict`` writes it), its ``t_max`` the trainer's ``max_duration`` and a shorter ``run``
the ``hard_stop``; ``schedlang branch --format olmo-core-json`` writes its resume keys through it
(``branches/configs.py``).
"""

from __future__ import annotations

import json

from ..errors import SchedlangError, Span, did_you_mean
from ..library.presets import PRESETS
from ..syntax import ir
from .common.format import Format, reader
from .common.json_source import load
from .common.numbers import exact
from .common.source_text import header, number_node, option_node
from .common.statements import (
    batch_stmt,
    call,
    duration,
    module,
    noted,
    number,
    param_stmt,
    run_stmt,
    schedule_stmt,
    string,
)
from .common.yaml_source import Node
from .core_text import core_module
from .olmo_core_export import CLASSES, COMPOSITE, MODULE, OWN_T_MAX, REGISTERED, export

LISTS = ("period_lengths", "period_lr_multipliers")
UNITS = ("steps", "tokens")


def _at(node: Node, key: str) -> Span:
    return node.key_spans.get(key, node.span)


def _mapping(parent: Node, key: str, what: str, required: bool = True) -> Node | None:
    node = parent.value.get(key)
    if node is None or node.value is None:
        if required:
            raise SchedlangError(f"the config has no {what}", _at(parent, key) if node else parent.span,
                                 hint="import the config.json OLMo-core writes into its save folder and "
                                      "checkpoints (ExperimentConfig.as_config_dict())")
        return None
    if not node.is_mapping:
        raise SchedlangError(f"{what} must be an object", node.span)
    return node


def _whole(node: Node, what: str, minimum: int = 0) -> int:
    value = exact(node.value) if not isinstance(node.value, str) else None
    if value is None or not value.is_Integer or value < minimum:
        raise SchedlangError(f"{what} must be a whole number >= {minimum}, not {json.dumps(node.value)}",
                             node.span)
    return int(value)


def read(text: str, filename: str) -> Node:
    root = load(text, filename)
    if not root.is_mapping:
        raise SchedlangError("an OLMo-core config is a JSON object", root.span)
    return root


class _Clock:
    """The run's batch in tokens and its sequence length, read only when the token clock is used;
    ``schedule`` the batch-size callback's ramp where one changes the batch."""

    def __init__(self, root: Node):
        self.root, self.tokens, self.schedule = root, None, None

    def batch(self, why: Span) -> int:
        if self.tokens is None:
            loader = _mapping(self.root, "data_loader", "\"data_loader\" (its global_batch_size counts "
                                                        "the tokens of a step)")
            if "global_batch_size" not in loader.value:
                raise SchedlangError("the data loader has no global_batch_size (tokens per step)",
                                     loader.span)
            given = loader.value["global_batch_size"]
            self.tokens = _whole(given, "global_batch_size (tokens)", 1)
            self.tokens_at, self.tokens_value = _at(loader, "global_batch_size"), given.span
            self.seq_len = self._seq_len()
            if self.tokens % self.seq_len:
                raise SchedlangError(f"global_batch_size {self.tokens} is not a whole number of "
                                     f"{self.seq_len}-token sequences", given.span)
        return self.tokens

    def _seq_len(self) -> int:
        for block, key in (("dataset", "sequence_length"), ("train_module", "max_sequence_length")):
            node = self.root.value.get(block)
            if node is not None and node.is_mapping and key in node.value:
                self.seq_len_at, self.seq_len_value = _at(node, key), node.value[key].span
                return _whole(node.value[key], f"{block}.{key}", 1)
        raise SchedlangError("the config gives no sequence length (dataset.sequence_length or "
                             "train_module.max_sequence_length)", self.root.span,
                             hint="the token clock needs the tokens of a sample")

    def ramp(self, ramp: _Ramp, optimizer: str | None) -> None:
        """The batch is the callback's schedule (its first batch the data loader's)."""
        if self.batch(ramp.node.span) != ramp.sizes[0]:
            raise SchedlangError(f"the batch-size schedule starts at {ramp.sizes[0]} tokens, the data loader "
                                 f"at {self.tokens}: the callback's first change would scale the lr too",
                                 ramp.node.span, hint="start batch_sizes at data_loader.global_batch_size")
        if optimizer is not None and "Adam" not in optimizer:
            raise SchedlangError(f"the batch-size schedule scales the lr of Adam optimizers only "
                                 f"(OLMo-core raises NotImplementedError for {optimizer})", ramp.node.span)
        self.schedule = ramp

    def statements(self) -> list:
        """``param seq_len`` and ``batch`` (``statements.module`` items, at the keys they state, their
        numbers at the values they are read from), written only on the token clock."""
        if self.tokens is None:
            return []
        seq_len = noted(param_stmt("seq_len", "int", number(self.seq_len, self.seq_len_value),
                                   span=self.seq_len_at), "dataset.sequence_length")
        if self.schedule is not None:
            return [seq_len, noted(batch_stmt(self.schedule.call(), self.schedule.at),
                                   "BatchSizeSchedulerCallback")]
        samples = number(self.tokens // self.seq_len, self.tokens_value)
        return [seq_len, noted(batch_stmt(samples, self.tokens_at),
                               f"data_loader.global_batch_size: {self.tokens} tokens a step")]


#: What to write instead of a run in epochs.
EPOCHS = ("give the run's length in steps or tokens (Duration.steps(N) / Duration.tokens(N)), or write "
          "`run = N` in the .sched file, N the steps OLMo-core logs (\"Training for N steps\")")


class _Duration:
    """A ``Duration`` ``{"value": N, "unit": ...}`` as the trainer reads it."""

    def __init__(self, node: Node, what: str, minimum: int = 1):
        if not node.is_mapping or "value" not in node.value:
            raise SchedlangError(f"{what} must be a Duration {{\"value\": N, \"unit\": \"steps\"}}",
                                 node.span)
        unit = node.value.get("unit")
        if unit is None or unit.value not in ("steps", "tokens", "epochs"):
            raise SchedlangError(f"{what}'s unit must be \"steps\", \"tokens\" or \"epochs\"",
                                 unit.span if unit is not None else node.span)
        if unit.value == "epochs":
            raise SchedlangError(f"{what} is in epochs: OLMo-core's steps of an epoch are the data loader's "
                                 "total_batches (the dataset's instances // the sequences of a batch), "
                                 "and config.json does not size the dataset", unit.span, hint=EPOCHS)
        self.unit, self.node, self.what = unit.value, node, what
        self.value = _whole(node.value["value"], f"{what}'s value", minimum)
        self.value_at = node.value["value"].span

    def steps(self, clock: _Clock) -> int:
        if self.unit == "steps":
            return self.value
        return -(-self.value // clock.batch(self.node.span))  # the first step whose tokens reach it

    def tokens(self, clock: _Clock) -> int:
        if self.unit == "tokens":
            return self.value
        return self.value * clock.batch(self.node.span)

    def run_value(self) -> ir.Node:
        """The run's length as a ``run`` value at its value's span: steps, or ``Ntok`` on the
        token clock."""
        return duration(self.value, "tok", self.value_at) if self.unit == "tokens" else \
            number(self.value, self.value_at)


class _Ramp:
    """An enabled ``BatchSizeSchedulerCallback``: its batch sizes (tokens) and schedule points,
    each a number at its value (``items``); ``at`` its key among the trainer's callbacks."""

    def __init__(self, node: Node, at: Span):
        self.node, self.at = node, at
        sizes, points = node.value.get("batch_sizes"), node.value.get("schedule")
        if sizes is None or not sizes.is_list or points is None or not points.is_list \
                or len(sizes.value) != len(points.value) or not sizes.value:
            raise SchedlangError("the BatchSizeSchedulerCallback needs batch_sizes and a schedule of as many "
                                 "Durations", node.span)
        self.sizes = [_whole(item, "each batch size (tokens)", 1) for item in sizes.value]
        self.items = {"batch_sizes": ir.List(sizes.span, tuple(number(v, item.span) for v, item
                                                               in zip(self.sizes, sizes.value)))}
        durations = [_Duration(item, "each point of the batch-size schedule", minimum=0)
                     for item in points.value]
        units = {d.unit for d in durations}
        if len(units) > 1:
            raise SchedlangError("the batch-size schedule's points must share one unit (OLMo-core checks it)",
                                 points.span)
        self.unit, self.unit_at = units.pop(), points.value[0].value["unit"].span
        self.items["schedule"] = ir.List(points.span, tuple(number(d.value, d.value_at) for d in durations))

    def call(self) -> ir.Call:
        """The callback as the file's batch: the ``olmo_core.batch_size_schedule`` preset call."""
        return call("olmo_core.batch_size_schedule", span=self.at, **self.items, units=self.units())

    def units(self) -> ir.String:
        """The schedule points' unit, at the first point's."""
        return string(self.unit, self.unit_at)


def _batch_callback(trainer: Node) -> _Ramp | None:
    callbacks = trainer.value.get("callbacks")
    for key, callback in (callbacks.value.items() if callbacks is not None and callbacks.is_mapping else ()):
        named = callback.value.get("_CLASS_") if callback.is_mapping else None
        enabled = callback.value.get("enabled") if callback.is_mapping else None
        points = callback.value.get("schedule") if callback.is_mapping else None
        if named is not None and str(named.value).endswith("BatchSizeSchedulerCallback") and \
                (enabled is None or enabled.value is not False) and points is not None and points.value:
            return _Ramp(callback, _at(callbacks, key))
    return None


def _optimizer_class(train_module: Node) -> str | None:
    named = train_module.value["optim"].value.get("_CLASS_")
    return str(named.value).rsplit(".", 1)[-1] if named is not None else None


def _class(block: Node, child: bool = False) -> str:
    """The scheduler's class, from ``_CLASS_`` (what ``from_dict`` resolves) or its ``type``; a
    ``child`` of a SequentialScheduler is one of the plain classes."""
    named = block.value.get("_CLASS_")
    kind = block.value.get("type")
    if named is not None:
        module, _, name = named.value.rpartition(".") if isinstance(named.value, str) else ("", "", "")
        if module not in (MODULE, "olmo_core.optim"):  # from_dict imports the module, then the class
            raise SchedlangError(f"the scheduler's _CLASS_ is not a class of {MODULE}", named.span,
                                 hint="e.g. \"_CLASS_\": \"olmo_core.optim.scheduler.CosWithWarmup\"")
        span = named.span
    elif kind is not None and isinstance(kind.value, str):
        name = REGISTERED.get(kind.value) or COMPOSITE.get(kind.value)
        span = kind.span
        if name is None:
            raise SchedlangError(f"'{kind.value}' is not a registered OLMo-core scheduler", kind.span,
                                 hint=did_you_mean(kind.value, [*REGISTERED, *COMPOSITE])
                                 or "one of " + ", ".join(REGISTERED))
    else:
        raise SchedlangError("the scheduler has no \"_CLASS_\" (nor \"type\")", block.span,
                             hint="OLMo-core's config.json marks it: \"_CLASS_\": "
                                  "\"olmo_core.optim.scheduler.CosWithWarmup\"")
    if child and name in COMPOSITE.values():
        raise SchedlangError(f"a {name} inside a SequentialScheduler: the schedlang preset takes the "
                             "plain schedulers as children", span,
                             hint="one of " + ", ".join(CLASSES))
    known = (*CLASSES, *COMPOSITE.values())
    if name not in known:
        raise SchedlangError(f"'{name}' is not an OLMo-core 3.0.0 scheduler", span,
                             hint=did_you_mean(name, known) or "one of " + ", ".join(known))
    registered = {**REGISTERED, **COMPOSITE}
    if kind is not None and named is not None and registered.get(kind.value) not in (None, name):
        raise SchedlangError(f"\"type\" {kind.value!r} is not the registered name of {name}", kind.span)
    return name


def _lr(train_module: Node) -> ir.Node:
    optim = _mapping(train_module, "optim", "optimizer (train_module.optim)")
    if "lr" not in optim.value:
        raise SchedlangError("the optimizer has no lr", optim.span,
                             hint="OLMo-core's config.json writes the optimizer's lr (train_module.optim.lr)")
    overrides = optim.value.get("group_overrides")
    for group in (overrides.value if overrides is not None and overrides.is_list else ()):
        opts = group.value.get("opts") if group.is_mapping else None
        if opts is not None and opts.is_mapping and "lr" in opts.value:
            raise SchedlangError("a param group sets its own lr: the scheduler scales each group's lr, "
                                 "and this import writes one lr", opts.key_spans["lr"],
                                 hint="import the config without the group's lr override")
    node = optim.value["lr"]
    if isinstance(node.value, str) or exact(node.value) is None or exact(node.value) < 0:
        raise SchedlangError(f"the optimizer's lr must be a number >= 0, not {json.dumps(node.value)}",
                             node.span)
    return number_node(node.value, node.span, "the optimizer's lr")


#: The fields every scheduler has (``Scheduler``'s own).
COMMON = ("lr_field", "initial_lr_field", "units")


def _common(key: str, node: Node) -> dict[str, ir.Node]:
    """``units`` as the preset's keyword; the lr fields must name the optimizer's lr."""
    if key == "units":
        return {key: option_node(node.value, UNITS, node.span, "units")}
    if node.value != {"lr_field": "lr", "initial_lr_field": "initial_lr"}[key]:
        raise SchedlangError(f"{key} {json.dumps(node.value)}: this import reads the scheduler of "
                             "the optimizer's lr", node.span)
    return {}


def _no_field(block: Node, name: str, key: str, accepted: set[str]) -> SchedlangError:
    """The error of a scheduler block's unknown ``key``, at the key, with the closest field."""
    return SchedlangError(f"{name} has no field '{key}'", _at(block, key),
                          hint=did_you_mean(key, accepted) or "its fields: " + ", ".join(sorted(accepted)))


def _fields(block: Node, name: str) -> dict[str, ir.Node]:
    """The scheduler's fields as the preset's keyword arguments, each a node at its value,
    checked at their keys."""
    accepted = {a.name for a in PRESETS[f"olmo_core.{name}"].args} - {"lr", "t_max"}
    if name in OWN_T_MAX:
        accepted.add("t_max")
    args: dict[str, ir.Node] = {}
    for key, node in block.value.items():
        if key in ("_CLASS_", "type"):
            continue
        if key in COMMON:
            args.update(_common(key, node))
            continue
        if key not in accepted:
            raise _no_field(block, name, key, accepted)
        if node.value is None:  # None: the field's value was None (as_config_dict leaves it out)
            continue
        if key in LISTS:
            if not node.is_list:
                raise SchedlangError(f"{key} must be a list of numbers", node.span)
            args[key] = ir.List(node.span, tuple(number_node(_plain(item, key), item.span, f"each of {key}")
                                                 for item in node.value))
        else:
            args[key] = number_node(_plain(node, key), node.span, key)
    if name == "CosWithWarmupAndLinearDecay" and "t_max" in block.value:
        raise SchedlangError("CosWithWarmupAndLinearDecay's own t_max moves its cosine but not its decay "
                             "(which reads the trainer's)", _at(block, "t_max"))
    return args


def _composite(block: Node, name: str) -> dict[str, ir.Node]:
    """A SequentialScheduler's or ComposableScheduler's fields as the preset's keyword arguments:
    its children (each a plain scheduler, written without the ``lr`` and ``units`` OLMo-core does
    not read of a child: ``SequentialScheduler`` calls their ``get_lr`` with its own), its maxima,
    its stages and its ``override_decay``, each record checked at its keys."""
    accepted = {a.name for a in PRESETS[f"olmo_core.{name}"].args} - {"lr", "t_max"}
    args: dict[str, ir.Node] = {}
    for key, node in block.value.items():
        if key in ("_CLASS_", "type") or node.value is None:
            continue
        if key in COMMON:
            args.update(_common(key, node))
            continue
        if key not in accepted:
            raise _no_field(block, name, key, accepted)
        args[key] = _record(node, "OverrideDecay", key) if key == "override_decay" else \
            _composite_list(name, key, node)
    return args


def _composite_list(name: str, key: str, node: Node) -> ir.List:
    """One of a composite's lists (its children, stages or maxima) as the preset's list."""
    if not node.is_list:
        raise SchedlangError(f"{key} must be a list", node.span)
    if not node.value and key in ("stages", "schedulers"):
        raise SchedlangError(f"{name}'s {key} is empty (OLMo-core requires at least one)", node.span)
    if not node.value:  # one scheduler: the maxima of all but the last, none (any value is ignored)
        return ir.List(node.span, (number(0, node.span),))
    if key == "stages":
        items = [_record(item, "ComposableSchedulerStage", f"each of {key}") for item in node.value]
    elif key == "schedulers":
        items = [_child(item) for item in node.value]
    else:  # schedulers_max (and the deprecated schedulers_max_steps): counts
        items = [number(_whole(item, f"each of {key}", 0), item.span) for item in node.value]
    return ir.List(node.span, tuple(items))


def _child(node: Node) -> ir.Call:
    """One scheduler of a SequentialScheduler's ``schedulers`` as its preset call, at its config."""
    if not node.is_mapping:
        raise SchedlangError("each of schedulers must be a scheduler config (an object)", node.span)
    name = _class(node, child=True)
    args = _fields(node, name)
    args.pop("units", None)  # a child's units are not read: the sequence's set_lr counts
    return call(f"olmo_core.{name}", span=node.span, **args)


#: The shapes of a stage and of an override (ComposableSchedulerStageType).
SHAPES = ("linear", "cosine")


def _record(node: Node, kind: str, what: str) -> ir.Call:
    """A ``ComposableSchedulerStage`` or ``OverrideDecay`` config as its preset call, at the record
    (a field it lacks is refused there)."""
    if not node.is_mapping:
        raise SchedlangError(f"{what} must be an olmo_core.optim.scheduler.{kind} config (an object)",
                             node.span)
    named = node.value.get("_CLASS_")
    if named is not None and named.value not in (f"{MODULE}.{kind}", f"olmo_core.optim.{kind}"):
        raise SchedlangError(f"{what} must be an {kind}, not {json.dumps(named.value)}", named.span,
                             hint=f"\"_CLASS_\": \"{MODULE}.{kind}\"")
    accepted = [a.name for a in PRESETS[f"olmo_core.{kind}"].args]
    args: dict[str, ir.Node] = {}
    for key, item in node.value.items():
        if key == "_CLASS_" or item.value is None:
            continue
        if key not in accepted:
            raise SchedlangError(f"{kind} has no field '{key}'", _at(node, key),
                                 hint=did_you_mean(key, accepted) or "its fields: " + ", ".join(accepted))
        args[key] = option_node(item.value, SHAPES, item.span, "shape") if key == "shape" else \
            number_node(_plain(item, key), item.span, key)
    return call(f"olmo_core.{kind}", span=node.span, **args)


#: The fields that are an lr of their own, not a fraction of the initial lr the callback scales.
ABSOLUTE = ("warmup_min_lr", "decay_min_lr", "lr_min", "start_lr", "end_lr")


def _proportional(block: Node) -> None:
    """The callback multiplies each group's initial lr by ``sqrt(new / old)`` at a batch change,
    and the import writes the scheduler times that factor: exact for a scheduler proportional to
    its initial lr.  A field that is an lr of its own (a floor, a stage's absolute end) does not
    scale, so the lr OLMo-core sets is not the product: refused at that field."""
    for key, node in block.value.items():
        if key in ABSOLUTE and not isinstance(node.value, (str, bool)) and exact(node.value) not in (None, 0):
            raise SchedlangError(f"{key} {json.dumps(node.value)} with a BatchSizeSchedulerCallback: "
                                 "OLMo-core scales the initial lr by sqrt(new / old) at each batch "
                                 f"change, and an lr of its own ({key}) does not scale, so the lr is not "
                                 "the scheduler times that factor", node.span,
                                 hint="a floor as a fraction of the lr (alpha_f, end_lr_fraction), or 0")
        items = node.value if node.is_list else [node] if node.is_mapping else []
        for item in items:
            if item.is_mapping:
                _proportional(item)


def _own_lr(block: Node) -> bool:
    """A ComposableScheduler that never reads the initial lr: its first stage's ``start_lr`` and
    every ``end_lr`` (the override's too) absolute, no fraction but 0 (``olmo_core_export.own_lr``)."""
    name = block.value.get("_CLASS_") or block.value.get("type")
    stages = block.value.get("stages")
    if name is None or str(name.value).rsplit(".", 1)[-1] not in ("ComposableScheduler", "composable") \
            or stages is None or not stages.is_list or not stages.value:
        return False
    records = [*stages.value, *([block.value["override_decay"]] if "override_decay" in block.value else [])]

    def given(record: Node, key: str) -> bool:
        item = record.value.get(key) if record.is_mapping else None
        return item is not None and item.value is not None

    def fraction(record: Node, key: str) -> bool:
        return given(record, key) and exact(record.value[key].value) != 0

    return (given(stages.value[0], "start_lr") or given(stages.value[0], "start_lr_fraction")) and not any(
        fraction(r, "start_lr_fraction") or fraction(r, "end_lr_fraction") for r in records)


def _plain(node: Node, key: str):
    """A JSON number (a string that looks like one is still a string to OLMo-core)."""
    if isinstance(node.value, (str, bool)) or exact(node.value) is None:
        raise SchedlangError(f"{key} must be a number, not {json.dumps(node.value)}", node.span)
    return node.value


def _trainer_durations(trainer: Node, clock: _Clock, ramp) -> tuple[_Duration, _Duration]:
    """The trainer's ``max_duration`` and where the run ends: at ``hard_stop`` where that comes
    first (with a batch-size schedule, compared in max_duration's unit, which it must share)."""
    duration_node = trainer.value.get("max_duration")
    if duration_node is None:
        raise SchedlangError("the trainer has no max_duration (OLMo-core's default is 1 epoch, whose "
                             "steps depend on the dataset)", trainer.span, hint=EPOCHS)
    duration = _Duration(duration_node, "trainer.max_duration")
    stop = trainer.value.get("hard_stop")
    run = duration
    if stop is not None and stop.value is not None:
        hard = _Duration(stop, "trainer.hard_stop")
        if ramp is not None and hard.unit != duration.unit:
            raise SchedlangError("with a batch-size schedule, give hard_stop in max_duration's unit (which "
                                 "comes first depends on the batch of every step)", stop.span)
        if (hard.value < duration.value) if ramp is not None else hard.steps(clock) < duration.steps(clock):
            run = hard
    return duration, run


def source(root: Node, origin: str, style: str = "presets") -> ir.Module:
    train_module = _mapping(root, "train_module", "\"train_module\"")
    trainer = _mapping(root, "trainer", "\"trainer\"")
    clock = _Clock(root)
    ramp = _batch_callback(trainer)
    duration, run = _trainer_durations(trainer, clock, ramp)
    lr = _lr(train_module)
    block = _mapping(train_module, "scheduler", "scheduler", required=False)
    where = _at(train_module, "scheduler" if block is not None else "optim")
    notes = []
    if block is None:
        value = call("olmo_core.ConstantScheduler", span=where, lr=lr)
        notes.append("train_module has no scheduler: the optimizer's lr throughout.")
    else:
        value = _scheduler_call(block, lr, ramp, duration, clock)
    if ramp is not None:
        value = _ramped(value, block, ramp, notes)
        clock.ramp(ramp, _optimizer_class(train_module))
    if run.unit == "tokens":
        clock.batch(run.node.span)
    head = [header(origin, "OLMo-core experiment config JSON"),
            "# lr(t) is the lr of update t: OLMo-core counts the step (and its tokens) before it sets "
            "the lr.", *[f"# note: {n}" for n in notes]]
    kept = [*clock.statements(), _run(trainer, run, duration)]
    preset = module(head, kept, schedule_stmt("lr", value, where))
    return preset if style == "presets" else core_module(preset, head, kept)


def _scheduler_call(block: Node, lr: ir.Node, ramp: _Ramp | None, duration: _Duration,
                    clock: _Clock) -> ir.Call:
    """The scheduler block as its ``olmo_core.*`` preset call at the block, ``t_max`` the trainer's
    horizon (at max_duration's value) unless the class sets its own (``WSDS`` has none)."""
    name = _class(block)
    args = _composite(block, name) if name in COMPOSITE.values() else _fields(block, name)
    units = block.value["units"].value if "units" in block.value else "steps"
    if name != "WSDS" and "t_max" not in args:
        if ramp is not None and duration.unit != units and name not in ("ConstantScheduler",
                                                                           "ComposableScheduler"):
            raise SchedlangError(f"with a batch-size schedule, {name} in {units} reads the trainer's "
                                 f"max_{units}, which a max_duration in {duration.unit} changes with "
                                 "every batch change", duration.node.span,
                                 hint=f"give max_duration in {units} (OLMo-core refuses most "
                                      "schedulers so), or the scheduler's own t_max")
        t_max = duration.tokens(clock) if units == "tokens" else duration.steps(clock)
        args = {"t_max": number(t_max, duration.value_at), **args}
    if units == "tokens":
        clock.batch(block.value["units"].span)
    return call(f"olmo_core.{name}", span=block.span, lr=lr, **args)


def _ramped(value: ir.Node, block: Node | None, ramp: _Ramp, notes: list[str]) -> ir.Node:
    """The lr under a batch-size callback: the scheduler times ``olmo_core.batch_size_lr_factor``,
    or, for stages that give their own lr (which the callback's factor does not reach), as it is
    with a note saying why."""
    if block is not None and _own_lr(block):
        notes.append("the scheduler's stages give their own lr: the batch-size callback's sqrt(new / "
                     "old) factor scales the initial lr, which they do not read.")
        return value
    if block is not None and len(set(ramp.sizes)) > 1:
        _proportional(block)
    factor = call("olmo_core.batch_size_lr_factor", span=ramp.at, units=ramp.units())
    return ir.BinOp(value.span, "*", value, factor)


def _run(trainer: Node, run: _Duration, duration: _Duration):
    """``run = ...`` at the trainer's key it comes from (``hard_stop`` where that ends the run first)."""
    key = "hard_stop" if run is not duration else "max_duration"
    return noted(run_stmt(run.run_value(), _at(trainer, key)), f"trainer.{key}: {run.value} {run.unit}")


# -- the declaration (``formats/__init__.py`` lists this module) ----------------------------------


def recognizes(text: str, suffix: str) -> bool:
    """OLMo-core's ``_CLASS_`` marks naming its own modules."""
    return "\"_CLASS_\"" in text and "\"olmo_core." in text


FORMAT = Format("olmo-core-json", "OLMo-core experiment config JSON (config.json: train_module.scheduler, "
                "trainer.max_duration)", (".json",), recognizes, reader("olmo-core-json", read, source),
                export)
