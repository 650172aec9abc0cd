"""mmengine conformance cases: each line against mmengine's own schedulers, stepped like its hook.

The reference builds every ``param_scheduler`` dict with ``PARAM_SCHEDULERS.build(cfg,
default_args=dict(optimizer=opt, epoch_length=L))`` in list order (what the Runner does,
constructors included) and then runs ``ParamSchedulerHook``'s loop: after every
iteration the ``by_epoch=False`` schedulers step, after every ``L``-th also the
``by_epoch=True`` ones.  Value of iteration ``i`` = the group's value before its
``i``-th step.  With ``epoch_length=None`` every scheduler is by epoch and the steps
are epochs.

mmengine's values are running products; the closed forms agree to ~1e-15 per step, so
runs of a few hundred steps stay inside 1e-12 (the drift measured is in each note).
"""

from __future__ import annotations

import warnings

from frameworks.framework_case import FrameworkCase
from frameworks.real import real


def _optimizer(param: str, base: float):
    torch = real("torch")
    p = [torch.nn.Parameter(torch.zeros(1, dtype=torch.float64))]
    if param == "momentum":
        return torch.optim.SGD(p, lr=0.1, momentum=base)
    if param == "betas":
        return torch.optim.AdamW(p, lr=0.1, betas=(base, 0.999))
    if param == "weight_decay":
        return torch.optim.SGD(p, lr=0.1, weight_decay=base)
    return torch.optim.SGD(p, lr=base)


def mmengine_values(configs: list[dict], base: float, steps, epoch_length: int | None = None,
                    param: str = "lr") -> list[float]:
    """The value mmengine's schedulers set, iteration by iteration (epoch by epoch without L)."""
    real("mmengine.optim")
    registry = real("mmengine.registry")
    if any(str(cfg["type"]).endswith("WeightDecay") for cfg in configs):  # mmpretrain's own type
        real("mmpretrain.engine.schedulers.weight_decay_scheduler")
        registry = real("mmpretrain.registry")
    optimizer = _optimizer(param, base)
    read = "momentum" if param == "betas" else param
    values = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        schedulers = [registry.PARAM_SCHEDULERS.build(
            dict(cfg), default_args=dict(optimizer=optimizer, epoch_length=epoch_length or 1))
            for cfg in configs]
        by_iter = [s for s in schedulers if not s.by_epoch]
        by_epoch = [s for s in schedulers if s.by_epoch]
        for i in range(max(steps) + 1):
            values.append(optimizer.param_groups[0][read])
            if epoch_length is None:
                for s in schedulers:
                    s.step()
                continue
            for s in by_iter:       # ParamSchedulerHook.after_train_iter
                s.step()
            if (i + 1) % epoch_length == 0:
                for s in by_epoch:  # after_train_epoch
                    s.step()
    return [values[i] for i in steps]


def _cfg(cfg: dict) -> str:
    return "dict(" + ", ".join(f"{k}={v!r}" for k, v in cfg.items()) + ")"


def case(preset: str, source: str, configs: list[dict], base: float, steps: int,
         epoch_length: int | None = None, param: str = "lr", note: str = "", rtol: float = 1e-12,
         params: dict | None = None) -> FrameworkCase:
    optim = {"lr": f"type='SGD', lr={base!r}", "momentum": f"type='SGD', lr=0.1, momentum={base!r}",
             "betas": f"type='AdamW', lr=0.1, betas=({base!r}, 0.999)",
             "weight_decay": f"type='SGD', lr=0.1, weight_decay={base!r}"}[param]
    lines = [f"optim_wrapper = dict(optimizer=dict({optim}))"]
    if len(configs) == 1:
        lines.append(f"param_scheduler = {_cfg(configs[0])}")
    else:
        lines.append("param_scheduler = [\n" + "".join(f"    {_cfg(c)},\n" for c in configs) + "]")
    if epoch_length:
        lines.append(f"# len(train_dataloader) == {epoch_length}; lr(t) at iteration t")
    elif all(c.get("by_epoch", True) for c in configs):
        lines.append("# by epoch: lr(t) at epoch t")
    else:
        lines.append("# by iteration: lr(t) at iteration t")
    return FrameworkCase(preset, source, "mmengine", configs[0]["type"], {}, steps, note=note,
                         code="\n".join(lines), rtol=rtol, params=params or {},
                         anchor=lambda s: mmengine_values(configs, base, s, epoch_length, param))


