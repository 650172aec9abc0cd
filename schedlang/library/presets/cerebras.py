"""``cerebras.*``: cerebras.pytorch.optim's schedulers (cstorch 2.10), LR and WD twins.

Cerebras writes every scheduler once, generically (``scheduler.py``), and
names the arguments twice: ``lr_scheduler.py`` with learning-rate names
(``initial_learning_rate``, ``end_learning_rate``, ``learning_rate``,
``base_lr``, ``max_lr``) and ``weight_decay_scheduler.py`` with generic ones
(``initial_val``, ``end_val``, ``val``, ``base_val``, ``max_val``).  This
module does the same: one build function per schedule, one table row giving
both spellings.  Values are absolute (Cerebras has no multiplier).

Where 2.10 deviates from its documented intent the preset follows the intent
(SPEC §3) and ``docs/presets.md`` says how the anchor differs:
``CosineAnnealingWarmRestarts`` is PyTorch's SGDR (2.10 computes the wrong
position after the first period and refuses ``T_mult != 1``), and
``OneCycleLR`` holds its final value after ``total_steps - 1`` (2.10
extrapolates the last phase, below zero for ``anneal_strategy="linear"``).

Composites: ``SequentialLR(schedulers=[...])`` derives its milestones from the
children's ``total_iters`` when none are given (ModelZoo's rule,
``cumsum(total_iters[:-1])``); ``ChainedScheduler`` is
``S_0(t) * prod S_i(t) / S_i.initial_val`` and refuses children without an
``initial_val`` (ConstantLR, CyclicLR, composites), as Cerebras fails on them.
"""

from __future__ import annotations

import itertools

import sympy as sp

from ...core.algebra import tau  # formulas are built in the real-valued step, not t
from ...core.special import geometric
from ..stdlib import ArgumentError, cosine_restarts, cyclic, multistep, onecycle_phases, piecewise
from ._common import FLAG, OPTION, SCHEDULES, C, L, PresetSegment, S, V, arg, frac, preset, sequential, whole

HALF = sp.Rational(1, 2)


def _seg(expr, duration=None, *, initial=None, total_iters=None, label=""):
    return PresetSegment(expr, duration, initial=initial, total_iters=total_iters, label=label)


def constant(val, total_iters):
    """``val`` (``total_iters`` only gives SequentialLR its milestone, and a length for ``>>``)."""
    return _seg(val, total_iters, total_iters=total_iters, label="Constant")


def polynomial(initial_val, end_val, total_iters, power, cycle):
    """``(I - E) * (1 - t / T) ** power + E``, then ``E``.  ``cycle`` changes nothing (as in 2.10)."""
    expr = (initial_val - end_val) * (1 - tau / total_iters) ** power + end_val
    return _seg(expr, total_iters, initial=initial_val, total_iters=total_iters, label="Polynomial")


def linear(initial_val, end_val, total_iters, cycle):
    """``I + (E - I) * t / T``, then ``E``."""
    expr = initial_val + (end_val - initial_val) * tau / total_iters
    return _seg(expr, total_iters, initial=initial_val, total_iters=total_iters, label="Linear")


def exponential(initial_val, total_iters, decay_rate, staircase):
    """``I * decay_rate ** (t / T)`` (``floor(t / T)`` when ``staircase``); ``T`` is the decay period."""
    exponent = sp.floor(tau / total_iters) if staircase else tau / total_iters
    return _seg(initial_val * geometric(decay_rate, exponent), initial=initial_val, total_iters=total_iters,
                label="Exponential")


def inverse_exponential_time_decay(initial_val, step_exponent, total_iters, decay_rate, staircase):
    """``I / (1 + decay_rate * t**step_exponent / T)`` (the ratio floored when ``staircase``)."""
    ratio = tau**step_exponent / total_iters
    if staircase:
        ratio = sp.floor(ratio)
    return _seg(initial_val / (1 + decay_rate * ratio), initial=initial_val, total_iters=total_iters,
                label="InverseExponentialTimeDecay")


def inverse_square_root_decay(initial_val, scale, warmup_steps):
    """``I * scale / sqrt(max(warmup_steps, t))``: flat at ``I*scale/sqrt(warmup_steps)`` first."""
    w = warmup_steps
    expr = sp.Piecewise((initial_val * scale / sp.sqrt(w), sp.Lt(tau, w)),
                        (initial_val * scale / sp.sqrt(tau), True))
    return _seg(expr, initial=initial_val, label="InverseSquareRootDecay")


