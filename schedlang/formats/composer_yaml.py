"""Composer / llm-foundry YAML -> ``.sched`` source.

Read as the frameworks read it (``yaml.safe_load``, merge keys included):

* llm-foundry: a top-level ``scheduler: {name: cosine_with_warmup, t_warmup: 100ba, ...}``;
  foundry builds ``registry.schedulers[name](**rest)``;
* Composer YAML: ``schedulers:`` (one, or a list of one) as ``{name: X, ...}`` or
  ``{X: {arguments}}``;
* ``X`` is a registry name (``NAMES``: foundry's ``cosine_with_warmup``, ``inv_sqrt_with_warmup``,
  ``linear_decay_with_warmup``, ``constant_with_warmup`` and Composer's hparams names) or
  a ``composer.optim.scheduler`` class name;
* ``max_duration`` (top level or under ``trainer:``): ``800ba`` becomes
  ``param max_duration: int = 800``; in epochs (``3ep``, or a bare integer, which the
  Trainer reads as epochs) every ``dur`` time becomes epochs of a required
  ``param steps_per_epoch`` (Composer's ``int(v * dataloader_len * epochs)``); absent,
  ``param max_duration: int`` is required when a ``dur`` time needs it;
* the optimizer's ``lr`` (``optimizer: {lr: ...}`` or ``optimizers: {adamw: {lr: ...}}``)
  becomes the preset's ``lr=`` (Composer schedules a multiplier of it).

The arguments each class takes are the ``composer.*`` presets' (one table, in
``presets/composer.py``).  Time strings follow ``Time.from_timestring``: ``ba``, ``ep``
(whole numbers) and ``dur`` (any fraction).  Iterations and wall-clock
times, several schedulers (Composer steps them all and the last one wins) and a
scale-schedule ratio other than 1 are refused at the key that says so.

Samples and tokens (``t_warmup: 2000000000tok``, or ``dur`` of a ``max_duration`` in ``tok``):
Composer reads ``state.timestamp.token`` for such times, so the schedule is imported on the
token (sample) clock of SPEC §12: ``batch = global_train_batch_size`` and, for tokens,
``param seq_len: int = max_seq_len`` (top level or under ``variables:``, or ``--option
global_train_batch_size=N --option max_seq_len=L``), every time in that unit (``dur``
converted as Composer does, ``int(v * max_duration)`` in floating point).  A token is a
position of a full ``max_seq_len`` sequence: llm-foundry's concatenated text; padded batches
count fewer tokens (feed the measured counts to the class, ``step(tokens=n)``).  Composer
raises when one schedule mixes units, and so does the import.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction

import sympy as sp

from ..codegen.sched import sched_text
from ..errors import SchedlangError, Span, did_you_mean
from ..library.presets import PRESETS
from ..library.stdlib import REQUIRED, STEP_KINDS, Kind, TimeDefault
from ..limits import MAX_STEP
from ..syntax import ir
from .common.format import YAML, Format, reader
from .common.keys import yaml_keys
from .common.numbers import exact
from .common.source_text import header
from .common.statements import (
    Noted,
    batch_stmt,
    boolean,
    call,
    duration,
    formula,
    module,
    noted,
    number,
    param_stmt,
    run_stmt,
    schedule_stmt,
)
from .common.yaml_source import Node
from .common.yaml_source import load as load_yaml
from .composer_export import export
from .composer_names import NAMES

#: Registry names that are refused, with the reason (none today; the machinery stays).
UNSUPPORTED: dict[str, str] = {}

#: Arguments that must be in ``max_duration``'s unit, never ``dur`` (llm-foundry raises ValueError).
RUN_UNIT_ARGS = {"InverseSquareRootWithWarmupScheduler": ("t_warmup", "t_scale", "t_cooldown")}


def classes() -> dict[str, tuple]:
    """Composer class -> its preset arguments (``lr`` excluded): the one signature table."""
    return {name.split(".", 1)[1]: tuple(a for a in p.args if a.name != "lr")
            for name, p in PRESETS.items() if name.startswith("composer.") and hasattr(p, "args")}


_TIME = re.compile(r"^\s*([-+]?(?:\d[\d_]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(ba|ep|dur|sp|tok|iter|sec)\s*$",
                   re.IGNORECASE)
_UNITS = {"sp": "samples", "tok": "tokens", "iter": "iterations", "sec": "seconds"}
#: The units a scheduler's times may have; ``sp``/``tok`` put the schedule on the sample/token clock.
TIME_UNITS = ("ba", "ep", "dur", "sp", "tok")
#: Where llm-foundry writes the run's batch (samples per step) and tokens per sample.
BATCH_KEYS = ("global_train_batch_size", "max_seq_len")


@dataclass(frozen=True)
class Time:
    """A Composer time: an exact amount and a unit (``ba``, ``ep``, ``dur``)."""

    amount: Fraction
    unit: str
    span: Span | None = field(default=None, compare=False)  # where the file writes it

    @property
    def text(self) -> str:
        """The time as its messages and comments show it (``100ba``, ``0.125dur``)."""
        return f"{sched_text(sp.Rational(self.amount.numerator, self.amount.denominator))}{self.unit}"


@dataclass
class Imported:
    cls: str
    args: dict = field(default_factory=dict)      # argument -> Time | sympy number | bool | [Time]
    span: Span | None = None
    arg_spans: dict = field(default_factory=dict)
    max_duration: Time | None = None
    lr: sp.Expr | None = None
    lr_span: Span | None = None  # the optimizer's lr key's value
    notes: list = field(default_factory=list)
    clock: str | None = None  # "sp" / "tok" when the times count samples or tokens
    batch: dict = field(default_factory=dict)  # BATCH_KEYS -> whole number (sample/token clock)
    batch_spans: dict = field(default_factory=dict)  # BATCH_KEYS -> where the file writes it


def parse_time(node: Node, what: str, units=TIME_UNITS) -> Time:
    """A Composer time string; integers and other units are refused with the reason."""
    text = node.value
    if isinstance(text, bool) or not isinstance(text, (str, int, float)):
        raise SchedlangError(f"{what} must be a time like '100ba' or '0.1dur'", node.span)
    if not isinstance(text, str):
        raise SchedlangError(f"{what} is a bare number; Composer needs a unit", node.span,
                             hint=f"write '{text}ba' (batches), '{text}ep' or a fraction of the run "
                                  "like '0.1dur'")
    match = _TIME.match(text)
    if match is None:
        raise SchedlangError(f"'{text}' is not a Composer time", node.span,
                             hint="a number and a unit: 100ba, 2ep, 0.1dur")
    unit = match.group(2).lower()
    if unit not in units:
        raise SchedlangError(f"{what} is in {_UNITS.get(unit, unit)}, which schedlang cannot import",
                             node.span, hint="give it in batches (ba), epochs (ep), samples (sp), tokens "
                                             "(tok) or as a fraction of the run (dur)")
    amount = Fraction(match.group(1).replace("_", ""))
    if unit != "dur" and amount.denominator != 1:
        raise SchedlangError(f"'{text}': Composer requires a whole number of {unit}", node.span,
                             hint="Time.from_timestring raises TypeError for it")
    if amount < 0:
        raise SchedlangError(f"'{text}' is negative", node.span)
    return Time(amount, unit, node.span)


def read(text: str, filename: str = "<string>") -> Imported:
    root = load_yaml(text, filename)
    if not root.is_mapping:
        raise SchedlangError("expected a YAML mapping with `scheduler:` or `schedulers:`", root.span)
    scope = root
    trainer = root.value.get("trainer")
    if trainer is not None and trainer.is_mapping and not _has_scheduler(root):
        scope = trainer
    block, key = _scheduler_block(scope, root)
    found = _one(block, key, scope)
    found.max_duration = _max_duration(root, trainer)
    _check_run_units(found)
    _clock(found, root)
    found.lr, found.lr_span = _optimizer_lr(scope) or _optimizer_lr(root) or (None, None)
    ssr = scope.value.get("scale_schedule_ratio")
    if ssr is not None and exact(ssr.value) != 1:
        raise SchedlangError("scale_schedule_ratio other than 1 is not imported", ssr.span,
                             hint="wrap the imported schedule in scale(..., ratio) by hand")
    return found


def _has_scheduler(node: Node) -> bool:
    return "scheduler" in node.value or "schedulers" in node.value


def _scheduler_block(scope: Node, root: Node) -> tuple[Node, str]:
    for key in ("scheduler", "schedulers"):
        if key in scope.value:
            return scope.value[key], key
    raise SchedlangError("no `scheduler:` or `schedulers:` found", root.span,
                         hint="llm-foundry: `scheduler: {name: cosine_with_warmup, t_warmup: 100ba}`")


def _one(block: Node, key: str, scope: Node) -> Imported:
    if block.is_list:
        if len(block.value) != 1:
            span = block.value[1].span if len(block.value) > 1 else block.span
            raise SchedlangError(f"{len(block.value)} schedulers: import needs exactly one", span,
                                 hint="Composer compiles each to its own LambdaLR on the same optimizer, "
                                      "so the last one stepped sets the lr; keep that one")
        block = block.value[0]
    if not block.is_mapping:
        raise SchedlangError(f"`{key}` must be a mapping", block.span)
    if "name" in block.value:
        name_node = block.value["name"]
        args = {k: v for k, v in block.value.items() if k != "name"}
        return _build(str(name_node.value), name_node.span, args, block.key_spans)
    if len(block.value) == 1:
        (name, args_node), = block.value.items()
        if args_node.value is None:
            return _build(name, block.key_spans[name], {}, {})
        if not args_node.is_mapping:
            raise SchedlangError(f"the arguments of {name} must be a mapping", args_node.span)
        return _build(name, block.key_spans[name], args_node.value, args_node.key_spans)
    raise SchedlangError("a scheduler is `{name: NAME, ...arguments}` or `{NAME: {arguments}}`", block.span)


def _lookup(name: str, span: Span) -> str:
    table = classes()
    if name in table:
        return name
    if name.lower() in NAMES:
        return NAMES[name.lower()]
    if name.lower() in UNSUPPORTED:
        raise SchedlangError(f"{name} cannot be imported", span, hint=UNSUPPORTED[name.lower()])
    raise SchedlangError(f"unknown Composer scheduler '{name}'", span,
                         hint=did_you_mean(name, [*NAMES, *table]) or "one of " + ", ".join(NAMES))


def _build(name: str, span: Span, given: dict, spans: dict) -> Imported:
    cls = _lookup(name, span)
    spec = {a.name: a for a in classes()[cls]}
    found = Imported(cls, span=span)
    for key, value in given.items():
        if key not in spec:
            raise SchedlangError(f"{cls} has no argument '{key}'", spans[key],
                                 hint=did_you_mean(key, spec) or "its arguments: " + ", ".join(spec))
        found.args[key] = _argument(spec[key], value, f"'{key}'")
        found.arg_spans[key] = value.span
    for arg in spec.values():
        if arg.default is REQUIRED and arg.name not in found.args:
            raise SchedlangError(f"{cls} is missing '{arg.name}'", span)
    return found


def _check_run_units(found: Imported) -> None:
    """llm-foundry's unit rules (``RUN_UNIT_ARGS``) and its ``alpha_f_decay >= alpha_f_cooldown``.

    ``dur`` is refused in ``__init__``, another unit than ``max_duration``'s at the first call.
    """
    md = found.max_duration
    for name in RUN_UNIT_ARGS.get(found.cls, ()):
        time = found.args[name]
        if time.unit == "dur":
            raise SchedlangError(f"'{name}' cannot be in units of 'dur' ({found.cls})", found.arg_spans[name],
                                 hint="llm-foundry raises ValueError: give it in max_duration's unit "
                                      "(ba or ep)")
        if md is not None and time.unit != md.unit:
            raise SchedlangError(f"'{name}' is in {time.unit} but max_duration is in {md.unit}",
                                 found.arg_spans[name],
                                 hint=f"llm-foundry raises ValueError at its first step: use {md.unit}")
    decay, cooldown = found.args.get("alpha_f_decay", 0), found.args.get("alpha_f_cooldown", 0)
    if found.cls in RUN_UNIT_ARGS and decay < cooldown:
        raise SchedlangError("alpha_f_decay must be >= alpha_f_cooldown", found.arg_spans["alpha_f_cooldown"],
                             hint="llm-foundry raises ValueError for a cooldown that would raise the lr")


def _effective_unit(time: Time, md: Time | None) -> str:
    """The unit Composer compares a time in: its own, or ``max_duration``'s for ``dur``."""
    return md.unit if time.unit == "dur" and md is not None else time.unit


