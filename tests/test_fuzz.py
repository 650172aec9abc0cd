"""Differential fuzzing: every way schedlang evaluates a program agrees with an exact evaluator.

A seeded generator (``tests/fuzzing/generator.py``) writes valid programs covering the
whole language and standard library and a sample of presets; each schedule is
evaluated at its breakpoints +-1, 0, random steps and huge steps by the Python
reference, ``Schedule.torch`` (float64 and float32), the standalone torch module and
``tests/fuzzing/exact.py`` (exact rationals / 50-digit mpmath).  See docs/testing.md
for the agreement bound.  ``python tools/fuzz.py --programs 10000`` is the long run.
"""


import pytest
import sympy as sp
from fuzzing import exact
from fuzzing.generator import Program, generate
from fuzzing.runner import check_isolated, check_program, summarize

import schedlang

PROGRAMS = 120  # CI: seeds 0 .. PROGRAMS-1, in chunks (one test each); ~0.2 s a program
CHUNK = 40
BUDGET_S = 3.0  # CPU seconds per program in CI (tools/fuzz.py: 10 s); a hang costs at most 4 * BUDGET_S + 2 s
UNIT_BUDGET_S = 60.0  # in-process checks of the checker itself: the first one pays for importing torch


def _report(results) -> str:
    """The smallest failing program of each kind, with the step and the values."""
    best = {}
    for r in results:
        for f in r.failures:
            if f.kind not in best or len(f.program.source) < len(best[f.kind].program.source):
                best[f.kind] = f
    figures = summarize(results)
    return (f"{figures}\n\n" + "\n\n".join(f.report() for f in best.values())
            + "\n\nreproduce: python tools/fuzz.py (see docs/testing.md) or check_program(generate(seed))")


# -- the exact evaluator itself ------------------------------------------------------------


def test_exact_evaluator_knows_the_answers():
    t = schedlang.t
    assert exact.evaluate(sp.Rational(1, 3) * t + 1, 6)[0] == 3
    assert exact.evaluate(sp.cos(sp.pi * t / 3), 2**40 + 5)[0] == -1  # 3 mod 6: reduced exactly
    value, kappa, _, _ = exact.evaluate(sp.cos(sp.pi * t / 3), 3)
    assert value == -1 and kappa > 0
    assert exact.evaluate(sp.floor(t / 7), 2**31 - 1)[0] == (2**31 - 1) // 7
    assert exact.evaluate(sp.Mod(t, 10), 123)[0] == 3
    assert exact.evaluate(sp.Piecewise((1, t < 5), (2, True)), 5)[0] == 2
    assert exact.evaluate(sp.Min(t, 3), 7)[0] == 3
    assert exact.evaluate(sp.sqrt(t), 49)[0] == 7
    big = exact.evaluate(sp.Rational(9999, 10000) ** t, 2**40)[0]  # exact would have 2**40 digits
    assert 0 < exact.to_float(big) < 1e-300 or exact.to_float(big) == 0.0
    assert exact.evaluate(sp.floor(sp.Rational(3, 10) * 10 + t * 0), 0)[0] == 3


def test_a_known_disagreement_is_reported_clearly(monkeypatch):
    """A reference off by 1e-9 relative is reported, naming the program, schedule, step and values."""
    program = Program(0, "schedule lr = 1 - linear(1, 2, 10)\n")
    assert not check_program(program, budget=UNIT_BUDGET_S).failures
    _perturb(monkeypatch, 1e-9)
    result = check_program(program, budget=UNIT_BUDGET_S, torch_checks=False)
    assert result.schedules == 1 and result.points > 5
    assert [f.kind for f in result.failures] == ["reference"]
    text = result.failures[0].report()
    assert "schedule 'lr' at step" in text and "exact =" in text and "linear(1, 2, 10)" in text


def test_the_cancellation_bound_is_tight_enough_to_catch_real_errors(monkeypatch):
    """``0.1 / cosine(1e-5, 2, 10)`` cancels at step 0 (bound ~4e-10 relative, docs/testing.md):
    exact to the bound as compiled, and a 1e-8 relative error is still reported."""
    program = Program(0, "schedule lr = 0.1 / cosine(1e-5, 2, 10)\n")
    assert not check_program(program, budget=UNIT_BUDGET_S).failures
    _perturb(monkeypatch, 1e-8)
    failures = check_program(program, budget=UNIT_BUDGET_S, torch_checks=False).failures
    assert [f.kind for f in failures] == ["reference"]
    _, _, _, error = exact.evaluate(program_expr(program), 0)
    assert 1e-12 * 1e4 < error < 1e-9 * 1e4  # at step 0 (value 1e4): needed (over REL) and tight


