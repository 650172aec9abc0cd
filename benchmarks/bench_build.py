"""Time ``schedlang.build`` on long ``>>`` chains (run by hand, not by pytest).

    python benchmarks/bench_build.py            # 2,500, 5,000 and 10,000 pieces
    python benchmarks/bench_build.py --quick    # 100 and 1,000 pieces

A chain of constants of distinct values and lengths is built one ``>>`` at a time, the
way a loop in a training script builds it, then used once (its first value lowers the
whole chain).  A chain holds at most ``limits.MAX_SEGMENTS`` (10,000) pieces, as a file's
``>>`` sequence does.  Ratios, measured in the same run, against two baselines: the cost
per piece of the smallest chain (linear building keeps it near 1; it was quadratic, 500
pieces 1.2 s and 2,000 pieces 9.4 s of CPU), and compiling the same schedule from its
``to_source()`` text with ``schedlang.compile`` (the parser's path, which lowers the
chain in one pass; left out where the text is over ``MAX_FILE_BYTES``).  CPU time
(``time.process_time``), median of ``--repeats`` runs; no time is asserted.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import schedlang  # noqa: E402
from schedlang import build as sb  # noqa: E402
from schedlang.errors import SchedlangError  # noqa: E402


def chain(pieces: int, seed: int):
    lr = sb.constant(1.0, 7)
    for i in range(1, pieces):
        lr = lr >> sb.constant(round(1.0 / (i + seed), 6), 5 + i % 11)
    return lr


def timed(function, repeats: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeats):
        start = time.process_time()
        result = function()
        times.append(time.process_time() - start)
    return statistics.median(times), result


def measure(pieces: int, repeats: int) -> tuple[float, float, float | None]:
    """(build, first use, compile of the text or None) in seconds for ``pieces`` pieces."""
    built, lr = timed(lambda: chain(pieces, 0), repeats)
    used, _ = timed(lambda: chain(pieces, 0)(0), repeats)
    used -= built  # the first value of a freshly built chain, less the building
    try:
        text = lr.to_source()  # a file: refused over MAX_FILE_BYTES, as any file is
    except SchedlangError:
        return built, max(used, 0.0), None
    compiled, _ = timed(lambda: schedlang.compile(text)["lr"](0), repeats)
    return built, max(used, 0.0), compiled


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100 and 1,000 pieces only")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    sizes = (100, 1_000) if args.quick else (2_500, 5_000, 10_000)
    rows = [(n, *measure(n, args.repeats)) for n in sizes]
    base = rows[0][1] / rows[0][0]
    print(f"{'pieces':>7} {'build':>9} {'first use':>10} {'compile text':>13} {'per piece':>10} "
          f"{'vs ' + format(sizes[0], ','):>9} {'vs text':>8}")
    for n, built, used, compiled in rows:
        text = f"{compiled:12.3f}s" if compiled is not None else f"{'(too big)':>13}"
        ratio = f"{(built + used) / compiled:8.2f}" if compiled is not None else f"{'-':>8}"
        print(f"{n:>7,} {built:8.3f}s {used:9.3f}s {text} {built / n * 1e3:8.3f}ms "
              f"{built / n / base:9.2f} {ratio}")


if __name__ == "__main__":
    main()
