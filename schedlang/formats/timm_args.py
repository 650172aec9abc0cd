"""timm training arguments (``args.yaml`` of a run, or a ``train.py`` command line) -> ``.sched``.

timm's ``train.py`` writes its parsed arguments to ``args.yaml`` and builds the
scheduler with ``create_scheduler_v2(optimizer, **scheduler_kwargs(args),
updates_per_epoch=...)``.  We read the same arguments as data (YAML with the
safe loader; a command line split with ``shlex``, never run) and write the
preset ``create_scheduler_v2`` would build, with its arguments:

- a flag the file leaves out takes ``train.py``'s default (``TRAIN_DEFAULTS``),
  which differs from ``create_scheduler_v2``'s: ``--warmup-epochs 5``,
  ``--lr-cycle-decay 0.5``, ``--decay-epochs 90``;
- ``--sched-on-updates`` steps the scheduler per optimizer update, and every
  epoch count is multiplied by the updates per epoch
  (``ceil(len(loader) / grad_accum_steps)``), which the dataset decides: it
  becomes the required parameter ``updates_per_epoch``;
- ``--lr`` left out (``lr: null``) means ``train.py`` computes it from
  ``--lr-base`` and the global batch size (``batch_size * grad_accum_steps *
  world_size / lr_base_size``, square-rooted for Ada*/LAMB optimizers); the
  number of processes is the required parameter ``world_size``;
- ``--lr-noise`` (noise from torch's generator) and ``--sched plateau`` (driven
  by a metric) have no closed form and are refused at their line;
- ``--layer-decay`` makes timm's optimizer give each param group an ``lr_scale``
  (``layer_decay ** depth``) that timm's scheduler multiplies every value by: the
  file gets the ``group`` parameter ``lr_scale`` (1 for a group without one).

``t`` is the scheduler's count: the epoch (``step(epoch)``) by default, the
update count with ``--sched-on-updates``.  ``--cooldown-epochs`` only makes
``train.py`` train longer at ``lr_min``, which the presets already hold.
"""

from __future__ import annotations

import math
import re
import shlex
from dataclasses import dataclass, field

import sympy as sp

from ..errors import SchedlangError, Source, Span, did_you_mean
from ..syntax import ir
from .common.format import SHELL, YAML, Format, lowered, reader
from .common.keys import yaml_keys
from .common.numbers import exact
from .common.source_text import choices_of, comment_safe, header, option_node
from .common.statements import (
    boolean,
    call,
    formula,
    module,
    noted,
    number,
    param_stmt,
    run_stmt,
    schedule_stmt,
    string,
)
from .common.yaml_source import load
from .core_text import core_module

#: train.py's defaults (timm 1.0.31) for every argument the schedule depends on.
TRAIN_DEFAULTS = {
    "sched": "cosine", "sched_on_updates": False, "lr": None, "lr_base": 0.1, "lr_base_size": 256,
    "lr_base_scale": "", "lr_noise": None, "lr_cycle_mul": 1.0, "lr_cycle_decay": 0.5,
    "lr_cycle_limit": 1, "lr_k_decay": 1.0, "warmup_lr": 1e-5, "min_lr": 0, "epochs": 300,
    "decay_milestones": [90, 180, 270], "decay_epochs": 90, "warmup_epochs": 5, "warmup_prefix": False,
    "cooldown_epochs": 0, "decay_rate": 0.1, "batch_size": 128, "grad_accum_steps": 1, "opt": "sgd",
    "lr_decay_fn": None, "lr_stable_timescale": None, "layer_decay": None,
}
#: Command-line spellings that are not the argument name with dashes.
ALIASES = {"b": "batch_size", "dr": "decay_rate"}
SWITCHES = ("sched_on_updates", "warmup_prefix")  # store_true flags
LISTS = ("decay_milestones", "lr_noise")  # nargs='+'
SCHEDS = ("cosine", "tanh", "step", "multistep", "poly", "wsd", "rsqrt", "constant", "plateau", "none")
CLASSES = {"cosine": "CosineLRScheduler", "tanh": "TanhLRScheduler", "step": "StepLRScheduler",
           "constant": "StepLRScheduler", "multistep": "MultiStepLRScheduler", "poly": "PolyLRScheduler",
           "wsd": "WSDLRScheduler", "rsqrt": "WSDLRScheduler"}