def cosine_decay(initial_val, end_val, total_iters):
    """``E + (I - E) * (1 + cos(pi * t / T)) / 2``, then ``E``."""
    expr = end_val + (initial_val - end_val) * HALF * (1 + sp.cos(sp.pi * tau / total_iters))
    return _seg(expr, total_iters, initial=initial_val, total_iters=total_iters, label="CosineDecay")


def sequential_(schedulers, milestones):
    """Child ``i`` from milestone ``i-1`` at its own local step; without ``milestones`` they are
    ``cumsum`` of the children's ``total_iters`` (all but the last), as ModelZoo computes them."""
    if milestones is None:
        lengths = []
        for i, child in enumerate(schedulers[:-1]):
            length = child.total_iters if isinstance(child, PresetSegment) else None
            if length is None:
                raise ArgumentError("schedulers", f"scheduler {i} has no total_iters, so the milestones "
                                                  "cannot be derived (ModelZoo needs it too)",
                                    hint="give total_iters=... to that scheduler, or milestones=[...]")
            lengths.append(length)
        milestones = list(itertools.accumulate(lengths))
    joined = sequential(schedulers, milestones, "SequentialLR")
    return _seg(joined.expr, joined.duration, label="Sequential")


def piecewise_constant(vals, milestones):
    """``vals[i]`` from milestone ``i-1`` to milestone ``i``; the last value after (2.10 also
    accepts as many values as milestones and reuses the last one)."""
    if len(vals) == len(milestones):
        vals = [*vals, vals[-1]]
    if len(vals) != len(milestones) + 1:
        raise ArgumentError("milestones", f"give one more value than milestones (or as many); got "
                                          f"{len(vals)} values and {len(milestones)} milestones")
    return _seg(piecewise(vals, milestones).expr, label="PiecewiseConstant")


def multistep_(initial_val, gamma, milestones):
    """``I * gamma ** (number of milestones <= t)``."""
    return _seg(multistep(initial_val, gamma, milestones).expr, initial=initial_val, label="MultiStep")


def step(initial_val, step_size, gamma):
    """``I * gamma ** floor(t / step_size)`` (Cerebras has no default gamma)."""
    return _seg(initial_val * geometric(gamma, sp.floor(tau / step_size)), initial=initial_val, label="Step")


def cosine_annealing(initial_val, T_max, eta_min):  # noqa: N803 - Cerebras' keyword
    """``eta_min + (I - eta_min) * (1 + cos(pi * t / T_max)) / 2``, periodic past ``T_max``."""
    expr = eta_min + (initial_val - eta_min) * (1 + sp.cos(sp.pi * tau / T_max)) / 2
    return _seg(expr, initial=initial_val, label="CosineAnnealing")


def lambda_(initial_val, lr_lambda):
    """``I * lr_lambda`` (an expression in ``t``).  Without ``lr_lambda``, Cerebras' built-in
    demo lambdas ``[t/30, 0.95**t]``: ``(I * t/30) * (I * 0.95**t)``."""
    if lr_lambda is None:
        expr = (initial_val * tau / 30) * (initial_val * geometric(sp.Rational(95, 100), tau))
    else:
        expr = initial_val * lr_lambda
    return _seg(expr, initial=initial_val, label="Lambda")


def cosine_annealing_warm_restarts(initial_val, T_0, T_mult, eta_min):  # noqa: N803
    """PyTorch's SGDR (the documented intent): cosine from ``I`` to ``eta_min`` over ``T_0 *
    T_mult**i`` steps in cycle ``i``.  2.10 itself is wrong after ``T_0`` and refuses ``T_mult != 1``."""
    expr = cosine_restarts(initial_val, eta_min, T_0, whole(T_mult, "T_mult")).expr
    return _seg(expr, initial=initial_val, label="CosineAnnealingWarmRestarts")


def multiplicative(initial_val, coefficient):
    """``I * coefficient ** t`` (a constant factor, so unlike torch's it has a closed form)."""
    return _seg(initial_val * geometric(coefficient, tau), initial=initial_val, label="Multiplicative")


