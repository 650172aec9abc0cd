"""Time ``schedlang.equivalent`` on schedules of 1 to 10 segments (run by hand, not by pytest).

    python benchmarks/bench_verify.py            # table of timings
    python benchmarks/bench_verify.py --quick    # fewer sizes
    python benchmarks/bench_verify.py --pairs    # the suite's pair tables: median/p95/max

For each size ``k`` a fixed pseudo-random sequence of ``k`` linear/cosine/
constant/poly segments is compared with: the same sequence written as one
``if ... then ... else`` chain (equivalent), with one linear segment split in
two (equivalent), with a value changed in its last segment (different), and a
version with symbolic durations ``d1 .. dk`` against its if-chain (equivalent
for every positive duration).  Compiling both sides (parse, lower, the core's
closed-form and finiteness checks) is timed apart from the verdict itself.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sympy.core.cache import clear_cache  # noqa: E402

import schedlang  # noqa: E402
from schedlang import equivalent  # noqa: E402

KINDS = ("linear", "cosine", "constant", "poly")


def num(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"({x.numerator} / {x.denominator})"


def segments(k: int, seed: int = 0):
    rng = random.Random(seed * 100 + k)
    return [(rng.choice(KINDS), Fraction(rng.randint(0, 16), 8), Fraction(rng.randint(0, 16), 8),
             rng.randint(5, 500)) for _ in range(k)]


def call(seg, n=None) -> str:
    kind, v0, v1, length = seg
    n = length if n is None else n
    if kind == "constant":
        return f"constant({num(v0)}, {n})"
    if kind == "poly":
        return f"poly({num(v0)}, {num(v1)}, {n}, power=2)"
    return f"{kind}({num(v0)}, {num(v1)}, {n})"


def formula(seg, start, n=None) -> str:
    kind, v0, v1, length = seg
    n = length if n is None else n
    local = f"(t - ({start}))"
    if kind == "linear":
        return f"{num(v0)} + ({num(v1 - v0)}) * {local} / {n}"
    if kind == "cosine":
        return f"{num(v1)} + ({num(v0 - v1)}) * (1 + cos(pi * {local} / {n})) / 2"
    if kind == "poly":
        return f"({num(v0 - v1)}) * (1 - {local} / {n}) ** 2 + {num(v1)}"
    return num(v0)


def chain(segs, symbolic=False) -> str:
    text, start = [], "0"
    for i, seg in enumerate(segs):
        n = f"d{i}" if symbolic else str(seg[3])
        end = f"{start} + {n}"
        text.append(f"if t < {end} then {formula(seg, start, n if symbolic else None)} else ")
        start = end
    last = segs[-1]
    return "".join(text) + num(last[1] if last[0] == "constant" else last[2])


def split(segs) -> str:
    out = []
    for seg in segs:
        kind, v0, v1, n = seg
        if kind == "linear" and n >= 2:
            k = n // 3 or 1
            mid = v0 + (v1 - v0) * Fraction(k, n)
            out += [call(("linear", v0, mid, k)), call(("linear", mid, v1, n - k))]
        else:
            out.append(call(seg))
    return " >> ".join(out)


def cases(k: int):
    segs = segments(k)
    plain = " >> ".join(call(s) for s in segs)
    kind, v0, v1, n = segs[-1]
    changed = segs[:-1] + [(kind, v0 + Fraction(1, 7), v1, n)]
    params = "".join(f"param d{i}: int where d{i} > 0\n" for i in range(k))
    symbolic = params + "schedule lr = " + " >> ".join(
        call(s, f"d{i}") for i, s in enumerate(segs))
    yield "if-chain", plain, chain(segs), True
    yield "split", plain, split(segs), True
    yield "near miss", plain, " >> ".join(call(s) for s in changed), False
    yield "symbolic", symbolic, params + "schedule lr = " + chain(segs, symbolic=True), True


def pair_tables():
    """``(name, a, b)`` of the suite's own tables: tests/test_verify_pairs.py and
    tests/test_verify_table.py, the pairs issue 23 and 31 asked the prover to decide."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from test_verify_pairs import PAIRS  # lazy: the test tables, only for --pairs
    from test_verify_table import TABLE  # lazy: the test tables, only for --pairs
    for row in PAIRS:
        yield "pairs: " + row[0], row[1], row[2]
    for row in TABLE:
        yield "table: " + row[0], row[1], row[2]


def run_pairs(cold: bool) -> None:
    """CPU seconds per verdict over the pair tables (compiling both sides included, as a user
    of ``schedlang verify`` waits for both), with the median, p95 and max."""
    times, statuses = [], {}
    for name, a, b in pair_tables():
        if cold:
            clear_cache()
        start = time.process_time()
        verdict = equivalent(a, b)
        elapsed = time.process_time() - start
        times.append((elapsed, name))
        statuses[verdict.status] = statuses.get(verdict.status, 0) + 1
        print(f"{elapsed:8.3f}  {verdict.status:<11} {name}")
    values = sorted(x for x, _ in times)

    def pct(p):
        return values[min(len(values) - 1, int(round(p * (len(values) - 1))))]

    slowest = max(times)
    print(f"{len(values)} pairs ({', '.join(f'{v} {k}' for k, v in sorted(statuses.items()))}): "
          f"median {pct(0.5):.3f} s, p95 {pct(0.95):.3f} s, max {slowest[0]:.3f} s ({slowest[1]}); "
          f"over 1 s: {sum(x > 1 for x in values)}, over 10 s: {sum(x > 10 for x in values)}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--pairs", action="store_true", help="time the suite's pair tables")
    parser.add_argument("--cold", action="store_true", help="clear sympy's cache before each verdict")
    args = parser.parse_args()
    if args.pairs:
        run_pairs(args.cold)
        return
    sizes = (1, 5, 10) if args.quick else range(1, 11)
    print(f"{'segments':>8}  {'case':<10} {'verdict':<11} {'method':<20} {'compile s':>9} "
          f"{'verdict s':>9}")
    worst = 0.0
    for k in sizes:
        for name, a, b, expected in cases(k):
            start = time.process_time()
            pa, pb = schedlang.compile(a), schedlang.compile(b)
            if args.cold:
                clear_cache()
            compiled = time.process_time()
            verdict = equivalent(pa, pb)
            elapsed = time.process_time() - compiled
            worst = max(worst, elapsed)
            assert bool(verdict) == expected or verdict.unknown, (name, k, verdict)
            print(f"{k:>8}  {name:<10} {verdict.status:<11} {verdict.method or '-':<20} "
                  f"{compiled - start:>9.3f} {elapsed:>9.3f}")
    print(f"slowest verdict: {worst:.3f} s (CPU time)")


if __name__ == "__main__":
    main()