@dataclass
class Args:
    values: dict = field(default_factory=dict)  # argument -> value (YAML scalars/lists, or text)
    spans: dict = field(default_factory=dict)  # argument -> Span
    source: Source | None = None
    origin: str = ""


def read(text: str, filename: str = "<string>") -> Args:
    """The schedule arguments of an ``args.yaml`` or a ``train.py`` command line."""
    if re.search(r"(^|\s)--?[A-Za-z]", text) and not re.search(r"^\s*[A-Za-z_]+\s*:", text, re.M):
        return _read_command_line(text, filename)
    return _read_yaml(text, filename)


def _read_yaml(text: str, filename: str) -> Args:
    root = load(text, filename)
    if not root.is_mapping:
        raise SchedlangError("expected timm's args.yaml: a mapping of argument names to values", root.span)
    found = Args(source=root.span.source, origin="args.yaml")
    for key, node in root.value.items():
        if key in TRAIN_DEFAULTS:
            found.values[key] = node.plain()
            found.spans[key] = node.span
    return found


def _read_command_line(text: str, filename: str) -> Args:
    try:
        words = shlex.split(text.replace("\\\n", " "), comments=True)
    except ValueError as exc:
        raise SchedlangError(f"cannot split the command line: {exc}") from None
    source = Source(text, filename)
    found = Args(source=source, origin="train.py command line")
    position, i = 0, 0
    while i < len(words):
        word = words[i]
        i += 1
        if not word.startswith("-") or _is_number(word):
            continue
        name, has_value, value = word.lstrip("-").partition("=")
        name = ALIASES.get(name, name.replace("-", "_"))
        at = max(text.find(word, position), 0)
        position = at + len(word)
        if name not in TRAIN_DEFAULTS:
            continue
        span = Span.at_offset(source, at, len(word))
        if name in SWITCHES:
            found.values[name], found.spans[name] = True, span
            continue
        items = [value] if has_value else []
        while i < len(words) and (not words[i].startswith("-") or _is_number(words[i])):
            items.append(words[i])
            i += 1
            if name not in LISTS:
                break
        if not items:
            raise SchedlangError(f"--{word.lstrip('-')} needs a value", span)
        end = text.find(items[-1], position)
        if end >= 0:
            span = span.to(Span.at_offset(source, end, len(items[-1])))
            position = end + len(items[-1])
        found.values[name] = items if name in LISTS else items[0]
        found.spans[name] = span
    return found


def _is_number(word: str) -> bool:
    return exact(word) is not None


class _Reader:
    def __init__(self, args: Args):
        self.args = args

    def span(self, name):
        return self.args.spans.get(name)

    def raw(self, name):
        return self.args.values.get(name, TRAIN_DEFAULTS[name])

    def number(self, name, whole=False, positive=False):
        value = self.raw(name)
        number = exact(value)
        if number is None or (whole and not number.is_Integer) or (positive and number <= 0):
            want = "a positive" if positive else "a"
            want += " whole number" if whole else " number"
            raise SchedlangError(f"{name} must be {want}, not {value!r}", self.span(name))
        return number

    def where(self, name):
        """Where a node of ``name`` is: its argument, or ``--sched`` for a default (none given)."""
        return self.args.spans.get(name) or self.args.spans.get("sched")

    def value(self, name, whole=False, positive=False) -> ir.Node:
        """``number(name)`` as a node at its argument (``--sched`` for a default)."""
        return number(self.number(name, whole, positive), self.where(name))

    def switch(self, name) -> ir.Node:
        return _bool(self.flag(name), self.where(name))

    def flag(self, name):
        value = self.raw(name)
        if isinstance(value, str):
            value = {"true": True, "false": False}.get(value.lower(), value)
        if not isinstance(value, bool):
            raise SchedlangError(f"{name} must be true or false, not {value!r}", self.span(name))
        return value

    def text(self, name):
        value = self.raw(name)
        return None if value is None else str(value)

    def numbers(self, name):
        value = self.raw(name)
        items = value if isinstance(value, list) else [value]
        out = []
        for item in items:
            number = exact(item)
            if number is None:
                raise SchedlangError(f"{name} must be a list of numbers, not {value!r}", self.span(name))
            out.append(number)
        return out


