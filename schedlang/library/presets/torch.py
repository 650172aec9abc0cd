"""``torch.*``: the closed-form schedulers of ``torch.optim.lr_scheduler`` (torch 2.13).

Each class keeps torch's keyword names and defaults and takes one extra
keyword, ``lr``: the optimizer's initial learning rate (torch's ``base_lr``),
default 1 so that a preset without it is torch's multiplier of the lr.
Values are the closed forms (``_get_closed_form_lr``); run alone from step 0
torch's chainable updates agree with them to ~1e-16 (verified in the
conformance tests).  Past the end each one does what torch does: LinearLR,
ConstantLR and PolynomialLR hold, CosineAnnealingLR is periodic (it climbs
back to ``lr`` at ``2*T_max``), ExponentialLR/StepLR keep decaying.

Composites take ``lr`` too (SPEC §3) and pass it to every child that omits it;
a child that gives its own must give the same (in torch they share one optimizer).
Without a composite ``lr`` the children carry it, and theirs must agree.
``SequentialLR(schedulers=[...], milestones=[...])`` plays child
``i`` from milestone ``i-1`` with its own local step; ``ChainedScheduler``
is the product of its children's factors, which is what torch computes only
for children whose chainable step multiplies the lr by ``f(t)/f(t-1)``; the
others are refused with the reason.
"""

from __future__ import annotations

import dataclasses
import functools

import sympy as sp

from ...core.algebra import tau  # formulas are built in the real-valued step, not t
from ...core.special import geometric
from ..stdlib import ArgumentError, InheritedDefault, cosine_restarts, cyclic, multistep, onecycle_phases
from ._common import (
    FLAG,
    OPTION,
    SCHEDULES,
    C,
    L,
    PresetSegment,
    Rejected,
    S,
    V,
    arg,
    frac,
    positive_steps,
    preset,
    sequential,
    whole,
)

# Build functions take every argument: the defaults live once, in the Arg table at the end.
ONE_THIRD = sp.Rational(1, 3)
#: ``lr`` omitted is the ``lr`` of the composite the preset is a child of (``preset_with_lr``),
#: else 1: the preset is torch's multiplier of the lr.
LR = arg("lr", V, InheritedDefault(1))


def _torch(expr, duration=None, *, lr, chain=False, label=""):
    return PresetSegment(expr, duration, base=lr, ratio_chainable=chain, label=label)


def preset_with_lr(name: str, build, *args, composite: bool = False):
    """A torch preset whose ``lr`` a composite may give: built with ``lr = 1`` when it is
    omitted (a composite: with none, its children keep theirs), remembering how to build
    it again with another (``PresetSegment.with_lr``)."""
    def call(**kwargs):
        omitted = kwargs["lr"]
        if not isinstance(omitted, InheritedDefault):
            return build(**kwargs)
        again = functools.partial(_rebuilt, build, kwargs)
        return dataclasses.replace(again(None if composite else sp.Integer(omitted.value)), with_lr=again)

    call.__doc__ = build.__doc__
    call.__name__ = build.__name__
    return preset(name, call, *args)


def _rebuilt(build, kwargs, lr):
    return build(**{**kwargs, "lr": lr})


def _given_lr(schedulers, lr):
    """``lr`` passed to each child that omits its own."""
    if lr is None:
        return list(schedulers)
    return [c.with_lr(lr) if isinstance(c, PresetSegment) and c.with_lr is not None else c
            for c in schedulers]


def lambda_lr(lr_lambda, lr):
    """``lr * lr_lambda`` where ``lr_lambda`` is an expression in the step ``t``."""
    return _torch(lr * lr_lambda, lr=lr, label="LambdaLR")


def multiplicative_lr(lr_lambda, lr):
    """``lr * f ** t`` for a constant factor ``lr_lambda = f`` (torch multiplies the lr by
    ``lr_lambda(t)`` at every step from ``t = 1``: a running product, closed form only when
    the factor does not change with the step)."""
    if tau in lr_lambda.free_symbols:
        raise ArgumentError("lr_lambda", "torch.MultiplicativeLR multiplies the previous lr by "
                                         "lr_lambda(t) at every step: for a factor that changes with "
                                         "the step that running product has no closed form",
                            hint="give a constant factor (lr_lambda=0.95 is lr * 0.95 ** t), or write "
                                 "the product's closed form with torch.LambdaLR(lr=..., lr_lambda=...)")
    return _torch(lr * geometric(lr_lambda, tau), lr=lr, chain=True, label="MultiplicativeLR")


def step_lr(step_size, gamma, lr):
    """``lr * gamma ** floor(t / step_size)``."""
    return _torch(lr * geometric(gamma, sp.floor(tau / step_size)), lr=lr, chain=True, label="StepLR")


