"""The cost of a batch schedule's stages (issue 39 item 13; run by hand, not by pytest).

    python benchmarks/bench_batch_stages.py            # 100, 300 and 1,000 stages
    python benchmarks/bench_batch_stages.py --quick    # 100 and 300

A Megatron ramp of ``n`` increments of 1 sample, each lasting 10 * (n + 1) samples, so every
increment is a stage of its own, under a cosine whose length is in tokens: the cosine is placed
on the clock as one branch per stage (``semantics/clock.py``), which every later stage
(lowering, the closed-form check, the reference code the overflow probe runs) reads.  Times
``schedlang.compile`` and the first value (CPU, ``time.process_time``, median of
``--repeats``), the cost per stage and its ratio to the 100-stage ramp's (linear work keeps it
near 1).  Also times the refusal of the issue's ramp of 10**9 increments (it was built one
increment at a time into a MemoryError) and of a 100,000-stage ramp: both are refused before
any entry is computed (``limits.MAX_BATCH_STAGES``).  ``bench_scale.py`` compares a 768-stage
ramp with a constant batch.  No time is asserted.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

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
    args = parser.parse_args()
    sizes = (100, 300) if args.quick else (100, 300, 1000)
    rows = []
    for n in sizes:
        text = ramp(n)
        stages = len(schedlang.compile(text).clock.stages)
        rows.append((stages, timed(lambda text=text: schedlang.compile(text)["lr"](5), args.repeats)))
    base = rows[0][1] / rows[0][0]
    print(f"{'stages':>7} {'compile':>9} {'per stage':>10} {'vs 100':>7}")
    for stages, seconds in rows:
        print(f"{stages:>7,} {seconds:8.2f}s {seconds / stages * 1e3:8.2f}ms {seconds / stages / base:7.2f}")
    bomb = TEXT.format(samples=10_000_000, gbs=1_000_000_001)
    print(f"10**9 increments refused in {refused(bomb):.3f}s; "
          f"100,000 stages refused in {refused(ramp(100_000)):.3f}s")


if __name__ == "__main__":
    main()
