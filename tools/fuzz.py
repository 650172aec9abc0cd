"""On-demand differential fuzzing of schedlang (docs/testing.md).

    python tools/fuzz.py --programs 10000 --seed 1 [--jobs 2] [--out fuzz-failures] [--shrink] [--jax]

Program ``i`` is ``tests/fuzzing/generator.generate(seed * 1_000_003 + i)``, so any
program can be regenerated from the seed printed with it.  Every failing program is
written to ``--out`` as ``<kind>-<program seed>.sched`` (its ``params=`` and the report
in a comment header; ``--shrink`` writes a minimized version next to it).  Prints the
final figures: programs, schedules, points, disagreements, crashes, hangs, ...
Exit status 1 when anything failed.  ``--jax`` also checks the JAX module (int32/float32
and x64, under jit); a process that has started JAX must not fork, so each program then
runs in its worker process without the forked hang guard (the alarm budget still applies).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from fuzzing.generator import generate  # noqa: E402
from fuzzing.runner import check_isolated, check_program, summarize  # noqa: E402


def program_seed(seed: int, index: int) -> int:
    return seed * 1_000_003 + index


def _work(args):
    seed, budget, jax_checks = args
    if jax_checks:
        return check_program(generate(seed), budget=budget, jax_checks=True)
    return check_isolated(generate(seed), budget=budget)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--programs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--budget", type=float, default=10.0, help="seconds per program before it is a hang")
    parser.add_argument("--out", default="fuzz-failures", help="directory for failing programs")
    parser.add_argument("--shrink", action="store_true", help="also write a minimized program")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--progress", type=int, default=250, metavar="N",
                        help="every N programs, write the running figures to <out>/progress.json")
    parser.add_argument("--jax", action="store_true",
                        help="also check the JAX target (slower: jit per schedule)")
    args = parser.parse_args(argv)

    tasks = [(program_seed(args.seed, i), args.budget, args.jax) for i in range(args.programs)]
    start = time.perf_counter()
    results = []
    out = Path(args.out)
    if args.jobs > 1:
        with multiprocessing.get_context("fork").Pool(args.jobs, maxtasksperchild=200) as pool:
            for result in pool.imap_unordered(_work, tasks, chunksize=4):
                results.append(result)
                _record(result, out, args)
                _progress(results, out, args, start)
    else:
        for task in tasks:
            result = _work(task)
            results.append(result)
            _record(result, out, args)
            _progress(results, out, args, start)
    figures = summarize(results)
    figures["seconds"] = round(time.perf_counter() - start, 1)
    print(json.dumps(figures, indent=1))
    return 1 if figures["failing_programs"] else 0


def _progress(results, out: Path, args, start: float) -> None:
    """The running figures, so that a run stopped early still says how far it got."""
    if args.progress <= 0 or len(results) % args.progress:
        return
    figures = summarize(results)
    figures["seconds"] = round(time.perf_counter() - start, 1)
    out.mkdir(parents=True, exist_ok=True)
    (out / "progress.json").write_text(json.dumps(figures, indent=1) + "\n")


def _record(result, out: Path, args) -> None:
    if not result.failures:
        return
    out.mkdir(parents=True, exist_ok=True)
    program = result.program
    for kind in sorted({f.kind for f in result.failures}):
        first = next(f for f in result.failures if f.kind == kind)
        report = first.report()
        if not args.quiet:
            print(report, "\n", flush=True)
        path = out / f"{kind}-{program.seed}.sched"
        path.write_text(_as_file(program, report))
        if args.shrink:
            from fuzzing.shrink import shrink

            small = shrink(program, kind, budget=min(args.budget, 5.0))
            again = check_program(small, budget=args.budget)
            shown = next((f.report() for f in again.failures if f.kind == kind), report)
            (out / f"{kind}-{program.seed}.min.sched").write_text(_as_file(small, shown))


def _as_file(program, report: str) -> str:
    header = "".join(f"# {line}\n" for line in report.splitlines())
    return f"{header}# params={program.params!r}\n{program.source}"


if __name__ == "__main__":
    sys.exit(main())