def source(args: Args, origin: str, style: str = "presets") -> ir.Module:
    r = _Reader(args)
    sched = _scheduler_name(r)
    head = [header(origin, f"timm {args.origin}; create_scheduler_v2")]
    params: list = []  # statements.module items
    scale = _lr_scale(r, sched, head, params)
    on_updates, per = _clock(r, head, params)
    lr = _learning_rate(r, head, params)
    if r.number("cooldown_epochs", whole=True) > 0:
        shown = comment_safe(str(r.raw("cooldown_epochs")))
        head.append(f"# cooldown_epochs {shown}: train.py trains that many more epochs, "
                    "at lr_min.")
    run = _run(r, sched, on_updates)
    if run is not None:
        params.append(run)
    where = r.where("sched")
    if sched == "none":
        return module(head, params, schedule_stmt("lr", call("constant", lr, span=where), r.span("sched")))
    made = call(f"timm.{CLASSES[sched]}", span=where, **dict(_keywords(r, sched, per, on_updates, lr)))
    body = made if scale is None else ir.BinOp(made.span, "*", scale, made)
    preset = module(head, params, schedule_stmt("lr", body, r.span("sched")))
    if style == "presets":
        return preset
    lowered(preset, origin)  # an error lands on the configuration before the core text loses its spans
    return core_module(preset, [*head, "# Core style: the same schedule written without presets."], params)


def _scheduler_name(r: _Reader) -> str:
    """``--sched`` (timm's default cosine), one whose lr is a function of the epoch: not
    ``plateau`` (it follows a metric) and without ``--lr-noise`` (random)."""
    sched = r.text("sched") or "cosine"
    if sched not in SCHEDS:
        raise SchedlangError(f"'{sched}' is not a timm scheduler", r.span("sched"),
                             hint=did_you_mean(sched, SCHEDS) or "one of " + ", ".join(SCHEDS))
    if sched == "plateau":
        raise SchedlangError("sched plateau (PlateauLRScheduler) lowers the lr when an evaluation metric "
                             "stops improving, so its value is not a function of the epoch", r.span("sched"),
                             hint="pick a fixed schedule such as cosine or step")
    if r.raw("lr_noise") is not None:
        raise SchedlangError("lr_noise adds noise drawn from torch's random generator (seeded with "
                             "seed + t), so the noisy lr has no closed form", r.span("lr_noise"),
                             hint="remove lr_noise; the schedule without noise is what timm adds noise to")
    return sched


def _lr_scale(r: _Reader, sched: str, head: list, params: list) -> ir.Name | None:
    """``lr_scale`` (the factor of the schedule, at ``--layer-decay``) with its ``param lr_scale:
    group`` when ``--layer-decay`` gives each param group a scale, else None; the header says which."""
    if r.raw("layer_decay") is None or sched == "none":
        head.append("# Values are absolute (timm's optimizer sets no param group lr_scale without "
                    "--layer-decay).")
        return None
    r.number("layer_decay")
    shown = comment_safe(str(r.raw("layer_decay")))
    head.append(f"# Values are absolute. layer_decay {shown}: timm's optimizer gives each "
                "param group an lr_scale (layer_decay ** depth), which its scheduler multiplies by.")
    params.append(param_stmt("lr_scale", "group", "1", span=r.span("layer_decay")))
    return ir.Name(r.span("layer_decay"), "lr_scale")


