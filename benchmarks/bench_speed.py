"""Issue 39's speed bars, measured as ratios within one run (``python benchmarks/bench_speed.py``).

    python benchmarks/bench_speed.py [--rounds N] [--against DIR] [--only NAME,...]

The machine this project is measured on is shared (2 cores, several sessions), so every
figure is a ratio or a difference of numbers measured in the same run, interleaved round by
round, and the load average is printed with them.  Processes are timed in CPU seconds of the
child (``getrusage``), not wall time, with the ``.pyc`` files of every tree measured written
first (an installed package has them; ``import sympy`` reads site-packages' own).
``--against DIR`` measures a second checkout (the code before a change: ``git archive
<commit> schedlang grammar | tar -x -C DIR``) in the same rounds, so before and after share
the machine's state.  The recorded runs are in
``benchmarks/SPEED.md``.

1. ``check``: a one-line ``schedlang check`` in a fresh process against ``python -c "import
   sympy"`` (bar: <= 1.5x).
2. ``cosines``: ``schedlang compile --target torch`` of 200 distinct cosines minus the same of
   one cosine (bar: <= +1.5 s CPU).
3. ``export``: ``schedlang export --format megatron-args`` of a file with a 96-stage
   ``megatron.rampup_batch_size`` ramp (what ``schedlang import`` writes for
   ``--rampup-batch-size 32 32 2000000 --global-batch-size 3104``; bar: <= 1 s CPU).
4. ``resume``: ``schedlang resume`` of a generated class's ``state_dict`` against the same
   file (bar: <= 1 s CPU).
5. ``step``: the generated class's ``step()`` with a float lr against torch's
   ``SequentialLR(LinearLR, CosineAnnealingLR)`` (bar: <= 0.5x), in-process, one thread.
6. ``vector``: ``Schedule.torch`` over 1M steps against a hand-written ``torch.where`` of the
   same schedule (bar: <= 1.2x in every run), in-process, one thread.  In 5 and 6 ours and
   the reference alternate repeat by repeat (medians compared), so load falls on both.

Prover p95: ``python benchmarks/bench_verify.py --pairs``.  Not collected by pytest; no
assertion on time anywhere.
"""

from __future__ import annotations

import argparse
import compileall
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ONE_LINE = "schedule lr = cosine(1e-3, 1e-4, 1000)\n"
RAMP_96 = """param seq_len: int = 4096
batch = megatron.rampup_batch_size(32, 32, 2000000, global_batch_size=3104)
schedule lr = on_samples(
    megatron.OptimizerParamScheduler(
        init_lr=0,
        max_lr=0.0003,
        min_lr=3e-05,
        lr_warmup_steps=100000,
        lr_decay_steps=10000000,
        lr_decay_style="cosine",
    ),
)
"""


def cosines(count: int) -> str:
    """``count`` continuous cosines of distinct values and lengths (``bench_scale.chain``)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_scale  # lazy: the same files as bench_scale.py

    return bench_scale.chain("cosine", count)


def child_cpu(command: list[str], pythonpath: Path, cwd: Path) -> float:
    """CPU seconds (user + system) of one child process run to its end."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = dict(os.environ, PYTHONPATH=str(pythonpath))
    subprocess.run(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


IN_PROCESS = textwrap.dedent("""
    import math, statistics, sys, time, warnings
    import torch
    torch.set_num_threads(1)
    import schedlang  # first: bench_torch puts this checkout first on sys.path
    sys.path.insert(0, {benchmarks!r})
    import bench_torch as B
    from schedlang.runtime.arrays import function
    program = schedlang.compile(B.SOURCE)
    # ours and theirs alternate, one repeat each, so a burst of load on the shared machine
    # falls on both; the medians of the repeats are compared
    if {what!r} == "step":
        cls = program.scheduler_class("WarmupCosine")
        runs = [lambda: B.per_step(cls, steps=20000, repeats=1),
                lambda: B.per_step(B.torch_sequential, steps=20000, repeats=1)]
        rounds = 5
    else:
        steps = torch.arange(1_000_000, dtype=torch.int64)
        generated = function(program["lr"], "torch")
        runs = [lambda: B.vectorised(generated, steps, repeats=1),
                lambda: B.vectorised(B.hand_written, steps, repeats=1)]
        rounds = 11
    times = [[], []]
    for _ in range(rounds):
        for kept, run in zip(times, runs):
            kept.append(run())
    print(statistics.median(times[0]), statistics.median(times[1]))
""")


def in_process(what: str, pythonpath: Path, cwd: Path) -> tuple[float, float]:
    """(ours, theirs) seconds from one fresh process (``step``: per call; ``vector``: per 1M)."""
    code = IN_PROCESS.format(benchmarks=str(ROOT / "benchmarks"), what=what)
    env = dict(os.environ, PYTHONPATH=str(pythonpath))
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True,
                          text=True, check=True)
    ours, theirs = done.stdout.split()
    return float(ours), float(theirs)


