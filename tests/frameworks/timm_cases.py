"""timm (``timm.scheduler``, timm 1.0.31) conformance rows and how to run the real code.

``ROWS`` become ``preset_cases.Case``s (library ``"timm"``), so the conformance
test and the cookbook use them like every other library's.  The reference is
the real scheduler driven the way ``train.py`` drives it: the constructor sets
the value of ``t = 0``; ``step(t)`` (``t_in_epochs``) or ``step_update(t)``
sets the value of ``t``.  Each run passes every warmup end, cycle end and
milestone, and goes well past the last.
"""

from __future__ import annotations

LR = 5e-4


def _row(name, kwargs, steps, note="", upto=None, lr=LR):
    args = ", ".join(f"{k}={_sched(v)}" for k, v in kwargs.items())
    return dict(preset=f"timm.{name}", source=f"timm.{name}(lr={lr!r}, {args})", library="timm", name=name,
                kwargs=kwargs, steps=steps, options={"lr": lr}, note=note, upto=upto)


def _sched(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list):
        return "[" + ", ".join(_sched(v) for v in value) + "]"
    return repr(value)


ROWS = [
    # create_scheduler_v2's usual cosine: warmup inside the epochs (warmup_prefix=False)
    _row("CosineLRScheduler", dict(t_initial=100, lr_min=1e-6, warmup_t=5, warmup_lr_init=1e-5), 250),
    _row("CosineLRScheduler", dict(t_initial=100, lr_min=1e-6, warmup_t=5, warmup_lr_init=1e-5,
                                   warmup_prefix=True), 250),
    _row("CosineLRScheduler", dict(t_initial=30, lr_min=1e-6, cycle_mul=2.0, cycle_decay=0.5, cycle_limit=3,
                                   warmup_t=3, warmup_lr_init=1e-5, k_decay=1.5), 400),
    _row("CosineLRScheduler", dict(t_initial=20, lr_min=1e-6, cycle_mul=1.5, cycle_decay=0.8, cycle_limit=4,
                                   t_in_epochs=False), 300),
    _row("CosineLRScheduler", dict(t_initial=40, cycle_decay=0.7, cycle_limit=5, k_decay=0.5), 300),
    _row("TanhLRScheduler", dict(t_initial=100, lr_min=1e-6), 250),
    _row("TanhLRScheduler", dict(t_initial=100, lr_min=1e-6, warmup_t=5, warmup_lr_init=1e-5), 250),
    _row("TanhLRScheduler", dict(t_initial=40, lb=-6.0, ub=4.0, lr_min=1e-6, cycle_limit=3, cycle_decay=0.5,
                                 cycle_mul=2.0, warmup_t=5, warmup_prefix=True), 400),
    _row("StepLRScheduler", dict(decay_t=2.4, decay_rate=0.97, warmup_t=3, warmup_lr_init=1e-6), 300),
    _row("StepLRScheduler", dict(decay_t=30, decay_rate=0.1, warmup_t=5, warmup_lr_init=1e-5,
                                 warmup_prefix=False), 200),
    _row("MultiStepLRScheduler", dict(decay_t=[30, 60, 90], decay_rate=0.1, warmup_t=5, warmup_lr_init=1e-5),
         200),
    _row("MultiStepLRScheduler", dict(decay_t=[1, 50, 50, 80], decay_rate=0.5), 150),
    _row("PolyLRScheduler", dict(t_initial=100, lr_min=1e-6, warmup_t=5, warmup_lr_init=1e-5), 250),
    _row("PolyLRScheduler", dict(t_initial=30, power=2.0, lr_min=1e-6, cycle_mul=2.0, cycle_limit=3,
                                 cycle_decay=0.1, k_decay=2.0, warmup_t=4, warmup_prefix=True), 400),
    _row("WSDLRScheduler", dict(t_initial=200, decay_t=40, lr_min=1e-6, warmup_t=10, warmup_lr_init=1e-5),
         400),
    _row("WSDLRScheduler", dict(t_initial=200, decay_t=40, lr_min=1e-6, warmup_t=10, stable_fn="rsqrt",
                                decay_fn="linear"), 400),
    _row("WSDLRScheduler", dict(t_initial=200, decay_t=60, lr_min=1e-6, warmup_t=10, stable_fn="power",
                                stable_power=0.3, stable_timescale=7, decay_fn="exp", decay_ratio=0.05), 400),
    _row("WSDLRScheduler", dict(t_initial=150, decay_t=50, decay_fn="cosine"), 300),
    _row("WSDLRScheduler", dict(t_initial=150, decay_t=50, decay_fn="power", decay_power=2.0), 300),
]


def optimizer(lr: float):
    import torch

    return torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=lr)


def values(name: str, kwargs: dict, steps, lr: float = LR) -> list[float]:
    """The learning rate the real scheduler gives at each of ``steps`` (train.py's calls)."""
    from frameworks.real import real

    scheduler_module = real("timm.scheduler")
    opt = optimizer(lr)
    scheduler = getattr(scheduler_module, name)(opt, **kwargs)
    initial = opt.param_groups[0]["lr"]
    out = []
    for step in steps:
        if step == 0:
            out.append(initial)
            continue
        if kwargs.get("t_in_epochs", True):
            scheduler.step(step)
        else:
            scheduler.step_update(step)
        out.append(opt.param_groups[0]["lr"])
    return out


def anchor_code(name: str, kwargs: dict, options: dict) -> str:
    args = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    call = "step_update(t)" if kwargs.get("t_in_epochs", True) is False else "step(t)"
    return (f"opt = torch.optim.SGD(params, lr={options.get('lr', LR)!r})\n"
            f"sched = timm.scheduler.{name}(opt, {args})\n"
            f"# lr at t: the constructor's value at t = 0, after sched.{call} for t >= 1")