def _clock(r: _Reader, head: list, params: list) -> tuple[bool, sp.Expr]:
    """What ``t`` counts: epochs, or with ``--sched-on-updates`` optimizer updates (then
    ``param updates_per_epoch``); and the updates of one epoch, as a factor of epoch counts."""
    on_updates = r.flag("sched_on_updates")
    if on_updates:
        head.append("# --sched-on-updates: t counts optimizer updates (step_update); every epoch count is "
                    "multiplied by updates_per_epoch = ceil(len(loader) / grad_accum_steps).")
        params.append(param_stmt("updates_per_epoch", "int", where="updates_per_epoch > 0",
                                 span=r.span("sched_on_updates")))
        return on_updates, sp.Symbol("updates_per_epoch", integer=True, positive=True)
    head.append("# t counts epochs: train.py calls step(epoch + 1) after each epoch; "
                "epoch e runs at t = e.")
    return on_updates, sp.Integer(1)


def _run(r: _Reader, sched: str, on_updates: bool):
    """``run = ...``: the epochs ``train.py`` trains, the ``num_epochs`` ``create_scheduler_v2``
    returns (``for epoch in range(start_epoch, num_epochs)``), in the file's ``t``: epochs, or with
    ``--sched-on-updates`` those epochs times ``updates_per_epoch``.  The cycle schedulers (cosine,
    tanh, poly) train ``get_cycle_length() + cooldown``: ``t_initial * cycle_limit`` (with
    ``cycle_mul`` 1; else ``floor(t_initial * (cycle_mul ** cycles - 1) / (cycle_mul - 1))``, in
    float64 as timm), plus the warmup with ``warmup_prefix``; wsd and rsqrt ``warmup + t_initial +
    cooldown``; the others ``epochs`` plus the warmup with ``warmup_prefix`` (no cooldown).  With
    ``--sched-on-updates`` and a ``cycle_mul`` other than 1 timm floors a float of the updates, which is
    no formula of ``updates_per_epoch``: no ``run`` is written then."""
    epochs = int(r.number("epochs", whole=True, positive=True))
    warmup = int(r.number("warmup_epochs", whole=True))
    cooldown = int(r.number("cooldown_epochs", whole=True))
    prefix = r.flag("warmup_prefix")
    if sched in ("cosine", "tanh", "poly"):
        cycles = max(1, int(r.number("lr_cycle_limit", whole=True)))
        mul = float(r.number("lr_cycle_mul"))
        if mul == 1.0:
            length = epochs * cycles
        elif mul.is_integer():  # the cycles' sum 1 + mul + ... is whole: timm's float is exact
            length = epochs * sum(int(mul) ** c for c in range(cycles))
        elif on_updates:
            return None
        else:
            length = int(math.floor(-epochs * (mul ** cycles - 1) / (1 - mul)))
        total = length + (warmup if prefix else 0) + cooldown
    elif sched in ("wsd", "rsqrt"):
        total = warmup + (epochs if prefix else epochs - warmup) + cooldown
    else:
        total = epochs + (warmup if prefix else 0)
    comment = "the num_epochs train.py trains (create_scheduler_v2)"
    if on_updates:
        where = r.where("epochs")
        value = formula("TOTAL * updates_per_epoch", where, TOTAL=number(total, where))
        return noted(run_stmt(value, r.span("epochs")), f"{comment}, of updates_per_epoch updates")
    return noted(run_stmt(number(total, r.where("epochs")), r.span("epochs")), f"{comment}; t counts epochs")