def resume_state(folder: Path, pythonpath: Path) -> Path:
    """A generated class's ``state_dict`` after 100 steps, saved with ``torch.save``."""
    state = folder / "scheduler.pt"
    code = textwrap.dedent(f"""
        import torch, schedlang
        cls = schedlang.load({str(folder / 'one.sched')!r}).scheduler_class("S")
        s = cls(torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1e-3))
        for _ in range(100):
            s.step()
        torch.save(s.state_dict(), {str(state)!r})
    """)
    subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=str(pythonpath)),
                   check=True)
    return state


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return f"{cpu}, {os.cpu_count()} cores, load average {load}, Python {platform.python_version()}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--against", type=Path, help="a second checkout, measured in the same rounds")
    parser.add_argument("--only", default="check,cosines,export,resume,step,vector")
    args = parser.parse_args()
    wanted = args.only.split(",")
    trees = {"this": ROOT} | ({"against": args.against.resolve()} if args.against else {})
    for path in trees.values():
        # as an installed package is: with its .pyc files (this container sets
        # PYTHONDONTWRITEBYTECODE=1, so without this every child compiles schedlang anew,
        # about 0.25 s of a one-line check that `import sympy`, read from site-packages' .pyc,
        # never pays)
        compileall.compile_dir(path / "schedlang", quiet=1)
    python = [sys.executable, "-m", "schedlang"]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)  # the working directory too: ``-m schedlang`` must not see a checkout
        (folder / "one.sched").write_text(ONE_LINE)
        (folder / "c1.sched").write_text(cosines(1))
        (folder / "c200.sched").write_text(cosines(200))
        (folder / "ramp96.sched").write_text(RAMP_96)
        state = resume_state(folder, ROOT) if "resume" in wanted else None
        commands = {
            "check": [python + ["check", "one.sched"]],
            "cosines": [python + ["compile", "--target", "torch", "c1.sched"],
                        python + ["compile", "--target", "torch", "c200.sched"]],
            "export": [python + ["export", "--format", "megatron-args", "ramp96.sched"]],
            "resume": [python + ["resume", str(state), "one.sched", "--was", "one.sched"]],
        }
        results: dict = {}
        sympy = []
        print(f"machine: {machine()}")
        for round_ in range(args.rounds):
            if "check" in wanted:
                sympy.append(child_cpu([sys.executable, "-c", "import sympy"], ROOT, folder))
            for tree, path in trees.items():
                for name, runs in commands.items():
                    if name in wanted:
                        results.setdefault((name, tree), []).append(
                            [child_cpu(c, path, folder) for c in runs])
                for name in ("step", "vector"):
                    if name in wanted:
                        results.setdefault((name, tree), []).append(in_process(name, path, folder))
            print(f"round {round_ + 1}/{args.rounds} done (load {os.getloadavg()[0]:.1f})", file=sys.stderr)

    def line(name, tree, rows):
        label = f"{name:8} {tree:8}"
        if name == "check":
            ratios = [r[0] / s for r, s in zip(rows, sympy)]
            return (f"{label} check {min(r[0] for r in rows):.3f} s, import sympy {min(sympy):.3f} s "
                    f"(min): {min(r[0] for r in rows) / min(sympy):.2f}x; per round "
                    f"{', '.join(f'{x:.2f}' for x in ratios)}; median {statistics.median(ratios):.2f}x")
        if name == "cosines":
            extra = [r[1] - r[0] for r in rows]
            return (f"{label} 200 cosines {min(r[1] for r in rows):.2f} s, one "
                    f"{min(r[0] for r in rows):.2f} s: +{min(extra):.2f} s (min), "
                    f"+{statistics.median(extra):.2f} s (median)")
        if name in ("export", "resume"):
            values = [r[0] for r in rows]
            return f"{label} {min(values):.2f} s (min), {statistics.median(values):.2f} s (median) CPU"
        ratios = [ours / theirs for ours, theirs in rows]
        unit, scale = ("us", 1e6) if name == "step" else ("ms", 1e3)
        return (f"{label} ours {statistics.median(r[0] for r in rows) * scale:.2f} {unit}, reference "
                f"{statistics.median(r[1] for r in rows) * scale:.2f} {unit}: per round "
                f"{', '.join(f'{x:.2f}' for x in ratios)}x; median {statistics.median(ratios):.2f}x, "
                f"max {max(ratios):.2f}x")

    for (name, tree), rows in results.items():
        print(line(name, tree, rows))


if __name__ == "__main__":
    main()
