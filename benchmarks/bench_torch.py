"""Benchmarks of the torch backend (run on demand: ``python benchmarks/bench_torch.py``).

1. Per-step cost of a generated scheduler class (float lr: plain-Python values,
   no torch op) against torch's own ``SequentialLR(LinearLR, CosineAnnealingLR)``
   for the same warmup + cosine, and against ``LambdaLR`` with a Python lambda.
   The tensor-lr class is compared with the same ``SequentialLR`` on a tensor lr.
2. Vectorised evaluation of 1M steps with the generated branch-free code against
   a hand-written ``torch.where`` expression of the same schedule.
3. ``schedlang.compile`` of chains of 10, 100 and 1000 ``linear`` segments, written as one
   ``>>`` chain and as chained ``let``s: seconds per segment, relative to 10 segments
   (1.0 means linear-time compilation).

Ratios are measured in the same run, so they compare like with like on any
machine.  Not collected by pytest (the file name does not start with test_).
"""

from __future__ import annotations

import math
import statistics
import sys
import time
import warnings
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import schedlang  # noqa: E402
from schedlang.runtime.arrays import function  # noqa: E402

WARMUP, DECAY, PEAK, FLOOR = 500, 500, 1e-3, 1e-4
SOURCE = f"warmup(linear, {WARMUP}) >> cosine({PEAK}, {FLOOR}, {DECAY})"


def per_step(make, steps: int = 20_000, repeats: int = 5) -> float:
    """Median seconds per ``scheduler.step()`` over ``repeats`` runs of ``steps`` calls."""
    times = []
    for _ in range(repeats):
        optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=PEAK)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scheduler = make(optimizer)
            step = scheduler.step
            start = time.perf_counter()
            for _ in range(steps):
                step()
            times.append((time.perf_counter() - start) / steps)
    return statistics.median(times)


def torch_sequential(optimizer):
    warm = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=1e-8, end_factor=1.0,
                                             total_iters=WARMUP)
    cos = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=DECAY, eta_min=FLOOR)
    return torch.optim.lr_scheduler.SequentialLR(optimizer, [warm, cos], milestones=[WARMUP])


def torch_lambda(optimizer):
    def factor(t):
        if t < WARMUP:
            return t / WARMUP
        if t < WARMUP + DECAY:
            return (FLOOR + (PEAK - FLOOR) * (1 + math.cos(math.pi * (t - WARMUP) / DECAY)) / 2) / PEAK
        return FLOOR / PEAK
    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def hand_written(t: torch.Tensor) -> torch.Tensor:
    tf = t.to(torch.float64)
    cosine = FLOOR + (PEAK - FLOOR) * 0.5 * (1 + torch.cos(math.pi * (tf - WARMUP) / DECAY))
    return torch.where(t < WARMUP, PEAK * tf / WARMUP,
                       torch.where(t < WARMUP + DECAY, cosine, torch.full_like(tf, FLOOR)))


def vectorised(function, steps: torch.Tensor, repeats: int = 21) -> float:
    function(steps)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function(steps)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    torch.set_num_threads(max(1, torch.get_num_threads()))
    program = schedlang.compile(SOURCE)
    cls = program.scheduler_class("WarmupCosine")

    ours = per_step(cls)
    sequential = per_step(torch_sequential)
    lam = per_step(torch_lambda)
    def with_tensor_lr(make):
        return lambda opt: (opt.param_groups[0].__setitem__("lr", torch.tensor(PEAK)), make(opt))[1]

    tensor_lr = per_step(with_tensor_lr(cls), steps=5_000)
    sequential_tensor = per_step(with_tensor_lr(torch_sequential), steps=5_000)
    print(f"per scheduler.step() (float lr, eager, torch {torch.__version__}, "
          f"{torch.get_num_threads()} threads)")
    print(f"  schedlang class            {ours * 1e6:8.2f} us")
    print(f"  torch SequentialLR         {sequential * 1e6:8.2f} us   ratio ours/torch = "
          f"{ours / sequential:.2f}")
    print(f"  torch LambdaLR (lambda)    {lam * 1e6:8.2f} us   ratio ours/lambda = {ours / lam:.2f}")
    print(f"  schedlang class, tensor lr {tensor_lr * 1e6:8.2f} us   (host value, one write: lr[...] = v)")
    print(f"  torch SequentialLR, tensor {sequential_tensor * 1e6:8.2f} us   ratio ours/torch = "
          f"{tensor_lr / sequential_tensor:.2f}")

    steps = torch.arange(1_000_000, dtype=torch.int64)
    generated = function(program["lr"], "torch")
    assert torch.allclose(generated(steps), hand_written(steps), rtol=1e-12, atol=1e-18)
    ours_v = vectorised(generated, steps)
    hand_v = vectorised(hand_written, steps)
    print("1M steps, float64, vectorised")
    print(f"  schedlang generated        {ours_v * 1e3:8.2f} ms")
    print(f"  hand-written torch.where   {hand_v * 1e3:8.2f} ms   ratio ours/hand = {ours_v / hand_v:.2f}")

    print("schedlang.compile of a >> chain of linear segments")
    per_segment = {}
    for count in (10, 100, 1000):
        source = "schedule lr = " + " >> ".join(["linear(1, 0, 10)"] * count)
        start = time.perf_counter()
        schedlang.compile(source)
        per_segment[count] = (time.perf_counter() - start) / count
        print(f"  {count:5d} segments {per_segment[count] * count:8.3f} s   per segment vs 10: "
              f"{per_segment[count] / per_segment[10]:.2f}")
    print("schedlang.compile of chained lets (let s_i = s_(i-1) >> linear(1, 0, 10))")
    per_let = {}
    for count in (10, 100, 1000):
        lines = ["let s0 = linear(1, 0, 10)"] + [f"let s{i} = s{i - 1} >> linear(1, 0, 10)"
                                                 for i in range(1, count)]
        source = "\n".join(lines + [f"schedule lr = s{count - 1}"]) + "\n"
        start = time.perf_counter()
        schedlang.compile(source)
        per_let[count] = (time.perf_counter() - start) / count
        print(f"  {count:5d} lets     {per_let[count] * count:8.3f} s   per let vs 10: "
              f"{per_let[count] / per_let[10]:.2f}")


if __name__ == "__main__":
    main()
