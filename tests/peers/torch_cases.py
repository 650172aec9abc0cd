# ruff: noqa: E501 - a transcribed table: one case a row, as the source writes it
"""torch's own LR scheduler test cases, as data.

Transcribed from pytorch/pytorch ``test/optim/test_lrscheduler.py`` at commit
70f364554f849d6ea059ddf7e985e8eaa6c4320f (``TestLRScheduler``): an SGD whose first param group
has ``lr=0.05`` (the second ``lr=0.5`` or, where the test sets it, 0.4), ``_test`` reading
``param_group["lr"]`` before each of ``epochs`` calls of ``scheduler.step()`` and asserting
``assertEqual(target, lr, atol=1e-6, rtol=1e-5)``.  Rows: the test, the schedlang line (the
preset with the group's ``lr``), the torch class and kwargs for the real run (a composite's
children as ``(class, kwargs)``, as ``anchors/reference.torch_values`` takes them), the group's lr, ``epochs``, the targets
as the test writes them (it reads the first ``epochs``).
"""

from __future__ import annotations

import math

ATOL, RTOL = 1e-6, 1e-5

_LINEAR = [0.5 + i * (1 - 0.5) / 4 for i in range(4)]
_LINEAR_END = [1.0 / 4 + i * (3.0 / 5 - 1.0 / 4) / 4 for i in range(4)]

