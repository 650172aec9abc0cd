"""A serialized Keras ``LearningRateSchedule`` (JSON) -> ``.sched`` source.

Accepted, as ``keras.optimizers.schedules.deserialize`` accepts them:

- ``keras.optimizers.schedules.serialize(s)`` (= ``keras.saving.serialize_keras_object``):
  ``{"module": "keras.optimizers.schedules", "class_name": "CosineDecay", "config": {...},
  "registered_name": null}``;
- ``{"class_name": ..., "config": s.get_config()}`` (the tf.keras form);
- a serialized optimizer (``keras.optimizers.serialize(opt)``) whose ``learning_rate`` is one
  of the above: its schedule is imported;
- in a ``.py`` script, the schedule call (``keras_schedule``) or an instance of a
  ``LearningRateSchedule`` subclass of the script, its ``__call__`` traced (``pyconfig.trace``).

JSON is read with the YAML reader (JSON is YAML; the safe loader keeps every value's
line and column for diagnostics).  ``config`` keys are the constructor's keywords, so
the preset call is the config written out (``name`` dropped: it only names the ops).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from ..errors import SchedlangError, Span, did_you_mean
from ..library.presets import PRESETS
from ..syntax import ir
from .common.format import Format, lowered, reader
from .common.json_source import load
from .common.keys import json_keys
from .common.numbers import exact
from .common.pyconfig.literal import Instance, Module, Unread, ended_before, to_node, unfollowed
from .common.pyconfig.trace import traced
from .common.source_text import PARAMETERS, declared, expression_node, header
from .common.statements import boolean, call, module, number, schedule_stmt
from .common.yaml_source import Node
from .core_text import core_module

MODULES = ("keras.optimizers.schedules", "keras.src.optimizers.schedules.learning_rate_schedule", None)
CLASSES = ("ExponentialDecay", "PiecewiseConstantDecay", "PolynomialDecay", "InverseTimeDecay",
           "CosineDecay", "CosineDecayRestarts")
#: Each class's parameters in the order Keras 3.15 takes them positionally (a call in a script).
POSITIONAL = {
    "ExponentialDecay": ("initial_learning_rate", "decay_steps", "decay_rate", "staircase", "name"),
    "PiecewiseConstantDecay": ("boundaries", "values", "name"),
    "PolynomialDecay": ("initial_learning_rate", "decay_steps", "end_learning_rate", "power", "cycle",
                        "name"),
    "InverseTimeDecay": ("initial_learning_rate", "decay_steps", "decay_rate", "staircase", "name"),
    "CosineDecay": ("initial_learning_rate", "decay_steps", "alpha", "name", "warmup_target", "warmup_steps"),
    "CosineDecayRestarts": ("initial_learning_rate", "first_decay_steps", "t_mul", "m_mul", "alpha", "name"),
}


def read(text: str, filename: str = "<string>") -> Node:
    if filename.endswith(".py"):  # a schedule built in a training script, followed, never run

        return keras_schedule(text, filename, CLASSES, POSITIONAL)
    root = load(text, filename)
    if not root.is_mapping:
        raise SchedlangError("expected a serialized Keras LearningRateSchedule (a JSON object)", root.span)
    config = root.value.get("config")
    if config is not None and config.is_mapping and "learning_rate" in config.value \
            and config.value["learning_rate"].is_mapping:
        return config.value["learning_rate"]  # a serialized optimizer: its schedule
    return root


_KERAS_CLOCK = "# t is optimizer.iterations: update t uses schedule(t).  Keras computes in float32."


@dataclass(frozen=True)
class Traced:
    """A script's ``LearningRateSchedule`` subclass read as its formula (``pyconfig.trace``)."""

    formula: str
    name: str
    span: Span


