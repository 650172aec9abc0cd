"""The shortcuts that keep long schedules cheap build exactly what sympy builds (issue 31, item 4).

``core.algebra.periodic`` builds ``sin``/``cos`` of ``pi * (a*t + b)`` without asking sympy's
assumptions; ``codegen.integers`` answers "not whole" for a factor holding a trig function
without asking.  Each shortcut is compared with sympy on many drawn arguments, and a chain of
distinct cosines (every shortcut taken) is compared with its definition at each segment's
start, middle and end, in the reference and in the torch module.
"""

from __future__ import annotations

import math
import random

import mpmath
import pytest
import sympy as sp

import schedlang
from schedlang.codegen.integers import affine_step, integer_ratio, remainder, step_ratio
from schedlang.codegen.stable import nearest_zero
from schedlang.core.algebra import _canonical_relation, _plain_pi_multiple, at, before, periodic, t, tau


def _arguments(seed: int, count: int):
    rng = random.Random(seed)

    def rational():
        return sp.Rational(rng.randint(-50, 50), rng.choice([1, 2, 3, 4, 6, 7, 27, 616, 4158, 10**9 + 7]))

    for _ in range(count):
        step = rng.choice([t, tau])
        a, b = rational(), rational()
        form = rng.randrange(5)
        if form == 0:
            yield sp.pi * (a * step + b)
        elif form == 1:
            yield sp.pi * a * step
        elif form == 2:
            yield sp.pi * a * step + sp.pi * sp.S.Half * rng.randint(-5, 5)
        elif form == 3:
            yield sp.pi * (a * step + b) / 2
        else:
            yield sp.pi * (step - rng.randint(0, 10**6)) / rng.randint(1, 5000)


def test_periodic_builds_what_sympy_builds():
    shortcuts = 0
    for arg in _arguments(3, 600):
        shortcuts += _plain_pi_multiple(arg) is not None
        for func in (sp.sin, sp.cos):
            want, got = func(arg), periodic(func, arg)
            assert got == want and type(got) is type(want), (func, arg)
    assert shortcuts > 100  # the drawn arguments do exercise the shortcut


@pytest.mark.parametrize("arg", [sp.pi * t, 2 * sp.pi * t, sp.pi * t / 2, 5 * sp.pi * t / 2,
                                 -sp.pi * t / 7, sp.pi * (t / 2 + sp.Rational(1, 3)),
                                 sp.pi * (3 * t / 7 + 1), sp.pi * (t / 7 + sp.Rational(1, 2))])
def test_periodic_leaves_the_special_arguments_to_sympy(arg):
    for func in (sp.sin, sp.cos):
        assert periodic(func, arg) == func(arg)


def test_a_trig_factor_is_not_whole():
    # 2 cos(x)**2 / 5 + 3/5 has no whole numerator: printed as it is, as before
    expr = sp.Rational(3, 5) + sp.Rational(2, 5) * sp.cos(sp.pi * t / 1234) ** 2
    assert step_ratio(expr) is None
    assert step_ratio(sp.Rational(3, 5) - t / 5) == (3 - t, 5)


def _chain(count: int, seed: int):
    rng = random.Random(seed)
    parts, value = [], 1.0
    for _ in range(count):
        end, length = round(rng.uniform(0.01, 0.99), 4), rng.randint(3, 5000)
        parts.append((value, end, length))
        value = end
    return parts


def _expected(parts, step):
    start = 0
    for v0, v1, n in parts:
        if step < start + n:
            k = step - start
            return float(mpmath.mpf(v1) + (mpmath.mpf(v0) - mpmath.mpf(v1))
                         * (1 + mpmath.cos(mpmath.pi * k / n)) / 2)
        start += n
    return parts[-1][1]


