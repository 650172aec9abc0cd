"""The array targets read a count of samples or tokens from one table of stages (issue 39
item 13): ``torch.searchsorted`` / ``jnp.searchsorted`` over the stages' first steps, then the
stage's linear formula in integers, as the reference's ``_count`` does.

A branch per stage made a 1,000-stage Megatron ramp's torch class take 14 s to build and its
call 34 ms (``benchmarks/bench_batch_stages.py``, ``benchmarks/SPEED.md``).  Here: the values
of a 1,000-stage ramp under a cosine in tokens at every step, across every stage boundary, in
torch eager (the same bits as the reference, float64 and float32), ``torch.compile`` with
``fullgraph=True`` (aot_eager: the same bits, one compilation, no graph break; inductor: within
a bound), JAX under ``jit`` with x64 and with its default int32 (which refuses, clearly, a
count it cannot hold), the table made on the scheduler class's devices when it is built (a
CUDA graph capture cannot copy it there), and a generated function whose size does not grow
with the stages.
"""

from __future__ import annotations

import math
import sys
import time

import pytest

torch = pytest.importorskip("torch")

import sympy as sp  # noqa: E402
from helpers import Counting  # noqa: E402
from torch._dynamo.utils import counters  # noqa: E402

import schedlang  # noqa: E402
from schedlang.codegen.emit import emit  # noqa: E402
from schedlang.core.algebra import t  # noqa: E402
from schedlang.runtime.arrays import function, generated_module  # noqa: E402

STAGES = 1000


def ramp(n: int, cosine: str = "50e6tok") -> str:
    """A Megatron ramp of ``n`` increments of 1 sample, each lasting ``10 (n + 1)`` samples (every
    increment a stage of its own), under a warmup and a cosine whose length is in tokens."""
    return (f"param seq_len: int = 4\n"
            f"batch = megatron.rampup_batch_size(1, 1, {n * 10 * (n + 1)}, global_batch_size={n + 1})\n"
            f"schedule lr = warmup(linear, 100) >> cosine(1e-3, 1e-4, {cosine}) >> constant(1e-4)\n")


@pytest.fixture(scope="module")
def program():
    return schedlang.compile(ramp(STAGES))


@pytest.fixture(scope="module")
def steps(program):
    """Every step from 0 to past the cosine's end: every stage boundary and both its sides."""
    end = program.step_at(tokens=50_000_000 + 0) + 100
    assert end > program.clock.stages[-1].first  # the cosine spans the whole ramp
    return list(range(end))


@pytest.fixture(scope="module")
def reference(program, steps):
    return program["lr"].values(steps)


def test_the_ramp_has_a_stage_per_increment(program):
    assert len(program.clock.stages) == STAGES + 1


def exact(program, step: int) -> float:
    """The float64 nearest the exact value at ``step`` (sympy: the count exact, the cosine at
    30 digits)."""
    return float(sp.N(program["lr"].expr.xreplace({t: step}), 30))


def ulps(value: float, want: float) -> float:
    return abs(value - want) / math.ulp(want) if want else abs(value)


#: The schedule's peak: a sine's rounding error (an ulp of the sine) reaches the value scaled
#: by ``a sin(x)``, so it is bounded in ulps of the peak ``a + b``, not of the value.
PEAK = 1e-3


def same_but_the_sine(program, steps, got, reference):
    """``got`` is the reference's arithmetic: the same bits, except where the sine's last bit
    differs (torch's vectorized ``sin`` against libm's ``math.sin``): there both are within 2
    ulps of the peak of the exact value, and such steps are rare."""
    differing = [(k, g, r) for k, g, r in zip(steps, got, reference) if g != r]
    assert len(differing) <= len(steps) // 1000, len(differing)
    for k, g, r in differing:
        want = exact(program, k)
        assert abs(g - want) <= 2 * math.ulp(PEAK) and abs(r - want) <= 2 * math.ulp(PEAK), (k, g, r, want)


def test_torch_counts_are_the_clock_exactly(program, steps):
    """The int64 count ``_count_tensor`` reads from the table is the clock's, at every step."""
    module = generated_module(program, "torch")
    (table,) = [value for name, value in vars(module).items() if name.startswith("_T_")]
    want = [program.tokens_at(k) for k in steps]
    for dtype in (torch.int64, torch.int32):  # the steps' type: any integer type
        got = module._count_tensor(torch.tensor(steps, dtype=dtype), table, torch.device("cpu"))
        assert got.tolist() == want


def test_torch_eager_is_the_reference(program, steps, reference):
    lr = program["lr"]
    at = torch.tensor(steps)
    got = lr.torch(at, dtype=torch.float64)
    same_but_the_sine(program, steps, got.tolist(), reference)
    assert torch.equal(lr.torch(at, dtype=torch.float32), got.to(torch.float32))  # rounded once


def test_torch_float32_compute_stays_close(program, steps, reference):
    """In float32 arithmetic (the Cerebras class's): the count and the cosine's phase are whole
    numbers, reduced in int64 before any float, so the error is float32's few roundings."""
    generated = function(program["lr"], "torch")
    got = generated(torch.tensor(steps), _dtype=torch.float32, _compute=torch.float32).tolist()
    worst = max(abs(g - r) / math.ulp(r) for g, r in zip(got, reference) if r) * 2.0**-29
    assert worst <= 4, worst  # in float32 ulps


