"""The cost of a batch schedule's stages (issue 39 item 13; run by hand, not by pytest).

    python benchmarks/bench_batch_stages.py            # 100, 300 and 1,000 stages
    python benchmarks/bench_batch_stages.py --quick    # 100 and 300

A Megatron ramp of ``n`` increments of 1 sample, each lasting 10 * (n + 1) samples, so every
increment is a stage of its own, under a cosine whose length is in tokens.  Times a cold
``schedlang.compile`` and the first value (CPU, ``time.process_time``, sympy's cache cleared,
median of ``--repeats``), the cost per stage and its ratio to the 100-stage ramp's, and with
``--torch`` the torch scheduler class too.  Also times the refusal of the issue's ramp of 10**9
increments (it was built one increment at a time into a MemoryError) and of a 100,000-stage
ramp: both are refused before any entry is computed (``limits.MAX_BATCH_STAGES``).
``bench_scale.py`` compares a 768-stage ramp with a constant batch.  No time is asserted.

Results (2026-12-02, the 2-core machine, loaded, ``--repeats 1 --torch``):

    stages   compile, a branch per stage     compile, T(t) one lookup (core.clock)
       101   0.51 s (5.0 ms a stage)         0.02 s
       301   1.67 s (5.5 ms a stage)         0.02 s
     1,001   6.35 s (6.4 ms a stage, 1.27x)  0.03 s
    torch class at 1,001 stages: 15.3 s before, 13.2 s after (the array targets still
    expand the count into a branch per stage: ``core.clock.expand_counts``)

Results (2026-12-02, the 2-core machine, loaded: load average 9; ``--repeats 1 --torch``),
the torch and JAX code before (a ``where`` branch per stage, ``core.clock.expand_counts``) and
after (one ``searchsorted`` in a table of the stages, ``codegen/counts.py``), 1,001 stages:

    compile and the torch scheduler class     21.5 s        0.06 s
    the torch function (compile, print, load) 15.6 s        0.1 s (1.65 s with import torch)
    torch call at one step (0-d tensor)       85 ms         0.05 ms
    torch call at 100k steps                  55.1 s        0.21 s
    JAX jit call at one step / 100k steps     0.023/1390 ms 0.007/4.9 ms

The per-stage cost grew with the stages (sympy's cache of 1,000 entries thrashes past a
thousand distinct branch formulas), so 100,000 stages was minutes.  With the lookup, a cold
compile of a 100,000-stage ramp takes 1.6 s, but ``check`` prints every stage (12 s with the
report); the array printers now read the table, but the core text (``schedlang show``, the
importers' ``--lower``) and the prover still write a branch per stage, so the limit stays 1,000.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sympy.core.cache import clear_cache  # noqa: E402

import schedlang  # noqa: E402
from schedlang.errors import SchedlangError  # noqa: E402

TEXT = """param seq_len: int = 4
batch = megatron.rampup_batch_size(1, 1, {samples}, global_batch_size={gbs})
schedule lr = cosine(1e-3, 1e-4, 1e12tok)
"""


def ramp(n: int) -> str:
    return TEXT.format(samples=n * 10 * (n + 1), gbs=n + 1)


def timed(function, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        clear_cache()  # cold: sympy's cache would make a repeated compile nearly free
        start = time.process_time()
        function()
        times.append(time.process_time() - start)
    return statistics.median(times)


def refused(text: str) -> float:
    start = time.process_time()
    try:
        schedlang.compile(text)
    except SchedlangError:
        return time.process_time() - start
    raise AssertionError("not refused")


def calls(text: str) -> str:
    """The generated functions' call at one step (a 0-d tensor, as the scheduler class calls it
    on its device counter) and at 100k steps: torch eager, and JAX under ``jit`` when installed
    (median wall time; the first JAX call, its trace and compilation, left out)."""
    import torch

    from schedlang.runtime.arrays import function

    lr = schedlang.compile(text)["lr"]
    torch_lr = function(lr, "torch")
    one, many = torch.tensor(12345), torch.arange(100_000)
    out = [f"torch call at one step {_median(lambda: torch_lr(one), 200) * 1e3:.3f} ms, "
           f"at 100k steps {_median(lambda: torch_lr(many), 5) * 1e3:.1f} ms"]
    try:
        import jax
    except ImportError:
        return out[0]
    jax.config.update("jax_enable_x64", True)
    jitted = jax.jit(function(lr, "jax"))
    step, steps = jax.numpy.asarray(12345), jax.numpy.arange(100_000)
    jitted(step).block_until_ready(), jitted(steps).block_until_ready()
    out.append(f"JAX jit at one step {_median(lambda: jitted(step).block_until_ready(), 200) * 1e3:.3f} ms, "
               f"at 100k steps {_median(lambda: jitted(steps).block_until_ready(), 5) * 1e3:.1f} ms")
    return "; ".join(out)


def _median(function, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100 and 300 stages only")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--torch", action="store_true", help="also time the torch scheduler class")
    args = parser.parse_args()
    sizes = (100, 300) if args.quick else (100, 300, 1000)
    rows, torch_rows = [], []
    for n in sizes:
        text = ramp(n)
        stages = len(schedlang.compile(text).clock.stages)
        rows.append((stages, timed(lambda text=text: schedlang.compile(text)["lr"](5), args.repeats)))
        if args.torch:
            torch_rows.append((stages, timed(lambda text=text: schedlang.compile(text).scheduler_class(),
                                             args.repeats)))
    base = rows[0][1] / rows[0][0]
    print(f"{'stages':>7} {'compile':>9} {'per stage':>10} {'vs 100':>7}")
    for stages, seconds in rows:
        print(f"{stages:>7,} {seconds:8.2f}s {seconds / stages * 1e3:8.2f}ms {seconds / stages / base:7.2f}")
    for stages, seconds in torch_rows:
        print(f"{stages:>7,} stages: compile and the torch scheduler class {seconds:.2f}s")
    if args.torch:
        print(f"{sizes[-1] + 1:>7,} stages: " + calls(ramp(sizes[-1])))
    bomb = TEXT.format(samples=10_000_000, gbs=1_000_000_001)
    print(f"10**9 increments refused in {refused(bomb):.3f}s; "
          f"100,000 stages refused in {refused(ramp(100_000)):.3f}s")


if __name__ == "__main__":
    main()
