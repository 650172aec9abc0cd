"""OpenMMLab Python config files -> ``.sched``: ``param_scheduler`` as Python builds it.

Nothing in the file is executed.  ``pyconfig.literal.Module`` follows its statements in order
as Python would run them (reassignment, ``x[k] = v``, ``.append``/``.update``, ``+=``,
``if``, arithmetic, names assigned earlier); the names the schedule needs
(``param_scheduler``, ``train_cfg``, ``optim_wrapper`` or the older ``optimizer``) are read
from the result, and a part the reader could not follow is an error where it is read, with a
caret at it.  Classes imported in new-style configs (``type=LinearLR``) are read as their
names.

``_base_ = 'path.py'`` (or a list of paths, relative to the file) is inherited as
mmengine's ``Config.fromfile`` does: each base is read the same way (as data), a key set
by two bases is an error, and the file's own values are merged in: a dict into the
base's dict key by key (unless it says ``_delete_=True``), anything else replacing it.
Errors point into the file that holds the value.  The new-style ``read_base()`` imports
are refused with the way out (merge the config with mmengine first).

Units: ``by_epoch=True`` schedulers under an ``EpochBasedTrainLoop`` step per epoch.
When every scheduler is by epoch the imported schedule is a function of the epoch (a
comment says so; add ``epoch_length=`` to ``mmengine.param_scheduler`` for one per
iteration).  When iteration and epoch schedulers mix, or one is
``convert_to_iter_based``, the step counts iterations and ``epoch_length``
(``len(train_dataloader)``) becomes a required parameter.  A missing ``end`` is the
Runner's default: ``max_epochs`` (by epoch) or ``max_iters``.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import SchedlangError, Span, did_you_mean
from ..library.presets import PRESETS
from ..library.presets._common import Rejected
from ..limits import MAX_CONFIG_BASES, read_source_text
from ..syntax import ir
from .common.format import Format, reader
from .common.numbers import exact
from .common.pyconfig.literal import Imported, Item, Module, Unread, script_schedule
from .common.source_text import choices_of, header, option_node
from .common.statements import (
    Noted,
    boolean,
    call,
    formula,
    module,
    number,
    param_stmt,
    run_stmt,
    schedule_stmt,
)
from .core_text import core_module

NEEDED = ("param_scheduler", "train_cfg", "optim_wrapper", "optimizer")
WINDOW_KEYS = ("begin", "end", "by_epoch", "convert_to_iter_based")
BASE_KEY = {"LR": "lr", "Momentum": "momentum", "ParamScheduler": "value", "WeightDecay": "weight_decay"}


class _Reader:
    def __init__(self, text: str, filename: str, chain: tuple[Path, ...] = (), counted: list | None = None):
        self.module = Module(text, filename)  # followed statement by statement (pyconfig.literal)
        self.source, self.tree = self.module.source, self.module.tree
        self.bases: list[_Reader] = []
        for stmt in self.tree.body:
            if isinstance(stmt, (ast.Import, ast.ImportFrom)) and any(
                    (alias.asname or alias.name) == "_base_" for alias in stmt.names) or _reads_base(stmt):
                raise SchedlangError("this config reads _base_ files with read_base()", self.span(stmt),
                                     hint="merge it with mmengine first (Config.fromfile(...).dump(...)), "
                                          "or write _base_ = [...]")
        if "_base_" in self.module.env:
            read = [] if counted is None else counted  # every base of the whole import, for the limit
            self.bases = self._read_bases(chain or (Path(filename).resolve(),), read)

    def _read_bases(self, chain: tuple[Path, ...], counted: list) -> list[_Reader]:
        """Each ``_base_`` file, read as data too (its own bases included)."""
        given = self.get("_base_")
        items = given.value if isinstance(given.value, list) else [given]
        if str(self.source.filename).startswith("<"):
            raise SchedlangError("_base_ paths are relative to the config file, and this one has no "
                                 "path", given.span, hint="import the file by its path, not from stdin")
        bases = []
        for item in items:
            if not isinstance(item.value, str) or not item.value.endswith(".py"):
                raise SchedlangError("a _base_ entry must be the path of a .py config", item.span,
                                     hint="JSON and YAML bases are not read; merge them with mmengine first")
            path = (Path(self.source.filename).parent / item.value).resolve()
            if path in chain:
                raise SchedlangError(f"{item.value} inherits from itself", item.span)
            counted.append(path)
            if len(counted) > MAX_CONFIG_BASES:
                raise SchedlangError(f"more than {MAX_CONFIG_BASES} _base_ files", item.span)
            if not path.is_file():
                raise SchedlangError(f"_base_ file {item.value} not found (looked for {path})", item.span)
            bases.append(_Reader(read_source_text(path), str(path), (*chain, path), counted))
        return bases

    def top(self, name: str):
        """Top-level ``name`` with inheritance: the bases' value (one base at most sets it)
        with this file's merged in, as ``Config.fromfile`` merges."""
        found = None
        for base in self.bases:
            value = base.top(name)
            if value is not None and found is not None:
                raise SchedlangError(f"'{name}' is set by two _base_ files (mmengine refuses duplicate "
                                     "keys among bases)", value.span)
            found = value if value is not None else found
        own = self.get(name)
        if own is None or found is None:
            return found if own is None else _without_delete(own)
        return _merge(own, found)

    def span(self, node: ast.AST) -> Span:
        end_line = getattr(node, "end_lineno", None) or node.lineno
        end_col = getattr(node, "end_col_offset", None)
        if end_line != node.lineno or end_col is None:
            end_col = node.col_offset + 1
        return Span(self.source, node.lineno, node.col_offset + 1, node.lineno, end_col + 1)

    def get(self, name: str):
        return self.module.get(name)


