"""Benchmarks of schedules on the token clock (run on demand: ``python benchmarks/bench_clock.py``).

The same lr schedule (a 2000-step warmup, a constant phase and a cosine, the phases given in
tokens) is compiled twice: once on a constant batch and once under a 6-stage batch ramp
(DeepSeek-V3-like, the token segments then meet several batch stages). Measured in one run,
as ratios of the ramp's cost to the constant batch's:

1. ``schedlang.compile`` + ``check``'s work (``Program`` construction) of the file;
2. ``compile --target torch`` text generation;
3. per-step cost of the eager scheduler class (``scheduler.step()``);
4. ``Schedule.torch`` over 1M steps (vectorised, float64);
5. a ``torch.compile``d step of the scheduler class (inductor), counting recompiles.

Not collected by pytest (the file name does not start with test_).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import schedlang  # noqa: E402
from schedlang.codegen.emit import emit  # noqa: E402

BODY = """
param seq_len: int = 4096
{batch}
schedule lr = warmup(linear, 2000) >> constant(2.2e-4, 10e12tok)
           >> cosine(2.2e-4, 2.2e-5, 4.3e12tok) >> constant(2.2e-5)
"""
CONSTANT = BODY.format(batch="batch = 15360")
RAMP = BODY.format(batch="batch = stages(3072, [4096, 6144, 8192, 12288, 15360], "
                         "[50e9tok, 100e9tok, 200e9tok, 300e9tok, 469e9tok])")


def median(function, repeats: int = 7) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def per_step(source: str, steps: int = 20_000) -> float:
    cls = schedlang.compile(source).scheduler_class("Bench")
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(2))], lr=0.1)
    sched = cls(opt)

    def run():
        for _ in range(steps):
            sched.step()
    return median(run, 3) / steps


def compiled_step(source: str, steps: int = 200) -> tuple[float, int]:
    cls = schedlang.compile(source).scheduler_class("Bench")
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(2))], lr=torch.tensor(0.1, dtype=torch.float64))
    sched = cls(opt)
    torch._dynamo.reset()
    counter = torch._dynamo.utils.counters
    counter.clear()
    step = torch.compile(sched.step, backend="inductor", fullgraph=True)
    step()  # compile
    start = time.perf_counter()
    for _ in range(steps):
        step()
    elapsed = (time.perf_counter() - start) / steps
    return elapsed, int(counter["stats"]["unique_graphs"])


def main() -> None:
    rows = []
    compile_ramp = median(lambda: schedlang.compile(RAMP))
    compile_const = median(lambda: schedlang.compile(CONSTANT))
    rows.append(("compile + check", compile_ramp, compile_const))
    emit_ramp = median(lambda: emit(schedlang.compile(RAMP), "torch", "bench"))
    emit_const = median(lambda: emit(schedlang.compile(CONSTANT), "torch", "bench"))
    rows.append(("compile --target torch", emit_ramp, emit_const))
    rows.append(("eager scheduler.step()", per_step(RAMP), per_step(CONSTANT)))
    steps = torch.arange(1_000_000, dtype=torch.int64)
    ramp_lr, const_lr = schedlang.compile(RAMP)["lr"], schedlang.compile(CONSTANT)["lr"]
    ramp_lr.torch(steps)
    const_lr.torch(steps)
    rows.append(("Schedule.torch, 1M steps", median(lambda: ramp_lr.torch(steps)),
                 median(lambda: const_lr.torch(steps))))
    (ramp_step, ramp_graphs), (const_step, const_graphs) = compiled_step(RAMP), compiled_step(CONSTANT)
    rows.append(("inductor scheduler.step()", ramp_step, const_step))
    print(f"{'what':28} {'6-stage ramp':>14} {'constant':>14} {'ratio':>7}")
    for name, a, b in rows:
        print(f"{name:28} {a * 1e3:12.3f}ms {b * 1e3:12.3f}ms {a / b:7.2f}")
    print(f"graphs compiled for 200 steps: ramp {ramp_graphs}, constant {const_graphs}")


if __name__ == "__main__":
    main()
