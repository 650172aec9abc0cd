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