def _reads_base(stmt: ast.AST) -> bool:
    """``with read_base(): from .x import *``: mmengine's new-style (lazy import) inheritance."""
    return isinstance(stmt, ast.With) and any(
        isinstance(item.context_expr, ast.Call) and isinstance(item.context_expr.func, ast.Name)
        and item.context_expr.func.id == "read_base" for item in stmt.items)


def _merge(own: Item, base: Item) -> Item:
    """mmengine's ``Config._merge_a_into_b``: a dict is merged into the base's dict key by key
    unless it says ``_delete_=True``; any other value (a list, a number) replaces the base's."""
    if not _is_dict(own) or not _is_dict(base) or _deletes(own):
        return _without_delete(own)
    out, keys = dict(base.value), dict(base.keys)
    for key, value in own.value.items():
        if key == "_delete_":
            continue
        if _is_dict(value) and key in out and not _deletes(value):
            if not _is_dict(out[key]):
                raise SchedlangError(f"'{key}' is a dict here, but not in the _base_ file it merges into",
                                     own.keys.get(key, value.span), hint="add _delete_=True to replace it")
            out[key] = _merge(value, out[key])
        else:
            out[key] = _without_delete(value)
        keys[key] = own.keys.get(key, value.span)
    return Item(out, own.span, keys)


def _deletes(item: Item) -> bool:
    flag = item.value.get("_delete_") if _is_dict(item) else None
    return flag is not None and not isinstance(flag, Unread) and flag.value is True


def _without_delete(item: Item) -> Item:
    if not _is_dict(item) or "_delete_" not in item.value:
        return item
    return Item({k: v for k, v in item.value.items() if k != "_delete_"}, item.span,
                {k: v for k, v in item.keys.items() if k != "_delete_"})


def _is_dict(item: Item) -> bool:
    """A dict value (one not followed is not: it is an error only where it is read)."""
    return not isinstance(item, Unread) and isinstance(item.value, dict)


