"""What a Cerebras scheduler *is*, independent of YAML or ``.sched`` text.

Import and export both go through ``Sched``: a class name from
``cerebras.pytorch.optim.lr_scheduler`` (weight-decay twins are normalised to
their LR name and ``target = "weight_decay"``), its arguments as exact sympy
numbers, booleans or strings, and its children for the composites.  The
tables below are cstorch 2.10.0's signatures (``lr_scheduler.py`` /
``weight_decay_scheduler.py``), ModelZoo's key aliases
(``base_converter.py``) and its rule for SequentialLR milestones
(``validate.py`` ``compute_milestones``): ``cumsum(total_iters[:-1])``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from ..library.presets import kinds
from ..library.presets.cerebras import TABLE

REQ = object()

#: The preset table's argument kinds as the YAML reader and writer see them.
_KIND = {kinds.V: "value", kinds.C: "value", kinds.S: "steps", kinds.FLAG: "flag", kinds.L: "list",
         kinds.SCHEDULES: "schedulers"}


def _model_kind(kind) -> str:
    return "option" if isinstance(kind, tuple) else _KIND[kind]


def _default(default):
    return REQ if default is None else None if default == "none" else default


#: ``ScalePerParamLR`` multiplies the schedule it wraps by each param group's own factor, which
#: no preset can hold: it imports as that schedule times a ``group`` parameter (``SCALE_PARAM``).
_UNMODELLED = {"ScalePerParamLR": ("ScalePerParamWD", (("scheduler", "schedulers", REQ),))}

#: The param-group entry cstorch's ``ScalePerParamLR`` and ``ScalePerParamWD`` both read (the WD
#: twin too), falling back to ``adjust_val`` and then 1: the ``group`` parameter of an import.
SCALE_PARAM = "adjust_learning_rate"

#: LR class -> ((argument, kind, default), ...), derived from ``presets.cerebras.TABLE`` (cstorch
#: 2.10.0's signatures, written once).  Kinds: value, steps, flag, option, list, schedulers.
CLASSES: dict[str, tuple[tuple[str, str, object], ...]] = {
    lr: tuple((a[1] or a[0], _model_kind(a[3]), _default(a[4])) for a in args)
    for lr, _, _, args in TABLE
} | {lr: spec for lr, (_, spec) in _UNMODELLED.items()}

#: Options and their allowed values.
CHOICES = {a[1] or a[0]: a[3][1] for _, _, _, args in TABLE for a in args if isinstance(a[3], tuple)}

#: Other spellings ModelZoo accepts for a class name.
CLASS_ALIASES = {"ChainedLR": "ChainedScheduler"}

#: Weight-decay twin -> LR class.
WD_CLASSES = {wd: lr for lr, wd, _, _ in TABLE} | {wd: lr for lr, (wd, _) in _UNMODELLED.items()}
LR_TO_WD = {lr: wd for wd, lr in WD_CLASSES.items()}

#: Weight-decay twins use generic argument names (``val`` for ``learning_rate``, ...).
WD_ARGS = {a[2] or a[0]: a[1] for _, _, _, args in TABLE for a in args if a[1] and (a[2] or a[0]) != a[1]}
LR_TO_WD_ARGS = {lr: wd for wd, lr in WD_ARGS.items()}

#: ModelZoo's config converter renames (``_apply_lrs_transforms``): old key -> key.
KEY_ALIASES = {
    "steps": "total_iters", "decay_steps": "total_iters",
    "learning_rate": "initial_learning_rate", "base_lr": "initial_learning_rate",
    "values": "learning_rates", "boundaries": "milestones",
    "t_max": "T_max", "t_0": "T_0", "t_mult": "T_mult",
}

#: Classes with no closed form ModelZoo YAML can carry, and why.
UNSUPPORTED = {
    "LambdaLR": "LambdaLR is only usable by subclassing it in Python (its lambdas are code, not "
                "configuration); write the closed form in schedlang, or trace the function with "
                "schedlang.from_python",
}

#: The argument each class's ChainedScheduler normalisation divides by (``initial_val``).
INITIAL_ARG = {name: "initial_learning_rate" for name, args in CLASSES.items()
               if any(a[0] == "initial_learning_rate" for a in args)} | {"CyclicLR": "base_lr"}


@dataclass
class Sched:
    """One scheduler: canonical LR class name, exact arguments, children, where it came from."""

    name: str
    args: dict = field(default_factory=dict)
    children: list = field(default_factory=list)
    target: str = "lr"  # or "weight_decay"
    span: object = None  # errors.Span of the class name, when known
    arg_spans: dict = field(default_factory=dict)  # argument -> errors.Span of its value
    item_spans: dict = field(default_factory=dict)  # a list argument -> the Span of each item
    tags: tuple = ()  # param_group_tags: the groups it drives (empty: every group)

    @property
    def schedule_names(self) -> list[str]:
        """``lr``, or ``lr__TAG`` per tag: the class sets the key for groups with that tag."""
        return [f"{self.target}__{tag}" for tag in self.tags] or [self.target]


def lookup(name: str, legacy: bool = False) -> tuple[str, str] | None:
    """``(LR class name, target)`` for a case-insensitive class name (ModelZoo's matching).

    ``legacy`` also accepts the old short names (``"Linear"`` for ``LinearLR``).
    """
    lowered = name.lower()
    candidates = [lowered, lowered + "lr"] if legacy else [lowered]
    for candidate in candidates:
        for known in (*CLASSES, *CLASS_ALIASES):
            if known.lower() == candidate:
                return CLASS_ALIASES.get(known, known), "lr"
        for wd, lr in WD_CLASSES.items():
            if wd.lower() == candidate:
                return lr, "weight_decay"
    return None


def known_names() -> list[str]:
    return [*CLASSES, *CLASS_ALIASES, *WD_CLASSES]


def own_length(s: Sched):
    """The steps after which a scheduler holds its end value, or None (it keeps changing / unknown)."""
    if s.name in ("LinearLR", "PolynomialLR", "CosineDecayLR"):
        return s.args["total_iters"]
    return None


def milestones_from_total_iters(children: list[Sched]) -> list | None:
    """ModelZoo's rule: ``cumsum(total_iters)`` of every child but the last; None if one lacks it."""
    found, total = [], sp.Integer(0)
    for child in children[:-1]:
        iters = child.args.get("total_iters")
        if iters is None:
            return None
        total += iters
        found.append(total)
    return found