CASES = [
    ("test_step_lr", "torch.StepLR(lr=0.05, gamma=0.1, step_size=3)", ("StepLR", {"gamma": 0.1, "step_size": 3}), 0.05, 10,
     [0.05] * 3 + [0.005] * 3 + [0.0005] * 3 + [0.00005] * 3),
    ("test_multi_step_lr", "torch.MultiStepLR(lr=0.05, gamma=0.1, milestones=[2, 5, 9])",
     ("MultiStepLR", {"gamma": 0.1, "milestones": [2, 5, 9]}), 0.05, 10, [0.05] * 2 + [0.005] * 3 + [0.0005] * 4 + [0.00005] * 3),
    ("test_constantlr", "torch.ConstantLR(lr=0.05, factor=0.5, total_iters=5)", ("ConstantLR", {"factor": 1.0 / 2, "total_iters": 5}),
     0.05, 10, [0.025] * 5 + [0.05] * 5),
    ("test_linearlr", "torch.LinearLR(lr=0.05, start_factor=0.5, total_iters=4)", ("LinearLR", {"start_factor": 1.0 / 2, "total_iters": 4}),
     0.05, 10, [x * 0.05 for x in _LINEAR] + [0.05] * 6),
    ("test_get_last_lr_linearlr", "torch.LinearLR(lr=0.05, start_factor=0.25, end_factor=0.6, total_iters=4)",
     ("LinearLR", {"start_factor": 1.0 / 4, "end_factor": 3.0 / 5, "total_iters": 4}), 0.05, 10,
     [x * 0.05 for x in _LINEAR_END] + [0.05 * 3.0 / 5] * 6),
    ("test_exp_lr", "torch.ExponentialLR(lr=0.05, gamma=0.9)", ("ExponentialLR", {"gamma": 0.9}), 0.05, 10,
     [0.05 * (0.9**x) for x in range(10)]),
    ("test_poly_lr", "torch.PolynomialLR(lr=0.05, power=0.9, total_iters=5)", ("PolynomialLR", {"power": 0.9, "total_iters": 5}),
     0.05, 10, [(1.0 - x / 5) ** 0.9 * 0.05 for x in range(5)] + [0.0] * 5),
    ("test_cos_anneal_lr", "torch.CosineAnnealingLR(lr=0.05, T_max=10, eta_min=1e-10)",
     ("CosineAnnealingLR", {"T_max": 10, "eta_min": 1e-10}), 0.05, 10,
     [1e-10 + (0.05 - 1e-10) * (1 + math.cos(math.pi * x / 10)) / 2 for x in range(10)]),
    ("test_sequentiallr1", "torch.SequentialLR(lr=0.05, schedulers=[torch.ExponentialLR(gamma=0.8), torch.StepLR(gamma=0.1, step_size=4)], milestones=[3])",
     ("SequentialLR", {"schedulers": [("ExponentialLR", {"gamma": 0.8}), ("StepLR", {"gamma": 0.1, "step_size": 4})], "milestones": [3]}), 0.05, 19, [0.05, 0.04, 0.032] + [0.05] * 4 + [0.005] * 4 + [0.0005] * 4 + [0.00005] * 4),
    ("test_sequentiallr2", "torch.SequentialLR(lr=0.05, schedulers=[torch.ConstantLR(factor=0.1, total_iters=3), torch.ExponentialLR(gamma=0.9)], milestones=[3])",
     ("SequentialLR", {"schedulers": [("ConstantLR", {"factor": 0.1, "total_iters": 3}), ("ExponentialLR", {"gamma": 0.9})], "milestones": [3]}), 0.05, 13, [0.005, 0.005, 0.005] + [0.05 * 0.9**x for x in range(10)]),
    ("test_sequentiallr3", "torch.SequentialLR(lr=0.05, schedulers=[torch.ConstantLR(factor=0.1, total_iters=3), torch.ExponentialLR(gamma=0.8), torch.StepLR(gamma=0.1, step_size=2)], milestones=[3, 6])",
     ("SequentialLR", {"schedulers": [("ConstantLR", {"factor": 0.1, "total_iters": 3}), ("ExponentialLR", {"gamma": 0.8}), ("StepLR", {"gamma": 0.1, "step_size": 2})], "milestones": [3, 6]}), 0.05, 12, [0.005, 0.005, 0.005] + [0.05, 0.04, 0.032] + [0.05, 0.05, 0.005, 0.005, 0.0005, 0.0005]),
    ("test_chained_lr1", "torch.ChainedScheduler(lr=0.05, schedulers=[torch.StepLR(gamma=0.1, step_size=3)])",
     ("ChainedScheduler", {"schedulers": [("StepLR", {"gamma": 0.1, "step_size": 3})]}), 0.05, 10,
     [0.05] * 3 + [0.005] * 3 + [0.0005] * 3 + [0.00005] * 3),
    ("test_chained_lr2", "torch.ChainedScheduler(lr=0.05, schedulers=[torch.LinearLR(start_factor=0.4, total_iters=3)])",
     ("ChainedScheduler", {"schedulers": [("LinearLR", {"start_factor": 0.4, "total_iters": 3})]}), 0.05, 10,
     [0.02, 0.03, 0.04] + [0.05] * 9),
    ("test_chained_lr3", "torch.ChainedScheduler(lr=0.05, schedulers=[torch.LinearLR(start_factor=0.4, total_iters=3), torch.MultiStepLR(milestones=[4, 8, 10], gamma=0.1)])",
     ("ChainedScheduler", {"schedulers": [("LinearLR", {"start_factor": 0.4, "total_iters": 3}), ("MultiStepLR", {"milestones": [4, 8, 10], "gamma": 0.1})]}), 0.05, 10, [0.02, 0.03, 0.04, 0.05] + [0.005] * 4 + [0.0005] * 3 + [0.00005] * 3),
    ("test_chained_lr4", "torch.ChainedScheduler(lr=0.05, schedulers=[torch.ExponentialLR(gamma=0.9), torch.ConstantLR(factor=0.2, total_iters=4), torch.StepLR(gamma=0.1, step_size=3)])",
     ("ChainedScheduler", {"schedulers": [("ExponentialLR", {"gamma": 0.9}), ("ConstantLR", {"factor": 0.2, "total_iters": 4}), ("StepLR", {"gamma": 0.1, "step_size": 3})]}), 0.05, 9, [0.05 * 0.2 * 0.9**x for x in range(3)] + [0.05 * 0.2 * 0.9**3 * 0.1]
     + [0.05 * 0.9**x * 0.1 for x in range(4, 6)] + [0.05 * 0.9**x * 0.01 for x in range(6, 9)]),
    ("test_lambda_lr[group 0]", "torch.LambdaLR(lr=0.05, lr_lambda=0.9 ** t)", ("LambdaLR", {"lr_lambda": lambda x1: 0.9**x1}), 0.05, 10, [0.05 * (0.9**x) for x in range(10)]),
    ("test_lambda_lr[group 1]", "torch.LambdaLR(lr=0.4, lr_lambda=0.8 ** t)", ("LambdaLR", {"lr_lambda": lambda x2: 0.8**x2}), 0.4, 10, [0.4 * (0.8**x) for x in range(10)]),
    ("test_multiplicative_lr[group 0]", "torch.MultiplicativeLR(lr=0.05, lr_lambda=0.9)",
     ("MultiplicativeLR", {"lr_lambda": lambda x1: 0.9}), 0.05, 10, [0.05 * (0.9**x) for x in range(10)]),
    ("test_multiplicative_lr[group 1]", "torch.MultiplicativeLR(lr=0.4, lr_lambda=0.8)",
     ("MultiplicativeLR", {"lr_lambda": lambda x2: 0.8}), 0.4, 10, [0.4 * (0.8**x) for x in range(10)]),
]

