"""The torch code gives the plain-Python reference's values, at boundaries and up to 2**40."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from torch_cases import STDLIB_CASES, all_programs, interesting_steps  # noqa: E402

import schedlang  # noqa: E402
from schedlang import stdlib  # noqa: E402

PROGRAMS = all_programs()
SCHEDULES = [(f"{pid}:{s.name}", s) for pid, program in PROGRAMS for s in program]


def test_every_stdlib_schedule_has_a_case():
    assert set(STDLIB_CASES) == set(stdlib.SCHEDULES)


@pytest.mark.parametrize("schedule", [s for _, s in SCHEDULES], ids=[i for i, _ in SCHEDULES])
def test_float64_matches_reference(schedule):
    steps = interesting_steps(schedule)
    got = schedule.torch(torch.tensor(steps)).tolist()
    want = schedule.values(steps)
    scale = max(abs(v) for v in want) or 1.0
    for step, g, w in zip(steps, got, want):
        assert math.isfinite(g), (step, g)
        assert g == pytest.approx(w, rel=1e-12, abs=1e-12 * scale), step


@pytest.mark.parametrize("schedule", [s for _, s in SCHEDULES], ids=[i for i, _ in SCHEDULES])
def test_float32_at_int32_max(schedule):
    step = 2**31 - 1
    got = schedule.torch(torch.tensor([step]), dtype=torch.float32)
    want = torch.tensor([schedule(step)], dtype=torch.float64).to(torch.float32)
    assert got.dtype == torch.float32
    assert torch.equal(got, want)


def test_shape_device_and_sequences():
    lr = schedlang.compile("warmup(linear, 500) >> cosine(0.001, 1e-4, 500)")["lr"]
    steps = torch.arange(12, dtype=torch.int32).reshape(3, 4) * 100
    out = lr.torch(steps)
    assert out.shape == (3, 4) and out.device == steps.device and out.dtype == torch.float64
    assert lr.torch([0, 250, 500]).tolist() == pytest.approx([0.0, 5e-4, 1e-3], rel=1e-15)
    assert lr.torch(torch.tensor(250)).shape == ()
    constant = schedlang.compile("constant(0.1)")["lr"]
    assert constant.torch(steps).shape == (3, 4)


def test_float_steps_are_refused():
    lr = schedlang.compile("linear(1, 0, 10)")["lr"]
    with pytest.raises(schedlang.SchedlangError):
        lr.torch(torch.tensor([0.5]))


def test_unused_branches_stay_finite():
    # exp far past the end, sqrt(n/t) at t = 0, cos of huge arguments: all clamped.
    program = schedlang.compile(
        "schedule a = warmup(exp, 10, start=1e-6) >> linear(1, 0, 10)\n"
        "schedule b = inverse_sqrt(1e-3, 100)\n"
        "schedule c = warmup(linear, 10) >> cosine(1, 0, 10)\n")
    steps = torch.tensor([0, 5, 15, 25, 2**62])
    for schedule in program:
        values = schedule.torch(steps)
        assert torch.isfinite(values).all()
