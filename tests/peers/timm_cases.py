# ruff: noqa: E501 - a transcribed table: one case a row, as the source writes it
"""timm's own scheduler test cases, as data.

Transcribed from huggingface/pytorch-image-models ``tests/test_scheduler.py`` at commit
0514e98dfb5cef2abdd48d1810197df7911cf248 (the file with ``test_multistep_decay_boundary``,
against the installed timm 1.0.31).  ``_create_optimizer`` is an SGD at ``lr=0.1`` (the test's
``base_lr`` where it sets one); ``scheduler.step(epoch)`` (``step_update(update)`` with
``t_in_epochs=False``) sets the value of ``t = epoch``, the constructor the value of ``t = 0``,
as ``timm.*``'s index says.  A row: ``name`` (the test and its parameters), ``cls``,
``kwargs``, ``lr``, ``steps`` (the run compared with the real scheduler at every step: the
test's run, made long enough to pass every warmup end, cycle end and milestone), ``points``
(``(t, expected, rel)``: ``pytest.approx(expected, rel=rel)``; rel ``"below"``: the test's
``lr < expected``) and ``shapes`` (``("increase", a, b)``: strictly increasing over
``range(a, b)``; ``("le" | "lt" | "ne", a, b)``: ``lr(b) <= / < / != lr(a)``).  Tests that read
no value (``test_scheduler_init``, ``TestStateDict``, ``test_get_cycle_length``) are not rows.
"""

from __future__ import annotations

import math

LR = 0.1  # _create_optimizer's default, and every base_lr the tests set

#: The five closed-form schedulers as the parametrized tests build them (their kwargs).
_BASIC = [("CosineLRScheduler", {"t_initial": 100}, 110), ("StepLRScheduler", {"decay_t": 10}, 40),
          ("MultiStepLRScheduler", {"decay_t": [10, 20, 30]}, 40), ("PolyLRScheduler", {"t_initial": 100}, 110),
          ("TanhLRScheduler", {"t_initial": 100}, 110)]
_DECAYING = [(c, {**k, "decay_rate": 0.5} if c in ("StepLRScheduler", "MultiStepLRScheduler") else k, n)
             for c, k, n in _BASIC]  # test_warmup_prefix_reaches_target_lr and TestStepUpdate add decay_rate 0.5


def _row(name, cls, kwargs, steps, lr=LR, points=(), shapes=()):
    return dict(name=name, cls=cls, kwargs=kwargs, lr=lr, steps=steps, points=list(points), shapes=list(shapes))