#: What the test file refuses (``assertRaises(ValueError)``), refused by schedlang at the call.
REFUSALS = [
    ("test_linearlr_start_factor_limits1", "torch.LinearLR(start_factor=0.0, total_iters=4)", "0 < start_factor <= 1"),
    ("test_linearlr_start_factor_limits2", "torch.LinearLR(start_factor=1.1, total_iters=4)", "0 < start_factor <= 1"),
]

# --------------------------------------------------------------------------- CyclicLR, OneCycleLR
# The same file's CyclicLR / OneCycleLR tests: ``_test_cycle_lr`` reads ``param_group["lr"]`` and the
# momentum (SGD's ``momentum``, Adam's ``betas[0]`` with ``use_beta1``) before each ``opt.step();
# scheduler.step()`` of ``len(target)`` batches, ``assertEqual(target, value, atol=1e-5, rtol=0)``.
# Rows: the test (and param group / read), the schedlang line, the torch class and kwargs of that group
# (``anchors/reference.torch_values`` runs it on an SGD with momentum, so both reads come from one
# optimizer), ``"lr"`` or ``"momentum"``, the run compared with the real scheduler at every step (the
# test's batches; CyclicLR's run goes on to a third cycle), the targets as the test writes them.  Where
# both groups of the test's optimizer follow one schedule (scalar base_lr / max_lr) the row stands for both.

CYCLE_ATOL = 1e-5


def _words(kwargs: dict) -> str:
    """The torch kwargs as schedlang writes them: true/false, strings double-quoted."""
    return ", ".join(f"{k}={'true' if v else 'false'}" if isinstance(v, bool) else f'{k}="{v}"' if isinstance(v, str)
                     else f"{k}={v!r}" for k, v in kwargs.items())


def _cyclic(name, kwargs, lr_targets, momentum_targets=None, run=40):
    words = _words(kwargs)
    rows = [(f"{name}[lr]", f"torch.CyclicLR({words})", ("CyclicLR", kwargs), "lr", run, lr_targets)]
    if momentum_targets is not None:
        rows.append((f"{name}[momentum]", f"torch.CyclicLR.momentum({words})", ("CyclicLR", kwargs), "momentum", run,
                     momentum_targets))
    return rows


def _one_cycle(name, kwargs, lr_targets, momentum_targets):
    words = _words(kwargs)
    steps = kwargs["total_steps"]  # torch raises past total_steps: the run is the whole schedule
    return [(f"{name}[lr]", f"torch.OneCycleLR({words})", ("OneCycleLR", kwargs), "lr", steps, lr_targets),
            (f"{name}[momentum]", f"torch.OneCycleLR.momentum({words})", ("OneCycleLR", kwargs), "momentum", steps,
             momentum_targets)]


_TRI = [1, 2, 3, 4, 5, 4, 3, 2, 1, 2, 3]
_TRI_MOM = [5, 4, 3, 2, 1, 2, 3, 4, 5, 4, 3]
_TRI2 = [1, 2, 3, 4, 5, 4, 3, 2, 1, 1.5, 2.0, 2.5, 3.0, 2.5, 2.0, 1.5, 1, 1.25, 1.50, 1.75, 2.00, 1.75]
_TRI2_MOM = [5.0, 4.0, 3.0, 2.0, 1.0, 2.0, 3.0, 4.0, 5.0, 4.5, 4.0, 3.5, 3.0, 3.5, 4.0, 4.5, 5.0, 4.75, 4.5, 4.25, 4.0, 4.25]
_XS = [0, 0.25, 0.5, 0.75, 1, 0.75, 0.50, 0.25, 0, 0.25, 0.5, 0.75, 1]
_XS_UD = [0.0, 0.5, 1.0, 5.0 / 6, 4.0 / 6, 3.0 / 6, 2.0 / 6, 1.0 / 6, 0.0, 0.5, 1.0, 5.0 / 6, 4.0 / 6]
_TRI2_UD = [1.0, 3.0, 5.0, 13.0 / 3, 11.0 / 3, 9.0 / 3, 7.0 / 3, 5.0 / 3, 1.0, 2.0, 3.0, 8.0 / 3, 7.0 / 3, 6.0 / 3, 5.0 / 3,
            4.0 / 3, 1.0, 3.0 / 2, 2.0, 11.0 / 6, 10.0 / 6, 9.0 / 6, 8.0 / 6, 7.0 / 6]