def _times(found: Imported):
    """``(argument, time, span)`` of every time the schedule reads, the defaults included."""
    for arg in classes()[found.cls]:
        value = found.args.get(arg.name, arg.default)
        if isinstance(value, TimeDefault):
            yield arg.name, Time(Fraction(value.amount), value.unit), found.span
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, Time):
                yield arg.name, item, item.span or found.span


def _clock(found: Imported, root: Node) -> None:
    """Times in samples or tokens: the schedule is on that clock, every time in that unit."""
    md = found.max_duration
    times = list(_times(found))
    counted = [(n, t, s) for n, t, s in times if _effective_unit(t, md) in ("sp", "tok")]
    if not counted:
        return
    clock = _effective_unit(counted[0][1], md)
    for name, time, span in times:
        unit = _effective_unit(time, md)
        if unit != clock:
            default = "" if name in found.args else f" (its default, {time.text})"
            counts = {"ba": "batches", "ep": "epochs", "dur": "fractions of the run", **_UNITS}
            shown = f"a fraction of a max_duration in {counts[unit]}" if time.unit == "dur" and md \
                else counts[unit]
            raise SchedlangError(f"'{name}'{default} counts {shown}, but '{counted[0][0]}' counts "
                                 f"{_UNITS[clock]}", span,
                                 hint=f"Composer raises when one schedule mixes units: give every time "
                                      f"in {clock} (or as a fraction of a max_duration in {clock})")
    found.clock = clock
    scopes = [root] + [root.value[k] for k in ("variables",) if k in root.value and root.value[k].is_mapping]
    for key in BATCH_KEYS[:2 if clock == "tok" else 1]:
        node = next((s.value[key] for s in scopes if key in s.value), None)
        if node is not None:
            found.batch[key] = _whole(node, key)
            found.batch_spans[key] = node.span


