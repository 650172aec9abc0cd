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

from ..codegen.sched import sched_text
from ..codegen.sched import text as expr_text
from ..errors import SchedlangError, Span, did_you_mean
from ..library.presets import PRESETS
from ..library.presets._common import Rejected
from ..limits import MAX_CONFIG_BASES, read_source_text
from ..program import compile as compile_program
from ..syntax import ir, unparse
from .common.format import Format, reader
from .common.numbers import exact
from .common.pyconfig.literal import Imported, Item, Module, Unread, script_schedule
from .common.source_text import choices_of, header, option
from .common.statements import Noted, module, param_stmt, run_stmt, schedule_stmt

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


def _number_text(item: Item, what: str) -> str:
    value = exact(item.value)
    if value is None:
        raise SchedlangError(f"{what} must be a number, not {item.value!r}", item.span)
    return sched_text(value)


def _arg_text(item: Item, name: str, choices: tuple[str, ...] = ()) -> str:
    value = item.value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return option(value, choices, item.span, name)
    if isinstance(value, list):
        return "[" + ", ".join(_arg_text(v, name, choices) for v in value) + "]"
    if value is None:
        raise SchedlangError(f"{name}=None: leave the key out for mmengine's default", item.span)
    return _number_text(item, name)


def source(text: str, filename: str = "<string>", style: str = "presets", options=None) -> ir.Module:
    if options:
        raise SchedlangError(f"mmengine-config has no option '{next(iter(options))}'")
    reader = _Reader(text, filename)
    schedulers = _param_scheduler(reader)
    loop, base = _loop(reader), _bases(reader)
    read: list[_Scheduler] = []
    for item in schedulers.value if isinstance(schedulers.value, list) else [schedulers]:
        read.append(_scheduler(item, loop, base, {s.param for s in read}))
    lines: dict[str, list[str]] = {}
    for scheduler in read:
        lines.setdefault(scheduler.param, []).append(scheduler.call)
    all_epoch = all(s.counts_epochs for s in read)
    mixed = not all_epoch and any(s.counts_epochs for s in read)
    needs_length = mixed or any(s.needs_length for s in read)
    head = _head(filename, all_epoch)
    decls = _declarations(_run(loop, all_epoch), needs_length)
    tree = module(head, decls, _schedules(lines, needs_length, mixed, schedulers.span))
    text_out = _checked(tree, schedulers.span)
    if style == "core":
        return _lower(text_out, head, decls, list(lines))
    return tree


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
    call: str
    counts_epochs: bool
    needs_length: bool


def _by_epoch(cfg: dict) -> bool:
    """A scheduler's ``by_epoch``: mmengine's default is True."""
    return cfg["by_epoch"].value if "by_epoch" in cfg else True


def _converts(cfg: dict) -> bool:
    """A scheduler's ``convert_to_iter_based``: by epoch in the config, stepped per iteration."""
    return cfg["convert_to_iter_based"].value if "convert_to_iter_based" in cfg else False


def _scheduler(item: Item, loop: _Loop, base: dict[str, str], seen: set[str]) -> _Scheduler:
    """One ``param_scheduler`` entry as its preset call.  The first scheduler of a value starts
    from the optimizer's (``base``); a missing ``end`` is the loop's length."""
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
    parts = [] if param in seen else [f"{BASE_KEY[family]}={start}"]
    parts += _arguments(item, type_name, name)
    limit = None if "end" in cfg else _loop_limit(loop, by_epoch)
    if limit is not None:
        parts.append(f"end={limit}")
    if convert:
        parts.append("epoch_length=epoch_length")
    needs_length = bool(convert) or limit is not None and "epoch_length" in limit
    return _Scheduler(param, f"{name}({', '.join(parts)})", bool(by_epoch and not convert), needs_length)


def _start(base: dict[str, str], param: str, type_name: str, span: Span) -> str:
    """The optimizer's initial value of ``param``, where a scheduler of it starts."""
    start = base.get(param)
    if start is None:
        raise SchedlangError(f"no initial {param} found for {type_name}: give "
                             f"optim_wrapper = dict(optimizer=dict({param}=...))", span)
    return start


def _arguments(item: Item, type_name: str, name: str) -> list[str]:
    """A scheduler's own keys as the preset's arguments (``key=value``); the keys mmengine uses
    for bookkeeping only (``type``, ``_scope_``, ``verbose``, ``last_step``) are left out."""
    allowed = {a.name for a in PRESETS[name].args}
    parts = []
    for key, value in item.value.items():
        if key in ("type", "_scope_", "verbose", "last_step"):
            continue
        if key not in allowed:
            raise SchedlangError(f"{type_name} has no argument '{key}'",
                                 item.keys.get(key, item.span), hint=did_you_mean(key, sorted(allowed)))
        parts.append(f"{key}={_arg_text(value, key, choices_of(name, key))}")
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