def chained(schedulers):
    """``S_0(t) * prod_{i>=1} S_i(t) / S_i.initial_val``."""
    value = schedulers[0].held()
    for i, child in enumerate(schedulers[1:], start=1):
        initial = child.initial if isinstance(child, PresetSegment) else None
        if initial is None:
            what = child.label if isinstance(child, PresetSegment) and child.label else "it"
            raise ArgumentError("schedulers", f"scheduler {i} of ChainedScheduler ({what}) has no "
                                              "initial_val to divide by; Cerebras fails on it too",
                                hint="only the first scheduler may be a Constant, Cyclic or composite one")
        value = value * child.held() / initial
    durations = [c.duration for c in schedulers]
    duration = None if any(d is None for d in durations) else sp.Max(*durations)
    return _seg(value, duration, initial=getattr(schedulers[0], "initial", None), label="Chained")


def cyclic_(base_val, max_val, step_size_up, step_size_down, mode, gamma, scale_mode):
    """PyTorch's CyclicLR closed form; ``scale_mode`` is always derived from ``mode`` (as in 2.10)."""
    expr = cyclic(base_val, max_val, step_size_up, step_size_down, mode, gamma).expr
    return _seg(expr, label="Cyclic")


def one_cycle(initial_val, max_val, total_steps, pct_start, final_div_factor, three_phase,
              anneal_strategy):
    """PyTorch's one-cycle from ``initial_val`` (not ``max/div_factor``) to ``max_val`` and down
    to ``initial_val / final_div_factor`` at ``total_steps - 1``; held after (2.10 extrapolates)."""
    expr = onecycle_phases(initial_val, max_val, initial_val / final_div_factor, total_steps,
                            pct_start, anneal_strategy, three_phase)
    return _seg(expr, initial=initial_val, label="OneCycle")


# (LR class, WD class, build, [(build argument, LR keyword, WD keyword, kind, default)])
_MODES = ("triangular", "triangular2", "exp_range")
_I = ("initial_val", "initial_learning_rate", None, V, None)
_E = ("end_val", "end_learning_rate", None, V, None)
TABLE = [
    ("ConstantLR", "ConstantWD", constant,
     [("val", "learning_rate", "val", V, None), ("total_iters", "total_iters", None, S, "none")]),
    ("PolynomialLR", "PolynomialWD", polynomial,
     [_I, _E,
      ("total_iters", None, None, S, None), ("power", None, None, C, 1), ("cycle", None, None, FLAG, False)]),
    ("LinearLR", "LinearWD", linear,
     [_I, _E,
      ("total_iters", None, None, S, None), ("cycle", None, None, FLAG, False)]),
    ("ExponentialLR", "ExponentialWD", exponential,
     [_I, ("total_iters", None, None, S, None),
      ("decay_rate", None, None, V, None), ("staircase", None, None, FLAG, False)]),
    ("InverseExponentialTimeDecayLR", "InverseExponentialTimeDecayWD", inverse_exponential_time_decay,
     [_I, ("step_exponent", None, None, C, None),
      ("total_iters", None, None, S, None), ("decay_rate", None, None, V, None),
      ("staircase", None, None, FLAG, False)]),
    ("InverseSquareRootDecayLR", "InverseSquareRootDecayWD", inverse_square_root_decay,
     [("initial_val", "initial_learning_rate", None, V, 1), ("scale", None, None, V, 1),
      ("warmup_steps", None, None, C, 1)]),
    ("CosineDecayLR", "CosineDecayWD", cosine_decay,
     [_I, _E,
      ("total_iters", None, None, S, None)]),
    ("SequentialLR", "SequentialWD", sequential_,
     [("schedulers", None, None, SCHEDULES, None), ("milestones", None, None, L, "none")]),
    ("PiecewiseConstantLR", "PiecewiseConstantWD", piecewise_constant,
     [("vals", "learning_rates", "vals", L, None), ("milestones", None, None, L, None)]),
    ("MultiStepLR", "MultiStepWD", multistep_,
     [_I, ("gamma", None, None, V, None),
      ("milestones", None, None, L, None)]),
    ("StepLR", "StepWD", step,
     [_I, ("step_size", None, None, S, None),
      ("gamma", None, None, V, None)]),
    ("CosineAnnealingLR", "CosineAnnealingWD", cosine_annealing,
     [_I, ("T_max", None, None, S, None),
      ("eta_min", None, None, V, 0)]),
    ("LambdaLR", "LambdaWD", lambda_,
     [_I,
      ("lr_lambda", "lr_lambda", "val_lambda", V, "none")]),
    ("CosineAnnealingWarmRestarts", "CosineAnnealingWarmRestartsWD", cosine_annealing_warm_restarts,
     [_I, ("T_0", None, None, S, None),
      ("T_mult", None, None, C, 1), ("eta_min", None, None, V, 0)]),
    ("MultiplicativeLR", "MultiplicativeWD", multiplicative,
     [_I, ("coefficient", None, None, V, None)]),
    ("ChainedScheduler", "ChainedWD", chained, [("schedulers", None, None, SCHEDULES, None)]),
    ("CyclicLR", "CyclicWD", cyclic_,
     [("base_val", "base_lr", None, V, None), ("max_val", "max_lr", None, V, None),
      ("step_size_up", None, None, S, 2000), ("step_size_down", None, None, S, "none"),
      ("mode", None, None, (OPTION, _MODES), "triangular"), ("gamma", None, None, V, 1),
      ("scale_mode", None, None, (OPTION, ("cycle", "iterations")), "cycle")]),
    ("OneCycleLR", "OneCycleWD", one_cycle,
     [_I, ("max_val", "max_lr", None, V, None),
      ("total_steps", None, None, S, 1000), ("pct_start", None, None, C, frac("0.3")),
      ("final_div_factor", None, None, C, 10_000), ("three_phase", None, None, FLAG, False),
      ("anneal_strategy", None, None, (OPTION, ("cos", "linear")), "cos")]),
]