def _learning_rate(r: _Reader, head: list[str], params: list) -> ir.Node:
    """``--lr`` at its span, or the formula ``train.py`` computes it by, at ``--lr-base``."""
    given = r.raw("lr")
    if given is not None and exact(given) is None:
        raise SchedlangError(f"lr must be a number, not {given!r}", r.span("lr"))
    if given is not None and exact(given) != 0:
        return number(exact(given), r.span("lr"))
    base, size = r.number("lr_base"), r.number("lr_base_size", positive=True)
    batch = r.number("batch_size", whole=True, positive=True) * r.number("grad_accum_steps", whole=True,
                                                                          positive=True)
    scale = r.text("lr_base_scale") or ""
    if not scale:
        scale = "sqrt" if any(o in (r.text("opt") or "").lower() for o in ("ada", "lamb")) else "linear"
    params.append(param_stmt("world_size", "int", where="world_size > 0", span=r.span("lr_base")))
    root = "sqrt of " if scale == "sqrt" else ""
    head.append(f"# lr not given: train.py sets lr = lr_base * ({root}global batch / lr_base_size), "
                "global batch = batch_size * grad_accum_steps * world_size.")
    text = "BASE * sqrt(BATCH * world_size / SIZE)" if scale == "sqrt" else "BASE * BATCH * world_size / SIZE"
    where = r.span("lr_base") or r.where("lr")
    return formula(text, where, BASE=number(base, where), BATCH=number(batch, where),
                   SIZE=number(size, where))


def _bool(value: bool, span: Span | None) -> ir.Node:
    return boolean(value, span)


def _steps(value: sp.Expr, per: sp.Expr, span: Span | None) -> ir.Node:
    """An epoch count in the file's ``t`` (times ``updates_per_epoch`` with --sched-on-updates),
    every part at ``span``: the argument it was read from."""
    if per == 1:
        return number(value * per, span)
    return formula("N * updates_per_epoch", span, N=number(value, span))


def _keywords(r: _Reader, sched: str, per, on_updates: bool, lr: ir.Node) -> list[tuple[str, ir.Node]]:
    """create_scheduler_v2's call for ``sched``, every argument written out."""
    epochs = r.number("epochs", whole=True, positive=True)
    warmup = r.number("warmup_epochs", whole=True)
    if warmup < 0:
        raise SchedlangError("warmup_epochs must be >= 0", r.span("warmup_epochs"))
    warm = [("warmup_t", _steps(warmup, per, r.where("warmup_epochs"))),
            ("warmup_lr_init", r.value("warmup_lr"))]
    prefix = [("warmup_prefix", r.switch("warmup_prefix"))]
    tail = [("t_in_epochs", _bool(not on_updates, r.where("sched_on_updates")))]
    cycles = [("cycle_mul", r.value("lr_cycle_mul")), ("cycle_decay", r.value("lr_cycle_decay")),
              ("cycle_limit", r.value("lr_cycle_limit", whole=True))]
    lr_min = ("lr_min", r.value("min_lr"))
    t_initial = ("t_initial", _steps(epochs, per, r.where("epochs")))
    k = ("k_decay", r.value("lr_k_decay"))
    head = [("lr", lr)]
    if sched == "cosine":
        return [*head, t_initial, lr_min, *cycles, *warm, *prefix, *tail, k]
    if sched == "tanh":
        return [*head, t_initial, lr_min, *cycles, *warm, *prefix, *tail]
    if sched == "poly":  # create_scheduler_v2 passes decay_rate as the power
        return [*head, t_initial, ("power", r.value("decay_rate")), lr_min, *cycles, *warm,
                *prefix, *tail, k]
    if sched == "step":
        decay = r.number("decay_epochs", positive=True)
        return [*head, ("decay_t", _steps(decay, per, r.where("decay_epochs"))),
                ("decay_rate", r.value("decay_rate")), *warm, *prefix, *tail]
    if sched == "constant":
        one = number(1, r.where("sched"))
        return [*head, ("decay_t", one), ("decay_rate", one), *warm, *prefix, *tail]
    if sched == "multistep":
        where = r.where("decay_milestones")
        steps = tuple(_steps(m, per, where) for m in r.numbers("decay_milestones"))
        milestones = ir.List(where, steps)
        return [*head, ("decay_t", milestones), ("decay_rate", r.value("decay_rate")), *warm, *prefix, *tail]
    return [*head, *_wsd(r, sched, epochs, warmup, per), lr_min, *_wsd_shape(r, sched, per), *warm, *tail]