def _perturb(monkeypatch, relative):
    """Make the Python reference off by ``relative``."""
    call = schedlang.program.Schedule.__call__
    monkeypatch.setattr(schedlang.program.Schedule, "__call__",
                        lambda self, s: call(self, s) * (1 + relative))


def program_expr(program):
    return schedlang.compile(program.source)["lr"].expr


# -- the fuzzer ----------------------------------------------------------------------------


@pytest.mark.parametrize("start", range(0, PROGRAMS, CHUNK))
def test_fuzz_programs_agree(start):
    results = [check_isolated(generate(seed), budget=BUDGET_S) for seed in range(start, start + CHUNK)]
    assert sum(r.schedules for r in results) >= CHUNK
    assert not any(r.failures for r in results), _report(results)


#: One minimal reproduction per defect class the fuzzer found (all fixed; see docs/testing.md).
REPRODUCTIONS = {
    "torch drops parentheses (c * s)": ("0.5 * linear(3, 6, 10)", {}),
    "torch drops parentheses (c - s)": ("3e-4 - poly(1e-3, 2, 100, power=1.5)", {}),
    "torch drops parentheses (abs)": ("abs(1e-3 - poly(0.3, 1e-3, 3, power=1.5))", {}),
    "cycle of a guarded singular branch refused": ("cycle(poly(1, 0, 90, power=0.5) >> constant(0, 10))", {}),
    "repeat of inverse_sqrt refused": ("repeat(inverse_sqrt(1e-3, 2) for 7, times=7)", {}),
    "exp overflow not caught": ("exp(1, 2, 10)", {}),
    "compile hangs (huge exact power)":
        ("cycle((linear(0, 1, 1000000000) >> step(0.25, 0.1, 100)) for 1)", {}),
    "torch emit crashes on stretched restart_index":
        ("stretch(cosine_restarts(0.25, 0.3, 7, mult=3), 10)", {}),
    "Mod of a rational step in float (stretch of a period)": ("stretch(cosine_restarts(7, 6e-4, 7), 10)", {}),
    "torch restart_index of a Mod of a half step (stretch of a cycle of a stretch)":
        ("stretch(cycle(stretch(cosine_restarts(7, 0.5, 7, mult=3), 10) for 7), 2)", {}),
    "Mod of a rational step in float, after a prefix":
        ("constant(1, 2) >> stretch(cycle(cosine(1, 0, 1000) for 1), 3)", {}),
    "1 - t/n cancels near the end of a long segment (now (n - t)/n)":
        ("constant(1, 5) >> 0.5 / poly(0.1, 3e-4, 1000000000, power=0.5)", {}),
    "(n - t)/n over a parameter denominator keeps its parentheses":
        ("param warm: int = 10 where warm > 0\n"
         "schedule lr = 0.1 - (warmup(linear, 2 * warm, start=0.5) >> cosine(3e-4, 3e-4, 250))",
         {"warm": 100}),
    "restart_index of Mod(t, total) with total only known to be >= 0 (torch and jax emit crashed)":
        ("param warm: int = 10 where warm > 0\nparam total: int = 5000 where total > warm\n"
         "schedule lr = repeat(cosine_restarts(7, 0.1, 3, mult=2) for total, times=1)", {"warm": 1234}),
    "binding built a branch no parameter value reaches (sqrt of -1 inside Max: a crash)":
        ("param warm: int = 10 where warm > 0\n"
         "schedule lr = max(poly(7, 0.25, 10, power=0.5), constant(6e-4) + constant(0.25, 2 * warm))", {}),
    "the reference wrote a branch no step reaches, in a local step where it is complex":
        ("if t < 100 then 1 else clamp(if t < 5 then poly(6e-4, 7, 5, power=1.5) else 0.3, 0.5, 1.5)", {}),
    "floor of a power whose exponent became a whole number (PrecisionExhausted printing it)":
        ("stretch(((floor((warmup(linear, 3, start=2) >> step(1, 0.7, 10)) * 1000) / 1000) + "
         "stretch(exp(3e-4, 0.9999, 1000000000), 2)) for 17, 10)", {}),
    "an exp warmup to a start only a zero-length parameter value changes was refused":
        ("param warm: int = 10 where warm > 0\nparam total: int = 5000 where total > warm\n"
         "schedule lr = warmup(exp, 10, start=1e-5) >> constant(0.1, 2 * total) >> linear(1.5, 7, 50)",
         {"warm": 100}),
    "restart_index of a stretched Mod(t, total) (torch emit crashed: floor of it not whole to sympy)":
        ("param warm: int = 10 where warm > 0\nparam total: int = 5000 where total > warm\n"
         "schedule lr = stretch(repeat((warmup(exp, 100, start=2) >> "
         "cosine_restarts(0.25, 1e-3, 2 * warm, mult=3)) for 2 * total, times=1), 3)", {"warm": 1}),
    "sympy's solver on two cosines of the step (50 s)":
        ("1e-5 / stretch(((cosine(3e-4, 6e-4, 15) + cosine(1.5, 7, 1)) for 100) >> constant(1e-3, 3), 10)",
         {}),
    "a ceiling of a parameter ratio that cancels to a whole number (torch: int has no .to)":
        ("param total: int = 5000\n"
         "schedule lr = ceil(stretch(linear(1e-3, 1.5, total + 5), 2) * 1000) / 1000", {}),
    "a warmup into a table whose start only total = 0 makes complex (total > warm not positive)":
        ("param warm: int = 10 where warm > 0\nparam total: int = 5000 where total > warm\n"
         "schedule lr = warmup(linear, 2, start=0.5) >> "
         "(constant(7, total) >> inverse_sqrt(7, 0.17 * total))",
         {"total": 100_000}),
    "a restart period 0.07 * total: whole for every accepted total, not to sympy (torch emit crashed)":
        ("param total: int = 5000 where total > 0\n"
         "schedule lr = cosine(1e-3, 1e-5, 10) >> repeat(cosine_restarts(1e-3, 1e-5, 0.07 * total, mult=3) "
         "for 50000, times=3)", {"total": 100_000}),
    "sympy's solver through restart_index under min() (10-20 s each, two hazards)":
        ("log(min(stretch(cosine_restarts(6e-4, 0.1, 10, mult=2), 10), linear(2, 0.2, 100000)))", {}),
    "a floor of a Mod of a parameter ratio (the reference's float floor hit 0 and divided by it)":
        ("param total: int = 5000 where total > 0\n"
         "schedule lr = 3e-4 - repeat((constant(1, 100) >> (6e-4 / floor(t / 3 + 1))) for 0.56 * total, "
         "times=7)", {"total": 100_000}),
    "an overflow inside cos (math.cos(inf) has no value; the fuzzer's exact cos of 1.5**1e9 hung)":
        ("cos(exp(0.5, 1.5, 1000))", {}),
    "sympy's solver on a cosine inside min() (set algebra without end)":
        ("sqrt(min(cosine(0.1, 1e-3, 5), linear(1e-3, 0.5, 10)))", {}),
    "sympy's Min comparing two bound tables by factoring their difference (minutes)":
        ("param peak: float = 1e-3 where peak > 0\n"
         "schedule lr = min(piecewise([1.5, 0.3], [4]), (cycle(poly(0.5, 1.5, 1000000000, power=3)) "
         "for 1000000000) >> (warmup(exp, 100, start=0.1) >> cosine(peak, 3e-4, 1)), 0.25)",
         {"peak": 0.002}),
    "a parameter boundary that rounds up in floats (0.07 * 5000 = 350.00000000000006)":
        ("param total: int = 5000\nschedule lr = constant(1, 0.07 * total) >> linear(2, 3, total)", {}),
    "a restart index at max(200, 4.55 * total), the end of a difference (torch and jax emit crashed)":
        ("param total: int = 5000 where total > 0\n"
         "schedule lr = ((cosine_restarts(2, 7, 7, mult=3) for 0.55 * total) >> linear(2, 0.2, 4 * total))"
         " - repeat(cosine_restarts(1, 0.5, 50, mult=2) for 100, times=2)", {}),
    "the oracle's exp of -exp(1.5 ** t) (mpmath computed ln 2 to as many bits as its digits)":
        ("param total: int = 5000 where total > 0\n"
         "schedule lr = max(exp(-exp(0.25, 1.5, total + 5)), inverse_sqrt(1e-5, 5) for 10, 7)",
         {"total": 100_000}),
}


@pytest.mark.parametrize("name", list(REPRODUCTIONS))
def test_reproduction(name):
    source, params = REPRODUCTIONS[name]
    text = source if "schedule " in source else f"schedule lr = {source}"
    result = check_isolated(Program(0, text + "\n", params), budget=BUDGET_S)
    assert not result.failures, "\n\n".join(f.report() for f in result.failures)
