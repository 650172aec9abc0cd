"""Schedules the torch tests share: every example file and every standard-library call."""

from __future__ import annotations

from pathlib import Path

import schedlang

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.sched"))

#: One or more calls per entry of ``stdlib.SCHEDULES`` (the test checks none is missing).
STDLIB_CASES = {
    "constant": ["constant(0.1)", "constant(0.1, 50) >> linear(0.1, 0, 50)"],
    "linear": ["linear(1e-3, 0, 1000)"],
    "cosine": ["cosine(1e-3, 1e-5, 100_000)", "cosine(1, 0, 7)"],
    "poly": ["poly(1, 0.1, 100, power=2)", "poly(1, 0, 100, power=0.5)"],
    "exp": ["exp(1, 0.5, 10)", "exp(2e-3, 0.9, 7, staircase=true)"],
    "step": ["step(0.1, 0.5, 7)"],
    "multistep": ["multistep(0.1, 0.1, [30, 60, 60, 90])"],
    "piecewise": ["piecewise([1, 0.5, 0.1], [100, 1000])"],
    "warmup": ["warmup(linear, 500) >> cosine(0.001, 1e-4, 500)",
               "warmup(cosine, 100, start=1e-5) >> linear(1e-3, 0, 900)",
               "warmup(exp, 50, start=1e-6) >> step(1e-3, 0.5, 100)"],
    "cooldown": ["warmup(linear, 100) >> constant(1e-3, 400) >> cooldown(sqrt, 500, 1e-5)",
                 "cosine(1e-3, 5e-4, 300) >> cooldown(cosine, 700, 0)",
                 "constant(1e-3, 1000) >> cooldown(megatron_exponential, 999, 2e-5)",
                 "linear(1e-3, 2e-3, 10) >> cooldown(exp, 77, 1e-6) >> cooldown(linear, 13, 0)",
                 "param seq_len: int = 4\nbatch = stages(3, [5, 8], [400tok, 2000tok])\n"
                 "schedule lr = warmup(linear, 20) >> constant(1e-3, 1000tok) >> "
                 "cooldown(sqrt, 4000tok, 1e-5)"],
    "inverse_sqrt": ["inverse_sqrt(1e-3, 4000)", "warmup(linear, 100) >> inverse_sqrt(1e-3)"],
    "rsqrt_decay": ["warmup(linear, 4000) >> rsqrt_decay(7e-4, 4000)"],
    "noam": ["noam(512, 4000)", "noam(1024, 100, factor=2)"],
    "cosine_restarts": ["cosine_restarts(1e-3, 1e-5, 10)", "cosine_restarts(1, 0.1, 10, mult=2)",
                        "cosine_restarts(1, 0, 3, mult=3)"],
    "cyclic": ["cyclic(0.1, 1, 5)", 'cyclic(0.1, 1, 4, 6, mode="triangular2")',
               'cyclic(0.1, 1, 5, mode="exp_range", gamma=0.999)'],
    "onecycle": ["onecycle(0.1, 1000)", 'onecycle(0.1, 77, pct_start=0.25, anneal="linear", '
                 'three_phase=true)'],
    "repeat": ["repeat(linear(1, 0, 10), 3)", "repeat(warmup(linear, 5) >> cosine(1, 0.1, 20))"],
    "cycle": ["cycle(cosine(1, 0.1, 13))"],
    "stretch": ["stretch(cosine(1, 0, 10), 2.5)", "stretch(warmup(linear, 4) >> constant(1, 6), 3)"],
    "scale": ["scale(warmup(linear, 4) >> cosine(1, 0, 10) >> step(0.1, 0.5, 3), 0.35)"],
}

EXTRA_CASES = [
    "max(0.1, 1 - t / 100)",
    "clamp(t / 100, 0.01, 0.5)",
    "if t < 10 or t >= 20 then 1 else 2 * t",
    "ceil(t / 3) * 0.25 + 1",
    "1e-3 * 0.5 ** floor(t / 1000) * (1 + sin(t / 50) / 10)",
]


def all_programs():
    """``(id, Program)`` for every example and case."""
    found = [(path.name, schedlang.load(path)) for path in EXAMPLES]
    for name, sources in STDLIB_CASES.items():
        found += [(f"{name}[{i}]", schedlang.compile(s)) for i, s in enumerate(sources)]
    found += [(f"extra[{i}]", schedlang.compile(s)) for i, s in enumerate(EXTRA_CASES)]
    return found


def interesting_steps(schedule, count: int = 40, seed: int = 0) -> list[int]:
    """Steps at and around every breakpoint and duration, plus random ones up to 2**40."""
    import random

    steps = {0, 1, 2, 3, 2**24 - 1, 2**24, 2**24 + 1, 2**31 - 1, 2**40}
    marks = list(schedule.breakpoints)
    if isinstance(schedule.duration, int):
        marks.append(schedule.duration)
    for mark in marks:
        m = int(mark)
        steps.update(s for s in (m - 2, m - 1, m, m + 1, m + 2) if s >= 0)
    rng = random.Random(seed)
    steps.update(rng.randrange(0, 5000) for _ in range(count))
    steps.update(rng.randrange(0, 2**40) for _ in range(count))
    return sorted(steps)
