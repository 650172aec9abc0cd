"""One table of preset conformance cases, shared by the tests and the cookbook.

Each ``Case`` pairs a schedlang line with the call of the real library that it
migrates (``reference.py`` runs it) and the steps to compare.  The tests
assert the tolerance; ``cookbook.py`` renders the same table as
``docs/cookbook.md``, so the documented recipes are exactly the tested ones.

Error measure: ``|ours - anchor| / max(|anchor|, floor * peak)`` at every step,
where ``peak`` is the largest ``|anchor|`` of the run: relative error, except
that values within rounding of zero (a cosine's last steps, a one-cycle
minimum) are measured against a fraction of the peak instead of themselves.
float64 libraries: tolerance 1e-12, floor 1e-3.  Cerebras: tolerance 1e-6,
floor 0.1, because its constants and intermediate values are float32 (see
``cerebras_float64``) and a float32 difference like ``E + (I - E) * x`` near
``E`` loses digits to cancellation.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from frameworks import keras_cases, timm_cases

from . import reference as R


@dataclass(frozen=True)
class Case:
    preset: str                 # the preset exercised, e.g. "torch.StepLR"
    source: str                 # the schedlang program (one expression)
    library: str                # torch | hf | optax | composer | cerebras | sambaflow | timm | keras
    name: str                   # class / function / schedule type in the library
    kwargs: dict = field(default_factory=dict)
    steps: int = 400            # compare t = 0 .. steps-1
    options: dict = field(default_factory=dict)   # lr=, max_duration=, dataloader_len=
    params: dict = field(default_factory=dict)    # schedlang parameters
    upto: int | None = None     # compare only t < upto (a documented deviation after)
    note: str = ""

    @property
    def float32(self) -> bool:
        return self.library in ("cerebras", "keras")

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
            return optax_vector(self.name, self.kwargs, steps)
        if self.library == "composer":  # Composer returns the multiplier of the optimizer's lr
            options = dict(self.options)
            lr = options.pop("lr", 1.0)
            return [lr * v for v in R.composer_values(self.name, self.kwargs, steps, **options)]
        if self.library == "cerebras":
            return cerebras_float64(self.name, self.kwargs, steps, **self.options)
        if self.library == "sambaflow":
            return R.sambaflow_values(self.name, self.kwargs, steps)
        raise ValueError(self.library)

    def ours(self) -> list[float]:
        import schedlang

        return schedlang.compile(self.source, params=self.params)["lr"].values(self.compared)


def optax_vector(name: str, kwargs: dict, steps) -> list[float]:
    """``reference.optax_values`` in one vectorised call (jax per-step calls are slow).

    Same conventions: x64 on while the schedule is built and run, int64 counts.
    """
    try:
        import jax
        import optax
    except ImportError as exc:
        raise R.AnchorUnavailable(f"optax is not installed ({exc})") from None
    previous = bool(jax.config.jax_enable_x64)
    jax.config.update("jax_enable_x64", True)
    try:
        kwargs = dict(kwargs)
        if "schedules" in kwargs:
            kwargs["schedules"] = [getattr(optax, n)(**k) for n, k in kwargs["schedules"]]
        schedule = getattr(optax, name)(**kwargs)
        counts = jax.numpy.asarray(list(steps), dtype=jax.numpy.int64)
        values = jax.jit(jax.vmap(lambda c: jax.numpy.asarray(schedule(c), dtype=jax.numpy.float64)))(counts)
        return [float(v) for v in values.tolist()]
    finally:
        jax.config.update("jax_enable_x64", previous)


def cerebras_float64(name: str, kwargs: dict, steps, **options) -> list[float]:
    """``reference.cerebras_values`` with torch's default dtype set to float64.

    Cerebras divides its int64 step by ints, which yields the *default* dtype:
    float32 normally, so a cosine argument ``pi * t / T`` carries float32
    rounding that grows with ``t`` (1e-6 of the peak by ``t = 5 T``).  Run in
    float64 the comparison measures Cerebras' formulas, not float32; the
    constants Cerebras pins to float32 (``torch.tensor(initial_val,
    dtype=float32)``) still round by ~6e-8, well inside the 1e-6 tolerance.
    """
    import torch

    if isinstance(kwargs.get("lr_lambda"), Code):
        name, kwargs = _cerebras_lambda_subclass(name, kwargs)
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        return R.cerebras_values(name, kwargs, steps, **options)
    finally:
        torch.set_default_dtype(previous)


def _cerebras_lambda_subclass(name: str, kwargs: dict) -> tuple[str, dict]:
    """Cerebras' LambdaLR takes no lambda: users subclass it and override
    ``set_value_lambda``.  Do exactly that, inside the loaded 2.10 module."""
    ns = R._load_cerebras()
    module = ns.lr_scheduler
    fn = kwargs["lr_lambda"]
    cls = type(f"Schedlang{name}", (getattr(module, name),),
               {"set_value_lambda": lambda self: [fn], "__module__": module.__name__})
    setattr(module, cls.__name__, cls)
    return cls.__name__, {k: v for k, v in kwargs.items() if k != "lr_lambda"}


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


def _tc(preset, source, name, kwargs, steps=400, lr=1.0, optimizer_kwargs=None, key="lr", **extra):
    options = {"lr": lr} | ({} if key == "lr" else {"key": key, "optimizer_kwargs": optimizer_kwargs})
    return Case(preset, source, "torch", name, kwargs, steps, options, **extra)


TORCH = [
    _tc("torch.LambdaLR", "torch.LambdaLR(lr=0.1, lr_lambda=0.97 ** t)", "LambdaLR",
        {"lr_lambda": Code("lambda t: 0.97 ** t", lambda t: 0.97 ** t)}, 300, 0.1),
    _tc("torch.MultiplicativeLR", "torch.MultiplicativeLR(lr=0.1, lr_lambda=0.97)", "MultiplicativeLR",
        {"lr_lambda": Code("lambda t: 0.97", lambda t: 0.97)}, 300, 0.1,
        note="a constant factor: torch's running product is lr * 0.97 ** t"),
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
    _tc("torch.CyclicLR.momentum", 'torch.CyclicLR.momentum(base_lr=0.001, max_lr=0.1, step_size_up=30, '
        'step_size_down=70, mode="triangular2")', "CyclicLR",
        {"base_lr": 0.001, "max_lr": 0.1, "step_size_up": 30, "step_size_down": 70,
         "mode": "triangular2"}, 500, 0.1, optimizer_kwargs={"momentum": 0.9}, key="momentum",
        note="the momentum torch writes beside the lr (name the schedule momentum or beta1)"),
    _tc("torch.OneCycleLR.momentum", 'torch.OneCycleLR.momentum(max_lr=0.1, total_steps=300, '
        'three_phase=true)', "OneCycleLR", {"max_lr": 0.1, "total_steps": 300, "three_phase": True},
        300, 0.1, optimizer_kwargs={"momentum": 0.9}, key="momentum",
        note="the momentum torch writes beside the lr (name the schedule momentum or beta1)"),
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
    _tc("torch.SequentialLR",  # SPEC 3: lr= on the composite goes to the children that omit it
        "torch.SequentialLR(lr=0.1, schedulers=[torch.LinearLR(start_factor=0.01, total_iters=100), "
        "torch.CosineAnnealingLR(T_max=300, eta_min=0.001)], milestones=[100])",
        "SequentialLR",
        {"schedulers": [("LinearLR", {"start_factor": 0.01, "total_iters": 100}),
                        ("CosineAnnealingLR", {"T_max": 300, "eta_min": 0.001})],
         "milestones": [100]}, 900, 0.1, note="lr= given once, on the composite"),
    _tc("torch.ChainedScheduler",
        "torch.ChainedScheduler(lr=0.1, schedulers=[torch.ConstantLR(factor=0.1, total_iters=20), "
        "torch.ExponentialLR(lr=0.1, gamma=0.99)])",
        "ChainedScheduler",
        {"schedulers": [("ConstantLR", {"factor": 0.1, "total_iters": 20}),
                        ("ExponentialLR", {"gamma": 0.99})]}, 300, 0.1,
        note="lr= on the composite; a child may repeat it"),
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

def _ox(name, source, steps, **kwargs):
    return Case(f"optax.{name}", source, "optax", name, kwargs, steps)


_WCD = ("optax.warmup_cosine_decay_schedule(init_value=0.0, peak_value=1e-3, warmup_steps={w}, "
        "decay_steps={d}, end_value=1e-5)")

OPTAX = [
    _ox("constant_schedule", "optax.constant_schedule(1e-3)", 20, value=1e-3),
    _ox("linear_schedule", "optax.linear_schedule(init_value=1e-3, end_value=1e-5, transition_steps=200, "
        "transition_begin=50)", 600, init_value=1e-3, end_value=1e-5, transition_steps=200,
        transition_begin=50),
    _ox("polynomial_schedule", "optax.polynomial_schedule(init_value=1e-3, end_value=1e-5, power=2.5, "
        "transition_steps=300)", 700, init_value=1e-3, end_value=1e-5, power=2.5, transition_steps=300),
    _ox("piecewise_constant_schedule", "optax.piecewise_constant_schedule(init_value=1e-3, "
        "boundaries_and_scales=[[300, 0.1], [100, 0.5], [200, 0.5]])", 600, init_value=1e-3,
        boundaries_and_scales={300: 0.1, 100: 0.5, 200: 0.5}),
    _ox("exponential_decay", "optax.exponential_decay(init_value=1e-3, transition_steps=50, "
        "decay_rate=0.5, transition_begin=20)", 600, init_value=1e-3, transition_steps=50,
        decay_rate=0.5, transition_begin=20),
    _ox("exponential_decay", "optax.exponential_decay(init_value=1e-3, transition_steps=50, "
        "decay_rate=0.5, staircase=true, end_value=2e-5)", 600, init_value=1e-3, transition_steps=50,
        decay_rate=0.5, staircase=True, end_value=2e-5),
    _ox("exponential_decay", "optax.exponential_decay(init_value=1e-5, transition_steps=100, "
        "decay_rate=2.0, end_value=1e-3)", 1000, init_value=1e-5, transition_steps=100,
        decay_rate=2.0, end_value=1e-3),
    _ox("cosine_decay_schedule", "optax.cosine_decay_schedule(init_value=1e-3, decay_steps=300, "
        "alpha=0.01)", 700, init_value=1e-3, decay_steps=300, alpha=0.01),
    _ox("cosine_decay_schedule", "optax.cosine_decay_schedule(init_value=1e-3, decay_steps=300, "
        "exponent=2.0)", 700, init_value=1e-3, decay_steps=300, exponent=2.0),
    _ox("warmup_constant_schedule", "optax.warmup_constant_schedule(init_value=0.0, peak_value=1e-3, "
        "warmup_steps=100)", 300, init_value=0.0, peak_value=1e-3, warmup_steps=100),
    _ox("warmup_cosine_decay_schedule", _WCD.format(w=100, d=500), 1200, init_value=0.0,
        peak_value=1e-3, warmup_steps=100, decay_steps=500, end_value=1e-5),
    _ox("warmup_exponential_decay_schedule", "optax.warmup_exponential_decay_schedule(init_value=0.0, "
        "peak_value=1e-3, warmup_steps=100, transition_steps=40, decay_rate=0.8, end_value=1e-5)",
        800, init_value=0.0, peak_value=1e-3, warmup_steps=100, transition_steps=40, decay_rate=0.8,
        end_value=1e-5),
    _ox("sgdr_schedule", "optax.sgdr_schedule(cosine_kwargs=[" + _WCD.format(w=20, d=200) + ", "
        + _WCD.format(w=20, d=300) + "])", 1100,
        cosine_kwargs=[dict(init_value=0.0, peak_value=1e-3, warmup_steps=20, decay_steps=200,
                            end_value=1e-5),
                       dict(init_value=0.0, peak_value=1e-3, warmup_steps=20, decay_steps=300,
                            end_value=1e-5)]),
    _ox("join_schedules", "optax.join_schedules(schedules=[optax.constant_schedule(1e-4), "
        "optax.cosine_decay_schedule(1e-3, 300)], boundaries=[50])", 800,
        schedules=[("constant_schedule", {"value": 1e-4}),
                   ("cosine_decay_schedule", {"init_value": 1e-3, "decay_steps": 300})],
        boundaries=[50]),
    _ox("piecewise_interpolate_schedule", 'optax.piecewise_interpolate_schedule("cosine", 1e-3, '
        "[[100, 0.5], [250, 0.1], [400, 2.0]])", 900, interpolate_type="cosine", init_value=1e-3,
        boundaries_and_scales={100: 0.5, 250: 0.1, 400: 2.0}),
    _ox("piecewise_interpolate_schedule", 'optax.piecewise_interpolate_schedule("linear", 1e-3, '
        "[[0, 2.0], [150, 0.1]])", 400, interpolate_type="linear", init_value=1e-3,
        boundaries_and_scales={0: 2.0, 150: 0.1}),
    _ox("linear_onecycle_schedule", "optax.linear_onecycle_schedule(transition_steps=300, "
        "peak_value=1e-3)", 700, transition_steps=300, peak_value=1e-3),
    _ox("linear_onecycle_schedule", "optax.linear_onecycle_schedule(transition_steps=100, "
        "peak_value=1e-3, pct_start=0.29, pct_final=0.57)", 300, transition_steps=100,
        peak_value=1e-3, pct_start=0.29, pct_final=0.57),
    _ox("cosine_onecycle_schedule", "optax.cosine_onecycle_schedule(transition_steps=300, "
        "peak_value=1e-3, pct_start=0.25)", 700, transition_steps=300, peak_value=1e-3, pct_start=0.25),
]


def _sf(name, source, steps, **kwargs):
    return Case(f"sambaflow.{name}", source, "sambaflow", name, kwargs, steps)


SAMBAFLOW = [
    _sf("cosine_schedule_with_warmup", "sambaflow.cosine_schedule_with_warmup(learning_rate=1e-3, "
        "warmup_steps=100, max_steps=500)", 1100, learning_rate=1e-3, warmup_steps=100, max_steps=500),
    _sf("polynomial_decay_schedule_with_warmup", "sambaflow.polynomial_decay_schedule_with_warmup("
        "learning_rate=1e-3, warmup_steps=100, max_steps=500, end_lr_ratio=0.05)", 1100,
        learning_rate=1e-3, warmup_steps=100, max_steps=500, end_lr_ratio=0.05),
    _sf("polynomial_decay_schedule_with_warmup", "sambaflow.polynomial_decay_schedule_with_warmup("
        "learning_rate=1e-3, max_steps=300)", 700, learning_rate=1e-3, max_steps=300),
    _sf("fixed_lr", "sambaflow.fixed_lr(learning_rate=1e-3)", 20, learning_rate=1e-3),
]

def _cb(name, source, steps, upto=None, note="", **kwargs):
    return Case(f"cerebras.{name}", source, "cerebras", name, kwargs, steps, upto=upto, note=note)


CEREBRAS = [
    _cb("ConstantLR", "cerebras.ConstantLR(learning_rate=0.01)", 20, learning_rate=0.01),
    _cb("PolynomialLR", "cerebras.PolynomialLR(initial_learning_rate=0.01, end_learning_rate=1e-4, "
        "total_iters=300, power=2.0)", 700, initial_learning_rate=0.01, end_learning_rate=1e-4,
        total_iters=300, power=2.0),
    _cb("LinearLR", "cerebras.LinearLR(initial_learning_rate=0.0, end_learning_rate=0.01, "
        "total_iters=200)", 500, initial_learning_rate=0.0, end_learning_rate=0.01, total_iters=200),
    _cb("ExponentialLR", "cerebras.ExponentialLR(initial_learning_rate=0.01, total_iters=50, "
        "decay_rate=0.8)", 500, initial_learning_rate=0.01, total_iters=50, decay_rate=0.8),
    _cb("ExponentialLR", "cerebras.ExponentialLR(initial_learning_rate=0.01, total_iters=30, "
        "decay_rate=0.5, staircase=true)", 300, initial_learning_rate=0.01, total_iters=30,
        decay_rate=0.5, staircase=True),
    _cb("InverseExponentialTimeDecayLR", "cerebras.InverseExponentialTimeDecayLR("
        "initial_learning_rate=0.01, step_exponent=1.5, total_iters=100, decay_rate=0.5)", 500,
        initial_learning_rate=0.01, step_exponent=1.5, total_iters=100, decay_rate=0.5),
    _cb("InverseExponentialTimeDecayLR", "cerebras.InverseExponentialTimeDecayLR("
        "initial_learning_rate=0.01, step_exponent=1, total_iters=40, decay_rate=0.5, staircase=true)",
        400, initial_learning_rate=0.01, step_exponent=1, total_iters=40, decay_rate=0.5, staircase=True),
    _cb("InverseSquareRootDecayLR", "cerebras.InverseSquareRootDecayLR(initial_learning_rate=0.01, "
        "scale=2.0, warmup_steps=100)", 600, initial_learning_rate=0.01, scale=2.0, warmup_steps=100),
    _cb("InverseSquareRootDecayLR", "cerebras.InverseSquareRootDecayLR()", 100),
    _cb("CosineDecayLR", "cerebras.CosineDecayLR(initial_learning_rate=0.01, end_learning_rate=1e-4, "
        "total_iters=300)", 700, initial_learning_rate=0.01, end_learning_rate=1e-4, total_iters=300),
    _cb("SequentialLR", "cerebras.SequentialLR(schedulers=["
        "cerebras.LinearLR(initial_learning_rate=0.0, end_learning_rate=6e-4, total_iters=150), "
        "cerebras.LinearLR(initial_learning_rate=6e-4, end_learning_rate=6e-5, total_iters=600)])", 1500,
        note="milestones derived from total_iters (ModelZoo)",
        schedulers=[("LinearLR", {"initial_learning_rate": 0.0, "end_learning_rate": 6e-4,
                                  "total_iters": 150}),
                    ("LinearLR", {"initial_learning_rate": 6e-4, "end_learning_rate": 6e-5,
                                  "total_iters": 600})]),
    _cb("SequentialLR", "cerebras.SequentialLR(schedulers=["
        "cerebras.ConstantLR(learning_rate=1e-3), "
        "cerebras.CosineDecayLR(initial_learning_rate=1e-2, end_learning_rate=1e-3, total_iters=200), "
        "cerebras.StepLR(initial_learning_rate=1e-3, step_size=50, gamma=0.5)], milestones=[40, 300])",
        700, schedulers=[("ConstantLR", {"learning_rate": 1e-3}),
                         ("CosineDecayLR", {"initial_learning_rate": 1e-2, "end_learning_rate": 1e-3,
                                            "total_iters": 200}),
                         ("StepLR", {"initial_learning_rate": 1e-3, "step_size": 50, "gamma": 0.5})],
        milestones=[40, 300]),
    _cb("PiecewiseConstantLR", "cerebras.PiecewiseConstantLR(learning_rates=[1e-2, 5e-3, 1e-3], "
        "milestones=[100, 250])", 600, learning_rates=[1e-2, 5e-3, 1e-3], milestones=[100, 250]),
    _cb("PiecewiseConstantLR", "cerebras.PiecewiseConstantLR(learning_rates=[1e-2, 5e-3], "
        "milestones=[100, 250])", 600, learning_rates=[1e-2, 5e-3], milestones=[100, 250]),
    _cb("MultiStepLR", "cerebras.MultiStepLR(initial_learning_rate=0.01, gamma=0.5, "
        "milestones=[100, 50, 200, 200])", 500, initial_learning_rate=0.01, gamma=0.5,
        milestones=[100, 50, 200, 200]),
    _cb("StepLR", "cerebras.StepLR(initial_learning_rate=0.01, step_size=70, gamma=0.7)", 600,
        initial_learning_rate=0.01, step_size=70, gamma=0.7),
    _cb("CosineAnnealingLR", "cerebras.CosineAnnealingLR(initial_learning_rate=0.01, T_max=150, "
        "eta_min=1e-4)", 800, initial_learning_rate=0.01, T_max=150, eta_min=1e-4),
    _cb("LambdaLR", "cerebras.LambdaLR(initial_learning_rate=0.5)", 400, upto=75, initial_learning_rate=0.5,
        note="no lr_lambda: Cerebras' built-in demo lambdas [t/30, 0.95**t]; Cerebras raises "
             "float32(0.95) to the power t, a relative gap of t * 1.3e-8, inside 1e-6 until t = 75"),
    _cb("LambdaLR", "cerebras.LambdaLR(initial_learning_rate=0.01, lr_lambda=1 / (1 + t / 50))", 400,
        initial_learning_rate=0.01, lr_lambda=Code("lambda t: 1 / (1 + t / 50)", lambda t: 1 / (1 + t / 50)),
        note="Cerebras takes no lambda argument: the anchor is a LambdaLR subclass whose "
             "set_value_lambda returns [lr_lambda]"),
    _cb("CosineAnnealingWarmRestarts", "cerebras.CosineAnnealingWarmRestarts(initial_learning_rate=0.01, "
        "T_0=100, eta_min=1e-4)", 400, upto=100,
        note="2.10 is wrong after T_0 (see presets.md); compared with torch below",
        initial_learning_rate=0.01, T_0=100, eta_min=1e-4),
    Case("cerebras.CosineAnnealingWarmRestarts", "cerebras.CosineAnnealingWarmRestarts("
         "initial_learning_rate=0.01, T_0=100, eta_min=1e-4)", "torch", "CosineAnnealingWarmRestarts",
         {"T_0": 100, "eta_min": 1e-4}, 400, {"lr": 0.01}, note="the documented intent: PyTorch SGDR"),
    Case("cerebras.CosineAnnealingWarmRestarts", "cerebras.CosineAnnealingWarmRestarts("
         "initial_learning_rate=0.01, T_0=30, T_mult=2)", "torch", "CosineAnnealingWarmRestarts",
         {"T_0": 30, "T_mult": 2}, 500, {"lr": 0.01}, note="T_mult != 1 (2.10 raises ValueError)"),
    _cb("MultiplicativeLR", "cerebras.MultiplicativeLR(initial_learning_rate=0.01, "
        "coefficient=0.9900000095367432)", 500, initial_learning_rate=0.01, coefficient=0.99,
        note="float32 base: Cerebras computes float32(0.99) ** t, so the line uses float32(0.99); "
             "with 0.99 itself the relative gap grows as t * 1e-8"),
    _cb("ChainedScheduler", "cerebras.ChainedScheduler(schedulers=["
        "cerebras.ConstantLR(learning_rate=0.01), "
        "cerebras.LinearLR(initial_learning_rate=0.5, end_learning_rate=1.0, total_iters=100), "
        "cerebras.StepLR(initial_learning_rate=2.0, step_size=60, gamma=0.5)])", 400,
        schedulers=[("ConstantLR", {"learning_rate": 0.01}),
                    ("LinearLR", {"initial_learning_rate": 0.5, "end_learning_rate": 1.0,
                                  "total_iters": 100}),
                    ("StepLR", {"initial_learning_rate": 2.0, "step_size": 60, "gamma": 0.5})]),
    _cb("CyclicLR", "cerebras.CyclicLR(base_lr=1e-4, max_lr=1e-2, step_size_up=40, step_size_down=60, "
        'mode="triangular2")', 500, base_lr=1e-4, max_lr=1e-2, step_size_up=40, step_size_down=60,
        mode="triangular2"),
    _cb("CyclicLR", 'cerebras.CyclicLR(base_lr=1e-4, max_lr=1e-2, step_size_up=50, mode="exp_range", '
        "gamma=0.9900000095367432)", 400, base_lr=1e-4, max_lr=1e-2, step_size_up=50, mode="exp_range",
        gamma=0.99, note="float32 base: Cerebras computes float32(gamma) ** t (see MultiplicativeLR)"),
    _cb("OneCycleLR", "cerebras.OneCycleLR(initial_learning_rate=4e-4, max_lr=1e-2, total_steps=300)",
        600, upto=300, note="2.10 extrapolates after total_steps; the preset holds (presets.md)",
        initial_learning_rate=4e-4, max_lr=1e-2, total_steps=300),
    _cb("OneCycleLR", "cerebras.OneCycleLR(initial_learning_rate=4e-4, max_lr=1e-2, total_steps=200, "
        'three_phase=true, anneal_strategy="linear")', 400, upto=200,
        initial_learning_rate=4e-4, max_lr=1e-2, total_steps=200, three_phase=True,
        anneal_strategy="linear"),
    _cb("CosineDecayWD", "cerebras.CosineDecayWD(initial_val=0.1, end_val=0.0, total_iters=200)", 500,
        initial_val=0.1, end_val=0.0, total_iters=200),
    _cb("SequentialWD", "cerebras.SequentialWD(schedulers=[cerebras.ConstantWD(val=0.0, total_iters=50), "
        "cerebras.LinearWD(initial_val=0.0, end_val=0.1, total_iters=100)])", 400,
        schedulers=[("ConstantWD", {"val": 0.0, "total_iters": 50}),
                    ("LinearWD", {"initial_val": 0.0, "end_val": 0.1, "total_iters": 100})]),
    _cb("PiecewiseConstantWD", "cerebras.PiecewiseConstantWD(vals=[0.1, 0.01], milestones=[100])", 300,
        vals=[0.1, 0.01], milestones=[100]),
    _cb("CyclicWD", "cerebras.CyclicWD(base_val=0.01, max_val=0.1, step_size_up=25)", 300,
        base_val=0.01, max_val=0.1, step_size_up=25),
    _cb("OneCycleWD", "cerebras.OneCycleWD(initial_val=0.01, max_val=0.1, total_steps=200)", 200,
        initial_val=0.01, max_val=0.1, total_steps=200),
    _cb("ChainedWD", "cerebras.ChainedWD(schedulers=[cerebras.ExponentialWD(initial_val=0.1, "
        "total_iters=100, decay_rate=0.5), cerebras.MultiplicativeWD(initial_val=1.0, "
        "coefficient=0.9990000128746033)])",
        400, note="float32 base (see MultiplicativeLR)",
        schedulers=[("ExponentialWD", {"initial_val": 0.1, "total_iters": 100, "decay_rate": 0.5}),
                         ("MultiplicativeWD", {"initial_val": 1.0, "coefficient": 0.999})]),
]

def _cp(name, source, steps, params=None, max_duration=None, dataloader_len=None, **kwargs):
    options = {"max_duration": max_duration, "dataloader_len": dataloader_len, "lr": 0.1}
    return Case(f"composer.{name}", source, "composer", name, kwargs, steps, options, params or {})


_DUR = "param max_duration: int\nschedule lr = "
_EP = "param steps_per_epoch: int\nschedule lr = "

COMPOSER = [
    _cp("StepScheduler", "composer.StepScheduler(lr=0.1, step_size=25ba, gamma=0.5)", 300,
        step_size="25ba", gamma=0.5),
    _cp("StepScheduler", _EP + "composer.StepScheduler(lr=0.1, step_size=2ep)", 300,
        {"steps_per_epoch": 40}, dataloader_len=40, step_size="2ep"),
    _cp("MultiStepScheduler", "composer.MultiStepScheduler(lr=0.1, milestones=[50ba, 120ba, 120ba], "
        "gamma=0.5)", 300, milestones=["50ba", "120ba", "120ba"], gamma=0.5),
    _cp("ConstantScheduler", "composer.ConstantScheduler(lr=0.1, alpha=0.25, t_max=100ba)", 300,
        alpha=0.25, t_max="100ba"),
    _cp("ConstantScheduler", _DUR + "composer.ConstantScheduler(lr=0.1, alpha=0.25)", 300,
        {"max_duration": 120}, "120ba", alpha=0.25),
    _cp("LinearScheduler", "composer.LinearScheduler(lr=0.1, alpha_i=0.5, alpha_f=0.01, t_max=200)", 500,
        alpha_i=0.5, alpha_f=0.01, t_max="200ba"),
    _cp("LinearScheduler", _DUR + "composer.LinearScheduler(lr=0.1)", 500, {"max_duration": 220}, "220ba"),
    _cp("ExponentialScheduler", _EP + "composer.ExponentialScheduler(lr=0.1, gamma=0.5)", 400,
        {"steps_per_epoch": 50}, dataloader_len=50, gamma=0.5),
    _cp("ExponentialScheduler", "composer.ExponentialScheduler(lr=0.1, gamma=0.9, decay_period=30ba)",
        400, gamma=0.9, decay_period="30ba"),
    _cp("CosineAnnealingScheduler", _DUR + "composer.CosineAnnealingScheduler(lr=0.1, t_max=0.75dur, "
        "alpha_f=0.05)", 700, {"max_duration": 400}, "400ba", t_max="0.75dur", alpha_f=0.05),
    _cp("CosineAnnealingScheduler", _EP + "composer.CosineAnnealingScheduler(lr=0.1, t_max=3ep)", 400,
        {"steps_per_epoch": 64}, dataloader_len=64, t_max="3ep"),
    _cp("CosineAnnealingWarmRestartsScheduler", "composer.CosineAnnealingWarmRestartsScheduler(lr=0.1, "
        "t_0=30ba, t_mult=2, alpha_f=0.1)", 700, t_0="30ba", t_mult=2.0, alpha_f=0.1),
    _cp("CosineAnnealingWarmRestartsScheduler", "composer.CosineAnnealingWarmRestartsScheduler(lr=0.1, "
        "t_0=50ba)", 400, t_0="50ba"),
    _cp("PolynomialScheduler", _DUR + "composer.PolynomialScheduler(lr=0.1, power=3, alpha_f=0.01)", 600,
        {"max_duration": 250}, "250ba", power=3.0, alpha_f=0.01),
    _cp("MultiStepWithWarmupScheduler", "composer.MultiStepWithWarmupScheduler(lr=0.1, t_warmup=40ba, "
        "milestones=[100ba, 200ba], gamma=0.5)", 400, t_warmup="40ba", milestones=["100ba", "200ba"],
        gamma=0.5),
    _cp("ConstantWithWarmupScheduler", _DUR + "composer.ConstantWithWarmupScheduler(lr=0.1, t_warmup=40ba, "
        "alpha=0.5)", 300, {"max_duration": 150}, "150ba", t_warmup="40ba", alpha=0.5),
    _cp("LinearWithWarmupScheduler", _DUR + "composer.LinearWithWarmupScheduler(lr=0.1, t_warmup=0.1dur, "
        "alpha_i=0.8, alpha_f=0.05)", 800, {"max_duration": 400}, "400ba", t_warmup="0.1dur",
        alpha_i=0.8, alpha_f=0.05),
    _cp("CosineAnnealingWithWarmupScheduler", "composer.CosineAnnealingWithWarmupScheduler(lr=0.1, "
        "t_warmup=50ba, t_max=400ba, alpha_f=0.1)", 900, t_warmup="50ba", t_max="400ba", alpha_f=0.1),
    _cp("CosineAnnealingWithWarmupScheduler", _DUR + "composer.CosineAnnealingWithWarmupScheduler(lr=0.1, "
        "t_warmup=0.05dur)", 700, {"max_duration": 333}, "333ba", t_warmup="0.05dur"),
    _cp("PolynomialWithWarmupScheduler", "composer.PolynomialWithWarmupScheduler(lr=0.1, t_warmup=30ba, "
        "t_max=300ba)", 700, t_warmup="30ba", t_max="300ba"),
    # llm-foundry 0.21's: warmup, 1/sqrt decay, cooldown to t_max, held past the end
    _cp("InverseSquareRootWithWarmupScheduler", _DUR + "composer.InverseSquareRootWithWarmupScheduler("
        "lr=0.1, t_warmup=20ba, t_scale=10ba, t_cooldown=60ba, alpha_f_decay=0.2, alpha_f_cooldown=0.05)",
        400, {"max_duration": 300}, "300ba", t_warmup="20ba", t_scale="10ba", t_cooldown="60ba",
        alpha_f_decay=0.2, alpha_f_cooldown=0.05),
    # t_cooldown=0ba: no cooldown, the decay's value at t_max is held (alpha_f_cooldown unused)
    _cp("InverseSquareRootWithWarmupScheduler", "composer.InverseSquareRootWithWarmupScheduler(lr=0.1, "
        "t_warmup=0ba, t_scale=25ba, t_cooldown=0ba, t_max=200ba, alpha_f_cooldown=0.0)", 300,
        max_duration="200ba", t_warmup="0ba", t_scale="25ba", t_cooldown="0ba", t_max="200ba"),
    # the warmup pushes the cooldown's start to t_warmup: it still lasts t_cooldown, past t_max
    _cp("InverseSquareRootWithWarmupScheduler", _EP + "composer.InverseSquareRootWithWarmupScheduler("
        "lr=0.1, t_warmup=3ep, t_scale=1ep, t_cooldown=4ep, t_max=5ep)", 400, {"steps_per_epoch": 30},
        "6ep", 30, t_warmup="3ep", t_scale="1ep", t_cooldown="4ep", t_max="5ep"),
]

# The weight-decay twins share the LR classes' math; one case each checks the generic keywords.
CEREBRAS_WD = [
    _cb("ConstantWD", "cerebras.ConstantWD(val=0.05, total_iters=10)", 30, val=0.05, total_iters=10),
    _cb("PolynomialWD", "cerebras.PolynomialWD(initial_val=0.1, end_val=0.01, total_iters=100, power=0.5)",
        250, initial_val=0.1, end_val=0.01, total_iters=100, power=0.5),
    _cb("LinearWD", "cerebras.LinearWD(initial_val=0.1, end_val=0.0, total_iters=100)", 250,
        initial_val=0.1, end_val=0.0, total_iters=100),
    _cb("ExponentialWD", "cerebras.ExponentialWD(initial_val=0.1, total_iters=40, decay_rate=0.5, "
        "staircase=true)", 250, initial_val=0.1, total_iters=40, decay_rate=0.5, staircase=True),
    _cb("InverseExponentialTimeDecayWD", "cerebras.InverseExponentialTimeDecayWD(initial_val=0.1, "
        "step_exponent=0.5, total_iters=10, decay_rate=1.0)", 300, initial_val=0.1, step_exponent=0.5,
        total_iters=10, decay_rate=1.0),
    _cb("InverseSquareRootDecayWD", "cerebras.InverseSquareRootDecayWD(initial_val=0.1, warmup_steps=25)",
        200, initial_val=0.1, warmup_steps=25),
    _cb("MultiStepWD", "cerebras.MultiStepWD(initial_val=0.1, gamma=0.1, milestones=[50, 150])", 300,
        initial_val=0.1, gamma=0.1, milestones=[50, 150]),
    _cb("StepWD", "cerebras.StepWD(initial_val=0.1, step_size=40, gamma=0.5)", 300, initial_val=0.1,
        step_size=40, gamma=0.5),
    _cb("CosineAnnealingWD", "cerebras.CosineAnnealingWD(initial_val=0.1, T_max=60, eta_min=0.01)", 300,
        initial_val=0.1, T_max=60, eta_min=0.01),
    _cb("LambdaWD", "cerebras.LambdaWD(initial_val=1.0)", 60, initial_val=1.0,
        note="no val_lambda: the built-in demo lambdas (see LambdaLR)"),
    _cb("CosineAnnealingWarmRestartsWD", "cerebras.CosineAnnealingWarmRestartsWD(initial_val=0.1, T_0=50)",
        200, upto=50, initial_val=0.1, T_0=50,
        note="2.10 is wrong after T_0 (see CosineAnnealingWarmRestarts)"),
    _cb("MultiplicativeWD", "cerebras.MultiplicativeWD(initial_val=0.1, coefficient=0.5)", 100,
        initial_val=0.1, coefficient=0.5),
    _cb("ChainedLR", "cerebras.ChainedLR(schedulers=[cerebras.CosineAnnealingLR(initial_learning_rate=0.01, "
        "T_max=100), cerebras.StepLR(initial_learning_rate=1.0, step_size=50, gamma=0.5)])", 400,
        schedulers=[("CosineAnnealingLR", {"initial_learning_rate": 0.01, "T_max": 100}),
                    ("StepLR", {"initial_learning_rate": 1.0, "step_size": 50, "gamma": 0.5})]),
]

# Training frameworks keep their cases and real-code runners in tests/frameworks/; every such
# case renders its own reference() and anchor_code() (the timm and Keras modules give rows, run
# through their module's values() and anchor_code()).
class RowCase(Case):
    """A row of ``tests/frameworks/<library>_cases.py`` (``ROWS``, ``values``, ``anchor_code``)."""

    def reference(self) -> list[float]:
        return ROW_MODULES[self.library].values(self.name, self.kwargs, self.compared, **self.options)

    def anchor_code(self) -> str:
        return ROW_MODULES[self.library].anchor_code(self.name, self.kwargs, self.options)


ROW_MODULES = {"timm": timm_cases, "keras": keras_cases}
FRAMEWORK_CASES = [RowCase(**row) for module in ROW_MODULES.values() for row in module.ROWS]

from frameworks.deepspeed_cases import DEEPSPEED  # noqa: E402
from frameworks.megatron_cases import MEGATRON  # noqa: E402
from frameworks.mmengine_cases import MMENGINE  # noqa: E402
from frameworks.olmo_core_cases import COMPOSITES as OLMO_CORE_COMPOSITES  # noqa: E402
from frameworks.olmo_core_cases import OLMO_CORE  # noqa: E402
from frameworks.torchtitan_cases import TORCHTITAN  # noqa: E402

CASES: list[Case] = [*TORCH, *HF, *OPTAX, *SAMBAFLOW, *CEREBRAS, *CEREBRAS_WD, *COMPOSER, *FRAMEWORK_CASES,
                     *MEGATRON, *DEEPSPEED, *TORCHTITAN, *MMENGINE, *OLMO_CORE, *OLMO_CORE_COMPOSITES]