def _declarations(run: Noted | None, needs_length: bool) -> list:
    """``param epoch_length`` when a schedule or the ``run`` needs it, then the ``run``."""
    declared = needs_length or (run is not None and "epoch_length" in unparse.statement(run.statement))
    decls = [param_stmt("epoch_length", "int", where="epoch_length > 0")] if declared else []
    if run is not None:
        decls.append(run)
    return decls


def _schedules(lines: dict[str, list[str]], needs_length: bool, mixed: bool, span: Span) -> list:
    """A ``schedule`` statement per value: its one scheduler, or mmengine's chain of them."""
    body = []
    for param, calls in lines.items():
        tail = ", epoch_length=epoch_length" if needs_length else ""
        if len(calls) == 1 and not (needs_length and mixed):
            expr = calls[0]
        else:
            expr = "mmengine.param_scheduler(schedulers=[\n    " + ",\n    ".join(calls) + f"]{tail})"
        body.append(schedule_stmt(param, expr, span))
    return body


def _checked(tree: ir.Module, span: Span) -> str:
    """The module's text, compiled: what the presets refuse (overlapping windows, bad arguments) is
    reported in the config, at its ``param_scheduler``."""
    text_out = unparse.module(tree)
    try:
        compile_program(text_out, filename="<import>")
    except SchedlangError as exc:
        raise SchedlangError(exc.message, span, hint=exc.hint) from None
    return text_out


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
        epochs = _number_text(loop_cfg["max_epochs"], "max_epochs")
        if all_epoch:
            return Noted(run_stmt(epochs), "train_cfg max_epochs; t counts epochs")
        return Noted(run_stmt(f"{epochs} * epoch_length"),
                     "train_cfg max_epochs of len(train_dataloader) iterations")
    if "max_iters" not in loop_cfg:
        return None
    return Noted(run_stmt(_number_text(loop_cfg["max_iters"], "max_iters")), "train_cfg max_iters")


def _loop_limit(loop: _Loop, by_epoch: bool) -> str:
    """A scheduler's default ``end``, the Runner's: ``max_epochs`` by epoch, else ``max_iters``
    (or ``max_epochs`` epochs of ``epoch_length`` iterations)."""
    loop_cfg, span = loop.cfg, loop.item.span if loop.item else None
    if by_epoch:
        if "max_epochs" not in loop_cfg:
            raise SchedlangError("a scheduler without end needs train_cfg max_epochs (the Runner's default "
                                 "end)", span)
        return _number_text(loop_cfg["max_epochs"], "max_epochs")
    if "max_iters" in loop_cfg:
        return _number_text(loop_cfg["max_iters"], "max_iters")
    if "max_epochs" in loop_cfg:
        return f"{_number_text(loop_cfg['max_epochs'], 'max_epochs')} * epoch_length"
    raise SchedlangError("a scheduler without end needs train_cfg max_iters or max_epochs (the Runner's "
                         "default end)", span)


def _bases(reader: _Reader) -> dict[str, str]:
    wrapper = reader.top("optim_wrapper")
    if wrapper is not None and isinstance(wrapper.value, dict) and "optimizer" in wrapper.value:
        optimizer = wrapper.value["optimizer"]
    else:
        optimizer = reader.top("optimizer")
    found: dict[str, str] = {}
    if optimizer is None or not isinstance(optimizer.value, dict):
        return found
    opt = optimizer.value
    for key in ("lr", "momentum", "weight_decay"):
        if key in opt:
            found[key] = _number_text(opt[key], f"optimizer {key}")
    if "betas" in opt and isinstance(opt["betas"].value, list) and opt["betas"].value:
        found.setdefault("momentum", _number_text(opt["betas"].value[0], "betas[0]"))
    if "momentum" not in found and str(opt.get("type", Item("", None)).value) in ("SGD",):
        found["momentum"] = "0"
    return found


def _lower(text: str, head: list[str], decls: list, names: list[str]) -> ir.Module:
    """Core style: each schedule's closed form written out (``core_text``)."""
    program = compile_program(text)
    return module(head, decls, [schedule_stmt(n, expr_text(program[n].symbolic_expr)) for n in names])


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