def _type_name(item: Item) -> str:
    """A scheduler's ``type``: a registry name, or a class imported in a new-style config
    (``from mmengine.optim import LinearLR``; ``type=LinearLR``), read as its name."""
    value = item.value
    if isinstance(value, Imported):
        return value.path.rsplit(".", 1)[-1]
    if not isinstance(value, str):
        raise SchedlangError("a scheduler's type is a name (a string or an imported class)", item.span)
    return value


def _family(type_name: str, span: Span) -> tuple[str, str, str]:
    for family in BASE_KEY:
        if type_name.endswith(family) and f"mmengine.{type_name}" in PRESETS:
            entry = PRESETS[f"mmengine.{type_name}"]
            if isinstance(entry, Rejected):
                break
            return f"mmengine.{type_name}", family, type_name[: -len(family)]
    entry = PRESETS.get(f"mmengine.{type_name}")
    if isinstance(entry, Rejected):
        raise SchedlangError(f"{type_name} cannot be imported: {entry.reason}", span)
    known = [n.split(".", 1)[1] for n, p in PRESETS.items()
             if n.startswith("mmengine.") and not isinstance(p, Rejected) and n != "mmengine.param_scheduler"]
    raise SchedlangError(f"'{type_name}' is not an mmengine parameter scheduler", span,
                         hint=did_you_mean(type_name, known) or "mmengine's types: " + ", ".join(known[:10])
                         + ", ... (schedulers that other OpenMMLab packages register are not read)")


def _number(item: Item, what: str) -> ir.Node:
    """The config's number as a node at the span that built it (an error lowering raises at it is
    there)."""
    value = exact(item.value)
    if value is None:
        raise SchedlangError(f"{what} must be a number, not {item.value!r}", item.span)
    return number(value, item.span)


def _argument(item: Item, name: str, choices: tuple[str, ...] = ()) -> ir.Node:
    """A scheduler's argument as a node at its value: a flag, an option of the preset's choices,
    a list of these or a number."""
    value = item.value
    if isinstance(value, bool):
        return boolean(value, item.span)
    if isinstance(value, str):
        return option_node(value, choices, item.span, name)
    if isinstance(value, list):
        return ir.List(item.span, tuple(_argument(v, name, choices) for v in value))
    if value is None:
        raise SchedlangError(f"{name}=None: leave the key out for mmengine's default", item.span)
    return _number(item, name)


#: A scheduler's ``end`` or the run as epochs of ``epoch_length`` iterations (``EPOCHS``: max_epochs).
IN_ITERATIONS = "EPOCHS * epoch_length"


def _reads_length(node: ir.Node) -> bool:
    """Whether ``node`` counts iterations by the file's ``epoch_length``."""
    return any(isinstance(n, ir.Name) and n.id == "epoch_length" for n in ir.walk(node))


def source(text: str, filename: str = "<string>", style: str = "presets", options=None) -> ir.Module:
    if options:
        raise SchedlangError(f"mmengine-config has no option '{next(iter(options))}'")
    reader = _Reader(text, filename)
    schedulers = _param_scheduler(reader)
    loop, base = _loop(reader), _bases(reader)
    read: list[_Scheduler] = []
    for item in schedulers.value if isinstance(schedulers.value, list) else [schedulers]:
        read.append(_scheduler(item, loop, base, {s.param for s in read}))
    lines: dict[str, list[ir.Call]] = {}
    for scheduler in read:
        lines.setdefault(scheduler.param, []).append(scheduler.call)
    all_epoch = all(s.counts_epochs for s in read)
    mixed = not all_epoch and any(s.counts_epochs for s in read)
    needs_length = mixed or any(s.needs_length for s in read)
    head = _head(filename, all_epoch)
    decls = _declarations(_run(loop, all_epoch), needs_length, schedulers.span)
    tree = module(head, decls, _schedules(lines, needs_length, mixed, schedulers.span))
    return core_module(tree, head, decls) if style == "core" else tree