def multistep_lr(milestones, gamma, lr):
    """``lr * gamma ** (number of milestones <= t)``; a repeated milestone counts twice."""
    return _torch(multistep(lr, gamma, milestones).expr, lr=lr, chain=True, label="MultiStepLR")


def constant_lr(factor, total_iters, lr):
    """``lr * factor`` for ``t < total_iters``, then ``lr``."""
    if factor.is_number and not 0 <= factor <= 1:
        raise ArgumentError("factor", "torch requires 0 <= factor <= 1")
    chain = not (factor.is_number and factor == 0)  # torch's chainable form divides by factor
    expr = sp.Piecewise((lr * factor, sp.Lt(tau, total_iters)), (lr, True))
    return _torch(expr, total_iters, lr=lr, chain=chain, label="ConstantLR")


def linear_lr(start_factor, end_factor, total_iters, lr):
    """``lr * (start_factor + (end_factor - start_factor) * t / total_iters)``, then held."""
    if start_factor.is_number and not 0 < start_factor <= 1:
        raise ArgumentError("start_factor", "torch requires 0 < start_factor <= 1",
                            hint="a warmup from exactly 0 is warmup(linear, n) >> ... or cerebras.LinearLR")
    if end_factor.is_number and not 0 <= end_factor <= 1:
        raise ArgumentError("end_factor", "torch requires 0 <= end_factor <= 1")
    expr = lr * (start_factor + (end_factor - start_factor) * tau / total_iters)
    return _torch(expr, total_iters, lr=lr, chain=True, label="LinearLR")


def exponential_lr(gamma, lr):
    """``lr * gamma ** t``."""
    return _torch(lr * geometric(gamma, tau), lr=lr, chain=True, label="ExponentialLR")


def polynomial_lr(total_iters, power, lr):
    """``lr * (1 - t / total_iters) ** power``, then 0."""
    return _torch(lr * (1 - tau / total_iters) ** power, total_iters, lr=lr, chain=True,
                  label="PolynomialLR")


def cosine_annealing_lr(T_max, eta_min, lr):  # noqa: N803 - torch's keyword
    """``eta_min + (lr - eta_min) * (1 + cos(pi * t / T_max)) / 2``, periodic past ``T_max``."""
    expr = eta_min + (lr - eta_min) * (1 + sp.cos(sp.pi * tau / T_max)) / 2
    return _torch(expr, lr=lr, label="CosineAnnealingLR")


def cosine_annealing_warm_restarts(T_0, T_mult, eta_min, lr):  # noqa: N803
    """SGDR: cosine from ``lr`` to ``eta_min`` over ``T_0 * T_mult**i`` steps in cycle ``i``."""
    mult = whole(T_mult, "T_mult")
    return _torch(cosine_restarts(lr, eta_min, T_0, mult).expr, lr=lr,
                  label="CosineAnnealingWarmRestarts")


def cyclic_lr(base_lr, max_lr, step_size_up, step_size_down, mode, gamma, scale_mode,
              cycle_momentum, base_momentum, max_momentum, lr):
    """Triangle waves between ``base_lr`` and ``max_lr`` (torch's CyclicLR closed form).

    torch overwrites the optimizer lr with ``base_lr``, so ``lr`` has no effect; the
    momentum arguments and ``scale_mode`` (always derived from ``mode`` without a custom
    ``scale_fn``) do not change the lr; ``torch.CyclicLR.momentum`` is the momentum curve.
    """
    return _torch(cyclic(base_lr, max_lr, step_size_up, step_size_down, mode, gamma).expr, lr=lr,
                  label="CyclicLR")


def one_cycle_lr(max_lr, total_steps, epochs, steps_per_epoch, pct_start, anneal_strategy,
                 cycle_momentum, base_momentum, max_momentum, div_factor, final_div_factor,
                 three_phase, lr):
    """torch's OneCycleLR over ``total_steps`` (or ``epochs * steps_per_epoch``) steps.

    From ``max_lr / div_factor`` up to ``max_lr`` at ``pct_start*n - 1``, down to
    ``max_lr / (div_factor * final_div_factor)`` at ``n - 1``.  It lasts ``n`` steps, as its
    ``.momentum`` twin does (torch extrapolates one more step and then raises), so it holds
    its last value after that and ``>>`` can follow it.  ``lr`` is overwritten by torch.
    """
    total_steps = _one_cycle_steps(total_steps, epochs, steps_per_epoch)
    initial = max_lr / div_factor
    expr = onecycle_phases(initial, max_lr, initial / final_div_factor, total_steps,
                            _pct_start(pct_start), anneal_strategy, three_phase)
    return _torch(expr, total_steps, lr=lr, label="OneCycleLR")


