# ruff: noqa: E501 - a transcribed table: one case a row, as the source writes it
"""OLMo-core's own scheduler test cases, as data.

Transcribed from allenai/OLMo-core ``src/test/optim/scheduler_test.py`` at commit
fa6c5014c9f6e9ee789da2d9c20d5126fee8df0d.  Each case is one scheduler: its schedlang call (the
preset, with the test's ``initial_lr`` as ``lr`` and its ``t_max``), the same scheduler built
from OLMo-core's classes (``real``, given the loaded ``olmo_core.optim.scheduler``), and the
test's points ``(current, expected)``: ``get_lr(initial_lr, current, t_max) == expected``.
``expected`` is the number the test writes (its formulas evaluated as it writes them); None
where the test compares with another ``get_lr`` call of the real classes (the sequential and
parity tests), which the real-code comparison covers.  ``approx`` is the test's
``pytest.approx`` (relative 1e-6) where it uses one, else exact equality is asked at 1e-12.

Unit tests call ``get_lr`` directly; the trainer reads ``get_lr(lr, k + 1, t_max)`` at update
``k`` (``olmo_core.py``), so ``current`` is the preset's step ``current - 1``.  ``current = 0``
is read by no update and is checked against the real code only.
"""

from __future__ import annotations

import math

_W = "warmup=3000, warmup_min_lr=4.0"

