"""``deepspeed.*`` conformance cases against ``deepspeed.runtime.lr_schedules``.

A row is the scheduler's keyword arguments (the schedlang line is rendered
from the same dict).  The reference builds the real scheduler on a torch
optimizer and reads the param group *before* each ``step()``: what the
engine's optimizer step ``t`` uses, since DeepSpeed steps the scheduler after
the optimizer and never at construction.
"""

from __future__ import annotations

from dataclasses import dataclass

from anchors.preset_cases import Case

from .real import real
from .render import sched_args


@dataclass(frozen=True)
class DeepSpeedCase(Case):
    """``options``: ``lr`` (the optimizer's, default 1.0), ``read`` (``lr`` or ``momentum``)."""

    def reference(self) -> list[float]:
        return deepspeed_values(self.name, self.kwargs, len(self.compared), **self.options)

    def anchor_code(self) -> str:
        lr = self.options.get("lr", 1.0)
        optimizer = "Adam" if self.options.get("read") == "momentum" else "SGD"
        args = ", ".join(f"{k}={v!r}" for k, v in self.kwargs.items())
        read = ("param_group['betas'][0]" if self.options.get("read") == "momentum"
                else "param_group['lr']")
        return (f"opt = torch.optim.{optimizer}(params, lr={lr!r})\n"
                f"sched = deepspeed.runtime.lr_schedules.{self.name}(opt{', ' if args else ''}{args})\n"
                f"# {read} of optimizer step t (the engine calls sched.step() after each)")


def deepspeed_values(name: str, kwargs: dict, steps: int, lr: float = 1.0, read: str = "lr") -> list[float]:
    import torch

    module = real("deepspeed.runtime.lr_schedules")
    param = torch.nn.Parameter(torch.zeros(1))
    optimizer = (torch.optim.Adam if read == "momentum" or name == "OneCycle" else torch.optim.SGD)([param],
                                                                                                    lr=lr)
    scheduler = getattr(module, name)(optimizer, **kwargs)
    group = optimizer.param_groups[0]
    values = []
    for _ in range(steps):
        values.append(float(group["betas"][0] if read == "momentum" else group["lr"]))
        scheduler.step()
    return values


def _ds(name: str, steps: int, lr: float | None = None, note: str = "", read: str = "lr",
        **kwargs) -> DeepSpeedCase:
    preset = f"deepspeed.{name}" + (".get_mom" if read == "momentum" else "")
    shown = {**kwargs, **({"lr": lr} if lr is not None else {})}
    options = {"lr": 1.0 if lr is None else lr, "read": read}
    return DeepSpeedCase(preset, f"{preset}({sched_args(shown)})", "deepspeed", name, kwargs, steps,
                         options, note=note)


DEEPSPEED = [
    _ds("WarmupLR", 150, warmup_min_lr=1e-5, warmup_max_lr=1e-3, warmup_num_steps=50,
        note="log warmup (the default): max at t = W, the first two steps at warmup_min_lr"),
    _ds("WarmupLR", 150, warmup_max_lr=1e-3, warmup_num_steps=50, warmup_type="linear",
        note="linear warmup: max at t = W + 1"),
    _ds("WarmupLR", 60, lr=3e-4, warmup_num_steps=20,
        note="no warmup_max_lr: the optimizer's lr (lr=)"),
    _ds("WarmupLR", 10, lr=3e-4, warmup_num_steps=1, note="W' = max(2, warmup_num_steps)"),
    _ds("WarmupDecayLR", 400, total_num_steps=300, warmup_num_steps=40,
        note="warmup_max_lr defaults to 0.001 (not the optimizer's lr); decays to warmup_min_lr"),
    _ds("WarmupDecayLR", 400, total_num_steps=300, warmup_min_lr=1e-5, warmup_max_lr=6e-4,
        warmup_num_steps=40, warmup_type="linear"),
    _ds("WarmupDecayLR", 100, total_num_steps=20, warmup_max_lr=6e-4, warmup_num_steps=40,
        note="total_num_steps < warmup_num_steps (DeepSpeed only warns): min right after the warmup"),
    _ds("WarmupCosineLR", 400, lr=6e-4, total_num_steps=300, warmup_num_steps=40,
        note="ratios of the optimizer's lr; lr 0 at the first step; cos_min_ratio 1e-4 by default"),
    _ds("WarmupCosineLR", 400, lr=6e-4, total_num_steps=300, warmup_min_ratio=0.1, warmup_num_steps=40,
        cos_min_ratio=0.05, warmup_type="linear",
        note="the cosine starts one step in at W and reaches cos_min_ratio at total_num_steps"),
    _ds("OneCycle", 300, cycle_min_lr=1e-4, cycle_max_lr=1e-3, cycle_first_step_size=100,
        note="no decay after the cycle: cycle_min_lr"),
    _ds("OneCycle", 400, cycle_min_lr=1e-4, cycle_max_lr=1e-3, cycle_first_step_size=60,
        cycle_second_step_size=90, decay_lr_rate=0.5, decay_step_size=20,
        note="hyperbolic decay after the cycle: min / (1 + rate * d / decay_step_size)"),
    _ds("OneCycle", 300, cycle_min_lr=1e-4, cycle_max_lr=1e-3, cycle_first_step_size=60,
        cycle_second_step_size=80, cycle_first_stair_count=4, cycle_second_stair_count=5),
    _ds("OneCycle", 300, read="momentum", cycle_min_lr=1e-4, cycle_max_lr=1e-3, cycle_first_step_size=60,
        cycle_second_step_size=90, note="betas[0]: cycle_min_mom at the first step, max_mom - ... after"),
    _ds("OneCycle", 300, read="momentum", cycle_min_lr=1e-4, cycle_max_lr=1e-3, cycle_first_step_size=50,
        cycle_min_mom=0.85, cycle_max_mom=0.95, decay_mom_rate=0.01, decay_step_size=10,
        note="the momentum grows after the cycle: max_mom * (1 + rate * d / decay_step_size)"),
    _ds("LRRangeTest", 300, lr_range_test_min_lr=1e-5, lr_range_test_step_size=20,
        lr_range_test_step_rate=0.5),
    _ds("LRRangeTest", 300, lr_range_test_min_lr=1e-5, lr_range_test_step_size=25,
        lr_range_test_step_rate=2.0, lr_range_test_staircase=True),
]
