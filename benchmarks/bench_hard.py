"""The prover on the project's hardest pairs: CPU seconds per verdict, p50, p95 and max.

    python benchmarks/bench_hard.py [--json OUT] [--only SUBSTRING]

Issue 39 item 16 asks for a p95 <= 1 s on a hard set of pairs held outside the project.  The
hardest pairs the project holds are the parity atlas's (tests/anchors/atlas_pairs.py, what
docs/atlas.md shows): namesake schedules of different libraries compared pairwise (every pair
of a family's calls, each pitfall against its library's mapping, each symbolic row against the
reference for every peak, warmup and total), with the suite's pair tables
(``bench_verify.py --pairs``) after them.  Each verdict is computed cold of schedlang's own
caches but not of sympy's (as ``schedlang verify`` in a long-lived editor would be), compiling
both sides included.

``--json OUT`` writes every pair's verdict and time, so two checkouts' runs can be compared:
``python benchmarks/bench_hard.py --compare BEFORE.json AFTER.json`` prints every pair whose
verdict changed (a proven pair that became unknown is lost completeness; a different pair
proven equal, or the reverse, is a soundness bug) and the two distributions.  Not collected by
pytest; no assertion on time anywhere.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def atlas_pairs():
    """``(name, a, b)`` of every comparison docs/atlas.md makes."""
    sys.path[:0] = [str(ROOT / "tests")]
    from anchors.atlas import primary, program  # lazy: the test tables, only here
    from anchors.atlas_pairs import FAMILIES  # lazy: the test tables, only here

    for family in FAMILIES:
        entries = family.entries
        for i, first in enumerate(entries):
            for second in entries[i + 1:]:
                yield f"atlas {family.key}: {first.library} vs {second.library}", first.call, second.call
        if family.symbolic:
            reference, *rest = family.symbolic
            for e in rest:
                yield (f"atlas {family.key} symbolic: {e.library}", program(reference.call),
                       program(e.call))
        for p in family.pitfalls:
            yield (f"atlas {family.key} pitfall: {p.library} {p.label}", primary(family, p.library).call,
                   p.call)


def suite_pairs():
    sys.path[:0] = [str(ROOT / "benchmarks")]
    import bench_verify  # lazy: its pair tables

    yield from bench_verify.pair_tables()


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p * (len(values) - 1))))]


def summary(rows: list[dict], label: str) -> str:
    times = [r["seconds"] for r in rows]
    statuses: dict = {}
    for r in rows:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    slowest = max(rows, key=lambda r: r["seconds"])
    return (f"{label}: {len(rows)} pairs ({', '.join(f'{v} {k}' for k, v in sorted(statuses.items()))}): "
            f"p50 {pct(times, 0.5):.3f} s, p95 {pct(times, 0.95):.3f} s, max {slowest['seconds']:.3f} s "
            f"({slowest['name']}); over 1 s: {sum(x > 1 for x in times)}")


def run(only: str | None) -> list[dict]:
    import schedlang  # first: this checkout (sys.path[0] is benchmarks/, PYTHONPATH picks the tree)

    rows = []
    for source in (atlas_pairs, suite_pairs):
        for name, a, b in source():
            if only and only not in name:
                continue
            start = time.process_time()
            verdict = schedlang.equivalent(a, b)
            elapsed = time.process_time() - start
            rows.append({"name": name, "status": verdict.status, "method": verdict.method,
                         "seconds": round(elapsed, 4)})
            print(f"{elapsed:8.3f}  {verdict.status:<11} {name}", flush=True)
    return rows


def compare(before_path: Path, after_path: Path) -> None:
    before = {r["name"]: r for r in json.loads(before_path.read_text())}
    after = {r["name"]: r for r in json.loads(after_path.read_text())}
    for name in before.keys() & after.keys():
        if before[name]["status"] != after[name]["status"]:
            print(f"CHANGED {before[name]['status']} -> {after[name]['status']}: {name}")
    common = sorted(before.keys() & after.keys())
    print(summary([before[n] for n in common], str(before_path)))
    print(summary([after[n] for n in common], str(after_path)))
    for label, chosen in (("atlas", [n for n in common if n.startswith("atlas")]),
                          ("suite tables", [n for n in common if not n.startswith("atlas")])):
        print(f"  {label}: p95 {pct([before[n]['seconds'] for n in chosen], 0.95):.3f} s -> "
              f"{pct([after[n]['seconds'] for n in chosen], 0.95):.3f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write every pair's verdict and time here")
    parser.add_argument("--only", help="only the pairs whose name contains this")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args()
    if args.compare:
        compare(*args.compare)
        return
    rows = run(args.only)
    print(summary(rows, "all"))
    print(summary([r for r in rows if r["name"].startswith("atlas")], "atlas"))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