def _param_scheduler(reader: _Reader) -> Item:
    """``param_scheduler``, inherited; a file without it may be a training script, refused at its
    scheduler call."""
    schedulers = reader.top("param_scheduler")
    if schedulers is None:
        script_schedule(reader.module)  # a training script's scheduler call: refused at it
        raise SchedlangError("no param_scheduler in this config", Span(reader.source, 1, 1, 1, 2),
                             hint="param_scheduler = [dict(type='LinearLR', ...), ...]")
    return schedulers


@dataclass(frozen=True)
class _Loop:
    """``train_cfg``: its mapping (empty when absent), its ``type``, whether it steps per epoch, and
    the item itself (None when absent) for the errors that point at it."""

    cfg: dict
    type: object
    by_epoch: bool
    item: Item | None


def _loop(reader: _Reader) -> _Loop:
    """``train_cfg`` as the Runner reads it: an ``IterBasedTrainLoop`` steps per iteration, any
    other loop per epoch unless it says ``by_epoch=False``."""
    loop = reader.top("train_cfg")
    cfg = loop.value if loop is not None and isinstance(loop.value, dict) else {}
    loop_type = cfg["type"].value if "type" in cfg else None
    by_epoch = loop_type != "IterBasedTrainLoop" and (cfg["by_epoch"].value if "by_epoch" in cfg else True)
    return _Loop(cfg, loop_type, by_epoch, loop)


@dataclass(frozen=True)
class _Scheduler:
    """One ``param_scheduler`` entry read: the value it drives, its preset call, whether it counts
    epochs (by epoch and not converted to iterations) and whether it needs ``epoch_length``."""

    param: str
    call: ir.Call
    counts_epochs: bool
    needs_length: bool


def _by_epoch(cfg: dict) -> bool:
    """A scheduler's ``by_epoch``: mmengine's default is True."""
    return cfg["by_epoch"].value if "by_epoch" in cfg else True


def _converts(cfg: dict) -> bool:
    """A scheduler's ``convert_to_iter_based``: by epoch in the config, stepped per iteration."""
    return cfg["convert_to_iter_based"].value if "convert_to_iter_based" in cfg else False


def _scheduler(item: Item, loop: _Loop, base: dict[str, ir.Node], seen: set[str]) -> _Scheduler:
    """One ``param_scheduler`` entry as its preset call, at the entry.  The first scheduler of a
    value starts from the optimizer's (``base``); a missing ``end`` is the loop's length."""
    if not isinstance(item.value, dict) or "type" not in item.value:
        raise SchedlangError("a param_scheduler entry must be a dict with a type", item.span)
    cfg = item.value
    type_name = _type_name(cfg["type"])
    name, family, _ = _family(type_name, cfg["type"].span)
    param = cfg["param_name"].value if "param_name" in cfg else {
        "LR": "lr", "Momentum": "momentum", "WeightDecay": "weight_decay"}.get(family, "lr")
    by_epoch, convert = _by_epoch(cfg), _converts(cfg)
    if by_epoch and not convert and not loop.by_epoch:
        raise SchedlangError(f"{type_name} is by epoch (by_epoch defaults to True) under an "
                             "iteration-based loop: mmengine never steps it after construction",
                             cfg["type"].span, hint="set by_epoch=False (or convert_to_iter_based=True)")
    start = _start(base, param, type_name, cfg["type"].span)
    given = _arguments(item, type_name, name)
    limit = None if "end" in cfg else _loop_limit(loop, by_epoch)
    first = {} if param in seen else {BASE_KEY[family]: start}
    made = {} if limit is None else {"end": limit}
    if convert:
        made["epoch_length"] = ir.Name(cfg["convert_to_iter_based"].span, "epoch_length")
    twice = next((key for key in (*first, *made) if key in given), None)
    if twice is not None:  # a keyword the import passes too (the preset's own)
        raise SchedlangError(f"keyword '{twice}' is given twice", given[twice].span)
    parts = {**first, **given, **made}
    needs_length = bool(convert) or limit is not None and _reads_length(limit)
    return _Scheduler(param, call(name, span=item.span, **parts), bool(by_epoch and not convert),
                      needs_length)


