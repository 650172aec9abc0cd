"""Every built-in at its boundaries (0, n-1, n, n+1, far past the end) against a hand formula."""

import math
import re

import pytest
from helpers import values

FAR = 10**9


def lin(v0, v1, n):
    return lambda s: v0 + (v1 - v0) * min(s, n) / n


def cos_(v0, v1, n):
    return lambda s: v1 + (v0 - v1) * (1 + math.cos(math.pi * min(s, n) / n)) / 2


def poly_(v0, v1, n, p):
    return lambda s: (v0 - v1) * (1 - min(s, n) / n) ** p + v1


def sgdr(v0, v1, period, mult):
    def f(s):
        start, length = (s - s % period, period) if mult == 1 else (0, period)
        while start + length <= s:
            start, length = start + length, length * mult
        return v1 + (v0 - v1) * (1 + math.cos(math.pi * (s - start) / length)) / 2
    return f


def torch_cyclic(lo, hi, up, down, mode, gamma):
    def f(s):
        total = up + down
        cycle = math.floor(1 + s / total)
        x = 1.0 + s / total - cycle
        ratio = up / total
        scale = x / ratio if x <= ratio else (x - 1) / (ratio - 1)
        height = (hi - lo) * scale
        factor = {"triangular": 1.0, "triangular2": 0.5 ** (cycle - 1), "exp_range": gamma**s}[mode]
        return lo + height * factor
    return f


def torch_onecycle(peak, n, pct=0.3, div=25.0, final=1e4, anneal="cos", three=False):
    initial, low = peak / div, peak / div / final
    if three:
        phases = [(pct * n - 1, initial, peak), (2 * pct * n - 2, peak, initial), (n - 1, initial, low)]
    else:
        phases = [(pct * n - 1, initial, peak), (n - 1, peak, low)]

    def f(s):
        if s > n - 1:
            return low
        start = 0
        for i, (end, a, b) in enumerate(phases):
            if s <= end or i == len(phases) - 1:
                p = (s - start) / (end - start)
                if anneal == "cos":
                    return b + (a - b) / 2 * (1 + math.cos(math.pi * p))
                return (b - a) * p + a
            start = end
    return f


def after_linear(shape):
    """``linear(1, 2, 10) >> cooldown(shape, 10, 0.5)``: from 2 at step 10 to 0.5 at step 20
    (``shape`` None: geometric)."""
    def f(s):
        if s < 10:
            return 1 + s / 10
        q = min(s - 10, 10) / 10
        return 2 * 0.25 ** q if shape is None else 0.5 + 1.5 * shape(q)
    return f