def test_the_generated_function_does_not_grow_with_the_stages(program):
    small = schedlang.compile(ramp(10))
    lines = [len(emit(p, "torch", "ramp.sched").split("\ndef lr(")[1].split("\n\n\n")[0].splitlines())
             for p in (small, program)]
    assert lines[0] == lines[1] < 20, lines


def test_the_class_builds_in_bounded_time():
    """Generously bounded (14 s before, under 0.1 s quiet; the ratios are benchmarks/')."""
    start = time.process_time()
    schedlang.compile(ramp(STAGES, cosine="51e6tok")).scheduler_class("Ramp")
    assert time.process_time() - start < 10


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_torch_compile_fullgraph(backend, program, steps, reference):
    torch._dynamo.reset()
    counters.clear()
    generated = function(program["lr"], "torch")
    counting = Counting(backend)
    compiled = torch.compile(generated, fullgraph=True, backend=counting, dynamic=False)
    at = torch.tensor(steps)
    for shift in (0, 1, 2):  # new values, the same shape: compiled once
        got = compiled(at + shift)
        if shift == 0:
            first = got.tolist()
    assert counting.compiles == 1
    assert sum(counters["graph_break"].values()) == 0
    eager = generated(at).tolist()
    if backend == "aot_eager":  # the eager kernels
        assert first == eager
    else:  # inductor's own kernels (vectorized, fused): within an ulp or two of eager's
        assert max(ulps(g, e) for g, e in zip(first, eager)) <= 2
    torch._dynamo.reset()


def test_the_class_makes_the_table_on_its_devices_when_built(program):
    """A tensor lr's device gets its table in the constructor, not on the first step (which may
    be inside a CUDA graph capture, where a copy to the device cannot be captured)."""
    cls = program.scheduler_class("Ramp")
    tables = cls.step.__globals__["_COUNT_TABLES"]
    tables.clear()
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(2))],
                                lr=torch.tensor(0.0, dtype=torch.float64))
    scheduler = cls(optimizer)
    assert len(cls.COUNT_TABLES) == 1
    assert set(tables) == {(id(cls.COUNT_TABLES[0]), torch.device("cpu"))}
    seen = []
    for _ in range(3000):
        seen.append(float(optimizer.param_groups[0]["lr"]))
        scheduler.step()
    assert seen == program["lr"].values(range(3000))


def test_a_compiled_class_step_reads_the_table(program):
    torch._dynamo.reset()
    counters.clear()
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(2))],
                                lr=torch.tensor(0.0, dtype=torch.float64))
    scheduler = program.scheduler_class("Ramp")(optimizer)
    counting = Counting("aot_eager")
    compiled = torch.compile(scheduler.step, fullgraph=True, backend=counting)
    start = program.clock.stages[500].first - 20  # across a boundary, compiled
    scheduler.last_epoch = start
    seen = []
    for _ in range(40):
        compiled()
        seen.append(float(optimizer.param_groups[0]["lr"]))
    assert seen == program["lr"].torch(torch.arange(start + 1, start + 41)).tolist()  # its torch code
    assert counting.compiles <= 2 and sum(counters["graph_break"].values()) == 0  # once, or a dynamic shape
    torch._dynamo.reset()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="a CUDA graph capture needs CUDA")
def test_a_cuda_graph_capture_of_the_class_step(program):
    device = torch.device("cuda")
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(2, device=device))],
                                lr=torch.tensor(0.0, dtype=torch.float64, device=device))
    scheduler = program.scheduler_class("Ramp")(optimizer)
    start = program.clock.stages[500].first - 20
    scheduler.last_epoch = start
    graph = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side), torch.cuda.graph(graph):
        scheduler.step()
    torch.cuda.current_stream().wait_stream(side)
    seen = []
    for _ in range(40):
        graph.replay()
        seen.append(float(optimizer.param_groups[0]["lr"]))
    want = [exact(program, k) for k in range(start + 1, start + 41)]
    assert max(abs(g - w) for g, w in zip(seen, want)) <= 2 * math.ulp(PEAK)


# -- JAX ------------------------------------------------------------------------------------

def _jax():
    jax = pytest.importorskip("jax")
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
    from jax_cases import x64
    return jax, x64


def test_jax_jit_x64(program, steps, reference):
    jax, x64 = _jax()
    with x64(True):
        got = jax.jit(function(program["lr"], "jax"))(jax.numpy.asarray(steps)).tolist()
    assert max(abs(g - r) / math.ulp(r) for g, r in zip(got, reference) if r) <= 2


def test_jax_int32_where_the_counts_fit(program, steps, reference):
    """JAX's default int32 steps: the ramp's 50M tokens fit, so it runs (float32 values)."""
    jax, x64 = _jax()
    with x64(False):
        got = jax.jit(function(program["lr"], "jax"))(jax.numpy.asarray(steps + [2**31 - 1])).tolist()
    assert got[-1] == pytest.approx(1e-4, rel=1e-7)
    assert got[:-1] == pytest.approx(reference, rel=1e-6, abs=1e-10)


def test_jax_int32_refuses_a_count_it_cannot_hold():
    """A cosine over 1e12 tokens reads counts past 2**31: a clear error, never a wrapped count;
    with x64 the same function runs."""
    jax, x64 = _jax()
    lr = schedlang.compile(ramp(10, cosine="1e12tok"))["lr"]
    with x64(False), pytest.raises(OverflowError, match="enable jax_enable_x64"):
        function(lr, "jax")(jax.numpy.arange(10))
    with x64(True):
        assert function(lr, "jax")(jax.numpy.arange(3000)).tolist() == \
            pytest.approx(lr.values(range(3000)), rel=1e-15)