def _whole(node: Node, key: str) -> int:
    value = exact(node.value) if not isinstance(node.value, bool) else None
    if value is None or not value.is_Integer or value < 1:
        raise SchedlangError(f"{key} must be a whole number >= 1", node.span)
    return int(value)


def _argument(arg, node: Node, what: str):
    if arg.kind in STEP_KINDS:
        return parse_time(node, what)
    if arg.kind == Kind.VALUES:
        if not node.is_list or not node.value:
            raise SchedlangError(f"{what} must be a non-empty list of times", node.span)
        return [parse_time(item, f"an item of {what}") for item in node.value]
    if arg.kind == Kind.FLAG:
        if not isinstance(node.value, bool):
            raise SchedlangError(f"{what} must be true or false", node.span)
        return node.value
    number = exact(node.value)
    if number is None:
        raise SchedlangError(f"{what} must be a number, not {node.value!r}", node.span)
    return number


def _max_duration(root: Node, trainer: Node | None) -> Time | None:
    for scope in (root, trainer):
        if scope is not None and scope.is_mapping and "max_duration" in scope.value:
            node = scope.value["max_duration"]
            if isinstance(node.value, int) and not isinstance(node.value, bool):
                return Time(Fraction(node.value), "ep", node.span)  # the Trainer's default_int_unit
            time = parse_time(node, "max_duration", units=("ba", "ep", "sp", "tok"))
            if time.amount == 0:
                raise SchedlangError("max_duration is 0", node.span)
            return time
    return None


