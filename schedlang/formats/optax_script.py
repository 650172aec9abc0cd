"""An optax schedule built in a Python training script -> ``.sched`` source.

optax has no configuration file: a JAX training script builds its schedule as a call
(``optax.warmup_cosine_decay_schedule(...)``) and hands it to an optimizer
(``optax.adamw(learning_rate=schedule)``), inside ``optax.chain(...)`` or
``optax.inject_hyperparams(optax.adamw)(learning_rate=schedule)``, often in a helper
(``def make_optimizer(config): ...``).  The script is followed by the one Python reader
(``pyconfig.literal.Module``: ``main()`` and helpers followed, argparse defaults as parameters,
``@dataclass`` and ``SimpleNamespace`` configs), never run.  What is imported:

* the schedule an optimizer of optax is given as its ``learning_rate`` (keyword or first
  positional argument), at any depth of ``chain`` / ``inject_hyperparams``; without one, the one
  schedule the script builds (a schedule inside another, ``join_schedules(schedules=[...])``,
  is part of it);
* written as the ``optax.*`` preset of the same name, whose arguments are optax's, in optax's
  positional order: optax's dicts become the presets' lists (``boundaries_and_scales={1000:
  0.5}`` is ``[[1000, 0.5]]``, ``sgdr_schedule``'s ``cosine_kwargs`` dicts are
  ``warmup_cosine_decay_schedule`` calls), nested schedules nested calls.

optax's count starts at 0 at the first update, as schedlang's ``t``.  optax computes in
float32 unless ``jax_enable_x64`` is set; the import is the exact schedule.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from ..errors import SchedlangError, Span, did_you_mean
from ..library.presets import PRESETS
from ..library.stdlib import Kind
from ..syntax import ir
from .common.format import Format, reader
from .common.pyconfig.literal import Call, Item, Module, Unread, ended_before, unfollowed
from .common.source_text import PARAMETERS, declared, expression_node, flag_node, header, option_node
from .common.statements import call as called
from .common.statements import module, schedule_stmt
from .common.symbols import Symbols
from .core_text import core_module

#: The schedule functions: the presets' names (optax 0.2.8, ``library/presets/optax.py``).
SCHEDULES = tuple(name.split(".", 1)[1] for name in PRESETS if name.startswith("optax."))
#: What wraps an optimizer without being one: the schedule is looked for in their arguments.
_WRAPPERS = ("chain", "inject_hyperparams", "named_chain", "MultiSteps", "multi_transform", "apply_if_finite")


def _optax(path: str) -> str | None:
    """The optax function ``path`` names (``optax.adamw``, ``optax.schedules.linear_schedule``)."""
    parts = path.split(".")
    return parts[-1] if parts[0] == "optax" and len(parts) > 1 else None


def _is_schedule(path: str) -> bool:
    return _optax(path) in SCHEDULES


@dataclass
class Chosen:
    """The schedule the script's optax optimizer is given, and the script's parameters
    (``symbols.Symbols``) its values may be computed from, for the file's declarations."""

    item: Item
    symbols: Symbols