CASES = [
    dict(name="test_constant_with_warmup", source=f"olmo_core.ConstantWithWarmup(lr=10.0, t_max=10000, {_W})",
         real=lambda m: m.ConstantWithWarmup(warmup=3_000, warmup_min_lr=4.0), lr=10.0, t_max=10_000,
         points=[(0, 4.0), (1_000, 6.0), (3_000, 10.0), (5_000, 10.0), (10_000, 10.0)]),
    dict(name="test_linear_with_warmup", source=f"olmo_core.LinearWithWarmup(lr=10.0, t_max=10000, alpha_f=0.2, {_W})",
         real=lambda m: m.LinearWithWarmup(warmup=3_000, alpha_f=0.2, warmup_min_lr=4.0), lr=10.0, t_max=10_000,
         points=[(0, 4.0), (1_000, 6.0), (3_000, 10.0), (5_000, 10.0 - 8.0 * (2_000 / 7_000)), (10_000, 2.0)]),
    dict(name="test_inv_sqrt_with_warmup", source=f"olmo_core.InvSqrtWithWarmup(lr=10.0, t_max=10000, alpha_f=0.2, {_W})",
         real=lambda m: m.InvSqrtWithWarmup(warmup=3_000, alpha_f=0.2, warmup_min_lr=4.0), lr=10.0, t_max=10_000,
         points=[(0, 4.0), (1_000, 6.0), (3_000, 10.0), (5_000, 2.0 + 8.0 * math.sqrt(3_000 / 5_000)),
                 (10_000, 2.0 + 8.0 * math.sqrt(3_000 / 10_000))]),
    dict(name="test_cos_with_warmup_scheduler", source=f"olmo_core.CosWithWarmup(lr=10.0, t_max=10000, alpha_f=0.2, {_W})",
         real=lambda m: m.CosWithWarmup(warmup=3_000, alpha_f=0.2, warmup_min_lr=4.0), lr=10.0, t_max=10_000,
         points=[(0, 4.0), (1_000, 6.0), (3_000, 10.0),
                 (5_000, 2.0 + 8.0 * (1 + math.cos(math.pi * 2_000 / 7_000)) / 2), (10_000, 2.0)]),
    dict(name="test_sequential_scheduler",
         source="olmo_core.SequentialScheduler(lr=10.0, t_max=20000, schedulers=[olmo_core.InvSqrtWithWarmup(alpha_f=0.5, warmup=1000), olmo_core.CosWithWarmup(warmup=0), olmo_core.LinearWithWarmup(t_max=3000, warmup=0)], schedulers_max=[2500, 4000])",
         real=lambda m: m.SequentialScheduler(schedulers=[m.InvSqrtWithWarmup(alpha_f=0.5, warmup=1_000), m.CosWithWarmup(warmup=0), m.LinearWithWarmup(t_max=3_000, warmup=0)], schedulers_max=[2_500, 4_000]),
         lr=10.0, t_max=20_000, points=[(1_000, None), (4_000, None), (7_500, None)]),
    dict(name="test_power_lr", source="olmo_core.PowerLR(lr=10.0, t_max=10000, warmup=1000, decay=2000, b=-0.5)",
         real=lambda m: m.PowerLR(warmup=1_000, decay=2_000, decay_fraction=None, b=-0.5), lr=10.0, t_max=10_000, approx=True,
         points=[(0, 0.0), (500, 5.0), (1_000, 10.0), (2_000, 10.0 * 2 ** -0.5), (4_000, 10.0 * 4 ** -0.5),
                 (6_000, 10.0 * 6 ** -0.5), (8_000, 10.0 * 8 ** -0.5), (9_000, 10.0 * 8 ** -0.5 * 0.5), (10_000, 0.0)]),
    dict(name="test_sequential_scheduler_override_decay_linear",
         source='olmo_core.SequentialScheduler(lr=10.0, t_max=20000, schedulers=[olmo_core.ConstantWithWarmup(warmup=1000), olmo_core.CosWithWarmup(warmup=0, alpha_f=0.1)], schedulers_max=[5000], override_decay=olmo_core.OverrideDecay(start=10000, duration=2000, shape="linear", end_lr=1.0))',
         real=lambda m: m.SequentialScheduler(schedulers=[m.ConstantWithWarmup(warmup=1_000), m.CosWithWarmup(warmup=0, alpha_f=0.1)], schedulers_max=[5_000], override_decay=m.OverrideDecay(start=10_000, duration=2_000, shape=m.ComposableSchedulerStageType.linear, end_lr=1.0)),
         lr=10.0, t_max=20_000, approx=True,
         points=[(500, None), (4_999, None), (9_999, None), (10_000, None), (11_000, None), (12_000, 1.0), (15_000, 1.0)]),
    dict(name="test_sequential_scheduler_override_decay_cosine",
         source='olmo_core.SequentialScheduler(lr=10.0, t_max=20000, schedulers=[olmo_core.ConstantWithWarmup(warmup=1000), olmo_core.CosWithWarmup(warmup=0, alpha_f=0.1)], schedulers_max=[5000], override_decay=olmo_core.OverrideDecay(start=10000, duration=2000, shape="cosine", end_lr_fraction=0.05))',
         real=lambda m: m.SequentialScheduler(schedulers=[m.ConstantWithWarmup(warmup=1_000), m.CosWithWarmup(warmup=0, alpha_f=0.1)], schedulers_max=[5_000], override_decay=m.OverrideDecay(start=10_000, duration=2_000, shape=m.ComposableSchedulerStageType.cosine, end_lr_fraction=0.05)),
         lr=10.0, t_max=20_000, approx=True, points=[(11_000, None), (12_000, 10.0 * 0.05), (15_000, 10.0 * 0.05)]),
    dict(name="test_sequential_scheduler_override_decay_inside_first_segment",
         source='olmo_core.SequentialScheduler(lr=10.0, t_max=20000, schedulers=[olmo_core.ConstantWithWarmup(warmup=1000), olmo_core.CosWithWarmup(warmup=0, alpha_f=0.1)], schedulers_max=[5000], override_decay=olmo_core.OverrideDecay(start=2000, duration=1000, shape="linear", end_lr=2.0))',
         real=lambda m: m.SequentialScheduler(schedulers=[m.ConstantWithWarmup(warmup=1_000), m.CosWithWarmup(warmup=0, alpha_f=0.1)], schedulers_max=[5_000], override_decay=m.OverrideDecay(start=2_000, duration=1_000, shape=m.ComposableSchedulerStageType.linear, end_lr=2.0)),
         lr=10.0, t_max=20_000, approx=True, points=[(2_000, 10.0), (2_500, 6.0), (3_000, 2.0), (10_000, 2.0)]),
    dict(name="test_composable_scheduler_override_decay_linear",
         source='olmo_core.ComposableScheduler(lr=10.0, t_max=1000, stages=[olmo_core.ComposableSchedulerStage(duration=100, shape="linear", start_lr_fraction=0.0, end_lr_fraction=1.0), olmo_core.ComposableSchedulerStage(duration=900, shape="linear", end_lr_fraction=0.1)], override_decay=olmo_core.OverrideDecay(start=200, duration=100, shape="linear", end_lr=3.0))',
         real=lambda m: m.ComposableScheduler(stages=[m.ComposableSchedulerStage(duration=100, shape=m.ComposableSchedulerStageType.linear, start_lr_fraction=0.0, end_lr_fraction=1.0), m.ComposableSchedulerStage(duration=900, shape=m.ComposableSchedulerStageType.linear, end_lr_fraction=0.1)], override_decay=m.OverrideDecay(start=200, duration=100, shape=m.ComposableSchedulerStageType.linear, end_lr=3.0)),
         lr=10.0, t_max=1_000, approx=True, points=[(150, 9.5), (200, 9.0), (250, 6.0), (300, 3.0), (800, 3.0)]),
    dict(name="test_composable_scheduler_override_decay_cosine",
         source='olmo_core.ComposableScheduler(lr=10.0, t_max=1000, stages=[olmo_core.ComposableSchedulerStage(duration=1000, shape="linear", end_lr_fraction=1.0)], override_decay=olmo_core.OverrideDecay(start=100, duration=100, shape="cosine", end_lr_fraction=0.2))',
         real=lambda m: m.ComposableScheduler(stages=[m.ComposableSchedulerStage(duration=1000, shape=m.ComposableSchedulerStageType.linear, end_lr_fraction=1.0)], override_decay=m.OverrideDecay(start=100, duration=100, shape=m.ComposableSchedulerStageType.cosine, end_lr_fraction=0.2)),
         lr=10.0, t_max=1_000, approx=True, points=[(99, 10.0), (100, 10.0), (150, 6.0), (200, 2.0), (500, 2.0)]),
    dict(name="TestWSDSScheduler.test_basic_single_period_with_warmup",
         source="olmo_core.WSDS(lr=1.0, period_lengths=[1000], warmup=100, decay=200, warmup_min_lr=0.0, decay_min_lr=0.0)",
         real=lambda m: m.WSDS(period_lengths=[1000], warmup=100, decay=200, warmup_min_lr=0.0, decay_min_lr=0.0),
         lr=1.0, t_max=1000, points=[(0, 0.0), (100, 1.0), (200, 1.0), (500, 1.0), (799, 1.0), (1000, 0.0)]),
    dict(name="TestWSDSScheduler.test_multiple_periods_with_reset",
         source="olmo_core.WSDS(lr=1.0, period_lengths=[1000, 1000], warmup=100, decay=200, warmup_min_lr=0.0, decay_min_lr=0.0)",
         real=lambda m: m.WSDS(period_lengths=[1000, 1000], warmup=100, decay=200, warmup_min_lr=0.0, decay_min_lr=0.0),
         lr=1.0, t_max=2000, points=[(1000, 0.0), (1001, 1.0), (1400, 1.0), (2000, 0.0)]),
    dict(name="TestWSDSScheduler.test_warmup_fraction",
         source="olmo_core.WSDS(lr=1.0, period_lengths=[1000], warmup_fraction=0.1, decay_fraction=0.2, warmup_min_lr=0.0, decay_min_lr=0.0)",
         real=lambda m: m.WSDS(period_lengths=[1000], warmup_fraction=0.1, decay_fraction=0.2, warmup_min_lr=0.0, decay_min_lr=0.0),
         lr=1.0, t_max=1000, approx=True, points=[(0, 0.0), (100, 1.0), (500, 1.0), (1000, 0.0)]),
    dict(name="TestWSDSScheduler.test_decay_fraction",
         source="olmo_core.WSDS(lr=1.0, period_lengths=[1000], warmup=50, decay_fraction=0.3, warmup_min_lr=0.0, decay_min_lr=0.0)",
         real=lambda m: m.WSDS(period_lengths=[1000], warmup=50, decay_fraction=0.3, warmup_min_lr=0.0, decay_min_lr=0.0),
         lr=1.0, t_max=1000, points=[(50, 1.0), (699, 1.0), (700, 1.0), (1000, 0.0)]),
    dict(name="TestWSDSScheduler.test_no_warmup_in_subsequent_periods",
         source="olmo_core.WSDS(lr=1.0, period_lengths=[1000, 1000], warmup=100, decay=200)",
         real=lambda m: m.WSDS(period_lengths=[1000, 1000], warmup=100, decay=200), lr=1.0, t_max=2000,
         points=[(1001, 1.0)]),
    dict(name="TestWSDSScheduler.test_beyond_all_periods",
         source="olmo_core.WSDS(lr=1.0, period_lengths=[1000], warmup=100, decay=200, decay_min_lr=0.0)",
         real=lambda m: m.WSDS(period_lengths=[1000], warmup=100, decay=200, decay_min_lr=0.0), lr=1.0, t_max=1000,
         points=[(1001, 0.0), (5000, 0.0)]),
    dict(name="TestWSDSScheduler.test_non_zero_decay_min_lr",
         source="olmo_core.WSDS(lr=1.0, period_lengths=[1000], warmup=100, decay=200, decay_min_lr=0.1)",
         real=lambda m: m.WSDS(period_lengths=[1000], warmup=100, decay=200, decay_min_lr=0.1), lr=1.0, t_max=1000,
         approx=True, points=[(1000, 0.1), (1500, 0.1)]),
    dict(name="TestWSDSScheduler.test_non_zero_warmup_min_lr",
         source="olmo_core.WSDS(lr=1.0, period_lengths=[1000], warmup=100, decay=200, warmup_min_lr=0.1)",
         real=lambda m: m.WSDS(period_lengths=[1000], warmup=100, decay=200, warmup_min_lr=0.1), lr=1.0, t_max=1000,
         points=[(0, 0.1)]),
    *[dict(name=f"TestWSDSScheduler.test_variable_period_counts[{n}]",
           source=f"olmo_core.WSDS(lr=1.0, period_lengths={[1000] * n}, warmup=100, decay=200)",
           real=lambda m, n=n: m.WSDS(period_lengths=[1000] * n, warmup=100, decay=200), lr=1.0, t_max=1000 * n,
           points=[((i + 1) * 1000, 0.0) for i in range(n)]) for n in (1, 2, 5)],
    *[dict(name=f"TestWSDSScheduler.test_variable_period_lengths[{length}]",
           source=f"olmo_core.WSDS(lr=1.0, period_lengths=[{length}], warmup={int(0.1 * length)}, decay={int(0.2 * length)})",
           real=lambda m, length=length: m.WSDS(period_lengths=[length], warmup=int(0.1 * length), decay=int(0.2 * length)),
           lr=1.0, t_max=length, points=[(0, 0.0), (length // 2, 1.0), (length, 0.0)]) for length in (100, 1000, 10000)],
    dict(name="test_exponential_scheduler", source="olmo_core.ExponentialScheduler(lr=10.0, t_max=10000, lr_min=1e-9)",
         real=lambda m: m.ExponentialScheduler(lr_min=1e-9), lr=10.0, t_max=10_000, approx=True,
         points=[(0, 1e-9), (10_000, 10.0), (5_000, math.sqrt(1e-9 * 10.0)),
                 *[(s, 1e-9 * (10.0 / 1e-9) ** (s / 10_000)) for s in (1_000, 5_000, 8_000)]]),
]

_STAGES = 'stages=[olmo_core.ComposableSchedulerStage(duration=1000, shape="linear", start_lr_fraction=0.0, end_lr_fraction=1.0), olmo_core.ComposableSchedulerStage(duration=9000, shape="{shape}", end_lr_fraction={alpha_f})]'
#: test_composable_and_sequential_match_when_t_max_aligns: (stage shape, sub-scheduler, alpha_f); the
#: two spellings must agree at the sample points (and each equal OLMo-core's own).
PARITY = [("linear", "LinearWithWarmup", 0.0), ("linear", "LinearWithWarmup", 0.1),
          ("cosine", "CosWithWarmup", 0.0), ("cosine", "CosWithWarmup", 0.1)]
PARITY_POINTS = [0, 1, 100, 500, 999, 1_000, 1_001, 2_500, 5_500, 7_500, 9_999, 10_000]


def parity_sources(shape: str, sub: str, alpha_f: float) -> tuple[str, str]:
    composable = f"olmo_core.ComposableScheduler(lr=10.0, t_max=10000, {_STAGES.format(shape=shape, alpha_f=alpha_f)})"
    sequential = (f"olmo_core.SequentialScheduler(lr=10.0, t_max=10000, schedulers=[olmo_core.ConstantWithWarmup(warmup=1000), "
                  f"olmo_core.{sub}(warmup=0, alpha_f={alpha_f})], schedulers_max=[1000])")
    return composable, sequential


#: The configuration errors the test file asserts (OLMoConfigurationError's message), with what
#: schedlang says for the same call.
REFUSALS = [
    ("olmo_core.PowerLR(t_max=1000, warmup=100, decay=100, b=0.5)", "'b' must be negative", "must be negative"),
    ("olmo_core.PowerLR(t_max=1000, warmup=100, decay=100, decay_fraction=0.1)", "decay_fraction.*or.*decay", "not both"),
    ("olmo_core.WSDS(period_lengths=[1000], warmup=100, warmup_fraction=0.1, decay=200)", "Exactly one", "exactly one"),
    ("olmo_core.WSDS(period_lengths=[1000], decay=200)", "Exactly one", "exactly one"),
    ("olmo_core.WSDS(period_lengths=[1000], warmup=100, decay=200, decay_fraction=0.2)", "Exactly one", "exactly one"),
    ("olmo_core.WSDS(period_lengths=[1000], warmup=100)", "Exactly one", "exactly one"),
    ("olmo_core.WSDS(period_lengths=[1000], warmup_fraction=1.5, decay=200)", "must be in", "between 0 and 1"),
    ("olmo_core.WSDS(period_lengths=[1000], warmup=100, decay_fraction=-0.1)", "must be in", "between 0 and 1"),
    ("olmo_core.WSDS(period_lengths=[1000], warmup=600, decay=500)", "exceeds period length", "exceeds"),
    ("olmo_core.WSDS(period_lengths=[1000, 500], warmup=100, decay=600)", "Period 1.*exceeds period length", "exceeds"),
    ("olmo_core.WSDS(period_lengths=[1000, -500], warmup=100, decay=200)", "must be > 0", "whole number >= 1"),
    ("olmo_core.ExponentialScheduler(t_max=100, lr_min=0.0)", "must be positive", "must be positive"),
    ("olmo_core.ExponentialScheduler(t_max=100, lr_min=-1e-9)", "must be positive", "must be positive"),
    ("olmo_core.OverrideDecay(start=100, duration=100)", "exactly one of 'end_lr' or 'end_lr_fraction'",
     "exactly one of 'end_lr' or 'end_lr_fraction'"),
]
