"""``Schedule.jax`` under ``jax.jit`` gives the Python reference's values.

Default JAX (int32 steps, float32 values): every example and standard-library
case at its boundaries +-2, random steps, 2**24 +- 1 and 2**31 - 1, within
1e-6 of the schedule's peak; integer-valued schedules built to overflow int32
intermediates (``t + 1``, ``3 t``, boundaries past 2**31) exactly.  With
``jax_enable_x64`` (int64, float64): the same cases up to 2**40 at 1e-12.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from jax_cases import INT32_MAX, float32, int32_steps, x64  # noqa: E402
from torch_cases import all_programs, interesting_steps  # noqa: E402

import schedlang  # noqa: E402
from schedlang.codegen.base import GeneratedModule  # noqa: E402
from schedlang.codegen.emit import emit  # noqa: E402
from schedlang.codegen.load import load  # noqa: E402

PROGRAMS = all_programs()
SCHEDULES = [(f"{pid}:{s.name}", s) for pid, program in PROGRAMS for s in program]
IDS = [i for i, _ in SCHEDULES]


def _check(schedule, steps, got, rel):
    want = schedule.values(steps)
    scale = max(abs(v) for v in want) or 1.0
    for step, g, w in zip(steps, got, want):
        assert math.isfinite(g), (step, g)
        assert abs(g - w) <= rel * scale, (step, g, w)


@pytest.mark.parametrize("schedule", [s for _, s in SCHEDULES], ids=IDS)
def test_int32_float32_matches_reference(schedule):
    steps = int32_steps(interesting_steps(schedule))
    with x64(False):
        out = schedule.jax(steps)
        assert out.dtype == jnp.float32
        _check(schedule, steps, np.asarray(out, dtype=np.float64).tolist(), rel=1e-6)


@pytest.mark.parametrize("schedule", [s for _, s in SCHEDULES], ids=IDS)
def test_x64_matches_reference(schedule):
    steps = interesting_steps(schedule)
    with x64(True):
        out = schedule.jax(steps)
        assert out.dtype == jnp.float64
        _check(schedule, steps, np.asarray(out).tolist(), rel=1e-12)


#: Integer-valued schedules whose int32 intermediates would wrap near 2**31 - 1, or whose
#: constants int32 cannot hold: float32 of the exact whole value is the only right answer.
OVERFLOW = [
    "floor((t + 1) / 50)",
    "floor((t + 2000000000) / 7)",
    "ceil(t / 3)",
    "floor(3 * t / 7)",
    "floor((t - 5) / 4)",
    "if t < 2147483647 then 1 else 2",
    "if t <= 2147483646 then 1 else 2",
    "if 2 * t < 4294967295 then 1 else 2",
    "if t + 10 < 2147483650 then 1 else 2",
    "if 3 * t >= 6442450941 then 1 else 2",
    "if t == 2147483647 then 1 else 2",
    "if t / 2 < 1073741823.5 then 1 else 2",
    "constant(1, 2147483647) >> constant(2)",
    "constant(1, 3000000000) >> linear(5, 0, 10)",
    "min(t, 3000000000) - t + 1",
    "optax.exponential_decay(init_value=1, transition_steps=50, decay_rate=0.5, staircase=true, "
    "transition_begin=1)",
    "cycle(step(1, 2, 3) for 9) + floor(t / 1000)",
    "stretch(cycle(constant(1, 4) >> constant(2, 3)), 3)",
]
EDGES = [0, 1, 2, 3, 49, 50, 2**24 - 1, 2**24, 2**24 + 1, 2**30, 2**31 - 51, 2**31 - 50, 2**31 - 8,
         2**31 - 7, 2**31 - 3, 2**31 - 2, INT32_MAX]


@pytest.mark.parametrize("source", OVERFLOW)
def test_int32_overflow_cases_exact(source):
    lr = schedlang.compile(source)["lr"]
    steps = sorted(set(EDGES) | set(int32_steps(interesting_steps(lr))))
    want = [float32(v) for v in lr.values(steps)]
    with x64(False):
        got = np.asarray(lr.jax(steps), dtype=np.float64).tolist()
    assert got == want, [(s, g, w) for s, g, w in zip(steps, got, want) if g != w][:5]


def test_restart_index_at_int32_max():
    # 1000 * (2**21 - 1) < 2**31 - 1 < 1000 * (2**22 - 1): cycle 21, no power overflows.
    lr = schedlang.compile("cosine_restarts(1, 0, 1000, mult=2)")["lr"]
    starts = [1000 * (2**i - 1) for i in range(1, 22)]
    steps = sorted({s + d for s in starts for d in (-1, 0, 1)} | {INT32_MAX})
    with x64(False):
        got = np.asarray(lr.jax(steps), dtype=np.float64)
    want = np.array(lr.values(steps))
    assert np.all(np.abs(got - want) <= 1e-6)
    assert [g for s, g in zip(steps, got) if s in starts] == [1.0] * len(starts)  # each cycle restarts


def test_wide_constants_need_x64():
    lr = schedlang.compile("floor(t / 3000000000) + 1")["lr"]
    with x64(False), pytest.raises(OverflowError, match="jax_enable_x64"):
        lr.jax([0])
    with x64(True):
        assert np.asarray(lr.jax([0, 2999999999, 3000000000, 2**40])).tolist() == [1, 1, 2, 367]


def test_steps_checked_on_the_host():
    lr = schedlang.compile("linear(1, 0, 10)")["lr"]
    with x64(False):
        with pytest.raises(schedlang.SchedlangError, match="jax_enable_x64"):
            lr.jax([2**31])
        with pytest.raises(schedlang.SchedlangError, match="whole numbers"):
            lr.jax([0.5])
        with pytest.raises(schedlang.SchedlangError, match="whole numbers"):
            lr.jax(jnp.asarray([0.5]))
        assert lr.jax([2.0, 5]).tolist() == [0.800000011920929, 0.5]
    with x64(True):
        assert lr.jax([2**40]).tolist() == [0.0]


def test_shape_dtype_and_scalars():
    lr = schedlang.compile("warmup(linear, 500) >> cosine(0.001, 1e-4, 500)")["lr"]
    with x64(False):
        steps = jnp.arange(12, dtype=jnp.int32).reshape(3, 4) * 100
        out = lr.jax(steps)
        assert out.shape == (3, 4) and out.dtype == jnp.float32
        assert lr.jax(250).shape == ()
        assert lr.jax([250], dtype=jnp.bfloat16).dtype == jnp.bfloat16
        constant = schedlang.compile("constant(0.1)")["lr"]
        assert constant.jax(steps).shape == (3, 4)


def test_one_trace_for_every_step():
    """jit-safe: one compilation serves every step, the step is never a Python decision."""
    program = schedlang.load(schedlang_example("sgdr.sched"))
    module = load(GeneratedModule(emit(program, "jax", "sgdr.sched"), {}), "sgdr_jax")
    traces = []

    def traced(step):
        traces.append(1)
        return module.lr(step)

    fn = jax.jit(traced)
    with x64(False):
        values = [float(fn(jnp.int32(s))) for s in (0, 999, 1000, 2999, 3000, 10**9)]
    assert len(traces) == 1
    want = program["lr"].values([0, 999, 1000, 2999, 3000, 10**9])
    assert values == pytest.approx(want, rel=0, abs=1e-6 * max(want))


def schedlang_example(name):
    from torch_cases import ROOT

    return ROOT / "examples" / name


@pytest.mark.parametrize("pid, program", PROGRAMS, ids=[p for p, _ in PROGRAMS])
def test_no_intermediate_is_ever_non_finite(pid, program):
    """Every branch of a where runs: each must be clamped into its segment, not merely discarded.

    ``jax_debug_infs``/``jax_debug_nans`` with jit disabled check every primitive's output.
    Only the x64 run: in float32 a value past 3.4e38 (``exp(1, 2, 10)`` at step 1300) is
    legitimately inf, and the Python reference says so too.
    """
    with x64(True), jax.disable_jit():
        for schedule in program:
            steps = jnp.asarray(interesting_steps(schedule) + [2**62], dtype=jnp.int64)
            with jax.debug_infs(True), jax.debug_nans(True):
                schedule.jax(steps)
