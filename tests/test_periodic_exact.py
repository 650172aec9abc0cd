"""Periodic functions of the step are exact at any step, in every target (issue 19, item 3).

``cos(pi * t / 7)`` formed in floats carries the rounding of ``pi / 7`` times the step
(2e-5 at step 2**40).  The printers reduce the argument modulo the period in integers
first (``codegen/stable.py``).  Each row is evaluated at steps 2**31 - 1, 2**40 and
10**15 + 3 (and around them) by the Python reference, ``Schedule.torch`` (float64), the
``compile --target torch`` module with its parameters unbound, and JAX with x64, and
compared with the exact value (``fuzzing.exact``: exact rationals, mpmath at 50 digits)
within 1e-12 of the schedule's scale; JAX without x64 (int32 steps, float32 values) at
2**31 - 1 within 4 float32 ulps of the correctly rounded value.
"""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

import mpmath  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
from fuzzing.exact import evaluate  # noqa: E402
from jax_cases import INT32_MAX, x64  # noqa: E402

import schedlang  # noqa: E402
from schedlang.codegen.base import GeneratedModule  # noqa: E402
from schedlang.codegen.emit import module as emit_module  # noqa: E402
from schedlang.codegen.load import load  # noqa: E402

HUGE = [2**31 - 2, 2**31 - 1, 2**40, 2**40 + 1, 10**15 + 3, 10**15 + 10]

#: (program, scale): every kind of period: a constant one, one of a parameter, cycles.
ROWS = [
    ("schedule lr = cos(pi * t / 7)", 1.0),
    ("schedule lr = sin(pi * t / 7)", 1.0),
    ("schedule lr = sin(3 * pi * t / 1000003)", 1.0),
    ("schedule lr = tan(pi * t / 9)", 6.0),
    ("schedule lr = 0.5 + 0.25 * cos(2 * pi * (t + 3) / 9)", 0.75),
    ("param total: int = 7 where total > 0\nschedule lr = cos(pi * t / total)", 1.0),
    ("param total: int = 7 where total > 0\nschedule lr = cosine_restarts(1, 0.1, total)", 1.0),
    ("schedule lr = cosine_restarts(1e-3, 1e-5, 1000)", 1e-3),
    ("schedule lr = cycle(cosine(1, 0, 7))", 1.0),
    ("schedule lr = cycle(warmup(linear, 3) >> cosine(1, 0.1, 11))", 1.0),
    ("param n: int = 13 where n > 0\nschedule lr = cycle(linear(0, 1, 4) >> cosine(1, 0, n))", 1.0),
    ("schedule lr = constant(1, 5) >> stretch(cycle(cosine(1, 0, 7)), 3)", 1.0),
    ('schedule lr = cyclic(0.1, 1, 4, 6, mode="triangular")', 1.0),
]


def _exact(schedule, step):
    value = evaluate(schedule.expr, step)[0]
    if hasattr(value, "numerator"):
        return mpmath.mpf(value.numerator) / value.denominator
    return mpmath.mpf(value)


def _assert_close(got, schedule, steps, scale, label):
    for step, value in zip(steps, got):
        error = abs(mpmath.mpf(value) - _exact(schedule, step))
        assert error <= 1e-12 * scale, f"{label} at step {step}: {value!r}, off by {float(error):.3g}"


@pytest.mark.parametrize("source, scale", ROWS, ids=[r[0].split("= ")[-1] for r in ROWS])
def test_python_and_torch_exact_at_huge_steps(source, scale):
    schedule = schedlang.compile(source)["lr"]
    _assert_close([schedule(s) for s in HUGE], schedule, HUGE, scale, "python")
    _assert_close(schedule.torch(torch.tensor(HUGE)).tolist(), schedule, HUGE, scale, "torch")
    program = schedule.program
    module = load(GeneratedModule(emit_module(program, "torch", "x.sched").code, {}),
                  "schedlang_periodic_test")
    unbound = module.SCHEDULES["lr"](torch.tensor(HUGE))  # parameters as function arguments
    _assert_close(unbound.tolist(), schedule, HUGE, scale, "torch module")


@pytest.mark.parametrize("source, scale", ROWS, ids=[r[0].split("= ")[-1] for r in ROWS])
def test_jax_exact_at_huge_steps(source, scale):
    pytest.importorskip("jax")
    schedule = schedlang.compile(source)["lr"]
    steps = HUGE
    with x64(True):
        _assert_close(np.asarray(schedule.jax(steps)).tolist(), schedule, steps, scale, "jax x64")
    with x64(False):  # int32 steps, float32 values: the correctly rounded value, within 4 ulps
        steps = [s for s in HUGE if s <= INT32_MAX]
        for step, value in zip(steps, np.asarray(schedule.jax(steps)).tolist()):
            exact = float(_exact(schedule, step))
            ulp = float(np.spacing(np.float32(abs(exact))))
            assert abs(value - exact) <= 4 * ulp + 1e-7 * scale * (abs(exact) < 1e-7 * scale), \
                f"jax int32 at step {step}: {value!r}, exact {exact!r}"


def test_the_issue_example():
    """``cos(pi * t / 7)`` at step 2**40 is 0.6234898 (it was 0.6235048), at 10**15 + 3 -0.6235."""
    schedule = schedlang.compile("schedule lr = cos(pi * t / 7)")["lr"]
    assert schedule(2**40) == pytest.approx(0.6234898018587336, rel=1e-15)
    assert schedule(10**15 + 3) == pytest.approx(-0.6234898018587336, rel=1e-15)
    assert schedule.torch(torch.tensor([2**40]), dtype=torch.float32).item() == np.float32(0.6234898018587336)