_TRI2_UD_MOM = [5.0, 3.0, 1.0, 5.0 / 3, 7.0 / 3, 3.0, 11.0 / 3, 13.0 / 3, 5.0, 4.0, 3.0, 10.0 / 3, 11.0 / 3, 4.0, 13.0 / 3,
                14.0 / 3, 5.0, 4.5, 4.0, 25.0 / 6, 13.0 / 3, 4.5, 14.0 / 3, 29.0 / 6]


def _exp(base, top, xs, gamma=0.9):
    return ([base + x * (top - base) * gamma**i for i, x in enumerate(xs)],
            [top - x * (top - base) * gamma**i for i, x in enumerate(xs)])


def _cos(start, end, pct):  # the test's annealing_cos
    return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)


_ONE_LINEAR = ([1, 13, 25, 21.5, 18, 14.5, 11, 7.5, 4, 0.5], [22, 11.5, 1, 4, 7, 10, 13, 16, 19, 22])
_ONE_COS = ([1, 13, 25] + [_cos(25, 0.5, k / 7.0) for k in range(1, 7)] + [0.5],
            [22, 11.5, 1] + [_cos(1, 22, k / 7.0) for k in range(1, 7)] + [22])
_ONE = dict(max_lr=25, final_div_factor=2, base_momentum=1, max_momentum=22, total_steps=10)