def _optimizer_lr(scope: Node) -> tuple[sp.Rational, Span] | None:
    """The optimizer's lr and where the file writes it, or None."""
    optimizer = scope.value.get("optimizer")
    candidates = [optimizer] if optimizer is not None else []
    optimizers = scope.value.get("optimizers")
    if optimizers is not None and optimizers.is_mapping and len(optimizers.value) == 1:
        candidates.append(next(iter(optimizers.value.values())))
    for node in candidates:
        if node.is_mapping and "lr" in node.value:
            value = exact(node.value["lr"].value)
            if value is None:
                raise SchedlangError("the optimizer's lr must be a number", node.value["lr"].span)
            return value, node.value["lr"].span
    return None


# -- the .sched module --------------------------------------------------------------------


def source(found: Imported | str, origin: str, style: str = "presets", options=None) -> ir.Module:
    """The imported schedule as a ``.sched`` module, ``composer.*`` presets or core calls.

    ``found`` may be the file's text (``import --option`` readers get the text).  Its one
    option, ``steps_per_epoch=N`` (Composer's ``dataloader_len``), turns every time into
    batches as Composer converts it, floating point included (``_Writer.time``)."""
    if isinstance(found, str):
        found = read(found, origin)
    options = dict(options or {})
    given = {key: options.pop(key) for key in BATCH_KEYS if key in options}
    batch = _batch(found, given)
    spans = {key: span for key, span in found.batch_spans.items() if key not in given}
    writer = _Writer(found, _steps_per_epoch(options), batch, spans)
    body = writer.preset() if style == "presets" else writer.core()
    run = writer.run()  # after the body and before the parameters: both say which ones are read
    return module(_head(found, origin), writer.params(), [] if run is None else run,
                  schedule_stmt("lr", body, found.span))


def _head(found: Imported, origin: str) -> list[str]:
    """The file's first comment lines: where it came from, what Composer schedules, on what clock."""
    lines = [header(origin, "Composer / llm-foundry YAML")]
    if found.clock is None:
        lines.append("# Composer schedules a multiplier of the optimizer's lr; t counts batches (ba).")
    else:
        unit = _UNITS[found.clock]
        lines += [f"# Composer schedules a multiplier of the optimizer's lr.  Its times count {unit}:",
                  f"# it reads state.timestamp.{'token' if found.clock == 'tok' else 'sample'}, the {unit} "
                  "consumed before the batch, so the schedule is",
                  f"# on the {unit[:-1]} clock of the run's batch (global_train_batch_size"
                  + (" samples of max_seq_len tokens)." if found.clock == "tok" else ").")]
    if found.lr is None:
        lines.append("# No optimizer lr in the file: the values are the multiplier (lr = 1).")
    return lines


def _batch(found: Imported, given: dict) -> dict:
    """The run's batch (and tokens per sample) for times in samples or tokens: the file's
    ``global_train_batch_size`` / ``max_seq_len``, or ``--option KEY=N``."""
    if found.clock is None:
        if given:
            raise SchedlangError(f"--option {next(iter(given))}: the schedule counts batches; the batch "
                                 "options are for times in samples or tokens")
        return {}
    out = dict(found.batch)
    for key, text in given.items():
        try:
            value = int(str(text).strip().replace("_", ""))
        except ValueError:
            value = 0
        if not 0 < value <= MAX_STEP:
            raise SchedlangError(f"--option {key}={text}: expected a whole number > 0")
        out[key] = value
    for key in BATCH_KEYS[:2 if found.clock == "tok" else 1]:
        if key not in out:
            raise SchedlangError(f"times in {_UNITS[found.clock]} need the run's {key}", found.span,
                                 hint=f"llm-foundry writes `{key}: N` at the top level (or under "
                                      f"variables:); or import with --option {key}=N")
    return out


