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

The per-stage cost grew with the stages (sympy's cache of 1,000 entries thrashes past a
thousand distinct branch formulas), so 100,000 stages was minutes.  With the lookup, a cold
compile of a 100,000-stage ramp takes 1.6 s, but ``check`` prints every stage (12 s with the
report) and the torch class would hold 100,000 branches, so the limit stays 1,000 until the
array printers read the table too.
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
    bomb = TEXT.format(samples=10_000_000, gbs=1_000_000_001)
    print(f"10**9 increments refused in {refused(bomb):.3f}s; "
          f"100,000 stages refused in {refused(ramp(100_000)):.3f}s")


if __name__ == "__main__":
    main()