def it(**cfg) -> dict:
    return {**cfg, "by_epoch": False}


MMENGINE = [
    case("mmengine.LinearLR", "mmengine.LinearLR(lr=0.01, start_factor=0.001, begin=0, end=200, "
         "by_epoch=false)", [it(type="LinearLR", start_factor=0.001, begin=0, end=200)], 0.01, 400,
         note="the factor reaches end_factor at end - 1"),
    case("mmengine.ConstantLR", "mmengine.ConstantLR(lr=0.1, factor=0.5, begin=10, end=60, by_epoch=false)",
         [it(type="ConstantLR", factor=0.5, begin=10, end=60)], 0.1, 120,
         note="the factor covers [begin, end - 1): one step shorter than the window"),
    case("mmengine.ExponentialLR", "mmengine.ExponentialLR(lr=0.1, gamma=0.99, begin=5, end=300, "
         "by_epoch=false)", [it(type="ExponentialLR", gamma=0.99, begin=5, end=300)], 0.1, 400),
    case("mmengine.StepLR", "mmengine.StepLR(lr=0.1, step_size=30, gamma=0.5, end=200, by_epoch=false)",
         [it(type="StepLR", step_size=30, gamma=0.5, end=200)], 0.1, 300),
    case("mmengine.MultiStepLR", "mmengine.MultiStepLR(lr=0.02, milestones=[8, 11], gamma=0.1, end=12)",
         [dict(type="MultiStepLR", milestones=[8, 11], gamma=0.1, end=12)], 0.02, 30,
         note="by epoch: the steps are epochs"),
    case("mmengine.PolyLR", "mmengine.PolyLR(lr=0.01, eta_min=1e-4, power=0.9, begin=0, end=300, "
         "by_epoch=false)", [it(type="PolyLR", eta_min=1e-4, power=0.9, begin=0, end=300)], 0.01, 450,
         note="eta_min at end - 1"),
    case("mmengine.CosineAnnealingLR", "mmengine.CosineAnnealingLR(lr=0.1, eta_min=1e-3, begin=0, "
         "end=250, by_epoch=false)", [it(type="CosineAnnealingLR", eta_min=1e-3, begin=0, end=250)],
         0.1, 400, note="default T_max = end - begin: the last value is one step short of eta_min"),
    case("mmengine.CosineAnnealingLR", "mmengine.CosineAnnealingLR(lr=0.1, T_max=60, eta_min_ratio=0.01, "
         "begin=0, end=300, by_epoch=false)",
         [it(type="CosineAnnealingLR", T_max=60, eta_min_ratio=0.01, begin=0, end=300)], 0.1, 350,
         note="a window longer than T_max: past T_max the cosine restarts from the base (periodic)"),
    case("mmengine.OneCycleLR", "mmengine.OneCycleLR(lr=0.1, eta_max=0.1, begin=0, end=300, by_epoch=false)",
         [it(type="OneCycleLR", eta_max=0.1, begin=0, end=300)], 0.1, 400),
    case("mmengine.OneCycleLR", 'mmengine.OneCycleLR(lr=0.1, eta_max=0.2, total_steps=200, pct_start=0.25, '
         'anneal_strategy="linear", three_phase=true, begin=50, end=250, by_epoch=false)',
         [it(type="OneCycleLR", eta_max=0.2, total_steps=200, pct_start=0.25, anneal_strategy="linear",
             three_phase=True, begin=50, end=250)], 0.1, 400),
    case("mmengine.CosineRestartLR", "mmengine.CosineRestartLR(lr=0.1, periods=[100, 150, 50], "
         "restart_weights=[1, 0.5, 0.25], eta_min=1e-4, begin=0, end=400, by_epoch=false)",
         [it(type="CosineRestartLR", periods=[100, 150, 50], restart_weights=[1, 0.5, 0.25],
             eta_min=1e-4, begin=0, end=400)], 0.1, 450,
         note="after the last period the value is left alone"),
    case("mmengine.param_scheduler", "mmengine.param_scheduler(schedulers=["
         "mmengine.LinearLR(lr=0.01, start_factor=1e-6, begin=0, end=150, by_epoch=false), "
         "mmengine.PolyLR(eta_min=0.0, power=1.0, begin=150, end=400, by_epoch=false)])",
         [it(type="LinearLR", start_factor=1e-6, begin=0, end=150),
          it(type="PolyLR", eta_min=0.0, power=1.0, begin=150, end=400)], 0.01, 500,
         note="mmseg's warmup + poly"),
    case("mmengine.param_scheduler", "param epoch_length: int\nschedule lr = mmengine.param_scheduler("
         "schedulers=[mmengine.LinearLR(lr=0.02, start_factor=0.001, begin=0, end=100, by_epoch=false), "
         "mmengine.MultiStepLR(begin=0, end=12, milestones=[8, 11], gamma=0.1)], epoch_length=epoch_length)",
         [it(type="LinearLR", start_factor=0.001, begin=0, end=100),
          dict(type="MultiStepLR", begin=0, end=12, milestones=[8, 11], gamma=0.1)], 0.02, 520,
         epoch_length=37, params={"epoch_length": 37},
         note="mmdet's 1x schedule: a by-iteration warmup overlapping a by-epoch step decay multiply"),
    case("mmengine.param_scheduler", "mmengine.param_scheduler(schedulers=["
         "mmengine.LinearLR(lr=0.004, start_factor=0.001, begin=0, end=5, convert_to_iter_based=true, "
         "epoch_length=20), mmengine.CosineAnnealingLR(T_max=15, eta_min=1e-5, begin=5, end=20)], "
         "epoch_length=20)",
         [dict(type="LinearLR", start_factor=0.001, begin=0, end=5, convert_to_iter_based=True),
          dict(type="CosineAnnealingLR", T_max=15, eta_min=1e-5, begin=5, end=20)], 0.004, 480,
         epoch_length=20, note="mmpretrain's converted warmup, then a by-epoch cosine"),
    case("mmengine.param_scheduler", "mmengine.param_scheduler(schedulers=["
         "mmengine.LinearLR(lr=0.001, start_factor=1e-5, begin=0, end=60, by_epoch=false), "
         "mmengine.CosineAnnealingLR(eta_min=5e-5, begin=5, end=10, T_max=5, by_epoch=true, "
         "convert_to_iter_based=true, epoch_length=30)])",
         [it(type="LinearLR", start_factor=1e-5, begin=0, end=60),
          dict(type="CosineAnnealingLR", eta_min=5e-5, begin=5, end=10, T_max=5, by_epoch=True,
               convert_to_iter_based=True)], 0.001, 360, epoch_length=30,
         note="RTMDet's flat-then-cosine: the lr stays at its warmup end until the cosine's window"),
    case("mmengine.param_scheduler", "mmengine.param_scheduler(schedulers=["
         "mmengine.OneCycleLR(lr=0.1, eta_max=0.05, begin=0, end=100, by_epoch=false), "
         "mmengine.CosineAnnealingLR(eta_min_ratio=0.1, begin=100, end=200, by_epoch=false)])",
         [it(type="OneCycleLR", eta_max=0.05, begin=0, end=100),
          it(type="CosineAnnealingLR", eta_min_ratio=0.1, begin=100, end=200)], 0.1, 260,
         note="OneCycle rewrites initial_lr: the cosine's eta_min_ratio is of eta_max / div_factor"),
    case("mmengine.param_scheduler", "mmengine.param_scheduler(schedulers=["
         "mmengine.ExponentialLR(lr=0.1, gamma=0.995, by_epoch=false, end=300), "
         "mmengine.StepLR(step_size=50, gamma=0.5, by_epoch=false, begin=100, end=300), "
         "mmengine.CosineAnnealingLR(eta_min=0, begin=0, end=300, by_epoch=false)])",
         [it(type="ExponentialLR", gamma=0.995, end=300), it(type="StepLR", step_size=50, gamma=0.5,
                                                             begin=100, end=300),
          it(type="CosineAnnealingLR", eta_min=0, begin=0, end=300)], 0.1, 400,
         note="three overlapping multiplicative windows (a zero-floor cosine multiplies too)"),
    case("mmengine.CosineAnnealingMomentum", "mmengine.CosineAnnealingMomentum(momentum=0.95, "
         "eta_min=0.85, begin=0, end=100, by_epoch=false)",
         [it(type="CosineAnnealingMomentum", eta_min=0.85, begin=0, end=100)], 0.95, 150, param="momentum"),
    case("mmengine.LinearMomentum", "mmengine.LinearMomentum(momentum=0.9, start_factor=0.5, end=40)",
         [dict(type="LinearMomentum", start_factor=0.5, end=40)], 0.9, 60, param="betas",
         note="Adam's betas[0], by epoch"),
    case("mmengine.CosineAnnealingParamScheduler", 'mmengine.CosineAnnealingParamScheduler('
         'param_name="weight_decay", value=0.05, eta_min=0.005, begin=0, end=120, by_epoch=false)',
         [it(type="CosineAnnealingParamScheduler", param_name="weight_decay", eta_min=0.005, begin=0,
             end=120)], 0.05, 200, param="weight_decay"),
]