def _steps_per_epoch(options) -> int | None:
    """``--option steps_per_epoch=N``: a whole number > 0, or None when not given."""
    options = dict(options or {})
    given = options.pop("steps_per_epoch", None)
    if options:
        raise SchedlangError(f"composer-yaml has no option '{next(iter(options))}'",
                             hint="its options are steps_per_epoch=N (Composer's dataloader_len), "
                                  "and global_train_batch_size=N and max_seq_len=L for times in "
                                  "samples or tokens")
    if given is None:
        return None
    try:
        value = int(str(given).strip().replace("_", ""))
    except ValueError:
        value = 0
    if not 0 < value <= MAX_STEP:
        raise SchedlangError(f"--option steps_per_epoch={given}: expected a whole number of batches > 0")
    return value


def composer_batches(fraction: Fraction, epochs: int, steps_per_epoch: int) -> int:
    """Batches of ``<fraction>dur`` in a run of ``epochs`` epochs, as Composer 0.32 computes them
    (``_convert_time``: ``int(time.value * int(dataloader_len) * max_duration.value)``, in that
    order, in float64: ``0.3dur`` of ``10ep`` at 9 batches an epoch is 26, not 27)."""
    return int(float(fraction) * steps_per_epoch * epochs)


def _float_exact(fraction: Fraction) -> bool:
    """Whether Composer's float arithmetic on this fraction is exact (a binary fraction such as
    0.125 or 0.5: every product with a whole number of batches below 2**40 is exact)."""
    return Fraction(float(fraction)) == fraction and fraction.denominator <= 2**12


