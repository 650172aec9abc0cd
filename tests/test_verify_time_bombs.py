"""The prover's time bombs (issue 28): step schedules with distant prime periods, and nested
min/max, answered from their structure in bounded time and memory, never by enumerating a
common period (10007 and 10009 once grew to 3 GiB in 40 s and died with exit 1)."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sympy as sp

import schedlang
from schedlang.core.algebra import t
from schedlang.verify.intervals import normalise

ROOT = Path(__file__).resolve().parents[1]
SECONDS = 3.0  # about 0.4 s each here; generous for a loaded machine


def _first_difference(a: str, b: str) -> int:
    start = time.process_time()
    verdict = schedlang.equivalent(a, b)
    spent = time.process_time() - start
    assert verdict.different, verdict
    assert verdict.counterexample.earliest
    assert spent < SECONDS, f"{spent:.1f} s"
    return verdict.counterexample.step


@pytest.mark.parametrize("p, q", [(10007, 10009), (100003, 100019), (2**31 - 1, 2**31 - 19),
                                  (10**15, 10**15 + 1), (13, 17)])
@pytest.mark.parametrize("spelling", ["step(1, 0.5, {})", "0.5 ** floor(t / {})"])
def test_distant_prime_periods_differ_at_the_first_boundary(p, q, spelling):
    assert _first_difference(spelling.format(p), spelling.format(q)) == min(p, q)


@pytest.mark.parametrize("p, q", [(10007, 10009), (2**31 - 1, 2**31 - 19)])
def test_a_sum_of_floors_with_one_prime_changed(p, q):
    common = "floor(t / 3) + floor(t / 5) + floor(t / 7)"
    assert _first_difference(f"{common} + floor(t / {p})", f"{common} + floor(t / {q})") == min(p, q)
    steps = "step(1, 0.5, 3) + step(1, 0.5, 5)"
    assert _first_difference(f"{steps} + step(1, 0.5, {p})", f"{steps} + step(1, 0.5, {q})") == min(p, q)


@pytest.mark.parametrize("p, q", [(10007, 10009), (2**31 - 1, 2**31 - 19)])
def test_a_product_of_steps_with_one_prime_changed(p, q):
    """The common factor (never zero) is set aside: only the distant floors are followed."""
    assert _first_difference(f"step(1, 0.5, 3) * step(1, 0.5, {p})",
                             f"step(1, 0.5, 3) * step(1, 0.5, {q})") == min(p, q)
    assert _first_difference(f"0.5 ** (floor(t / 3) + floor(t / {p}))",
                             f"0.5 ** (floor(t / 3) + floor(t / {q}))") == min(p, q)


def test_distant_periods_still_prove_equal():
    a = "step(1, 0.5, 10007) + step(1, 0.5, 10009)"
    assert schedlang.equivalent(a, "step(1, 0.5, 10009) + step(1, 0.5, 10007)")
    assert schedlang.equivalent("0.5 ** floor(t / 2147483647)", "step(1, 0.5, 2147483647)")


def test_periods_near_2_31_in_bounded_memory(tmp_path):
    """The whole command under a 1.5 GiB address-space cap: the verdict, exit 1, the step."""
    a, b = tmp_path / "a.sched", tmp_path / "b.sched"
    a.write_text("schedule lr = step(1, 0.5, 2147483647)\n")
    b.write_text("schedule lr = step(1, 0.5, 2147483629)\n")
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (3 << 29, 3 << 29)); "
            "from schedlang.cli import main; code = main(sys.argv[1:]); "
            "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')]; "
            "print('maxrss', hwm[0].split()[1] if hwm else 0, file=sys.stderr); "
            "sys.exit(code)")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.monotonic()
    result = subprocess.run([sys.executable, "-c", code, "verify", str(a), str(b)], capture_output=True,
                            text=True, env=env, timeout=60)
    assert result.returncode == 1, result.stderr
    assert "different: first difference at step 2147483629" in result.stdout
    assert time.monotonic() - start < 30
    maxrss = int(result.stderr.split("maxrss")[-1].split()[0])  # KiB, this process's peak (VmHWM)
    assert maxrss < 1 << 19, maxrss  # under 512 MiB (about 80 MiB here; 3 GiB before)


def _nest(levels: int, inner: str = "t") -> str:
    for i in range(1, levels + 1):
        inner = f"min(max({inner}, {i}), {1000 + i})"
    return inner


def test_ten_nested_min_max_against_a_clamp():
    start = time.process_time()
    assert _first_difference(_nest(10), "clamp(t, 1, 1000)") == 0
    assert schedlang.equivalent(_nest(10), "clamp(t, 10, 1001)")  # the first min caps it
    same = "t"
    for _ in range(10):
        same = f"min(max({same}, 1), 1000)"
    assert schedlang.equivalent(same, "clamp(t, 1, 1000)")
    assert time.process_time() - start < 4 * SECONDS


def test_a_flattened_nest_has_the_nest_s_values():
    """``normalise`` folds a min/max nest into one clamp: the same value at every step."""
    rng = random.Random(28)
    for _ in range(40):
        expr, text = t / 3, "t/3"
        for _ in range(rng.randint(1, 8)):
            c = sp.Rational(rng.randint(-50, 400), rng.choice([1, 2, 7]))
            expr = (sp.Min if rng.random() < 0.5 else sp.Max)(expr, c)
        flat = normalise(expr)
        for step in (0, 1, 5, 30, 99, 150, 299, 1000, 1201):
            assert flat.subs(t, step) == expr.subs(t, step), (text, expr, flat, step)


DEEPSPEED_PAIR = (
    "param peak: float where peak > 0\nparam warm: int where warm > 0\n"
    "param total: int where total > warm\n",
    "schedule lr = warmup(linear, warm) >> cosine(peak, 0, total - warm)",
    'schedule lr = deepspeed.WarmupCosineLR(lr=peak, total_num_steps=total, warmup_num_steps=warm, '
    'warmup_type="linear", cos_min_ratio=0.0)',
)


def test_a_max_of_parameters_is_searched_before_its_normal_form(monkeypatch):
    """DeepSpeed's ``max(2, warmup_num_steps)``: its Piecewise normal form for every value took
    2 s (the slowest of the held pairs, issue 39 item 16); the first values of the search go
    first, and the difference they find is checked against both programs' values."""
    from schedlang.verify import prover

    symbolic = []
    real = prover.normalise

    def normalise_seen(e):
        if e.free_symbols - {t}:
            symbolic.append(e)
        return real(e)

    monkeypatch.setattr(prover, "normalise", normalise_seen)
    params, ours, theirs = DEEPSPEED_PAIR
    start = time.process_time()
    verdict = schedlang.equivalent(params + ours, params + theirs)
    spent = time.process_time() - start
    assert verdict.different and verdict.method == "search", verdict
    assert not symbolic, "the normal form of a side with free parameters was computed"
    assert spent < SECONDS, f"{spent:.1f} s"
    ce = verdict.counterexample
    values = [schedlang.compile(params + side, params=ce.params)["lr"](ce.step) for side in (ours, theirs)]
    assert values[0] != values[1] and (ce.a, ce.b) == tuple(values)