CASES = [
    ("constant(0.5)", lambda s: 0.5, 10),
    ("constant(0.5, 10) >> constant(2)", lambda s: 0.5 if s < 10 else 2.0, 10),
    ("linear(1, 0.1, 100)", lin(1, 0.1, 100), 100),
    ("linear(0, 3e-4, 7)", lin(0, 3e-4, 7), 7),
    ("cosine(1e-3, 1e-5, 100)", cos_(1e-3, 1e-5, 100), 100),
    ("poly(1, 0, 50)", poly_(1, 0, 50, 1), 50),
    ("poly(1, 0.1, 50, power=2)", poly_(1, 0.1, 50, 2), 50),
    ("poly(2, 1, 9, power=0.5)", poly_(2, 1, 9, 0.5), 9),
    ("exp(1, 0.5, 10)", lambda s: 0.5 ** (s / 10), 10),
    ("exp(1, 0.5, 10, staircase=true)", lambda s: 0.5 ** (s // 10), 10),
    ("step(0.1, 0.5, 30)", lambda s: 0.1 * 0.5 ** (s // 30), 30),
    ("multistep(1, 0.1, [30, 80])", lambda s: 0.1 ** sum(s >= m for m in (30, 80)), 80),
    ("multistep(1, 0.5, [80, 30, 30])", lambda s: 0.5 ** sum(s >= m for m in (80, 30, 30)), 80),
    ("piecewise([1, 0.5, 0.1], [10, 20])", lambda s: 1 if s < 10 else 0.5 if s < 20 else 0.1, 20),
    ("warmup(linear, 10) >> constant(2)", lambda s: 2 * min(s, 10) / 10, 10),
    ("warmup(linear, 10, start=1) >> constant(2)", lambda s: 1 + min(s, 10) / 10, 10),
    ("warmup(cosine, 10) >> constant(2)",
     lambda s: 2 - 2 * (1 + math.cos(math.pi * min(s, 10) / 10)) / 2, 10),
    ("warmup(exp, 10, start=0.01) >> constant(1)", lambda s: 0.01 * 100 ** (min(s, 10) / 10), 10),
    ("inverse_sqrt(1, 100)", lambda s: 1.0 if s < 100 else math.sqrt(100 / s), 100),
    ("rsqrt_decay(1, 100)", lambda s: math.sqrt(100 / (s + 100)), 100),
    # the paper / tensor2tensor formula with step_num = t + 1
    ("noam(512, 100)", lambda s: 512 ** -0.5 * min((s + 1) ** -0.5, (s + 1) * 100 ** -1.5), 99),
    ("noam(512, 100, factor=2)",
     lambda s: 2 * 512 ** -0.5 * min((s + 1) ** -0.5, (s + 1) * 100 ** -1.5), 100),
    ("cosine_restarts(1, 0.1, 10)", sgdr(1, 0.1, 10, 1), 10),
    ("cosine_restarts(1, 0.1, 10, mult=2)", sgdr(1, 0.1, 10, 2), 30),
    ("cosine_restarts(1, 0, 3, mult=3)", sgdr(1, 0, 3, 3), 12),
    ('cyclic(0.1, 1, 4)', torch_cyclic(0.1, 1, 4, 4, "triangular", 1), 8),
    ('cyclic(0.1, 1, 4, 6, mode="triangular2")', torch_cyclic(0.1, 1, 4, 6, "triangular2", 1), 10),
    ('cyclic(0.1, 1, 5, mode="exp_range", gamma=0.99)', torch_cyclic(0.1, 1, 5, 5, "exp_range", 0.99), 10),
    ("onecycle(1, 100)", torch_onecycle(1, 100), 100),
    ('onecycle(1, 100, anneal="linear", three_phase=true)',
     torch_onecycle(1, 100, anneal="linear", three=True), 100),
    ("repeat(linear(1, 0, 10), 3)", lambda s: 1 - (s % 10) / 10 if s < 30 else 0.0, 30),
    ("cycle(linear(1, 0, 10))", lambda s: 1 - (s % 10) / 10, 10),
    ("stretch(linear(1, 0, 10), 3)", lambda s: 1 - min(s, 30) / 30, 30),
    ("scale(warmup(linear, 4) >> linear(1, 0, 10), 0.35)",  # warmup kept, floor(3.5) = 3 after it
     lambda s: s / 4 if s < 4 else max(0.0, 1 - (s - 4) / 3), 10),
    ("linear(1, 0, 10) for 5", lambda s: 1 - min(s, 5) / 10, 5),
    ("linear(1, 0, 10) for 20", lambda s: 1 - min(s, 10) / 10, 20),
    ("0.5 * cosine(1, 0, 10) >> 0", lambda s: 0.5 * cos_(1, 0, 10)(s) if s < 10 else 0.0, 10),
    ("warmup(linear, 10) >> constant(1, 30) >> cooldown(sqrt, 60, 0.1)",  # its picture
     lambda s: s / 10 if s < 10 else 1.0 if s < 40 else 0.1 + 0.9 * (1 - math.sqrt(min(s - 40, 60) / 60)),
     100),
    *[(f"linear(1, 2, 10) >> cooldown({name}, 10, 0.5)", after_linear(shape), 20)
      for name, shape in {"linear": lambda q: 1 - q, "cosine": lambda q: (1 + math.cos(math.pi * q)) / 2,
                          "sqrt": lambda q: 1 - math.sqrt(q),
                          "megatron_exponential": lambda q: 2 * 0.5 ** q - 1}.items()],
    ("linear(1, 2, 10) >> cooldown(exp, 10, 0.5)", after_linear(None), 20),
    ("constant(2, 4) >> cooldown(linear, 0, 0.5)", lambda s: 2.0 if s < 4 else 0.5, 4),
]


@pytest.mark.parametrize("source, formula, n", CASES, ids=[c[0] for c in CASES])
def test_boundaries(source, formula, n):
    steps = sorted({0, 1, n - 1, n, n + 1, 2 * n + 3, 7 * n + 1, FAR})
    got = values(source, steps)
    want = [formula(s) for s in steps]
    assert got == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_every_builtin_is_covered():
    from schedlang.library.stdlib import SCHEDULES

    covered = {name for c in CASES for name in re.findall(r"([a-z_]+)\(", c[0])}
    assert set(SCHEDULES) <= covered


@pytest.mark.parametrize("source, duration", [
    ("linear(1, 0, 100)", 100), ("constant(1)", None), ("constant(1, 5)", 5),
    ("warmup(linear, 5) >> cosine(1, 0, 10)", 15), ("linear(1, 0, 10) >> step(1, 0.5, 3)", None),
    ("repeat(linear(1, 0, 10), 4)", 40), ("stretch(cosine(1, 0, 10), 2)", 20),
    ("linear(1, 0, 10) * 2", 10), ("linear(1, 0, 10) * cosine(1, 0, 20)", 20),
    ("linear(1, 0, 10) * (1 + t)", None), ("(1 + t) for 7", 7),
])
def test_durations(source, duration):
    import schedlang

    assert schedlang.compile(source)["lr"].duration == duration


def test_issue_example_exact_values():
    steps = [0, 250, 500, 750, 1000, 1001, 5000]
    got = values("warmup(linear, 500) >> cosine(0.001, 1e-4, 500)", steps)
    assert got == pytest.approx([0, 5e-4, 1e-3, 5.5e-4, 1e-4, 1e-4, 1e-4], rel=1e-12)


@pytest.mark.parametrize("source, want", [
    # Formulas are built in a real-valued step, so stretching never sees floor(t) -> t
    # or cos(pi*t) -> (-1)**t rewrites that hold only for whole steps.
    ("stretch(step(1, 0.5, 1), 2)", [1, 1, 0.5, 0.5, 0.25, 0.25]),
    ("stretch(cosine(1, 0, 1), 2)", [1, 0.5, 0, 0, 0, 0]),
    ("stretch(linear(0, 1, 3), 2)", [0, 1 / 6, 2 / 6, 3 / 6, 4 / 6, 5 / 6]),
    ("stretch(repeat(linear(0, 1, 2)), 2)", [0, 0.25, 0.5, 0.75, 0, 0.25]),
])
def test_stretch_sees_the_real_formula(source, want):
    assert values(source, range(6)) == pytest.approx(want, abs=1e-15)
