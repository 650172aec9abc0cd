"""``megatron.*`` conformance cases: one row per meaningful configuration of
megatron-core's ``OptimizerParamScheduler``, run against the real class.

A row is the class's keyword arguments; the schedlang line is rendered from
the same dict (so the two cannot disagree), and the reference builds the real
class on a stand-in optimizer with one param group and calls ``step(1)``
between readings, exactly as Megatron-LM's loop does with a batch of one.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

from anchors.preset_cases import Case

from .real import real
from .render import sched_args

#: What Megatron-LM passes when a flag is left out; the class itself has no defaults.
CLASS_DEFAULTS = dict(init_lr=0.0, min_lr=0.0, lr_warmup_steps=0, lr_decay_style="linear",
                      start_wd=0.0, end_wd=0.0, wd_incr_steps=1, wd_incr_style="constant",
                      wsd_decay_steps=None, lr_wsd_decay_style="exponential")
WD_KEYS = ("start_wd", "end_wd", "wd_incr_steps", "wd_incr_style")


@dataclass(frozen=True)
class MegatronCase(Case):
    """``options["read"]`` is the param-group key compared: ``lr`` or ``weight_decay``."""

    def reference(self) -> list[float]:
        module = real("megatron.core.optimizer_param_scheduler")
        optimizer = SimpleNamespace(param_groups=[{}])
        key = self.options.get("read", "lr")
        kwargs = {**CLASS_DEFAULTS, **self.kwargs}
        if key == "weight_decay":
            kwargs.setdefault("max_lr", 1.0)
            kwargs.setdefault("lr_decay_steps", 10)
        scheduler = module.OptimizerParamScheduler(optimizer, **kwargs)
        values = []
        for _ in self.compared:
            values.append(float(optimizer.param_groups[0][key]))
            scheduler.step(1)
        return values

    def anchor_code(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.kwargs.items())
        key = self.options.get("read", "lr")
        return ("from megatron.core.optimizer_param_scheduler import OptimizerParamScheduler\n"
                f"sched = OptimizerParamScheduler(optimizer, {args})\n"
                f"# param_group['{key}'] at step t, after t calls of sched.step(1)")


def _lr(steps: int, note: str = "", **kwargs) -> MegatronCase:
    source = f"megatron.OptimizerParamScheduler({sched_args(kwargs)})"
    return MegatronCase("megatron.OptimizerParamScheduler", source, "megatron", "OptimizerParamScheduler",
                        kwargs, steps, note=note)


def _wd(steps: int, note: str = "", **kwargs) -> MegatronCase:
    source = f"megatron.OptimizerParamScheduler.get_wd({sched_args(kwargs)})"
    return MegatronCase("megatron.OptimizerParamScheduler.get_wd", source, "megatron",
                        "OptimizerParamScheduler", kwargs, steps, {"read": "weight_decay"}, note=note)


PEAK = dict(max_lr=3e-4, min_lr=3e-5)

MEGATRON = [
    _lr(400, lr_warmup_steps=40, lr_decay_steps=250, lr_decay_style="cosine", **PEAK),
    _lr(400, lr_warmup_steps=40, lr_decay_steps=250, lr_decay_style="linear", **PEAK),
    _lr(300, max_lr=3e-4, lr_decay_steps=200, note="defaults: no warmup, linear to min_lr 0"),
    _lr(300, init_lr=1e-5, lr_warmup_steps=37.5, lr_decay_steps=250, lr_decay_style="cosine", **PEAK,
        note="a fractional warmup (what --lr-warmup-fraction gives) starting at init_lr"),
    _lr(200, lr_warmup_steps=30, lr_decay_steps=100, lr_decay_style="constant", **PEAK,
        note="constant ignores min_lr and lr_decay_steps: max_lr forever"),
    _lr(400, lr_warmup_steps=25, lr_decay_steps=300, lr_decay_style="inverse-square-root", max_lr=3e-4,
        min_lr=2e-5, note="clipped at min_lr, then cut to min_lr past lr_decay_steps"),
    _lr(300, lr_decay_steps=250, lr_decay_style="inverse-square-root", max_lr=3e-4, min_lr=1e-6,
        note="no warmup: max(W, 1) = 1, so the lr is max_lr / sqrt(t) from t = 1"),
    _lr(400, lr_warmup_steps=20, lr_decay_steps=300, lr_decay_style="WSD", wsd_decay_steps=80, **PEAK,
        note="lr_wsd_decay_style defaults to exponential: 2 * 0.5 ** q - 1"),
    _lr(400, lr_warmup_steps=20, lr_decay_steps=300, lr_decay_style="WSD", wsd_decay_steps=80,
        lr_wsd_decay_style="linear", **PEAK),
    _lr(400, lr_warmup_steps=20, lr_decay_steps=300, lr_decay_style="WSD", wsd_decay_steps=80,
        lr_wsd_decay_style="cosine", **PEAK),
    _lr(400, lr_warmup_steps=20, lr_decay_steps=300, lr_decay_style="WSD", wsd_decay_steps=80,
        lr_wsd_decay_style="minus_sqrt", **PEAK),
    _lr(300, lr_warmup_steps=50, lr_decay_steps=150, lr_decay_style="WSD", wsd_decay_steps=120,
        lr_wsd_decay_style="linear", **PEAK,
        note="the decay window starts before the warmup ends: it jumps in at q > 0"),
    _lr(200, lr_warmup_steps=20, lr_decay_steps=120, lr_decay_style="WSD", wsd_decay_steps=0, **PEAK,
        note="wsd_decay_steps=0: max_lr until lr_decay_steps, then a cliff to min_lr"),
    _wd(300, start_wd=0.01, end_wd=0.1, wd_incr_steps=200, wd_incr_style="linear"),
    _wd(300, start_wd=0.0, end_wd=0.1, wd_incr_steps=200, wd_incr_style="cosine"),
    _wd(50, start_wd=0.1, end_wd=0.1, wd_incr_steps=20),
]