def test_distinct_cosines_keep_their_values():
    parts = _chain(40, 7)
    source = "schedule lr = " + " >> ".join(f"cosine({a}, {b}, {n})" for a, b, n in parts)
    schedule = schedlang.compile(source)["lr"]
    steps, start = [], 0
    for _, _, n in parts:
        steps += [start, start + 1, start + n // 2, start + n - 1]
        start += n
    steps += [start, start + 10**15]
    torch = pytest.importorskip("torch")
    values = schedule.torch(torch.tensor(steps, dtype=torch.int64)).tolist()
    for step, got in zip(steps, values):
        want = _expected(parts, step)
        assert math.isclose(schedule(step), want, rel_tol=1e-13, abs_tol=1e-15), step
        assert math.isclose(got, want, rel_tol=1e-13, abs_tol=1e-15), step


def test_remainder_builds_what_sympy_builds():
    local = sp.Dummy("local", integer=True, nonnegative=True)
    signed = sp.Symbol("x", integer=True)
    rng = random.Random(5)
    shortcuts = 0
    for _ in range(250):
        step = rng.choice([t, local, signed])
        big = rng.choice([10, 100, 10**6, 10**12])
        a = rng.choice([rng.randint(-3, 12), rng.randint(1, big), 2**rng.randint(0, 20) * rng.randint(1, 9)])
        b = rng.choice([0, rng.randint(-big, big), 2**rng.randint(0, 25) * rng.randint(-9, 9)])
        q = rng.choice([rng.randint(1, 20), rng.randint(1, big),
                        2**rng.randint(1, 40) * rng.choice([1, 3, 5, 5**9])])
        numerator = a * step + b
        want, got = sp.Mod(numerator, q), remainder(numerator, sp.Integer(q))
        assert sp.srepr(got) == sp.srepr(want), (numerator, q)
        shortcuts += affine_step(numerator) is not None
    assert shortcuts > 100


def test_linear_ratio_is_what_together_gives():
    local = sp.Dummy("local", integer=True, nonnegative=True)
    total = sp.Symbol("total", integer=True, positive=True)
    rng = random.Random(9)
    for _ in range(300):
        expr = sp.Rational(rng.randint(-10**6, 10**6), rng.choice([1, 2, 3, 4, 27, 4158, 10**9]))
        for symbol in rng.sample([t, local, total], rng.randint(1, 3)):
            expr += sp.Rational(rng.choice([rng.randint(-9, 9), rng.randint(-10**7, 10**7)]),
                                rng.choice([1, 2, 3, 6, 4158, 616, 10**9 + 7])) * symbol
        numerator, denominator = sp.fraction(sp.together(expr))
        got = integer_ratio(expr)
        assert (sp.srepr(got[0]), sp.srepr(got[1])) == (sp.srepr(numerator), sp.srepr(denominator)), expr


def test_nearest_zero_is_what_min_gives():
    local = sp.Dummy("local", integer=True, nonnegative=True)
    rng = random.Random(11)
    for _ in range(60):
        modulus = sp.Integer(rng.choice([3, 7, 616, 4158, 10**6, 10**9 + 7]))
        step = rng.choice([t, local])
        u = remainder(rng.randint(1, 10**6) * step + rng.randint(-10**6, 10**6), modulus)
        if isinstance(u, sp.Mul):  # G * Mod(...): sympy's path
            continue
        got, want = nearest_zero(u, modulus), sp.Min(u, modulus - u)
        assert sp.srepr(got) == sp.srepr(want), u
        clamped = rng.randint(1, 9) * step + rng.randint(-10**6, 10**6)  # the array printers' u
        got, want = nearest_zero(clamped, modulus), sp.Min(clamped, modulus - clamped)
        assert sp.srepr(got) == sp.srepr(want), clamped


@pytest.mark.parametrize("bound", [1, 5, sp.Rational(1, 2), 10**15, 0, -3, sp.Symbol("n", positive=True)])
def test_before_is_what_lt_gives(bound):
    for step in (t, tau):
        assert sp.srepr(before(step, bound)) == sp.srepr(sp.Lt(step, bound))


def test_rebuilt_comparisons_are_what_sympy_gives():
    rng = random.Random(13)
    for _ in range(150):
        step = rng.choice([t, tau])
        relation = rng.choice([sp.Lt, sp.Le, sp.Gt, sp.Ge])
        a = sp.Rational(rng.choice([-1, 1]) * rng.randint(1, 10**6), rng.randint(1, 99))
        b, c = (sp.Rational(rng.randint(-10**9, 10**9), rng.randint(1, 99)) for _ in range(2))
        got = at(relation(step, c, evaluate=False), a * step + b)
        want = _canonical_relation(relation(a * step + b, c))
        assert sp.srepr(got) == sp.srepr(want), (relation, a, b, c)