def _start(base: dict[str, ir.Node], param: str, type_name: str, span: Span) -> ir.Node:
    """The optimizer's initial value of ``param``, where a scheduler of it starts."""
    start = base.get(param)
    if start is None:
        raise SchedlangError(f"no initial {param} found for {type_name}: give "
                             f"optim_wrapper = dict(optimizer=dict({param}=...))", span)
    return start


def _arguments(item: Item, type_name: str, name: str) -> dict[str, ir.Node]:
    """A scheduler's own keys as the preset's keyword arguments, each a node at its value; the
    keys mmengine uses for bookkeeping only (``type``, ``_scope_``, ``verbose``, ``last_step``)
    are left out."""
    allowed = {a.name for a in PRESETS[name].args}
    parts = {}
    for key, value in item.value.items():
        if key in ("type", "_scope_", "verbose", "last_step"):
            continue
        if key not in allowed:
            raise SchedlangError(f"{type_name} has no argument '{key}'",
                                 item.keys.get(key, item.span), hint=did_you_mean(key, sorted(allowed)))
        parts[key] = _argument(value, key, choices_of(name, key))
    return parts


def _head(filename: str, all_epoch: bool) -> list[str]:
    """The header comments: where the schedule comes from and what ``t`` counts."""
    head = [header(filename, "OpenMMLab param_scheduler, mmengine 0.10.7"),
            "# Its statements were followed as Python runs them; nothing in the file was run."]
    if all_epoch:
        head.append("# Every scheduler is by epoch: t counts epochs. For a per-iteration schedule add "
                    "epoch_length=... to mmengine.param_scheduler.")
    else:
        head.append("# t counts iterations; epoch_length is len(train_dataloader).")
    return head


def _declarations(run: Noted | None, needs_length: bool, span: Span) -> list:
    """``param epoch_length`` (at ``param_scheduler``, ``span``, whose schedulers need it) when a
    schedule or the ``run`` needs it, then the ``run``."""
    declared = needs_length or (run is not None and _reads_length(run.statement))
    decls = [param_stmt("epoch_length", "int", where="epoch_length > 0", span=span)] if declared else []
    if run is not None:
        decls.append(run)
    return decls


def _schedules(lines: dict[str, list[ir.Call]], needs_length: bool, mixed: bool, span: Span) -> list:
    """A ``schedule`` statement per value: its one scheduler, or mmengine's chain of them (at
    ``param_scheduler``, ``span``: what the chain refuses, overlapping windows, is there)."""
    body = []
    for param, calls in lines.items():
        length = {"epoch_length": ir.Name(span, "epoch_length")} if needs_length else {}
        if len(calls) == 1 and not (needs_length and mixed):
            expr = calls[0]
        else:
            expr = call("mmengine.param_scheduler", span=span, schedulers=ir.List(span, tuple(calls)),
                        **length)
        body.append(schedule_stmt(param, expr, span))
    return body


def _run(loop: _Loop, all_epoch: bool) -> Noted | None:
    """``run = ...`` from ``train_cfg``, in the file's ``t``: ``EpochBasedTrainLoop`` trains
    ``max_epochs`` epochs of ``len(train_dataloader)`` iterations (its ``max_iters`` is their
    product), ``IterBasedTrainLoop`` ``max_iters`` iterations.  None when the loop states no
    length (or is not one of the two)."""
    loop_cfg = loop.cfg
    if loop.type not in (None, "EpochBasedTrainLoop", "IterBasedTrainLoop"):
        return None
    if loop.by_epoch:
        if "max_epochs" not in loop_cfg:
            return None
        epochs, at = _number(loop_cfg["max_epochs"], "max_epochs"), _key(loop, "max_epochs")
        if all_epoch:
            return Noted(run_stmt(epochs, at), "train_cfg max_epochs; t counts epochs")
        return Noted(run_stmt(formula(IN_ITERATIONS, epochs.span, EPOCHS=epochs), at),
                     "train_cfg max_epochs of len(train_dataloader) iterations")
    if "max_iters" not in loop_cfg:
        return None
    return Noted(run_stmt(_number(loop_cfg["max_iters"], "max_iters"), _key(loop, "max_iters")),
                 "train_cfg max_iters")


