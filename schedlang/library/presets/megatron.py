"""``megatron.*``: megatron-core's ``OptimizerParamScheduler`` (megatron-core 0.16).

One class sets both the lr and the weight decay of every param group from a
single counter ``num_steps`` (``n`` below; ``t`` of the preset).  schedlang
gives them as two presets with the class's own keyword names:

* ``megatron.OptimizerParamScheduler(...)``: the lr (``get_lr``).  It takes the
  whole constructor signature, so a copied call works; the weight-decay
  keywords are checked as the class checks them and otherwise ignored.
* ``megatron.OptimizerParamScheduler.get_wd(...)``: the weight decay
  (``get_wd``), from ``start_wd``, ``end_wd``, ``wd_incr_steps``, ``wd_incr_style``.

``get_lr(n)`` with ``W = lr_warmup_steps``, ``D = lr_decay_steps``, in this order:

1. ``W > 0 and n <= W``: ``init_lr + (max_lr - init_lr) * n / W`` (inclusive: ``max_lr`` at ``n = W``);
2. ``constant``: ``max_lr`` forever (``min_lr`` and ``D`` are never used);
3. ``n > D``: ``min_lr`` (a cut, also for ``inverse-square-root``);
4. ``inverse-square-root``: ``max(min_lr, max_lr * sqrt(max(W, 1)) / sqrt(max(n, 1)))``;
5. else ``min_lr + c * (max_lr - min_lr)`` with ``r = (n - W) / (D - W)`` and
   ``c = 1 - r`` (``linear``), ``(1 + cos(pi r)) / 2`` (``cosine``), or for ``WSD``
   with ``S = D - wsd_decay_steps``: ``1`` for ``n <= S``, else with
   ``q = (n - S) / wsd_decay_steps``: ``1 - q`` (``linear``), ``(1 + cos(pi q)) / 2``
   (``cosine``), ``2 * 0.5 ** q - 1`` (``exponential``), ``1 - sqrt(q)`` (``minus_sqrt``).

``get_wd(n)`` with ``I = wd_incr_steps``: ``end_wd`` for ``n > I``; ``constant``:
``end_wd`` (the class asserts ``start_wd == end_wd``); else ``start_wd + c * (end_wd
- start_wd)`` with ``c = n / I`` (``linear``) or ``(1 + cos(pi (1 - n / I))) / 2`` (``cosine``).

Units: the class counts whatever ``step(increment)`` adds; Megatron-LM's
training loop adds the global batch size, so ``n`` counts *samples* there.
The preset works in the class's own steps; ``schedlang import --format
megatron-args`` converts a command line's iterations and samples.  ``W``,
``D``, ``wsd_decay_steps`` and ``I`` may be fractions (``--lr-warmup-fraction``
makes ``W`` one), as in the class.

Durations: the value is final from ``n = D`` on (``ceil(D)``), except
``inverse-square-root``, which is still on its curve at ``D``, and ``WSD`` with
``wsd_decay_steps=0`` (``max_lr`` at ``D``): both are cut to ``min_lr`` from
``floor(D) + 1``, which is their duration; ``constant`` takes ``ceil(D)`` too.  The weight
decay is final from ``ceil(I)``.

The class has no defaults; where a keyword is optional here the default is
Megatron-LM's command-line default (``--lr-warmup-init 0``, ``--min-lr 0``,
``--lr-warmup-iters 0``, ``--lr-decay-style linear``,
``--lr-wsd-decay-style exponential``, ``--weight-decay-incr-style constant``).
"""

from __future__ import annotations

import sympy as sp

from ...core.algebra import tau  # formulas are built in the real-valued step, not t
from ..stdlib import DECAY_SHAPES, ArgumentError
from ._common import FLAG, OPTION, C, PresetSegment, V, arg, preset

HALF = sp.Rational(1, 2)
LR_STYLES = ("constant", "linear", "cosine", "inverse-square-root", "WSD")
WSD_STYLES = ("exponential", "linear", "cosine", "minus_sqrt")
#: Each ``--lr-wsd-decay-style`` as the ``cooldown`` shape it is (``stdlib.DECAY_SHAPES``).
COOLDOWN_SHAPE = {"exponential": "megatron_exponential", "linear": "linear", "cosine": "cosine",
                  "minus_sqrt": "sqrt"}
WD_STYLES = ("constant", "linear", "cosine")