def cyclic_momentum(base_lr, max_lr, step_size_up, step_size_down, mode, gamma, scale_mode,
                    cycle_momentum, base_momentum, max_momentum, lr):
    """The momentum torch's CyclicLR sets beside its lr: the same wave upside down.

    ``max_momentum - (max_momentum - base_momentum) * wave(t)`` where the lr is
    ``base_lr + (max_lr - base_lr) * wave(t)``: high momentum while the lr is low.  Name the
    schedule ``momentum`` (SGD) or ``beta1`` (Adam family, where torch cycles ``betas[0]``).
    """
    _needs_cycle_momentum(cycle_momentum, "CyclicLR")
    wave = cyclic(max_momentum, base_momentum, step_size_up, step_size_down, mode, gamma).expr
    return PresetSegment(wave, None, label="CyclicLR.momentum")


def one_cycle_momentum(max_lr, total_steps, epochs, steps_per_epoch, pct_start, anneal_strategy,
                       cycle_momentum, base_momentum, max_momentum, div_factor, final_div_factor,
                       three_phase, lr):
    """The momentum torch's OneCycleLR sets beside its lr: ``max_momentum`` down to
    ``base_momentum`` while the lr rises, back up while it falls (held in a third phase),
    annealed like the lr.  Name the schedule ``momentum`` (SGD) or ``beta1`` (Adam family)."""
    _needs_cycle_momentum(cycle_momentum, "OneCycleLR")
    total_steps = _one_cycle_steps(total_steps, epochs, steps_per_epoch)
    expr = onecycle_phases(max_momentum, base_momentum, max_momentum, total_steps,
                           _pct_start(pct_start), anneal_strategy, three_phase)
    return PresetSegment(expr, total_steps, label="OneCycleLR.momentum")


def _needs_cycle_momentum(cycle_momentum, name):
    if not cycle_momentum:
        raise ArgumentError("cycle_momentum", f"with cycle_momentum=false {name} leaves the "
                                              "momentum alone; there is no momentum schedule")


def _pct_start(pct_start):
    """torch's OneCycleLR refuses a ``pct_start`` outside [0, 1] (ValueError); so does the preset."""
    if isinstance(pct_start, sp.Basic) and pct_start.is_number and not (0 <= pct_start <= 1):
        raise ArgumentError("pct_start", f"pct_start must be in [0, 1], not {pct_start} (torch's "
                                         "OneCycleLR raises ValueError)")
    return pct_start


def _one_cycle_steps(total_steps, epochs, steps_per_epoch):
    if total_steps is None:
        if epochs is None or steps_per_epoch is None:
            raise ArgumentError("total_steps", "OneCycleLR needs total_steps, or both epochs "
                                               "and steps_per_epoch")
        total_steps = epochs * steps_per_epoch
    return total_steps


def _shared_lr(schedulers, name, lr=None):
    """torch's children share one optimizer, so their ``lr`` keywords (and the composite's)
    must agree."""
    bases = {c.base for c in schedulers if isinstance(c, PresetSegment) and c.base is not None
             and c.base.is_number}
    if lr is not None and lr.is_number:
        bases.add(lr)
    if len(bases) > 1:
        raise ArgumentError("schedulers", f"the schedulers of {name} give different lr values "
                                          f"({', '.join(sorted(str(b) for b in bases))}); in torch "
                                          "they share one optimizer, so give each the same lr=",
                            hint=f"or give lr= once, to {name}, and omit it on the schedulers")


def sequential_lr(schedulers, milestones, lr):
    """Child ``i`` from milestone ``i-1`` on, at its local step ``t - milestone``.

    ``lr`` is the optimizer's lr, passed to every child that omits its own; children
    that give one must agree with it and with each other (they share one optimizer).
    """
    for m in milestones:
        positive_steps(m, "milestones")
    schedulers = _given_lr(schedulers, lr)
    _shared_lr(schedulers, "SequentialLR", lr)
    segment = sequential(schedulers, milestones, "SequentialLR")
    base = next((c.base for c in schedulers if isinstance(c, PresetSegment)), None)
    return PresetSegment(segment.expr, segment.duration, base=base, label="SequentialLR")