class _Writer:
    """The schedule of ``found`` as nodes, each at the YAML value it is read or computed from."""

    def __init__(self, found: Imported, steps_per_epoch: int | None = None, batch: dict | None = None,
                 batch_spans: dict | None = None):
        self.found = found
        self.steps_per_epoch = steps_per_epoch
        self.batch = batch or {}
        self.batch_spans = batch_spans or {}  # of the batch keys the file gives (not --option)
        #: The parameters the schedule or the run reads -> the span of the first time reading it.
        self.needs: dict[str, Span] = {}
        spec = classes()[found.cls]
        self.args = {}
        for arg in spec:
            if arg.name in found.args:
                self.args[arg.name] = found.args[arg.name]
            elif isinstance(arg.default, TimeDefault):
                self.args[arg.name] = Time(Fraction(arg.default.amount), arg.default.unit)

    def need(self, name: str, span: Span | None) -> None:
        """``name`` is declared, at the time that reads it (a default's: the scheduler's name)."""
        self.needs.setdefault(name, span or self.found.span)

    def span(self, name: str) -> Span | None:
        """Where argument ``name`` is written; the scheduler's name for a default."""
        return self.found.arg_spans.get(name) or self.found.span

    def params(self) -> list[Noted]:
        """The declarations: the batch (and tokens per sample) of the sample or token clock, at
        the keys that give them, then the parameters the times and the run read."""
        md = self.found.max_duration
        out = []
        if "max_seq_len" in self.batch:
            at = self.batch_spans.get("max_seq_len")
            out.append(noted(param_stmt("seq_len", "int", number(self.batch["max_seq_len"], at), span=at),
                             "max_seq_len: tokens per sample"))
        if self.batch:
            at = self.batch_spans.get("global_train_batch_size")
            out.append(noted(batch_stmt(number(self.batch["global_train_batch_size"], at), at),
                             "global_train_batch_size"))
        if "steps_per_epoch" in self.needs:
            out.append(noted(param_stmt("steps_per_epoch", "int", where="steps_per_epoch > 0",
                                        span=self.needs["steps_per_epoch"]),
                             "batches per epoch (Composer's dataloader_len)"))
        if "max_duration" in self.needs:
            if md is not None and md.unit == "ba":
                out.append(noted(param_stmt("max_duration", "int", number(md.amount, md.span), span=md.span),
                                 f"max_duration: {md.amount}ba"))
            else:
                out.append(noted(param_stmt("max_duration", "int", where="max_duration > 0",
                                            span=self.needs["max_duration"]),
                                 "the run's length in batches"))
        return out

    def run(self) -> Noted | None:
        """``run = ...`` from ``max_duration``: the Trainer trains while its timestamp is below it
        (``Timestamp < Time`` in the duration's unit), so ``800ba`` is 800 batches (``run =
        max_duration``, the parameter ``dur`` reads too), ``3ep`` three epochs of ``steps_per_epoch``
        batches, and ``Nsp`` / ``Ntok`` the batches whose samples (tokens) consumed before them are
        below N, on the schedule's clock.  None without a ``max_duration``, or for one in samples or
        tokens when the schedule counts batches (the file then has no batch to count them on)."""
        md = self.found.max_duration
        if md is None:
            return None
        comment = f"max_duration: {md.text}"
        if md.unit == "ba":
            self.need("max_duration", md.span)
            return noted(run_stmt(ir.Name(md.span, "max_duration"), md.span), comment)
        if md.unit == "ep":
            if self.steps_per_epoch is not None:
                steps = int(md.amount) * self.steps_per_epoch
                return noted(run_stmt(number(steps, md.span), md.span),
                             f"{comment} of {self.steps_per_epoch} batches")
            self.need("steps_per_epoch", md.span)
            epochs = formula("N * steps_per_epoch", md.span, N=number(md.amount, md.span))
            return noted(run_stmt(epochs, md.span), comment)
        if md.unit == self.found.clock:
            return noted(run_stmt(duration(md.amount, md.unit, md.span), md.span), comment)
        return None

    def time(self, time: Time) -> ir.Node:
        """A time as a node at the YAML time (the scheduler's name for a default); ``dur`` against
        an epoch max_duration becomes epochs.

        Composer converts it in float64 (``composer_batches``); the exact formula
        ``floor(fraction * epochs * steps_per_epoch)`` is that only for a binary fraction
        (0.125dur).  For another (0.3dur) the float result is no formula of the epoch length
        (26 batches at 9, 27 at 10 would be 3ep), so the length must be given, and the time is
        written in batches; without it the time is refused rather than imported one off."""
        md, at = self.found.max_duration, time.span or self.found.span
        if self.found.clock is not None:  # every time in samples or tokens (`_clock`)
            return duration(self.counted(time), self.found.clock, at)
        if self.steps_per_epoch is not None and time.unit in ("dur", "ep") and (
                time.unit == "ep" or md is not None and md.unit == "ep"):
            return duration(self.batches(time), "ba", at)
        if time.unit == "dur" and md is not None and md.unit == "ep":
            return self._epochs(time, md, at)
        if time.unit == "dur":
            self.need("max_duration", time.span)
        if time.unit == "ep":
            self.need("steps_per_epoch", time.span)
        return duration(time.amount, time.unit, at)

    def _epochs(self, time: Time, md: Time, at: Span | None) -> ir.Node:
        """``<fraction>dur`` of an epoch ``max_duration`` without the epoch length: epochs, or the
        floor of its batches, exact only for a binary fraction (``time``'s docstring)."""
        if not _float_exact(time.amount):
            shown = Time(time.amount, "dur").text
            raise SchedlangError(
                f"'{shown}' of max_duration {md.amount}ep: Composer computes "
                f"int({float(time.amount)!r} * dataloader_len * {md.amount}) in floating point, "
                "which is no formula of the epoch length (0.3dur of 10ep is 26 batches at 9 an "
                "epoch, 30 at 10)", time.span,
                hint="give the epoch length: schedlang import FILE --option steps_per_epoch=N "
                     "(the times are then written in batches, as Composer converts them)")
        self.need("steps_per_epoch", time.span)
        epochs = time.amount * md.amount  # Composer: int(v * dataloader_len * epochs), exact here
        if epochs.denominator == 1:
            return duration(epochs, "ep", at)
        return formula("floor(N * steps_per_epoch)", at, N=number(epochs, at))

    def value(self, value, span: Span | None) -> ir.Node:
        """An argument's value as a node at ``span`` (its YAML value); a list's times at their own."""
        if isinstance(value, bool):
            return boolean(value, span)
        if isinstance(value, Time):
            return self.time(value)
        if isinstance(value, list):
            return ir.List(span, tuple(self.value(v, span) for v in value))
        return number(value, span)

    def given(self, name: str, default=None) -> ir.Node:
        """Argument ``name`` (or ``default``, a number, where the file leaves it out) as a node."""
        return self.value(self.args.get(name, default), self.span(name))

    def lr(self) -> ir.Node:
        """The optimizer's lr at its key; 1 (Composer's multiplier) at the scheduler's name."""
        return number(self.peak, self.found.lr_span or self.found.span)

    @property
    def peak(self):
        return self.found.lr if self.found.lr is not None else sp.Integer(1)

    def scaled(self, name: str, default) -> ir.Node:
        """The lr times argument ``name`` (``alpha_f``...), at that argument (the lr's key for a
        default)."""
        value = self.peak * self.args.get(name, default)
        return number(value, self.found.arg_spans.get(name) or self.found.lr_span or self.found.span)

    def preset(self) -> ir.Call:
        spec = {a.name: a for a in classes()[self.found.cls]}
        keywords = {}
        for name, value in self.args.items():
            default = spec[name].default
            explicit = name in self.found.args
            if not explicit and isinstance(default, TimeDefault) and self.found.clock is None:
                md = self.found.max_duration
                if not (default.unit == "dur" and md is not None and md.unit == "ep"):
                    self.time(value)  # the default still needs its parameter declared
                    continue
            keywords[name] = self.value(value, self.span(name))
        if self.found.lr is not None:
            keywords["lr"] = self.lr()
        return call(f"composer.{self.found.cls}", span=self.found.span, **keywords)

    # core style: stdlib calls; warmups as warmup(linear, W) >> the decay over t_max - t_warmup

    def core(self) -> ir.Node:
        cls = self.found.cls
        if cls in _CORE:
            text, names = _CORE[cls]
            return formula(text, self.found.span, **{key: self.part(spec) for key, spec in names.items()})
        if cls == "CosineAnnealingWarmRestartsScheduler":
            mult = self.args.get("t_mult", sp.Integer(1))
            text = "cosine_restarts(LR, F, T)" if mult == 1 else "cosine_restarts(LR, F, T, MULT)"
            return formula(text, self.found.span, LR=self.lr(), F=self.scaled("alpha_f", sp.Integer(0)),
                           T=self.given("t_0"), MULT=self.given("t_mult", sp.Integer(1)))
        return self._with_warmup()

    def part(self, spec) -> ir.Node:
        """A name of a core formula (``_CORE``): the lr, the lr times an argument, or an argument."""
        kind, name, default = spec
        if kind == "lr":
            return self.lr()
        if kind == "scaled":
            return self.scaled(name, default)
        return self.given(name, default)

    def _with_warmup(self) -> ir.Node:
        """The ``...WithWarmupScheduler`` classes: a warmup to the peak, then the decay."""
        a, cls = self.args, self.found.cls
        if cls == "MultiStepWithWarmupScheduler":
            return self._multistep_warmup()
        if cls == "InverseSquareRootWithWarmupScheduler":
            return self._inverse_sqrt()
        peak = {"ConstantWithWarmupScheduler": "alpha",
                "LinearWithWarmupScheduler": "alpha_i"}.get(cls)
        top = self.scaled(peak, sp.Integer(1)) if peak else self.lr()
        values = {"LR": self.lr(), "P": top, "F": self.scaled("alpha_f", sp.Integer(0)),
                  "M": self.given("t_max"), "W": self.given("t_warmup"),
                  "POWER": self.given("power", sp.Integer(2))}
        decay = formula({
            "ConstantWithWarmupScheduler": "constant(P)",
            "LinearWithWarmupScheduler": "linear(P, F, M - W)",
            "CosineAnnealingWithWarmupScheduler": "cosine(LR, F, M - W)",
            "PolynomialWithWarmupScheduler": "poly(LR, F, M - W, power=POWER)",
        }[cls], self.found.span, **values)
        return self._warmup(a["t_warmup"], a.get("t_max"), decay, top)

    def counted(self, time: Time) -> int:
        """A time in the samples or tokens of the schedule's clock: ``dur`` of ``max_duration`` as
        Composer converts it, ``int(v * max_duration)`` in floating point."""
        if time.unit == "dur":
            return int(float(time.amount) * int(self.found.max_duration.amount))
        return int(time.amount)

    def batches(self, time: Time | None) -> int | None:
        """A time in batches when the file says how many (``Nba``, or ``dur`` of a ``ba`` run);
        on the sample or token clock, in that clock's unit."""
        md = self.found.max_duration
        if time is None:
            return None
        if self.found.clock is not None:
            return self.counted(time)
        if time.unit == "ba":
            return int(time.amount)
        if self.steps_per_epoch is not None and time.unit == "ep":
            return int(time.amount) * self.steps_per_epoch
        if self.steps_per_epoch is not None and time.unit == "dur" and md is not None and md.unit == "ep":
            return composer_batches(time.amount, int(md.amount), self.steps_per_epoch)
        if time.unit == "dur" and md is not None and md.unit == "ba":
            return int(time.amount * md.amount)
        return None

    def _warmup(self, t_warmup: Time, t_max: Time | None, decay: ir.Node, peak: ir.Node) -> ir.Node:
        if t_warmup.amount == 0:
            return decay
        w = self.given("t_warmup")
        end, start = self.batches(t_max), self.batches(t_warmup)
        if end is not None and start is not None and end <= start:
            # Composer ramps on past t_max, then holds
            return formula("linear(0, P, W)", self.found.span, P=peak, W=w)
        return formula("warmup(linear, W) >> DECAY", self.found.span, W=w, DECAY=decay)

    def _multistep_warmup(self) -> ir.Node:
        a = self.args
        values = {"W": self.given("t_warmup"), "LR": self.lr(), "G": self.given("gamma", sp.Rational(1, 10))}
        milestones = [f"M{i}" for i in range(len(a["milestones"]))]
        values.update(zip(milestones, self.given("milestones").items))
        start = self.batches(a["t_warmup"])
        if start is None or any((self.batches(m) or 0) <= start for m in a["milestones"]):
            # milestones count from step 0 and may fall inside the warmup: write the formula
            counts = " + ".join(f"(if t >= {m} then 1 else 0)" for m in milestones)
            return formula(f"if t < W then LR * t / W else LR * G ** ({counts})", self.found.span, **values)
        shifted = ", ".join(f"{m} - W" for m in milestones)
        return formula(f"warmup(linear, W) >> multistep(LR, G, [{shifted}])", self.found.span, **values)

    def _inverse_sqrt(self) -> ir.Node:
        """llm-foundry's formula (the preset's docstring) from stdlib pieces.

        ``warmup(linear, W) >> (lr * d + rsqrt_decay(lr * (1 - d), s)) for (C - W) >>
        linear(isr(C), lr * f, c)``: ``rsqrt_decay`` is ``sqrt(s / (u + s))`` in the local step
        ``u = t - W``; ``C - W = max(0, t_max - c - W)``; ``c = 0`` holds ``isr(C)`` instead.
        """
        a = self.args
        d = a.get("alpha_f_decay", sp.Integer(0))
        values = {key: self.given(name) for key, name in
                  (("W", "t_warmup"), ("S", "t_scale"), ("C", "t_cooldown"), ("M", "t_max"))}
        counts = [self.batches(a[k]) for k in ("t_warmup", "t_cooldown", "t_max")]
        room = "max(0, M - C - W)" if None in counts else "ROOM"
        if room == "ROOM":
            values["ROOM"] = number(max(0, counts[2] - counts[1] - counts[0]), self.span("t_max"))
        scale = "" if d == 0 else "D + "
        values.update(D=self.scaled("alpha_f_decay", 0),
                      A=number(self.peak * (1 - d), self.found.arg_spans.get("alpha_f_decay")
                               or self.found.lr_span or self.found.span),
                      F=self.scaled("alpha_f_cooldown", sp.Integer(0)))
        held = f"{scale}A * sqrt(S / ({room} + S))"
        tail = f"constant({held})" if a["t_cooldown"].amount == 0 else f"linear({held}, F, C)"
        body = f"({scale}rsqrt_decay(A, S)) for {room} >> {tail}"
        text = body if a["t_warmup"].amount == 0 else f"warmup(linear, W) >> {body}"
        return formula(text, self.found.span, **values)