def source(root: Node | Traced, origin: str, style: str = "presets") -> ir.Module:
    if isinstance(root, Traced):
        return module(header(origin, f"the Keras LearningRateSchedule {root.name} of a Python script, "
                                     "its __call__ traced with a symbolic step, never run"),
                      _KERAS_CLOCK, schedule_stmt("lr", root.formula, root.span))
    name = _class_name(root)
    config = _config(root, name)
    preset_entry = PRESETS[f"keras.{name}"]
    parts, numbers = _arguments(preset_entry, name, config)
    spans = {key: config.value[key].span for key in parts}
    what = "a Keras schedule built in a Python script, followed, never run" if origin.endswith(".py") \
        else "a serialized Keras LearningRateSchedule"
    params, decls = declared(root.symbols)
    head = [header(origin, what), _KERAS_CLOCK,
            *([PARAMETERS] if params else [])]
    preset = module(head, decls, schedule_stmt("lr", call(f"keras.{name}", span=root.span, **parts),
                                               root.span))
    if style == "presets":
        return preset
    lowered(preset, origin)  # an error lands on the configuration before the core text loses its spans
    core_head = [*head, "# Core style: the same schedule written without presets."]
    restarts = None if name != "CosineDecayRestarts" or decls \
        else _cosine_restarts(preset_entry, numbers, spans, root.span)
    if restarts is not None:
        return module(core_head, schedule_stmt("lr", restarts, root.span))
    return core_module(preset, core_head, params)


def _class_name(root: Node) -> str:
    """The serialized schedule's ``class_name``, checked to be one of Keras' built-in schedules
    from ``keras.optimizers.schedules`` (a custom one has its formula only in Python code)."""
    if "class_name" not in root.value:
        raise SchedlangError("no class_name: which LearningRateSchedule is this?", root.span,
                             hint="keras.optimizers.schedules.serialize(schedule) writes class_name and "
                                  "config; a bare get_config() needs {\"class_name\": ..., \"config\": ...}")
    name_node = root.value["class_name"]
    name = name_node.value
    if name not in CLASSES:
        hint = did_you_mean(str(name), CLASSES) or "one of " + ", ".join(CLASSES)
        raise SchedlangError(f"'{name}' is not one of Keras' built-in LearningRateSchedules", name_node.span,
                             hint=hint + " (a custom schedule's formula is in its Python code)")
    named = root.value.get("module")
    if named is not None and named.value not in MODULES:
        raise SchedlangError(f"module '{named.value}' is not keras.optimizers.schedules", named.span)
    return name


def _config(root: Node, name: str) -> Node:
    """The ``config`` mapping (``get_config()``'s): the constructor's keywords."""
    config = root.value.get("config")
    if config is None or not config.is_mapping:
        raise SchedlangError(f"{name} needs its config: the mapping get_config() returns",
                             (config or root.value["class_name"]).span)
    return config


def _arguments(preset_entry, name: str, config: Node) -> tuple[dict[str, ir.Node], dict]:
    """The preset call's keywords (each value a node at its key's value) and each key's exact
    number: the config written out, less the op ``name`` and the keywords left at their default
    ``None``."""
    known = [a.name for a in preset_entry.args]
    parts, numbers = {}, {}
    for key, node in config.value.items():
        if key == "name" or (node.value is None and _default(preset_entry, key) is None):
            continue  # the op name, or a keyword left at its default None
        if key not in known:
            raise SchedlangError(f"{name} has no argument '{key}'", config.key_spans[key],
                                 hint=did_you_mean(key, known) or "arguments: " + ", ".join(known))
        parts[key] = _value(node, key)
        numbers[key] = exact(node.value)
    return parts, numbers


def _cosine_restarts(preset, given: dict, spans: dict, span) -> ir.Node | None:
    """``CosineDecayRestarts`` with growing restarts and no amplitude decay (``m_mul = 1``, Keras'
    default) as the standard library's ``cosine_restarts`` from ``initial`` to ``initial *
    alpha``: its lowered form has a restart index, which no function of the language prints.  Each
    number is at the key it is computed from (``span``, the schedule's, for a default)."""
    values = {a.name: exact(a.default) for a in preset.args} | given
    mult = values["t_mul"]
    if values["m_mul"] != 1 or mult == 1 or not mult.is_integer:
        return None  # t_mul = 1 prints as floor(t / first); m_mul != 1 has no core form
    peak = values["initial_learning_rate"]

    def at_key(value, key):
        return number(value, spans.get(key, span))

    return call("cosine_restarts", at_key(peak, "initial_learning_rate"),
                at_key(peak * values["alpha"], "alpha" if "alpha" in spans else "initial_learning_rate"),
                at_key(values["first_decay_steps"], "first_decay_steps"), span=span,
                mult=at_key(mult, "t_mul"))


def _default(preset, key):
    return next(a.default for a in preset.args if a.name == key)