CYCLE_CASES = [
    *_cyclic("test_cycle_lr_triangular_mode_one_lr", dict(base_lr=1, max_lr=5, step_size_up=4, base_momentum=1, max_momentum=5, mode="triangular"), _TRI, _TRI_MOM),
    *_cyclic("test_cycle_lr_triangular_mode_one_lr_no_momentum", dict(base_lr=1, max_lr=5, step_size_up=4, cycle_momentum=False, mode="triangular"), _TRI),
    *_cyclic("test_cycle_lr_triangular2_mode_one_lr", dict(base_lr=1, max_lr=5, step_size_up=4, base_momentum=1, max_momentum=5, mode="triangular2"), _TRI2, _TRI2_MOM),
    *_cyclic("test_cycle_lr_exp_range_mode_one_lr", dict(base_lr=1, max_lr=5, step_size_up=4, base_momentum=1, max_momentum=5, mode="exp_range", gamma=0.9), *_exp(1, 5, _XS)),
    *[row for g, (lo, hi) in enumerate([(1, 5), (2, 6)]) for row in _cyclic(
        f"test_cycle_lr_triangular_mode[group {g}]", dict(base_lr=lo, max_lr=hi, step_size_up=4, base_momentum=lo, max_momentum=hi, mode="triangular"),
        [x + g for x in _TRI], [x + g for x in _TRI_MOM])],
    *[row for g, (lo, hi) in enumerate([(1, 5), (3, 7)]) for row in _cyclic(
        f"test_cycle_lr_triangular2_mode[group {g}]", dict(base_lr=lo, max_lr=hi, step_size_up=4, base_momentum=lo, max_momentum=hi, mode="triangular2"),
        [x + 2 * g for x in _TRI2], [x + 2 * g for x in _TRI2_MOM])],
    *[row for g, (lo, hi) in enumerate([(1, 5), (5, 12)]) for row in _cyclic(
        f"test_cycle_lr_exp_range_mode[group {g}]", dict(base_lr=lo, max_lr=hi, step_size_up=4, base_momentum=lo, max_momentum=hi, mode="exp_range", gamma=0.9),
        *_exp(lo, hi, _XS))],
    *_cyclic("test_cycle_lr_triangular_mode_step_size_up_down", dict(base_lr=1, max_lr=5, step_size_up=4, step_size_down=6, base_momentum=1, max_momentum=5, mode="triangular"),
             [1.0, 2.0, 3.0, 4.0, 5.0, 13.0 / 3, 11.0 / 3, 9.0 / 3, 7.0 / 3, 5.0 / 3, 1.0],
             [5.0, 4.0, 3.0, 2.0, 1.0, 5.0 / 3, 7.0 / 3, 3.0, 11.0 / 3, 13.0 / 3, 5.0]),
    *[row for g, delta in enumerate([0, 2]) for row in _cyclic(
        f"test_cycle_lr_triangular2_mode_step_size_up_down[group {g}]", dict(base_lr=1 + delta, max_lr=5 + delta, step_size_up=2, step_size_down=6,
                                                                             base_momentum=1 + delta, max_momentum=5 + delta, mode="triangular2"),
        [x + delta for x in _TRI2_UD], [x + delta for x in _TRI2_UD_MOM])],
    *_cyclic("test_cycle_lr_exp_range_mode_step_size_up_down", dict(base_lr=1, max_lr=5, step_size_up=2, step_size_down=6, base_momentum=1, max_momentum=5, mode="exp_range", gamma=0.9),
             *_exp(1, 5, _XS_UD)),
    # test_cycle_lr_with_momentumless_optimizer: an Adam, cycle_momentum=False: the lr alone.
    *_cyclic("test_cycle_lr_with_momentumless_optimizer", dict(base_lr=1, max_lr=5, step_size_up=4, cycle_momentum=False, mode="triangular"), _TRI),
    *_one_cycle("test_onecycle_lr_linear_annealing", {**_ONE, "anneal_strategy": "linear"}, *_ONE_LINEAR),
    *_one_cycle("test_onecycle_lr_linear_annealing_three_phases",
                dict(max_lr=25, div_factor=25, base_momentum=1, max_momentum=22, total_steps=10, anneal_strategy="linear", pct_start=0.4,
                     final_div_factor=4, three_phase=True),
                [1, 9, 17, 25, 17, 9, 1, 0.75, 0.5, 0.25], [22, 15, 8, 1, 8, 15, 22, 22, 22, 22]),
    *_one_cycle("test_onecycle_lr_cosine_annealing", _ONE, *_ONE_COS),
    # test_onecycle_lr_legacy_state_dict: the cosine schedule again, after a state dict without anneal_func_type.
    *_one_cycle("test_onecycle_lr_legacy_state_dict", {**_ONE, "anneal_strategy": "cos"}, *_ONE_COS),
    # test_cycle_lr_with_adam: OneCycleLR's momentum is Adam's betas[0] (use_beta1).
    *_one_cycle("test_cycle_lr_with_adam", {**_ONE, "anneal_strategy": "linear"}, *_ONE_LINEAR),
]

#: The same tests' ``assertRaises(ValueError)`` and the momentum reads of cycle_momentum=False (the
#: optimizer's own momentum stays, a constant: no momentum schedule), refused by schedlang at the call.
CYCLE_REFUSALS = [
    ("test_cycle_lr_invalid_mode", 'torch.CyclicLR(base_lr=0, max_lr=0, mode="CATS")', '"CATS" is not a valid mode'),
    ("test_onecycle_lr_invalid_anneal_strategy", 'torch.OneCycleLR(max_lr=1e-3, total_steps=10, anneal_strategy="CATS")',
     '"CATS" is not a valid anneal_strategy'),
    ("test_onecycle_lr_invalid_pct_start", "torch.OneCycleLR(max_lr=1e-3, total_steps=10, pct_start=1.1)", "pct_start"),
    ("test_onecycle_lr_cannot_calculate_total_steps", "torch.OneCycleLR(max_lr=1e-3)", "OneCycleLR needs total_steps"),
    ("test_cycle_lr_triangular_mode_one_lr_no_momentum[momentum]",
     'torch.CyclicLR.momentum(base_lr=1, max_lr=5, step_size_up=4, cycle_momentum=false, mode="triangular")',
     "there is no momentum schedule"),
]

#: Refusals schedlang does not make (reported to the lead; strict xfails).
CYCLE_WRONG: dict[str, str] = {}
# Not transcribed: test_cosine_then_cyclic (two schedulers stepped by hand on one optimizer, CyclicLR's
# constructor resetting the lr; it asserts lr <= max_lr at the end), test_cycle_lr_cycle_momentum_fail_with_
# momentumless_optimizer (a property of the optimizer), and the state-dict / pickling / weakref tests.