CASES = [
    # TestSchedulerBasics.test_scheduler_step: step(0 .. 9), the last lr <= the first.
    *[_row(f"TestSchedulerBasics.test_scheduler_step[{c}]", c, k, n, shapes=[("le", 0, 9)]) for c, k, n in _BASIC],
    # TestWarmup.test_warmup_lr_increases: warmup_t 5 from 0.001: lr(0) == 0.001, rising over step(1 .. 4).
    *[_row(f"TestWarmup.test_warmup_lr_increases[{c}]", c, {"warmup_t": 5, "warmup_lr_init": 0.001, **k}, n,
           points=[(0, 0.001, 1e-5)], shapes=[("increase", 0, 5)]) for c, k, n in _BASIC],
    # TestWarmup.test_warmup_prefix_reaches_target_lr: warmup_prefix=True, lr(5) == base_lr.
    *[_row(f"TestWarmup.test_warmup_prefix_reaches_target_lr[{c}]", c,
           {"warmup_t": 5, "warmup_lr_init": 0.001, "warmup_prefix": True, **k}, n + 5, points=[(5, LR, 1e-5)])
      for c, k, n in _DECAYING],
    _row("TestCosineScheduler.test_cosine_decay", "CosineLRScheduler", {"t_initial": 100, "lr_min": 0.001}, 110,
         points=[(0, LR, 1e-5), (50, 0.001 + 0.5 * (LR - 0.001) * (1 + math.cos(math.pi * 0.5)), 1e-2), (100, 0.001, 1e-5)]),
    _row("TestCosineScheduler.test_cosine_cycles", "CosineLRScheduler", {"t_initial": 50, "lr_min": 0.001, "cycle_limit": 2},
         120, points=[(49, LR * 0.5, "below"), (109, 0.001, 1e-5)]),
    _row("TestStepScheduler.test_step_decay", "StepLRScheduler", {"decay_t": 10, "decay_rate": 0.5}, 40,
         points=[(9, LR, 1e-5), (10, LR * 0.5, 1e-5), (20, LR * 0.5**2, 1e-5)]),
    _row("TestMultiStepScheduler.test_multistep_decay_boundary", "MultiStepLRScheduler", {"decay_t": [10, 20], "decay_rate": 0.5},
         30, points=[(9, LR, 1e-5), (10, LR * 0.5, 1e-5), (19, LR * 0.5, 1e-5), (20, LR * 0.5**2, 1e-5)]),
    _row("TestMultiStepScheduler.test_multistep_decay", "MultiStepLRScheduler", {"decay_t": [10, 20, 30], "decay_rate": 0.5},
         40, points=[(8, LR, 1e-5), (11, LR * 0.5, 1e-5), (21, LR * 0.5**2, 1e-5), (31, LR * 0.5**3, 1e-5)]),
    _row("TestPolyScheduler.test_poly_decay", "PolyLRScheduler", {"t_initial": 100, "lr_min": 0.001, "power": 1.0}, 110,
         points=[(0, LR, 1e-5), (100, 0.001, 1e-5)]),
    _row("TestTanhScheduler.test_tanh_decay", "TanhLRScheduler", {"t_initial": 100, "lr_min": 0.001}, 110,
         shapes=[("lt", 0, 100)]),
    # TestStepUpdate.test_step_update_with_t_in_epochs_false: step_update(0 .. 49), the lr has moved.
    *[_row(f"TestStepUpdate.test_step_update_with_t_in_epochs_false[{c}]", c, {"t_in_epochs": False, **k}, max(n, 60),
           shapes=[("ne", 0, 49)]) for c, k, n in _DECAYING],
    # TestMultipleParamGroups.test_multiple_param_groups: three groups at lr 0.1, step(0 .. 19): each group's lr
    # is this row's (they are the same schedule).
    *[_row(f"TestMultipleParamGroups.test_multiple_param_groups[{c}]", c, k, n, shapes=[("le", 0, 19)])
      for c, k, n in _BASIC],
    # TestKDecay: k_decay 1 and 2 differ at step 50 (one run against the other: the real code is the value).
    *[_row(f"TestKDecay.test_{kind}_k_decay[k={k}]", cls, {"t_initial": 100, "k_decay": k}, 110)
      for kind, cls in (("cosine", "CosineLRScheduler"), ("poly", "PolyLRScheduler")) for k in (1.0, 2.0)],
]

#: ``(cosine, poly)``: TestKDecay's pairs, whose lr(50) the tests assert differ.
K_DECAY_PAIRS = [("TestKDecay.test_cosine_k_decay[k=1.0]", "TestKDecay.test_cosine_k_decay[k=2.0]"),
                 ("TestKDecay.test_poly_k_decay[k=1.0]", "TestKDecay.test_poly_k_decay[k=2.0]")]

_NOISE = "timm's lr noise is drawn from torch's random generator"
_PLATEAU = "it lowers the lr when an evaluation metric stops improving"

#: What schedlang refuses, as SPEC section 1 says (a schedule is a closed-form f(t), never a metric):
#: ``(test, schedlang line, what the message says)``.
REFUSALS = [
    *[(f"TestNoise.test_noise_range[{c}]", f"timm.{c}(lr=0.1, {', '.join(f'{k}={v}' for k, v in kw.items())}, "
       "noise_range_t=[10, 50], noise_pct=0.5, noise_seed=42)", _NOISE)
      for c, kw, _ in _BASIC if c != "MultiStepLRScheduler"],
    ("TestSchedulerBasics.test_scheduler_init[PlateauLRScheduler]", "timm.PlateauLRScheduler(lr=0.1)", _PLATEAU),
    ("TestSchedulerBasics.test_plateau_scheduler_step", "timm.PlateauLRScheduler(lr=0.1, patience_t=2, decay_rate=0.5)", _PLATEAU),
    ("TestStateDict.test_plateau_state_dict_save_load", "timm.PlateauLRScheduler(lr=0.1)", _PLATEAU),
]

#: Rows where schedlang differs from the test (reported to the lead; strict xfails naming the difference).
WRONG = {
    "TestMultiStepScheduler.test_multistep_decay_boundary":
        "a version difference, not a schedlang error: the test is timm main's at 0514e98d (after the "
        "1.0.31 release), whose MultiStepLRScheduler decays at the milestone (bisect_right(decay_t, t)); "
        "the installed timm 1.0.31, which timm.MultiStepLRScheduler matches at every step, decays one "
        "epoch early (bisect_right(decay_t, t + 1)): lr(9) = 0.05 and lr(19) = 0.025 where the test "
        "asserts 0.1 and 0.05",
}