def _wsd(r: _Reader, sched: str, epochs, warmup, per) -> list[tuple[str, ir.Node]]:
    """create_scheduler_v2: the stable + decay length fits in the epochs unless warmup_prefix; a
    decay_epochs in (0, 1) is a fraction of it, rounded (Python's round: halves to even)."""
    length = epochs if r.flag("warmup_prefix") else epochs - warmup
    decay = r.number("decay_epochs", positive=True)
    if 0 < decay < 1:
        if per != 1:
            raise SchedlangError("a fractional decay_epochs with --sched-on-updates is rounded after "
                                 "multiplying by the updates per epoch, which this file does not give",
                                 r.span("decay_epochs"), hint="give decay_epochs in whole epochs")
        steps = sp.Integer(round(float(decay * length)))
    elif per != 1:
        if not decay.is_Integer:
            raise SchedlangError("decay_epochs must be whole with --sched-on-updates (timm rounds the "
                                 "product with the updates per epoch)", r.span("decay_epochs"))
        steps = decay
    else:
        steps = sp.Integer(round(float(decay)))
    if not 0 < steps <= length:
        raise SchedlangError(f"{sched} needs 0 < decay_epochs <= epochs"
                             f"{'' if r.flag('warmup_prefix') else ' - warmup_epochs'} (timm raises), got "
                             f"{steps} and {length}", r.span("decay_epochs"))
    return [("t_initial", _steps(length, per, r.where("epochs"))),
            ("decay_t", _steps(steps, per, r.where("decay_epochs")))]


def _wsd_shape(r: _Reader, sched: str, per) -> list[tuple[str, ir.Node]]:
    out = [("stable_fn", string("rsqrt" if sched == "rsqrt" else "constant", r.where("sched")))]
    timescale = r.raw("lr_stable_timescale")
    if timescale is not None:
        out.append(("stable_timescale", _steps(r.number("lr_stable_timescale", positive=True), per,
                                               r.where("lr_stable_timescale"))))
    fn = r.text("lr_decay_fn") or ("linear" if sched == "rsqrt" else "1-sqrt")
    choices = choices_of("timm.WSDLRScheduler", "decay_fn")
    out.append(("decay_fn", option_node(fn, choices, r.where("lr_decay_fn"), "lr_decay_fn")))
    return out


# -- the declaration (``formats/__init__.py`` lists this module) ----------------------------------


#: The launcher or flags that say a command line is timm's ``train.py``.
_LAUNCH = re.compile(r"(?:^|[\s/])(?:train\.py|distributed_train\.sh)\b"
                     r"|--(?:sched|sched-on-updates|warmup-epochs"
                     r"|cooldown-epochs|decay-epochs|lr-base|lr-cycle-\w+|warmup-lr|decay-rate|lr-k-decay)\b",
                     re.MULTILINE)


def _args_yaml(text: str) -> bool:
    top = yaml_keys(text)[0]
    return "sched" in top and bool(top & {"lr", "epochs", "warmup_epochs"})


def recognizes(text: str, suffix: str) -> bool:
    """The ``args.yaml`` train.py writes (``sched:`` with ``lr:`` or ``epochs:``), or a command line
    with its launcher or flags."""
    if suffix in YAML:
        return _args_yaml(text)
    return bool(_LAUNCH.search(text)) or _args_yaml(text)


FORMAT = Format("timm-args", "timm train.py: its command line, or the args.yaml it writes",
                (*SHELL, *YAML), recognizes, reader("timm-args", read, source), names=("args.yaml",),
                schedule_flags=re.compile(r"--(?:sched|lr|epochs|warmup-epochs|decay-epochs)\b"))