def _known(value) -> bool:
    return isinstance(value, sp.Basic) and value.is_number


def show(value) -> str:
    """A number in a message the way a config writes it (``0.002``, not ``1/500``)."""
    if isinstance(value, sp.Rational) and not value.is_Integer:
        return f"{float(value):g}"
    return str(value)


def _refuse_if(condition, name: str, message: str, hint: str | None = None) -> None:
    """An ``assert`` of the class, checked where the values are numbers."""
    if condition is True or condition == sp.true:
        raise ArgumentError(name, message, hint=hint)


def _check_lr(init_lr, max_lr, min_lr, warmup, decay, style, wsd):
    _refuse_if(sp.Lt(min_lr, 0), "min_lr", f"min_lr must be >= 0, not {show(min_lr)} (Megatron asserts it)")
    _refuse_if(sp.Lt(max_lr, min_lr), "max_lr", f"max_lr ({show(max_lr)}) must be >= min_lr ({show(min_lr)})")
    _refuse_if(sp.Gt(init_lr, max_lr), "init_lr",
               f"init_lr ({show(init_lr)}) must be <= max_lr ({show(max_lr)})")
    _refuse_if(sp.Le(decay, 0), "lr_decay_steps", f"lr_decay_steps must be > 0, not {show(decay)}")
    _refuse_if(sp.Lt(warmup, 0), "lr_warmup_steps", f"lr_warmup_steps must be >= 0, not {show(warmup)}")
    _refuse_if(sp.Ge(warmup, decay), "lr_warmup_steps",
               f"lr_warmup_steps ({show(warmup)}) must be smaller than lr_decay_steps ({show(decay)})",
               hint="lr_decay_steps is the step where the decay *ends*, counted from 0, not the "
                    "length of the decay after the warmup")
    if style == "WSD":
        if wsd is None:
            raise ArgumentError("wsd_decay_steps", 'lr_decay_style="WSD" needs wsd_decay_steps '
                                                   "(Megatron asserts it)")
        _refuse_if(sp.Lt(wsd, 0), "wsd_decay_steps", f"wsd_decay_steps must be >= 0, not {show(wsd)}")


def _coefficient(style, wsd_style, warmup, decay, wsd):
    """``c(n)`` of rule 5 for the decaying styles."""
    if style == "linear":
        return 1 - (tau - warmup) / (decay - warmup)
    if style == "cosine":
        return HALF * (sp.cos(sp.pi * (tau - warmup) / (decay - warmup)) + 1)
    anneal_start = decay - wsd
    if _known(wsd) and wsd == 0:
        return sp.Integer(1)  # n <= D = S whenever this branch runs
    down = DECAY_SHAPES[COOLDOWN_SHAPE[wsd_style]]((tau - anneal_start) / wsd)
    return sp.Piecewise((1, sp.Le(tau, anneal_start)), (down, True))


def optimizer_param_scheduler(init_lr, max_lr, min_lr, lr_warmup_steps, lr_decay_steps, lr_decay_style,
                              start_wd, end_wd, wd_incr_steps, wd_incr_style,
                              use_checkpoint_opt_param_scheduler, override_opt_param_scheduler,
                              wsd_decay_steps, lr_wsd_decay_style):
    """Megatron's ``get_lr(n)``: inclusive linear warmup from ``init_lr`` to ``max_lr`` over
    ``lr_warmup_steps``, then ``lr_decay_style`` down to ``min_lr`` at ``lr_decay_steps``; ``min_lr``
    after (``constant``: ``max_lr`` forever)."""
    w, d, wsd = lr_warmup_steps, lr_decay_steps, wsd_decay_steps
    _check_lr(init_lr, max_lr, min_lr, w, d, lr_decay_style, wsd)
    if any(v is not None for v in (start_wd, end_wd, wd_incr_steps, wd_incr_style)):
        _check_wd(start_wd, end_wd, wd_incr_steps, wd_incr_style or "constant", every=True)
    if use_checkpoint_opt_param_scheduler and override_opt_param_scheduler:
        raise ArgumentError("override_opt_param_scheduler", "both override and use-checkpoint are set "
                            "(Megatron asserts that at most one is)")
    if lr_decay_style == "constant":
        after, duration = max_lr, sp.ceiling(d)
    elif lr_decay_style == "inverse-square-root":
        curve = sp.Max(min_lr, max_lr * sp.sqrt(sp.Max(w, 1)) / sp.sqrt(sp.Max(tau, 1)))
        after, duration = sp.Piecewise((min_lr, sp.Gt(tau, d)), (curve, True)), sp.floor(d) + 1
    else:
        coefficient = _coefficient(lr_decay_style, lr_wsd_decay_style, w, d, wsd)
        after = sp.Piecewise((min_lr, sp.Gt(tau, d)), (min_lr + coefficient * (max_lr - min_lr), True))
        # the curve reaches min_lr at D, except a WSD window of 0 (or not known to be > 0)
        at_min = lr_decay_style != "WSD" or (_known(wsd) and wsd > 0)
        duration = sp.ceiling(d) if at_min else sp.floor(d) + 1
    if _known(w) and w == 0:
        value = after
    else:
        warm = init_lr + (max_lr - init_lr) * tau / w
        value = sp.Piecewise((warm, sp.Le(tau, w)), (after, True))
    return PresetSegment(value, duration, label="OptimizerParamScheduler")