def _value(node: Node, key: str) -> ir.Node:
    """The config's value as a node at its span: a bool, a list of values, or a number (a script's
    value computed from its argparse defaults: the expression of its parameters)."""
    value = node.value
    if isinstance(value, bool):
        return boolean(value, node.span)
    if isinstance(value, list):
        return ir.List(node.span, tuple(_value(item, key) for item in value))
    return expression_node(value, node.span, key)


# -- the same, in a Python training script (followed over ast, never run) ------------------------------


def keras_schedule(text: str, filename: str, classes, positional):
    """The one Keras ``LearningRateSchedule`` a training script builds
    (``keras.optimizers.schedules.CosineDecay(...)``, ``tf.keras...``, a class imported
    from there, or inside an optimizer's ``learning_rate=``) as the ``Node`` of its
    serialized form (``{"class_name": ..., "config": {...}}``) for ``keras_json.source``.
    ``positional`` names each class's positional parameters, in Keras' order."""

    def records(path: str) -> bool:
        return path.split(".")[0] in ("keras", "tensorflow", "tf_keras") and (
            _schedule(path, classes)
            or ".optimizers." in f".{path}" and path.rsplit(".", 1)[-1][:1].isupper())

    module = Module(text, filename, records, script=True)
    found = [(item, node) for item, node, path in module.calls if _schedule(path, classes)
             or path.endswith(".LearningRateSchedule") and not isinstance(item, Unread)
             and isinstance(item.raw, Instance)]
    if not found:
        ended_before(module, "Keras LearningRateSchedule")
        unfollowed(module, [n for n in ast.walk(module.tree) if isinstance(n, ast.Call) and (
            getattr(n.func, "attr", None) or getattr(n.func, "id", None)) in classes], "Keras schedule")
        raise SchedlangError("no Keras LearningRateSchedule is built in this file",
                             Span(module.source, 1, 1, 1, 2),
                             hint="keras.optimizers.schedules." + "(...), ".join(classes[:2]) + "(...), ...")
    if len(found) > 1:
        lines = ", ".join(str(node.lineno) for _, node in found)
        raise SchedlangError(f"this file builds {len(found)} Keras schedules (lines {lines}); one is "
                             "imported",
                             module.span(found[1][1]), hint="keep the one to import in the file")
    item, node = found[0]
    call = item.value  # an Unread is its error here
    if isinstance(call, Instance):  # a LearningRateSchedule subclass: its __call__ traced
        return Traced(traced(module, call, item.span), call.cls.name, item.span)
    module.check_untainted(item)
    names = positional[call.name]
    if len(call.args) > len(names):
        raise SchedlangError(f"{call.name} takes at most {len(names)} positional arguments", call.span)
    config, keys = {}, {}
    for name, arg in zip(names, call.args):
        if name in call.kwargs:
            raise SchedlangError(f"{call.name} got two values for '{name}' (Python raises TypeError)",
                                 call.keys[name])
        config[name], keys[name] = arg, arg.span
    config.update(call.kwargs)
    keys.update(call.keys)
    if isinstance(config.get("name"), Unread):  # an f-string name: dropped, as keras_json drops names
        del config["name"]
    head = Span(module.source, call.span.line, call.span.column, call.span.line, call.span.column + 1)

    return Node({"class_name": Node(call.name, call.span),
                 "config": Node({k: to_node(v, k) for k, v in config.items()}, head, keys)}, call.span,
                symbols=module.symbols)


def _schedule(path: str, classes) -> bool:
    module, _, name = path.rpartition(".")
    return name in classes and module.endswith(("optimizers.schedules", "learning_rate_schedule"))


# -- the declaration (``formats/__init__.py`` lists this module) ----------------------------------


def recognizes(text: str, suffix: str) -> bool:
    """A serialized schedule's ``"class_name"``, or in a ``.py`` file a schedule class called next
    to the word ``keras`` (``keras.optimizers.schedules.CosineDecay(...)``)."""
    if suffix == ".py":
        return bool(re.search(r"\bkeras\b", text) and re.search(
            r"\b(" + "|".join(CLASSES) + r")\s*\(|\bLearningRateSchedule\s*\)", text))
    return "class_name" in json_keys(text)


FORMAT = Format("keras-json",
                "a serialized Keras LearningRateSchedule (keras.optimizers.schedules.serialize), "
                "or a .py script that builds one",
                (".json", ".py"), recognizes, reader("keras-json", read, source))
