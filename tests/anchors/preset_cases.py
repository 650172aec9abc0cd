"""One table of preset conformance cases, shared by the tests and the cookbook.

Each ``Case`` pairs a schedlang line with the call of the real library that it
migrates (``reference.py`` runs it) and the steps to compare.  The tests
assert the tolerance; ``cookbook.py`` renders the same table as
``docs/cookbook.md``, so the documented recipes are exactly the tested ones.

Error measure: ``|ours - anchor| / max(|anchor|, floor * peak)`` at every step,
where ``peak`` is the largest ``|anchor|`` of the run.  ``floor`` keeps values
that come within rounding of zero (a cosine's last steps, a one-cycle minimum)
from turning rounding noise into huge relative errors: float64 anchors use
``1e-3`` with tolerance 1e-12; Cerebras computes in float32 and uses ``0.1`` with
tolerance 1e-6.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import reference as R


@dataclass(frozen=True)
class Case:
    preset: str                 # the preset exercised, e.g. "torch.StepLR"
    source: str                 # the schedlang program (one expression)
    library: str                # torch | hf | optax | composer | cerebras | sambaflow
    name: str                   # class / function / schedule type in the library
    kwargs: dict = field(default_factory=dict)
    steps: int = 400            # compare t = 0 .. steps-1
    options: dict = field(default_factory=dict)   # lr=, max_duration=, dataloader_len=
    params: dict = field(default_factory=dict)    # schedlang parameters
    upto: int | None = None     # compare only t < upto (a documented deviation after)
    note: str = ""

    @property
    def float32(self) -> bool:
        return self.library == "cerebras"

    @property
    def tolerance(self) -> float:
        return 1e-6 if self.float32 else 1e-12

    @property
    def floor(self) -> float:
        return 0.1 if self.float32 else 1e-3

    @property
    def compared(self) -> range:
        return range(self.steps if self.upto is None else min(self.steps, self.upto))

    def reference(self) -> list[float]:
        steps = self.compared
        if self.library == "torch":
            return R.torch_values(self.name, self.kwargs, steps, **self.options)
        if self.library == "hf":
            return R.hf_values(self.name, steps, **self.options, **self.kwargs)
        if self.library == "optax":
            return R.optax_values(self.name, self.kwargs, steps)
        if self.library == "composer":
            return R.composer_values(self.name, self.kwargs, steps, **self.options)
        if self.library == "cerebras":
            return R.cerebras_values(self.name, self.kwargs, steps, **self.options)
        if self.library == "sambaflow":
            return R.sambaflow_values(self.name, self.kwargs, steps)
        raise ValueError(self.library)

    def ours(self) -> list[float]:
        import schedlang

        return schedlang.compile(self.source, params=self.params)["lr"].values(self.compared)


class Code:
    """A callable argument (a lambda) that shows as its source text in the cookbook."""

    def __init__(self, text: str, fn):
        self.text, self.fn = text, fn

    def __call__(self, *args):
        return self.fn(*args)

    def __repr__(self) -> str:
        return self.text


def max_error(ours: list[float], anchor: list[float], floor: float) -> float:
    peak = max((abs(v) for v in anchor), default=0.0) or 1.0
    return max((abs(a - b) / max(abs(b), floor * peak) for a, b in zip(ours, anchor)), default=0.0)


def _tc(preset, source, name, kwargs, steps=400, lr=1.0, **extra):
    return Case(preset, source, "torch", name, kwargs, steps, {"lr": lr}, **extra)


TORCH = [
    _tc("torch.LambdaLR", "torch.LambdaLR(lr=0.1, lr_lambda=0.97 ** t)", "LambdaLR",
        {"lr_lambda": Code("lambda t: 0.97 ** t", lambda t: 0.97 ** t)}, 300, 0.1),
    _tc("torch.StepLR", "torch.StepLR(lr=0.1, step_size=30, gamma=0.5)", "StepLR",
        {"step_size": 30, "gamma": 0.5}, 400, 0.1),
    _tc("torch.StepLR", "torch.StepLR(lr=0.1, step_size=7)", "StepLR", {"step_size": 7}, 200, 0.1),
    _tc("torch.MultiStepLR", "torch.MultiStepLR(lr=0.1, milestones=[30, 80, 80, 150], gamma=0.5)",
        "MultiStepLR", {"milestones": [30, 80, 80, 150], "gamma": 0.5}, 400, 0.1),
    _tc("torch.ConstantLR", "torch.ConstantLR(lr=0.1, factor=0.5, total_iters=100)", "ConstantLR",
        {"factor": 0.5, "total_iters": 100}, 300, 0.1),
    _tc("torch.ConstantLR", "torch.ConstantLR(lr=0.1)", "ConstantLR", {}, 20, 0.1),
    _tc("torch.LinearLR", "torch.LinearLR(lr=0.1, start_factor=0.01, end_factor=1.0, total_iters=200)",
        "LinearLR", {"start_factor": 0.01, "end_factor": 1.0, "total_iters": 200}, 500, 0.1),
    _tc("torch.LinearLR", "torch.LinearLR(lr=0.1, start_factor=1.0, end_factor=0.05, total_iters=150)",
        "LinearLR", {"start_factor": 1.0, "end_factor": 0.05, "total_iters": 150}, 400, 0.1),
    _tc("torch.ExponentialLR", "torch.ExponentialLR(lr=0.1, gamma=0.99)", "ExponentialLR",
        {"gamma": 0.99}, 600, 0.1),
    _tc("torch.PolynomialLR", "torch.PolynomialLR(lr=0.1, total_iters=200, power=2.0)", "PolynomialLR",
        {"total_iters": 200, "power": 2.0}, 450, 0.1, note="reaches 0 at total_iters, then holds 0"),
    _tc("torch.CosineAnnealingLR", "torch.CosineAnnealingLR(lr=0.1, T_max=200, eta_min=0.001)",
        "CosineAnnealingLR", {"T_max": 200, "eta_min": 0.001}, 900, 0.1,
        note="periodic: climbs back to lr at 2*T_max"),
    _tc("torch.CosineAnnealingWarmRestarts", "torch.CosineAnnealingWarmRestarts(lr=0.1, T_0=50)",
        "CosineAnnealingWarmRestarts", {"T_0": 50}, 400, 0.1),
    _tc("torch.CosineAnnealingWarmRestarts",
        "torch.CosineAnnealingWarmRestarts(lr=0.1, T_0=20, T_mult=2, eta_min=0.001)",
        "CosineAnnealingWarmRestarts", {"T_0": 20, "T_mult": 2, "eta_min": 0.001}, 700, 0.1),
    _tc("torch.CyclicLR", "torch.CyclicLR(base_lr=0.001, max_lr=0.1, step_size_up=50)", "CyclicLR",
        {"base_lr": 0.001, "max_lr": 0.1, "step_size_up": 50}, 400, 0.1),
    _tc("torch.CyclicLR", 'torch.CyclicLR(base_lr=0.001, max_lr=0.1, step_size_up=30, '
        'step_size_down=70, mode="triangular2")', "CyclicLR",
        {"base_lr": 0.001, "max_lr": 0.1, "step_size_up": 30, "step_size_down": 70,
         "mode": "triangular2"}, 500, 0.1),
    _tc("torch.CyclicLR", 'torch.CyclicLR(base_lr=0.001, max_lr=0.1, step_size_up=40, '
        'mode="exp_range", gamma=0.995)', "CyclicLR",
        {"base_lr": 0.001, "max_lr": 0.1, "step_size_up": 40, "mode": "exp_range", "gamma": 0.995},
        400, 0.1),
    _tc("torch.OneCycleLR", "torch.OneCycleLR(max_lr=0.1, total_steps=300)", "OneCycleLR",
        {"max_lr": 0.1, "total_steps": 300}, 300, 0.1,
        note="torch raises after total_steps; the preset holds the final value"),
    _tc("torch.OneCycleLR", 'torch.OneCycleLR(max_lr=0.1, epochs=5, steps_per_epoch=40, pct_start=0.25, '
        'anneal_strategy="linear", three_phase=true)', "OneCycleLR",
        {"max_lr": 0.1, "epochs": 5, "steps_per_epoch": 40, "pct_start": 0.25,
         "anneal_strategy": "linear", "three_phase": True}, 200, 0.1),
    _tc("torch.SequentialLR",
        "torch.SequentialLR(schedulers=[torch.LinearLR(lr=0.1, start_factor=0.01, total_iters=100), "
        "torch.CosineAnnealingLR(lr=0.1, T_max=300, eta_min=0.001)], milestones=[100])",
        "SequentialLR",
        {"schedulers": [("LinearLR", {"start_factor": 0.01, "total_iters": 100}),
                        ("CosineAnnealingLR", {"T_max": 300, "eta_min": 0.001})],
         "milestones": [100]}, 900, 0.1),
    _tc("torch.SequentialLR",
        "torch.SequentialLR(schedulers=[torch.ConstantLR(lr=0.1, factor=0.1, total_iters=50), "
        "torch.ExponentialLR(lr=0.1, gamma=0.99), torch.StepLR(lr=0.1, step_size=40)], "
        "milestones=[30, 200])",
        "SequentialLR",
        {"schedulers": [("ConstantLR", {"factor": 0.1, "total_iters": 50}),
                        ("ExponentialLR", {"gamma": 0.99}), ("StepLR", {"step_size": 40})],
         "milestones": [30, 200]}, 400, 0.1),
    _tc("torch.ChainedScheduler",
        "torch.ChainedScheduler(schedulers=[torch.ConstantLR(lr=0.1, factor=0.1, total_iters=20), "
        "torch.ExponentialLR(lr=0.1, gamma=0.99)])",
        "ChainedScheduler",
        {"schedulers": [("ConstantLR", {"factor": 0.1, "total_iters": 20}),
                        ("ExponentialLR", {"gamma": 0.99})]}, 300, 0.1),
    _tc("torch.ChainedScheduler",
        "torch.ChainedScheduler(schedulers=[torch.LinearLR(lr=0.1, start_factor=0.1, total_iters=50), "
        "torch.MultiStepLR(lr=0.1, milestones=[100, 200]), torch.PolynomialLR(lr=0.1, total_iters=250)])",
        "ChainedScheduler",
        {"schedulers": [("LinearLR", {"start_factor": 0.1, "total_iters": 50}),
                        ("MultiStepLR", {"milestones": [100, 200]}),
                        ("PolynomialLR", {"total_iters": 250})]}, 500, 0.1),
]

def _hf(name, source, steps=400, lr=1.0, warmup=None, total=None, **kwargs):
    options = {"lr": lr, "num_warmup_steps": warmup, "num_training_steps": total}
    return Case(f"hf.{name}", source, "hf", name, kwargs, steps, options)


HF = [
    _hf("constant", "hf.constant(lr=3e-4)", 50, 3e-4),
    _hf("constant_with_warmup", "hf.constant_with_warmup(lr=3e-4, num_warmup_steps=50)", 200, 3e-4, 50),
    _hf("linear", "hf.linear(lr=3e-4, num_warmup_steps=50, num_training_steps=300)", 700, 3e-4, 50, 300),
    _hf("linear", "hf.linear(lr=3e-4, num_training_steps=300)", 700, 3e-4, 0, 300),
    _hf("cosine", "hf.cosine(lr=3e-4, num_warmup_steps=50, num_training_steps=300)", 800, 3e-4, 50, 300),
    _hf("cosine", "hf.cosine(lr=3e-4, num_warmup_steps=20, num_training_steps=300, num_cycles=1.5)", 700,
        3e-4, 20, 300, num_cycles=1.5),
    _hf("cosine_with_restarts", "hf.cosine_with_restarts(lr=3e-4, num_warmup_steps=50, "
        "num_training_steps=350, num_cycles=3)", 800, 3e-4, 50, 350, num_cycles=3),
    _hf("cosine_with_restarts", "hf.cosine_with_restarts(lr=3e-4, num_warmup_steps=10, "
        "num_training_steps=310)", 700, 3e-4, 10, 310),
    _hf("polynomial", "hf.polynomial(lr=3e-4, num_warmup_steps=50, num_training_steps=300, "
        "lr_end=1e-5, power=2.0)", 700, 3e-4, 50, 300, lr_end=1e-5, power=2.0),
    _hf("polynomial", "hf.polynomial(lr=3e-4, num_warmup_steps=50, num_training_steps=300)", 700,
        3e-4, 50, 300),
    _hf("inverse_sqrt", "hf.inverse_sqrt(lr=3e-4, num_warmup_steps=100)", 800, 3e-4, 100),
    _hf("inverse_sqrt", "hf.inverse_sqrt(lr=3e-4, num_warmup_steps=0, timescale=50)", 800, 3e-4, 0,
        timescale=50),
    _hf("inverse_sqrt", "hf.inverse_sqrt(lr=3e-4)", 300, 3e-4, 0),
    _hf("cosine_with_min_lr", "hf.cosine_with_min_lr(lr=3e-4, num_warmup_steps=50, "
        "num_training_steps=300, min_lr=3e-5)", 800, 3e-4, 50, 300, min_lr=3e-5),
    _hf("cosine_with_min_lr", "hf.cosine_with_min_lr(lr=3e-4, num_warmup_steps=50, "
        "num_training_steps=300, min_lr_rate=0.1)", 800, 3e-4, 50, 300, min_lr_rate=0.1),
    _hf("cosine_warmup_with_min_lr", "hf.cosine_warmup_with_min_lr(lr=3e-4, num_warmup_steps=50, "
        "num_training_steps=300, min_lr_rate=0.1)", 800, 3e-4, 50, 300, min_lr_rate=0.1),
    _hf("cosine_warmup_with_min_lr", "hf.cosine_warmup_with_min_lr(lr=3e-4, num_warmup_steps=50, "
        "num_training_steps=300, min_lr=1e-5, warmup_lr_rate=0.05)", 800, 3e-4, 50, 300, min_lr=1e-5,
        warmup_lr_rate=0.05),
    _hf("warmup_stable_decay", "hf.warmup_stable_decay(lr=3e-4, num_warmup_steps=50, "
        "num_training_steps=400, num_decay_steps=100)", 900, 3e-4, 50, 400, num_decay_steps=100),
    _hf("warmup_stable_decay", 'hf.warmup_stable_decay(lr=3e-4, num_warmup_steps=40, '
        'num_stable_steps=150, num_decay_steps=120, warmup_type="cosine", decay_type="1-sqrt", '
        'min_lr_ratio=0.1)', 700, 3e-4, 40, None, num_stable_steps=150, num_decay_steps=120,
        warmup_type="cosine", decay_type="1-sqrt", min_lr_ratio=0.1),
    _hf("warmup_stable_decay", 'hf.warmup_stable_decay(lr=3e-4, num_warmup_steps=40, '
        'num_training_steps=300, num_decay_steps=100, warmup_type="1-sqrt", decay_type="linear")',
        700, 3e-4, 40, 300, num_decay_steps=100, warmup_type="1-sqrt", decay_type="linear"),
]

CASES: list[Case] = [*TORCH, *HF]