def _check_wd(start_wd, end_wd, wd_incr_steps, wd_incr_style, every=False):
    if every:
        for name, value in (("start_wd", start_wd), ("end_wd", end_wd), ("wd_incr_steps", wd_incr_steps)):
            if value is None:
                raise ArgumentError(name, f"give {name} with the other weight-decay keywords")
    _refuse_if(sp.Lt(start_wd, 0), "start_wd",
               f"start_wd must be >= 0, not {show(start_wd)} (Megatron asserts it)")
    _refuse_if(sp.Lt(end_wd, start_wd), "end_wd",
               f"end_wd ({show(end_wd)}) must be >= start_wd ({show(start_wd)}): Megatron's weight "
               "decay only increases")
    if wd_incr_style == "constant":
        _refuse_if(sp.Ne(start_wd, end_wd), "end_wd",
                   f'wd_incr_style="constant" needs start_wd == end_wd (got {show(start_wd)} and '
                   f"{show(end_wd)}; Megatron asserts it)")
    else:
        _refuse_if(sp.Le(wd_incr_steps, 0), "wd_incr_steps",
                   f"wd_incr_steps must be > 0 for wd_incr_style=\"{wd_incr_style}\", not "
                   f"{show(wd_incr_steps)} (Megatron divides by it)")


def get_wd(start_wd, end_wd, wd_incr_steps, wd_incr_style):
    """Megatron's ``get_wd(n)``: ``start_wd`` rising to ``end_wd`` at ``wd_incr_steps`` (``linear``, or
    ``cosine`` = ``(1 + cos(pi (1 - n/I))) / 2``), ``end_wd`` after; ``constant``: ``end_wd``."""
    i = wd_incr_steps
    _check_wd(start_wd, end_wd, i, wd_incr_style)
    if wd_incr_style == "constant":
        value = end_wd
    else:
        ratio = tau / i
        coeff = ratio if wd_incr_style == "linear" else HALF * (sp.cos(sp.pi * (1 - ratio)) + 1)
        value = sp.Piecewise((end_wd, sp.Gt(tau, i)), (start_wd + coeff * (end_wd - start_wd), True))
    duration = None if (_known(i) and i <= 0) else sp.ceiling(i)
    return PresetSegment(value, duration, label="OptimizerParamScheduler.get_wd")


WD_ARGS = (arg("start_wd", V), arg("end_wd", V), arg("wd_incr_steps", C),
           arg("wd_incr_style", OPTION, "constant", WD_STYLES))
PRESETS = [
    preset("megatron.OptimizerParamScheduler", optimizer_param_scheduler,
           arg("init_lr", V, 0), arg("max_lr", V), arg("min_lr", V, 0), arg("lr_warmup_steps", C, 0),
           arg("lr_decay_steps", C), arg("lr_decay_style", OPTION, "linear", LR_STYLES),
           *(arg(a.name, a.kind, None, a.choices) for a in WD_ARGS),
           arg("use_checkpoint_opt_param_scheduler", FLAG, True),
           arg("override_opt_param_scheduler", FLAG, False),
           arg("wsd_decay_steps", C, None), arg("lr_wsd_decay_style", OPTION, "exponential", WSD_STYLES)),
    preset("megatron.OptimizerParamScheduler.get_wd", get_wd, *WD_ARGS),
]