#: The core formula of each class that is one stdlib call (or a chain of two), its names each
#: (``lr``: the lr; ``scaled``: the lr times the argument; ``arg``: the argument), with the
#: default a file may leave out.
_CORE = {
    "StepScheduler": ("step(LR, G, T)", {"LR": ("lr", None, None), "G": ("arg", "gamma", sp.Rational(1, 10)),
                                          "T": ("arg", "step_size", None)}),
    "MultiStepScheduler": ("multistep(LR, G, T)", {"LR": ("lr", None, None),
                                                    "G": ("arg", "gamma", sp.Rational(1, 10)),
                                                    "T": ("arg", "milestones", None)}),
    "ConstantScheduler": ("constant(A, T) >> constant(LR)", {"A": ("scaled", "alpha", sp.Integer(1)),
                                                              "T": ("arg", "t_max", None),
                                                              "LR": ("lr", None, None)}),
    "LinearScheduler": ("linear(A, F, T)", {"A": ("scaled", "alpha_i", sp.Integer(1)),
                                            "F": ("scaled", "alpha_f", sp.Integer(0)),
                                            "T": ("arg", "t_max", None)}),
    "ExponentialScheduler": ("exp(LR, G, T)", {"LR": ("lr", None, None), "G": ("arg", "gamma", None),
                                               "T": ("arg", "decay_period", None)}),
    "CosineAnnealingScheduler": ("cosine(LR, F, T)", {"LR": ("lr", None, None),
                                                      "F": ("scaled", "alpha_f", sp.Integer(0)),
                                                      "T": ("arg", "t_max", None)}),
    "PolynomialScheduler": ("poly(LR, F, T, power=P)", {"LR": ("lr", None, None),
                                                        "F": ("scaled", "alpha_f", sp.Integer(0)),
                                                        "T": ("arg", "t_max", None),
                                                        "P": ("arg", "power", None)}),
}

# -- the declaration (``formats/__init__.py`` lists this module) ----------------------------------


def recognizes(text: str, suffix: str) -> bool:
    """A ``scheduler:`` / ``schedulers:`` block or a ``max_duration``, at the top or under ``trainer:``."""
    top, nested = yaml_keys(text)
    return bool(top & {"max_duration", "scheduler", "schedulers"}) or \
        ("trainer" in top and bool(nested & {"max_duration", "schedulers", "t_warmup"}))


FORMAT = Format("composer-yaml", "Composer / llm-foundry YAML (scheduler:, t_warmup, max_duration)",
                YAML, recognizes, reader("composer-yaml", None, source, takes_options=True), export)