MMENGINE.append(case(
    "mmengine.CosineAnnealingWeightDecay",
    "mmengine.CosineAnnealingWeightDecay(weight_decay=0.04, eta_min=0.2, T_max=80, begin=10, end=110, "
    "by_epoch=false)",
    [it(type="CosineAnnealingWeightDecay", eta_min=0.2, T_max=80, begin=10, end=110)], 0.04, 160,
    param="weight_decay", note="mmpretrain 1.2.0's: SparK raises the weight decay to eta_min; past T_max "
                               "the cosine restarts from the initial value"))

# One run of every Momentum and generic ParamScheduler twin (the LR rows above cover the math).
_TWIN_ARGS = {
    "Constant": {"factor": 0.5}, "CosineAnnealing": {"eta_min": 0.5}, "Exponential": {"gamma": 0.98},
    "Linear": {"start_factor": 0.5}, "MultiStep": {"milestones": [10, 25], "gamma": 0.8},
    "Step": {"step_size": 15, "gamma": 0.9}, "Poly": {"eta_min": 0.5, "power": 2.0},
    "CosineRestart": {"periods": [20, 30], "restart_weights": [1, 0.8], "eta_min": 0.5},
    "OneCycle": {"eta_max": 0.2},
}


def _sched_value(v) -> str:
    if isinstance(v, list):
        return "[" + ", ".join(_sched_value(x) for x in v) + "]"
    return repr(v)


def _twin(stem: str, family: str) -> FrameworkCase:
    kwargs = dict(_TWIN_ARGS[stem])
    name = f"{stem}{family}"
    param, base = ("momentum", 0.9) if family == "Momentum" else (
        ("weight_decay", 0.9) if stem != "OneCycle" else ("lr", 0.1))
    head = "momentum=0.9" if family == "Momentum" else f'param_name="{param}", value={base!r}'
    args = ", ".join(f"{k}={_sched_value(v)}" for k, v in kwargs.items())
    source = f"mmengine.{name}({head}, {args}, begin=5, end=60, by_epoch=false)"
    cfg = it(type=name, **({} if family == "Momentum" else {"param_name": param}), **kwargs, begin=5, end=60)
    return case(f"mmengine.{name}", source, [cfg], base, 90, param=param)


MMENGINE += [_twin(stem, family) for family in ("Momentum", "ParamScheduler") for stem in _TWIN_ARGS
             if not (family == "Momentum" and stem == "OneCycle")
             and f"mmengine.{stem}{family}" not in {c.preset for c in MMENGINE}]
