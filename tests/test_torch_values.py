"""The torch code gives the plain-Python reference's values, at boundaries and up to 2**40."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from torch_cases import STDLIB_CASES, all_programs, interesting_steps  # noqa: E402

import schedlang  # noqa: E402
from schedlang.codegen.torch import TorchPrinter  # noqa: E402
from schedlang.core.special import restart_index, restart_index_int  # noqa: E402
from schedlang.library import stdlib  # noqa: E402

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


class _AllFinite(torch.utils._python_dispatch.TorchDispatchMode):
    """Fails on the first op whose floating-point output holds inf or NaN."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if isinstance(out, torch.Tensor) and out.dtype.is_floating_point:
            assert torch.isfinite(out).all(), f"{func} made a non-finite value"
        return out


@pytest.mark.parametrize("pid, program", PROGRAMS, ids=[p for p, _ in PROGRAMS])
def test_no_intermediate_is_ever_non_finite(pid, program):
    # Every branch of a where runs: exp far past the end, sqrt(n/t) at t = 0 and
    # the like must be clamped away, not merely discarded by the where.
    for schedule in program:
        steps = torch.tensor(interesting_steps(schedule) + [2**62])
        function = schedule.torch  # generated and cached outside the mode
        function(steps[:1])
        with _AllFinite():
            function(steps)


def test_hazards_are_clamped():
    from schedlang.codegen.emit import module

    program = schedlang.compile(
        "schedule a = warmup(exp, 10, start=1e-6) >> linear(1, 0, 10)\n"
        "schedule b = inverse_sqrt(1e-3, 100)\n")
    source = module(program, "torch", "x.sched", bind_all=True).code
    # one clamp when both bounds are numbers (issue 31), two one-sided ones otherwise
    assert "0.0, 9.0)" in source or "max=9.0" in source
    # inverse_sqrt's branch from step 100 on runs in its local step t - 100, clamped at 0
    assert "(t - (100))" in source and "min=0.0)" in source
    steps = torch.tensor([0, 5, 15, 25, 2**62])
    with _AllFinite():
        for schedule in program:
            schedule.torch(steps)


@pytest.mark.parametrize("first, mult", [(10, 2), (3, 3), (7, 5)])
def test_restart_index_exact_at_every_cycle_start(first, mult):
    lr = schedlang.compile(f"cosine_restarts(1, 0.1, {first}, mult={mult})")["lr"]
    steps, index = [], 0
    while True:
        start = first * (mult**index - 1) // (mult - 1)
        if start > 2**42:
            break
        steps += [s for s in (start - 1, start, start + 1) if s >= 0]
        index += 1
    got = lr.torch(torch.tensor(steps)).tolist()
    for step, value in zip(steps, got):
        assert value == pytest.approx(lr(step), rel=1e-12, abs=1e-13), step
    # The index itself, straight from the printed integer code.
    printer = TorchPrinter()
    code = printer.int_code(restart_index(schedlang.t, first, mult))
    namespace = {"torch": torch}
    body = "\n".join(["_dev = t.device", "_compute = torch.float64", *printer.lines, f"out = {code}"])
    namespace["t"] = torch.tensor(steps)
    exec(body, namespace)  # printer output only
    assert namespace["out"].tolist() == [restart_index_int(s, first, mult) for s in steps]



PARAM_CASES = [
    ("param w: int = 10\nparam p: int = 7\nschedule lr = warmup(linear, w) >> "
     "cosine_restarts(1, 0.1, p, mult=2)", {"w": 13, "p": 5}),
    ("param a: int = 30\nparam b: int = 60\nschedule lr = multistep(0.1, 0.5, [a, b])", {"a": 70}),
    ("param s: float = 2.5\nschedule lr = stretch(cosine(1, 0, 10), s) >> constant(0.5)", {"s": 4}),
    ("param k: int = 5\nparam lo: float = 0.1\nschedule lr = clamp(t / k, lo, 1) + floor(t / k) * 0.01",
     {"k": 9, "lo": 0.2}),
    ("param n: int = 7\nparam g: float = 0.9\nschedule lr = exp(1, g, n, staircase=true)", {"g": 0.5}),
    ("param n: int = 4\nparam lo: float = 0.1\n"
     'schedule lr = cyclic(lo, 1, n, mode="triangular2")', {"n": 6}),
    ("param n: int = 400\nparam v: float = 1e-3\nschedule lr = inverse_sqrt(v, n)", {"n": 3}),
    ("param c: float = 29.5\nschedule lr = if t <= c then exp(floor(t / 3)) else 1", {"c": 12.25}),
    ("param pct: float = 0.3\nparam n: int = 100\nschedule lr = onecycle(1.0, n, pct_start=pct)",
     {"pct": 0.25, "n": 80}),
]


@pytest.mark.parametrize("source, override", PARAM_CASES, ids=[str(i) for i in range(len(PARAM_CASES))])
def test_parameters_stay_arguments(source, override):
    """Emitted functions take the parameters as arguments; any binding gives the reference."""
    from schedlang.codegen.base import GeneratedModule
    from schedlang.codegen.emit import emit
    from schedlang.codegen.load import load

    module = load(GeneratedModule(emit(schedlang.compile(source), "torch", "p.sched"), {}))
    for given in ({}, override):
        reference = schedlang.compile(source, params=given)["lr"]
        steps = interesting_steps(reference, count=10) + list(range(0, 120, 3))
        got = module.lr(torch.tensor(steps), **given).tolist()
        for step, g, w in zip(steps, got, reference.values(steps)):
            assert g == pytest.approx(w, rel=1e-12, abs=1e-12), (step, given)
        with _AllFinite():
            module.lr(torch.tensor(steps + [2**62]), **given)


def test_no_dead_statements():
    """Every intermediate the printer names is used: no wasted op per call."""
    import re

    from schedlang.codegen.emit import module

    for pid, program in PROGRAMS:
        source = module(program, "torch", "x.sched", bind_all=True).code
        for name in set(re.findall(r"(_v\d+) = ", source)):
            assert len(re.findall(rf"\b{name}\b", source)) >= 2, (pid, name)


def test_unbound_parameter_is_a_schedlang_error():
    lr = schedlang.compile("param total: int\nschedule lr = linear(1, 0, total)")["lr"]
    with pytest.raises(schedlang.SchedlangError, match="needs a value for parameter 'total'"):
        lr.torch([0, 1])
