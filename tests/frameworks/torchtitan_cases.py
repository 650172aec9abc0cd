"""torchtitan conformance cases: each preset line against torchtitan's own scheduler.

The current formula runs the installed torchtitan 0.3.0
(``LRSchedulersContainer.Config(...).build(optimizers=[opt], training_steps=T)``,
stepped like its trainer); the historical presets run the verbatim builders of
``torchtitan_history.py`` under torch's ``LambdaLR``, which is what torchtitan
wrapped them in.  Each run passes every boundary and goes well past ``T``.
"""

from __future__ import annotations

import warnings

from frameworks import torchtitan_history as history
from frameworks.framework_case import FrameworkCase
from frameworks.real import real


def _sgd(lr):
    torch = real("torch")
    return torch.optim.SGD([torch.nn.Parameter(torch.zeros(1, dtype=torch.float64))], lr=lr)


def _drive(scheduler_step, optimizer, steps) -> list[float]:
    values = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "lr_scheduler.step() before optimizer.step()"
        values.append(optimizer.param_groups[0]["lr"])
        for _ in range(max(steps)):
            scheduler_step()
            values.append(optimizer.param_groups[0]["lr"])
    return [values[i] for i in steps]


def titan_values(config: dict, training_steps: int, lr: float, steps) -> list[float]:
    """torchtitan 0.3.0: the lr its ``LRSchedulersContainer`` sets, after ``k`` steps."""
    module = real("torchtitan.components.optimizer.lr_scheduler")
    optimizer = _sgd(lr)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        container = module.LRSchedulersContainer.Config(**config).build(
            optimizers=[optimizer], training_steps=training_steps)
    return _drive(container.step, optimizer, steps)


def lambda_values(lr_lambda, lr: float, steps) -> list[float]:
    torch = real("torch")
    optimizer = _sgd(lr)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda)
    return _drive(scheduler.step, optimizer, steps)


def _kw(config: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in config.items())


def current(source_args: str, config: dict, training_steps: int, lr: float = 8e-4, steps=None,
            note: str = "") -> FrameworkCase:
    steps = steps or 2 * training_steps + 20
    code = (f"opt = torch.optim.AdamW(params, lr={lr!r})\n"
            f"sched = LRSchedulersContainer.Config({_kw(config)}).build(\n"
            f"    optimizers=[opt], training_steps={training_steps})"
            "  # torchtitan.components.optimizer.lr_scheduler")
    source = f"torchtitan.lr_scheduler(lr={lr!r}, training_steps={training_steps}{source_args})"
    return FrameworkCase("torchtitan.lr_scheduler", source, "torchtitan", "LRSchedulersContainer",
                         config, steps, note=note, code=code,
                         anchor=lambda s: titan_values(config, training_steps, lr, s))


def v2025_03(source_args: str, training_steps: int, warmup: int, ratio, decay_type: str, lr_min: float,
             lr: float = 8e-4) -> FrameworkCase:
    code = (f"# torchtitan 2404197 (2025-03-27 .. 2025-06-10), job TOML:\n"
            f"# [training] steps = {training_steps}\n"
            f"# [lr_scheduler] warmup_steps = {warmup}, decay_ratio = {ratio}, "
            f'decay_type = "{decay_type}", lr_min = {lr_min}\n'
            f"sched = build_lr_schedulers([AdamW(params, lr={lr!r})], job_config)")
    source = f"torchtitan.lr_scheduler_v2025_03(lr={lr!r}, training_steps={training_steps}{source_args})"
    return FrameworkCase("torchtitan.lr_scheduler_v2025_03", source, "torchtitan", "build_lr_schedulers",
                         {}, 2 * training_steps + 20, code=code,
                         note="the code of torchtitan commit 2404197, run under torch's LambdaLR",
                         anchor=lambda s: lambda_values(
                             history.build_24041973(training_steps, warmup, ratio, decay_type, lr_min),
                             lr, s))


def v2024(training_steps: int, warmup: int, lr: float = 8e-4) -> FrameworkCase:
    code = (f"# torchtitan up to 3d6f73c (2025-03-10), job TOML:\n"
            f"# [training] steps = {training_steps}, warmup_steps = {warmup}\n"
            f"sched = build_lr_schedulers([AdamW(params, lr={lr!r})], job_config)")
    source = (f"torchtitan.linear_warmup_linear_decay(lr={lr!r}, training_steps={training_steps}, "
              f"warmup_steps={warmup})")
    return FrameworkCase("torchtitan.linear_warmup_linear_decay", source, "torchtitan",
                         "build_lr_schedulers", {}, 2 * training_steps + 20, code=code,
                         note="the code of torchtitan commit 3d6f73c, run under torch's LambdaLR",
                         anchor=lambda s: lambda_values(history.build_3d6f73c4(training_steps, warmup),
                                                        lr, s))


TORCHTITAN = [
    current(", warmup_steps=20", {"warmup_steps": 20}, 200),
    current(', warmup_steps=20, decay_type="cosine", min_lr_factor=0.1',
            {"warmup_steps": 20, "decay_type": "cosine", "min_lr_factor": 0.1}, 200,
            note="past the end the cosine rises again"),
    current(', warmup_steps=20, decay_ratio=0.35, decay_type="sqrt"',
            {"warmup_steps": 20, "decay_ratio": 0.35, "decay_type": "sqrt"}, 90,
            note="D = round(90 * 0.35) = 31 in floating point (the exact 31.5 would round to 32)"),
    current(", warmup_steps=30, decay_ratio=0.8, min_lr_factor=2.2e-5",
            {"warmup_steps": 30, "decay_ratio": 0.8, "min_lr_factor": 2.2e-5}, 100,
            note="warmup + decay exceed the run: torchtitan clips decay_steps to 70"),
    current(", warmup_steps=0, decay_ratio=0.2", {"warmup_steps": 0, "decay_ratio": 0.2}, 150),
    current(", warmup_steps=50, decay_ratio=0.0", {"warmup_steps": 50, "decay_ratio": 0.0}, 100, steps=101,
            note="no decay: torchtitan asserts decay_steps != 0 from step T + 1 on, so the run stops at T"),
    current(", warmup_steps=120", {"warmup_steps": 120}, 100, steps=101,
            note="warmup longer than the run is clipped to T; torchtitan asserts from step T + 1 on"),
    current(', total_steps=300, warmup_steps=10, decay_type="cosine"',
            {"total_steps": 300, "warmup_steps": 10, "decay_type": "cosine"}, 100, steps=640,
            note="total_steps decouples the schedule from training.steps"),
    v2025_03(", warmup_steps=20, decay_ratio=0.5", 200, 20, 0.5, "linear", 0.0),
    v2025_03(', warmup_steps=10, decay_type="cosine", lr_min=0.1', 120, 10, None, "cosine", 0.1),
    v2024(200, 20),
    v2024(100, 0),
]