def read(text: str, filename: str = "<string>") -> Chosen:
    """The ``Call`` of the schedule the script's optax optimizer is given (see the module)."""
    module = Module(text, filename, lambda path: _optax(path) is not None, script=True, lazy_calls=True)
    found = [(item, node) for item, node, path in module.calls if _is_schedule(path)]
    optimizers = [item for item, _, path in module.calls if not _is_schedule(path)
                  and _optax(path) not in _WRAPPERS]
    given = []
    for item in optimizers:
        lr = _learning_rate(item)
        if lr is not None and all(lr.raw is not g.raw for g in given if not isinstance(g, Unread)):
            given.append(lr)
    if len(given) == 1:
        chosen = given[0]
    else:
        if len(given) > 1:
            raise SchedlangError(f"this file gives {len(given)} optax optimizers a schedule; one is imported",
                                 given[1].span, hint="keep the one to import in the file")
        inner = {id(c) for item, _ in found if not isinstance(item, Unread) for c in _inside(item.raw)}
        outer = [(item, node) for item, node in found
                 if isinstance(item, Unread) or id(item.raw) not in inner]
        if not outer:
            ended_before(module, "optax schedule")
            unfollowed(module, [n for n in ast.walk(module.tree) if isinstance(n, ast.Call) and (
                getattr(n.func, "attr", None) or getattr(n.func, "id", None)) in SCHEDULES], "optax schedule")
            raise SchedlangError("no optax schedule is built in this file", Span(module.source, 1, 1, 1, 2),
                                 hint="optax.adamw(learning_rate=optax.warmup_cosine_decay_schedule(...))")
        if len(outer) > 1:
            raise SchedlangError(f"this file builds {len(outer)} optax schedules (lines "
                                 f"{', '.join(str(n.lineno) for _, n in outer)}); one is imported",
                                 module.span(outer[1][1]), hint="keep the one to import in the file")
        chosen = outer[0][0]
    chosen.value  # noqa: B018 - an Unread is its error here
    module.check_untainted(chosen)
    if not isinstance(chosen.raw, Call) or not _is_schedule(chosen.raw.path):
        raise SchedlangError("this learning_rate is not an optax schedule this file builds", chosen.span,
                             hint="a number is a constant learning rate; optax.*_schedule(...) a schedule")
    return Chosen(chosen, module.symbols)


def _learning_rate(item: Item) -> Item | None:
    """What an optimizer call is given as its ``learning_rate`` (keyword or first argument)."""
    if isinstance(item, Unread) or not isinstance(item.raw, Call):
        return None
    call = item.raw
    lr = call.kwargs.get("learning_rate", call.args[0] if call.args else None)
    if lr is None or isinstance(lr, Unread) or not isinstance(lr.raw, Call) or not _is_schedule(lr.raw.path):
        return lr if isinstance(lr, Unread) else None
    return lr


def _inside(call: Call):
    """The calls among ``call``'s arguments, at any depth (lists and dicts included)."""
    stack = [*call.args, *call.kwargs.values()]
    while stack:
        item = stack.pop()
        if isinstance(item, Unread):
            continue
        value = item.raw
        if isinstance(value, Call):
            yield value
            stack.extend([*value.args, *value.kwargs.values()])
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, dict):
            stack.extend(value.values())


# -- the .sched tree: each value a node at its span in the script -------------------------------


def source(chosen: Chosen, origin: str, style: str = "presets") -> ir.Module:
    body = _call(chosen.item)
    params, decls = declared(chosen.symbols)
    head = [header(origin, "an optax schedule built in a Python script, followed, never run"),
            "# t is the optimizer's count: update t uses schedule(t).  optax computes in float32 unless "
            "jax_enable_x64.", *([PARAMETERS] if params else [])]
    preset = module(head, decls, schedule_stmt("lr", body, chosen.item.span))
    if style == "presets":
        return preset
    return core_module(preset, [*head, "# Core style: the same schedule written without presets."], params)


def _call(item: Item) -> ir.Call:
    """One schedule call as its ``optax.*`` preset (at the script's call, each keyword at its
    argument): optax's positional order is the preset's."""
    call = item.value
    name = _optax(call.path)
    preset = PRESETS[f"optax.{name}"]
    spec = [a.name for a in preset.args]
    if len(call.args) > len(spec):
        raise SchedlangError(f"optax.{name} takes at most {len(spec)} positional arguments (Python raises "
                             "TypeError)", call.span)
    given = dict(zip(spec, call.args))
    for key, value in call.kwargs.items():
        if key not in spec:
            raise SchedlangError(f"optax.{name} has no argument '{key}' (Python raises TypeError)",
                                 call.keys[key],
                                 hint=did_you_mean(key, spec) or "its arguments: " + ", ".join(spec))
        if key in given:
            raise SchedlangError(f"optax.{name} got two values for '{key}' (Python raises TypeError)",
                                 call.keys[key])
        given[key] = value
    parts = {}
    for arg in preset.args:
        if arg.name not in given:
            continue
        value = given[arg.name]
        if value.raw is None and arg.default is None:
            continue  # None: optax's default
        parts[arg.name] = _argument(value, arg, name)
    return called(f"optax.{name}", span=call.span, **parts)