def chained_scheduler(schedulers, lr):
    """``S_0(t) * prod S_i(t) / lr``: torch's product of chainable factors.

    Only children whose chainable step multiplies the lr by ``f(t)/f(t-1)`` compose
    this way in torch (StepLR, MultiStepLR, ConstantLR, LinearLR, ExponentialLR,
    PolynomialLR and chains of them); the others are refused.  ``lr`` as for SequentialLR.
    """
    schedulers = _given_lr(schedulers, lr)
    _shared_lr(schedulers, "ChainedScheduler", lr)
    value = sp.Integer(1)
    for i, child in enumerate(schedulers):
        if not (isinstance(child, PresetSegment) and child.ratio_chainable):
            what = child.label if isinstance(child, PresetSegment) and child.label else "this schedule"
            raise ArgumentError("schedulers", f"torch.ChainedScheduler cannot chain {what}: its "
                                "chainable step does not multiply the lr by a ratio of its own "
                                "values (it overwrites the lr or adds to it), so the chain is not "
                                "a product", hint="chain StepLR, MultiStepLR, ConstantLR, LinearLR, "
                                "ExponentialLR or PolynomialLR; multiply schedules with * for "
                                "an exact product")
        value = value * child.held() / (child.base if i else 1)
    durations = [c.duration for c in schedulers]
    duration = None if any(d is None for d in durations) else sp.Max(*durations)
    return PresetSegment(value, duration, base=schedulers[0].base, ratio_chainable=True,
                         label="ChainedScheduler")


_CHOICES_MODE = ("triangular", "triangular2", "exp_range")

_CYCLIC_ARGS = (arg("base_lr", V), arg("max_lr", V),
                arg("step_size_up", S, 2000), arg("step_size_down", S, None),
                arg("mode", OPTION, "triangular", _CHOICES_MODE), arg("gamma", V, 1),
                arg("scale_mode", OPTION, "cycle", ("cycle", "iterations")),
                arg("cycle_momentum", FLAG, True), arg("base_momentum", C, frac("0.8")),
                arg("max_momentum", C, frac("0.9")), LR)
_ONE_CYCLE_ARGS = (arg("max_lr", V), arg("total_steps", S, None),
                   arg("epochs", S, None), arg("steps_per_epoch", S, None), arg("pct_start", C, frac("0.3")),
                   arg("anneal_strategy", OPTION, "cos", ("cos", "linear")),
                   arg("cycle_momentum", FLAG, True), arg("base_momentum", C, frac("0.85")),
                   arg("max_momentum", C, frac("0.95")), arg("div_factor", C, 25),
                   arg("final_div_factor", C, 10_000), arg("three_phase", FLAG, False), LR)

PRESETS = [
    preset_with_lr("torch.LambdaLR", lambda_lr, arg("lr_lambda", V), LR),
    preset_with_lr("torch.MultiplicativeLR", multiplicative_lr, arg("lr_lambda", V), LR),
    preset_with_lr("torch.StepLR", step_lr, arg("step_size", S), arg("gamma", V, frac("0.1")), LR),
    preset_with_lr("torch.MultiStepLR", multistep_lr, arg("milestones", L), arg("gamma", V, frac("0.1")),
                   LR),
    preset_with_lr("torch.ConstantLR", constant_lr, arg("factor", C, ONE_THIRD), arg("total_iters", S, 5),
                   LR),
    preset_with_lr("torch.LinearLR", linear_lr, arg("start_factor", C, ONE_THIRD), arg("end_factor", C, 1),
                   arg("total_iters", S, 5), LR),
    preset_with_lr("torch.ExponentialLR", exponential_lr, arg("gamma", V), LR),
    preset_with_lr("torch.PolynomialLR", polynomial_lr, arg("total_iters", S, 5), arg("power", C, 1), LR),
    preset_with_lr("torch.CosineAnnealingLR", cosine_annealing_lr, arg("T_max", S), arg("eta_min", V, 0),
                   LR),
    preset_with_lr("torch.CosineAnnealingWarmRestarts", cosine_annealing_warm_restarts, arg("T_0", S),
                   arg("T_mult", C, 1), arg("eta_min", V, 0), LR),
    preset_with_lr("torch.CyclicLR", cyclic_lr, *_CYCLIC_ARGS),
    preset_with_lr("torch.CyclicLR.momentum", cyclic_momentum, *_CYCLIC_ARGS),
    preset_with_lr("torch.OneCycleLR", one_cycle_lr, *_ONE_CYCLE_ARGS),
    preset_with_lr("torch.OneCycleLR.momentum", one_cycle_momentum, *_ONE_CYCLE_ARGS),
    preset_with_lr("torch.SequentialLR", sequential_lr, arg("schedulers", SCHEDULES), arg("milestones", L),
                   LR, composite=True),
    preset_with_lr("torch.ChainedScheduler", chained_scheduler, arg("schedulers", SCHEDULES), LR,
                   composite=True),
]

REJECTED = [
    Rejected("torch.ReduceLROnPlateau",
             "ReduceLROnPlateau changes the lr when a metric stops improving, so its value depends "
             "on training data, not on the step alone; pick a fixed decay such as "
             "torch.StepLR or cosine(...) instead"),
]
