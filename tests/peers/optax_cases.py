# ruff: noqa: E501 - a transcribed table: one case a row, as the source writes it
"""optax's own schedule test cases, as data.

Transcribed from optax 0.2.8's ``optax/schedules/_schedule_test.py`` (the file the wheel
installs; google-deepmind/optax at the v0.2.8 tag).  Each case: the test's name, the optax
function and keyword arguments, the steps it evaluates, the values it expects (its own
expressions, evaluated as it writes them) and its tolerance (``assert_allclose``'s ``atol`` /
``rtol``).  ``source`` is the preset call when it is not the mechanical spelling, and ``run``
the ``run = N`` a case declares: ``exponential_decay(decay_rate=2)`` without ``end_value``
grows past float64 from step 2048 (``2 ** (t / 2)``), which SPEC §4 refuses on an unbounded
domain and allows in a run that ends before it (the test reads 20 steps).
"""

from __future__ import annotations

import math


def _staircased(count, steps, staircase):
    p = count / steps
    return math.floor(p) if staircase else p


CASES = [
    dict(name="ConstantTest.test_constant", fn="constant_schedule", kwargs={"value": 10}, steps=range(15),
         expected=[10] * 15, atol=1e-3,
         real_kwargs={"value": 10.0}),  # optax gives back the int 10; the harness reads float64
    dict(name="PolynomialTest.test_linear", fn="polynomial_schedule",
         kwargs={"init_value": 10.0, "end_value": 20.0, "power": 1, "transition_steps": 10}, steps=range(15),
         expected=list(range(10, 20)) + [20] * 5, atol=1e-3),
    *[dict(name=f"PolynomialTest.test_zero_steps_schedule[{n}]", fn="polynomial_schedule",
           kwargs={"init_value": 10.0, "end_value": 20.0, "power": 1, "transition_steps": n}, steps=range(15),
           expected=[10.0] * 15, atol=1e-7) for n in (-1, 0)],
    dict(name="PolynomialTest.test_nonlinear", fn="polynomial_schedule",
         kwargs={"init_value": 25.0, "end_value": 10.0, "power": 2, "transition_steps": 10}, steps=range(15),
         expected=[10.0 + 15.0 * (1.0 - n / 10) ** 2 for n in range(10)] + [10] * 5, atol=1e-3),
    dict(name="PolynomialTest.test_with_decay_begin", fn="polynomial_schedule",
         kwargs={"init_value": 30.0, "end_value": 10.0, "power": 2, "transition_steps": 10, "transition_begin": 4},
         steps=range(20), expected=[30.0] * 4 + [10.0 + 20.0 * (1.0 - n / 10) ** 2 for n in range(10)] + [10] * 6,
         atol=1e-3),
    dict(name="PiecewiseConstantTest.test_positive", fn="piecewise_constant_schedule",
         kwargs={"init_value": 0.1, "boundaries_and_scales": {3: 2.0, 6: 0.5}}, steps=range(10),
         expected=[0.1, 0.1, 0.1, 0.2, 0.2, 0.2, 0.1, 0.1, 0.1, 0.1], atol=1e-3),
    dict(name="PiecewiseConstantTest.test_negative", fn="piecewise_constant_schedule",
         kwargs={"init_value": -0.1, "boundaries_and_scales": {3: 2.0, 6: 0.5}}, steps=range(10),
         expected=[-0.1, -0.1, -0.1, -0.2, -0.2, -0.2, -0.1, -0.1, -0.1, -0.1], atol=1e-3),
    *[dict(name=f"ExponentialTest.test_constant_schedule[{s}]", fn="exponential_decay",
           kwargs={"init_value": 1.0, "transition_steps": 15, "decay_rate": 1.0, "staircase": s}, steps=range(15),
           expected=[1.0] * 15, atol=1e-3) for s in (False, True)],
    *[dict(name=f"ExponentialTest.test_nonvalid_transition_steps[{s}, {n}]", fn="exponential_decay",
           kwargs={"init_value": 1.0, "transition_steps": n, "decay_rate": 1.0, "staircase": s}, steps=range(15),
           expected=[1.0] * 15, atol=1e-7) for s in (False, True) for n in (-1, 0)],
    *[dict(name=f"ExponentialTest.test_nonvalid_decay_rate[{s}]", fn="exponential_decay",
           kwargs={"init_value": 1.0, "transition_steps": 2, "decay_rate": 0.0, "staircase": s}, steps=range(15),
           expected=[1.0] * 15, atol=1e-7) for s in (False, True)],
    *[dict(name=f"ExponentialTest.test_exponential[{s}, {b}]", fn="exponential_decay",
           kwargs={"init_value": 1.0, "transition_steps": 2, "decay_rate": 2.0, "transition_begin": b, "staircase": s},
           steps=range(15 + b), run=15 + b,
           expected=[1.0] * b + [1.0 * 2.0 ** _staircased(c, 2, s) for c in range(15)], atol=1e-3)
      for s, b in ((False, 0), (True, 0), (False, 5), (True, 5))],
    *[dict(name=f"ExponentialTest.test_end_value_with_staircase[{r}, {e}, {s}]", fn="exponential_decay",
           kwargs={"init_value": 1.0, "transition_steps": 2, "decay_rate": r, "transition_begin": 3, "staircase": s,
                   "end_value": e}, steps=range(14),
           expected=[(max if r < 1.0 else min)(v, e) for v in
                     [1.0] * 3 + [1.0 * r ** _staircased(c, 2, s) for c in range(11)]], atol=1e-3)
      for r, e, s in ((0.2, 0.1, False), (1.0, 0.1, False), (2.0, 3.0, False),
                      (0.2, 0.1, True), (1.0, 0.1, True), (2.0, 3.0, True))],
    dict(name="ExponentialTest.test_immutable_count", fn="exponential_decay",
         kwargs={"init_value": 32.0, "transition_steps": 1, "decay_rate": 0.5}, steps=range(5),
         expected=[32, 16, 8, 4, 2], atol=1e-3),
    dict(name="CosineDecayTest.test_decay_count_smaller_count", fn="cosine_decay_schedule",
         kwargs={"init_value": 0.1, "decay_steps": 10, "alpha": 0.0}, steps=range(10),
         expected=[0.1 * (0.5 + 0.5 * math.cos(math.pi * x / 10)) for x in range(10)], atol=1e-3),
    dict(name="CosineDecayTest.test_decay_count_greater_count", fn="cosine_decay_schedule",
         kwargs={"init_value": 0.1, "decay_steps": 5, "alpha": 0.0}, steps=range(12),
         expected=[0.1 * (0.5 + 0.5 * math.cos(math.pi * min(x, 5) / 5)) for x in range(12)], atol=1e-3),
    dict(name="CosineDecayTest.test_decay_count_greater_count_with_alpha", fn="cosine_decay_schedule",
         kwargs={"init_value": 0.1, "decay_steps": 5, "alpha": 0.1}, steps=range(12),
         expected=[0.1 * (0.9 * (0.5 + 0.5 * math.cos(math.pi * min(x, 5) / 5)) + 0.1) for x in range(12)], atol=1e-3),
    dict(name="CosineDecayTest.test_with_exponent", fn="cosine_decay_schedule",
         kwargs={"init_value": 0.1, "decay_steps": 100, "alpha": 0.0, "exponent": 2}, steps=[0, 10, 50, 75, 100],
         expected=[0.1, 0.09516553580760956, 0.025, 0.0021446612663567066, 0.0], rtol=1e-6, atol=1e-8),
    dict(name="CosineDecayTest.test_with_giant_int_steps", fn="cosine_decay_schedule",
         kwargs={"init_value": 1000.0, "decay_steps": int(1e10), "alpha": 0.0, "exponent": 1}, steps=[int(1e9)],
         expected=[975.52826], rtol=1e-7),
    dict(name="WarmupCosineDecayTest.test_limits[with end value]", fn="warmup_cosine_decay_schedule",
         kwargs={"init_value": 10, "peak_value": 0.5, "warmup_steps": 100, "decay_steps": 1000, "end_value": 1e-4},
         steps=[0, 100, 1000], expected=[10, 0.5, 1e-4], rtol=1e-3),
    dict(name="WarmupCosineDecayTest.test_limits[without end value]", fn="warmup_cosine_decay_schedule",
         kwargs={"init_value": 5, "peak_value": 3, "warmup_steps": 100, "decay_steps": 1000, "end_value": 0.0},
         steps=[0, 100, 1000], expected=[5, 3, 0.0], rtol=1e-3),
    dict(name="WarmupCosineDecayTest.test_with_exponent", fn="warmup_cosine_decay_schedule",
         kwargs={"init_value": 0.2, "peak_value": 1.21, "end_value": -3.0, "warmup_steps": 50, "decay_steps": 100,
                 "exponent": 2}, steps=[0, 10, 50, 75, 100],
         expected=[0.20000004768371582, 0.4020000100135803, 1.2100000381469727, -1.947500228881836, -3.000000238418579],
         rtol=1e-6, atol=1e-8),
    dict(name="WarmupCosineDecayTest.test_zero_peak_value", fn="warmup_cosine_decay_schedule",
         kwargs={"init_value": 0.2, "peak_value": 0, "end_value": -3.0, "warmup_steps": 50, "decay_steps": 100,
                 "exponent": 2}, steps=[0, 10, 50, 75, 100], expected=[0.2, 0.16, 0.0, 0.0, 0.0], rtol=1e-6, atol=1e-8),
    dict(name="PiecewiseInterpolateTest.test_linear_piecewise", fn="piecewise_interpolate_schedule",
         kwargs={"interpolate_type": "linear", "init_value": 200.0, "boundaries_and_scales": {5: 1.5, 10: 0.25}},
         steps=range(13), expected=[200.0, 220.0, 240.0, 260.0, 280.0, 300.0, 255.0, 210.0, 165.0, 120.0, 75.0, 75.0, 75.0],
         atol=1e-3),
    dict(name="PiecewiseInterpolateTest.test_cos_piecewise", fn="piecewise_interpolate_schedule",
         kwargs={"interpolate_type": "cosine", "init_value": 400.0, "boundaries_and_scales": {5: 1.2, 3: 0.6, 7: 1.0}},
         steps=range(9), expected=[400.0, 360.0, 280.0, 240.0, 264.0, 288.0, 288.0, 288.0, 288.0], atol=1e-3),
    dict(name="PiecewiseInterpolateTest.test_empty_dict", fn="piecewise_interpolate_schedule",
         kwargs={"interpolate_type": "linear", "init_value": 13.0, "boundaries_and_scales": {}}, steps=range(5),
         expected=[13.0] * 5, atol=1e-3),
    dict(name="PiecewiseInterpolateTest.test_no_dict", fn="piecewise_interpolate_schedule",
         kwargs={"interpolate_type": "cosine", "init_value": 17.0}, steps=range(3), expected=[17.0] * 3, atol=1e-3),
    dict(name="PiecewiseInterpolateTest.test_zero_interval_size", fn="piecewise_interpolate_schedule",
         kwargs={"interpolate_type": "linear", "init_value": 13.0, "boundaries_and_scales": {0: 2.0, 5: 3.0}},
         steps=[0, 5], expected=[26.0, 78.0], atol=1e-7),
    *[dict(name=f"SGDRTest.test_limits[{label}]", fn="sgdr_schedule",
           kwargs={"cosine_kwargs": [{"decay_steps": int(step), "peak_value": lr, "init_value": 0, "end_value": 0.0,
                                      "warmup_steps": 500} for step, lr in zip([2e3, 3e3, 5e3], lrs)]},
           steps=[500, 2500, 5500], expected=list(lrs), rtol=1e-7)
      for label, lrs in (("with step decay", (1.6, 0.8, 0.4)), ("without step_decay", (1.6, 1.6, 1.6)))],
    dict(name="OneCycleTest.test_linear", fn="linear_onecycle_schedule",
         kwargs={"transition_steps": 10, "peak_value": 1000, "pct_start": 0.3, "pct_final": 0.7, "div_factor": 10.0,
                 "final_div_factor": 100.0}, steps=range(12),
         expected=[100.0, 400.0, 700.0, 1000.0, 775.0, 550.0, 325.0, 100.0, 67.0, 34.0, 1.0, 1.0], atol=1e-3),
    dict(name="OneCycleTest.test_cosine", fn="cosine_onecycle_schedule",
         kwargs={"transition_steps": 5, "peak_value": 1000.0, "pct_start": 0.4, "div_factor": 10.0,
                 "final_div_factor": 100.0}, steps=range(7),
         expected=[100.0, 550.0, 1000.0, 750.25, 250.75, 1.0, 1.0], atol=1e-3),
]

#: What optax's tests refuse (``assertRaises(ValueError)``), refused by schedlang at the call.
REFUSALS = [
    ("WarmupCosineDecayTest.test_raises_when_decay_equals_warmup",
     "optax.warmup_cosine_decay_schedule(init_value=0.2, peak_value=1.2, warmup_steps=10, decay_steps=10, "
     "end_value=0.0)", "decay_steps"),
    ("PiecewiseInterpolateTest.test_invalid_scale",
     'optax.piecewise_interpolate_schedule("linear", 13.0, [[5, -3]])', "non-negative"),
    ("OneCycleTest.test_nonpositive_transition_steps",
     "optax.cosine_onecycle_schedule(transition_steps=0, peak_value=5.0)", "transition_steps"),
]