#: The classes that are one standard-library call: LR class -> (builtin, {builtin argument: LR
#: keyword}).  The stdlib <-> Cerebras mapping, written once: export (``exporters.cerebras_yaml``)
#: reads it from the builtin, ``import --lower`` (``importers.cerebras_to_sched``) from the class.
_LR0, _LR1, _N = "initial_learning_rate", "end_learning_rate", "total_iters"
CORE_TWINS = {
    "ConstantLR": ("constant", {"v": "learning_rate", "n": _N}),
    "LinearLR": ("linear", {"v0": _LR0, "v1": _LR1, "n": _N}),
    "CosineDecayLR": ("cosine", {"v0": _LR0, "v1": _LR1, "n": _N}),
    "PolynomialLR": ("poly", {"v0": _LR0, "v1": _LR1, "n": _N, "power": "power"}),
    "ExponentialLR": ("exp", {"v0": _LR0, "rate": "decay_rate", "n": _N, "staircase": "staircase"}),
    "StepLR": ("step", {"v0": _LR0, "gamma": "gamma", "every": "step_size"}),
    "MultiStepLR": ("multistep", {"v0": _LR0, "gamma": "gamma", "milestones": "milestones"}),
    "PiecewiseConstantLR": ("piecewise", {"values": "learning_rates", "milestones": "milestones"}),
    "CyclicLR": ("cyclic", {"lo": "base_lr", "hi": "max_lr", "up": "step_size_up", "down": "step_size_down",
                            "mode": "mode", "gamma": "gamma"}),
}


def _arg(name: str, kind, default):
    """An Arg from a table cell: ``None`` default is required, ``"none"`` an optional argument."""
    choices: tuple[str, ...] = ()
    if isinstance(kind, tuple):
        kind, choices = kind
    if default is None:
        return arg(name, kind, choices=choices)
    return arg(name, kind, None if default == "none" else default, choices)


def _entry(name: str, build, columns, spelling: int):
    """One preset: keywords in the LR (``spelling=1``) or WD (``spelling=2``) spelling."""
    rename = {}
    args = []
    for row in columns:
        generic, kind, default = row[0], row[3], row[4]
        keyword = row[spelling] or generic
        rename[keyword] = generic
        args.append(_arg(keyword, kind, default))

    def call(**kwargs):
        return build(**{rename[k]: v for k, v in kwargs.items()})

    call.__doc__ = build.__doc__
    call.__name__ = build.__name__
    return preset(f"cerebras.{name}", call, *args)


PRESETS = [_entry(lr_name, build, cols, 1) for lr_name, _, build, cols in TABLE]
PRESETS.append(_entry("ChainedLR", chained, TABLE[15][3], 1))  # 2.10's own name; ChainedScheduler aliases it
PRESETS += [_entry(wd_name, build, cols, 2) for _, wd_name, build, cols in TABLE]