def _key(loop: _Loop, key: str) -> Span:
    """The span of ``train_cfg``'s ``key`` (the statement a loop's length states)."""
    return loop.item.keys.get(key, loop.cfg[key].span)


def _loop_limit(loop: _Loop, by_epoch: bool) -> ir.Node:
    """A scheduler's default ``end``, the Runner's: ``max_epochs`` by epoch, else ``max_iters``
    (or ``max_epochs`` epochs of ``epoch_length`` iterations), at the loop's value."""
    loop_cfg, span = loop.cfg, loop.item.span if loop.item else None
    if by_epoch:
        if "max_epochs" not in loop_cfg:
            raise SchedlangError("a scheduler without end needs train_cfg max_epochs (the Runner's default "
                                 "end)", span)
        return _number(loop_cfg["max_epochs"], "max_epochs")
    if "max_iters" in loop_cfg:
        return _number(loop_cfg["max_iters"], "max_iters")
    if "max_epochs" in loop_cfg:
        epochs = _number(loop_cfg["max_epochs"], "max_epochs")
        return formula(IN_ITERATIONS, epochs.span, EPOCHS=epochs)
    raise SchedlangError("a scheduler without end needs train_cfg max_iters or max_epochs (the Runner's "
                         "default end)", span)


def _bases(reader: _Reader) -> dict[str, ir.Node]:
    """The optimizer's initial lr, momentum (``betas[0]``; SGD's 0 at its type) and weight decay,
    each a number at its value."""
    wrapper = reader.top("optim_wrapper")
    if wrapper is not None and isinstance(wrapper.value, dict) and "optimizer" in wrapper.value:
        optimizer = wrapper.value["optimizer"]
    else:
        optimizer = reader.top("optimizer")
    found: dict[str, ir.Node] = {}
    if optimizer is None or not isinstance(optimizer.value, dict):
        return found
    opt = optimizer.value
    for key in ("lr", "momentum", "weight_decay"):
        if key in opt:
            found[key] = _number(opt[key], f"optimizer {key}")
    if "betas" in opt and isinstance(opt["betas"].value, list) and opt["betas"].value:
        found.setdefault("momentum", _number(opt["betas"].value[0], "betas[0]"))
    if "momentum" not in found and str(opt.get("type", Item("", None)).value) in ("SGD",):
        found["momentum"] = number(0, opt["type"].span)
    return found


# -- the declaration (``formats/__init__.py`` lists this module) ----------------------------------


def recognizes(text: str, suffix: str) -> bool:
    """A top-level ``param_scheduler`` or ``_base_``, or ``read_base()``: a config's own words.  A
    ``.py`` file is never an OpenMMLab config only because it is Python (a training script is
    guessed by what it calls, ``formats/__init__.py``)."""
    return bool(re.search(r"^(param_scheduler|_base_)\b|\bread_base\(\)", text, re.MULTILINE))


def unrecognized(text: str, filename: str) -> None:
    """A ``.py`` file no format recognizes: a training script building its scheduler with a
    framework's own call is refused at that call (``pyconfig.literal.script_schedule``)."""
    script_schedule(Module(text, filename, script=True))


FORMAT = Format("mmengine-config", "OpenMMLab / mmengine config (param_scheduler = [...])", (".py",),
                recognizes, reader("mmengine-config", None, source, takes_options=True),
                unrecognized=unrecognized)