def _argument(item: Item, arg, name: str) -> ir.Node:
    value, what = item.raw, f"{arg.name}"
    if arg.kind == Kind.SCHEDULES:
        entries = item.value
        if not isinstance(entries, list):
            raise SchedlangError(f"{what} must be a list", item.span)
        if arg.name == "cosine_kwargs":  # sgdr: one dict of warmup_cosine_decay_schedule's keywords each
            return ir.List(item.span, tuple(_cycle(entry) for entry in entries))
        return ir.List(item.span, tuple(_schedule(entry, what) for entry in entries))
    if arg.kind == Kind.PAIRS:
        pairs = item.value
        if not isinstance(pairs, dict):
            raise SchedlangError(f"{what} must be a dict {{boundary: scale}}", item.span)
        spans = {k: item.keys.get(k, item.span) for k in pairs}
        return ir.List(item.span, tuple(_pair(k, v, spans[k], what) for k, v in pairs.items()))
    if arg.kind == Kind.FLAG:
        return flag_node(item.value, item.span, what)
    if arg.kind == Kind.OPTION:
        return option_node(item.value, arg.choices, item.span, what)
    if isinstance(value, list):
        return ir.List(item.span, tuple(_number(v, what) for v in item.value))
    return _number(item, what)


def _pair(key, value: Item, span: Span, what: str) -> ir.List:
    """``[boundary, scale]``: one entry of optax's ``{boundary: scale}`` dict, at its key."""
    boundary = expression_node(_key(key, span), span, what)  # first: a symbol's declarations in order
    return ir.List(span, (boundary, _number(value, what)))


def _key(key, span):
    if isinstance(key, bool) or not isinstance(key, (int, float)):
        raise SchedlangError(f"a boundary must be a number, not {key!r}", span)
    return key


def _number(item: Item, what: str) -> ir.Node:
    if isinstance(item, Unread):
        raise item.error
    return expression_node(item.raw, item.span, what)


def _schedule(item: Item, what: str) -> ir.Call:
    if isinstance(item, Unread):
        raise item.error
    if not isinstance(item.raw, Call) or not _is_schedule(item.raw.path):
        raise SchedlangError(f"each of {what} must be an optax schedule this file builds", item.span)
    return _call(item)


def _cycle(item: Item) -> ir.Call:
    """One of ``sgdr_schedule``'s ``cosine_kwargs``: optax calls ``warmup_cosine_decay_schedule(**d)``."""
    if isinstance(item, Unread):
        raise item.error
    if not isinstance(item.raw, dict):
        raise SchedlangError("each of cosine_kwargs must be a dict of warmup_cosine_decay_schedule's "
                             "keywords", item.span)
    call = Call("optax.warmup_cosine_decay_schedule", [], dict(item.raw), dict(item.keys), item.span)
    return _call(Item(call, item.span))


# -- the declaration (``formats/__init__.py`` lists this module) ----------------------------------


def recognizes(text: str, suffix: str) -> bool:
    """A ``.py`` file that calls one of optax's schedule functions (``optax.cosine_decay_schedule(``,
    or the name imported from optax)."""
    return bool(re.search(r"\boptax\b", text) and re.search(r"\b(" + "|".join(SCHEDULES) + r")\s*\(", text))


FORMAT = Format("optax", "an optax schedule built in a .py training script (optax.adamw(learning_rate="
                "optax.warmup_cosine_decay_schedule(...)))", (".py",), recognizes,
                reader("optax", read, source))
