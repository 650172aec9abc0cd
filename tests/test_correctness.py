"""Reproductions of the defects a differential fuzzer found (issue 8), one test each.

Each compares the backends with each other and with exact values at the steps that
showed the defect; the fuzzer (tests/test_fuzz.py) keeps the classes from coming back.
"""

import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

import schedlang
from schedlang import SchedlangError
from schedlang.codegen.base import GeneratedModule
from schedlang.codegen.emit import emit
from schedlang.codegen.load import load as load_generated

ROOT = Path(__file__).resolve().parent.parent

# -- 1. the torch printer keeps every operand an operand ----------------------------------

ARITHMETIC = [
    ("0.5 * linear(3, 6, 10)", [1.5, 2.25, 3.0, 3.0]),
    ("linear(3, 6, 10) / 2", [1.5, 2.25, 3.0, 3.0]),
    ("1 - linear(3, 6, 10)", [-2.0, -3.5, -5.0, -5.0]),
    ("linear(3, 6, 10) + linear(3, 6, 10)", [6.0, 9.0, 12.0, 12.0]),
    ("linear(3, 6, 10) ** 2", [9.0, 20.25, 36.0, 36.0]),
    ("2 ** linear(1, 2, 10)", [2.0, 2 ** 1.5, 4.0, 4.0]),
    ("-(linear(3, 6, 10)) * 2", [-6.0, -9.0, -12.0, -12.0]),
    ("max(linear(3, 6, 10), 4) / 2", [2.0, 2.25, 3.0, 3.0]),
    ("(constant(1, 5) >> linear(3, 6, 10)) / 2", [0.5, 0.5, 2.25, 3.0]),
]


@pytest.mark.parametrize("source, expected", ARITHMETIC, ids=[s for s, _ in ARITHMETIC])
def test_arithmetic_on_schedules_is_the_same_in_every_target(source, expected):
    steps = [0, 5, 10, 20] if "constant(1, 5)" not in source else [0, 4, 10, 20]
    schedule = schedlang.compile(source)["lr"]
    assert [schedule(s) for s in steps] == pytest.approx(expected, rel=1e-15)
    assert schedule.torch(torch.tensor(steps)).tolist() == pytest.approx(expected, rel=1e-15)
    module = load_generated(GeneratedModule(emit(schedule.program, "torch", "x.sched"), {}))
    assert module.lr(torch.tensor(steps)).tolist() == pytest.approx(expected, rel=1e-15)


def test_eval_prints_the_same_values_for_long_ranges():
    schedule = schedlang.compile("0.5 * linear(3, 6, 10)")["lr"]
    from schedlang.runtime.arrays import values

    assert values(schedule, range(0, 100_000))[:3] == [1.5, 1.65, 1.8]


# -- 2. where clauses are checked, whatever they let the symbolic engine assume -------------

POSITIVE = "param p: float = 1 where {clause}\nschedule lr = abs(p) * linear(1, 0, 10)"


@pytest.mark.parametrize("clause", ["p > 0", "0 < p", "p > 0 and p < 5", "p < 5 and p > 0"])
def test_a_strict_lower_bound_is_enforced(clause):
    source = POSITIVE.format(clause=clause)
    assert schedlang.compile(source)["lr"](0) == 1.0
    with pytest.raises(SchedlangError, match="must satisfy"):
        schedlang.compile(source, params={"p": -2})
    with pytest.raises(SchedlangError, match="must satisfy"):
        schedlang.compile(source.replace("= 1", "= -1"))


def test_an_int_parameter_is_never_negative():
    with pytest.raises(SchedlangError, match="whole number >= 0"):
        schedlang.compile("param n: int = 1\nschedule lr = abs(n) * linear(1, 0, 10)", params={"n": -2})


def test_equivalent_checks_the_values_it_binds():
    a = POSITIVE.format(clause="p > 0")
    b = a.replace("abs(p)", "p")
    assert schedlang.equivalent(a, b)  # for every p > 0
    with pytest.raises(SchedlangError, match="must satisfy"):
        schedlang.equivalent(a, b, params={"p": -2})


def test_scheduler_constructor_checks_where_clauses():
    program = schedlang.compile(POSITIVE.format(clause="p > 0"))
    cls = program.scheduler_class("S")
    optimizer = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    with pytest.raises(SchedlangError, match="must satisfy"):
        cls(optimizer, p=-2.0)


def test_verify_cli_checks_defines(tmp_path):
    a, b = tmp_path / "a.sched", tmp_path / "b.sched"
    a.write_text(POSITIVE.format(clause="p > 0"))
    b.write_text(POSITIVE.format(clause="p > 0").replace("abs(p)", "p"))
    done = subprocess.run([sys.executable, "-m", "schedlang", "verify", str(a), str(b), "-D", "p=-2"],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "must satisfy" in done.stderr, done.stderr


# -- 3. generated names are one-to-one ---------------------------------------------------------

def test_mangled_schedule_names_do_not_collide():
    program = schedlang.compile("schedule lambda = constant(1)\nschedule lambda_ = constant(2)")
    assert (program["lambda"](0), program["lambda_"](0)) == (1.0, 2.0)
    steps = torch.tensor([0])
    assert (program["lambda"].torch(steps).item(), program["lambda_"].torch(steps).item()) == (1.0, 2.0)


def test_mangled_parameter_names_do_not_collide(tmp_path):
    source = ("param lambda: float = 1\nparam lambda_: float = 2\n"
              "schedule lr = constant(lambda)\nschedule momentum = constant(lambda_)")
    program = schedlang.compile(source)
    assert len(set(program.py_names.values())) == len(program.py_names)
    for target in ("python", "torch", "cerebras"):
        module = load_generated(GeneratedModule(emit(program, target, "x.sched", schedule="lr"), {}))
        function = module.SCHEDULES["lr"] if target != "cerebras" else None
        if function is not None:
            assert float(function(torch.tensor([0]) if target != "python" else 0)) == 1.0
    assert (program["lr"](0), program["momentum"](0)) == (1.0, 2.0)


# -- 4. counterexamples with huge exact values ------------------------------------------------

def test_a_counterexample_with_a_huge_exact_value_is_reported():
    verdict = schedlang.equivalent("0.999 ** t", "0.999 ** t + (if t == 777777 then 1e-3 else 0)")
    assert verdict.different and verdict.counterexample.step == 777777
    assert verdict.counterexample.a_exact is None  # millions of digits: shown as a float
    assert "777777" in str(verdict)


# -- 5. deep and long programs compile without recursion errors --------------------------------

def test_a_sum_of_sequences_with_symbolic_lengths_compiles():
    source = ("param n: int = 1000\n"
              "schedule lr = constant(1, 2*n) >> (linear(1,0,n) >> linear(0,1,n)) + linear(1,2,10)"
              " >> constant(1,5)")
    lr = schedlang.compile(source)["lr"]
    expected = {0: 1, 1999: 1, 2000: 2, 2005: 0.995 + 1.5, 3999: 0.999 + 2, 4000: 1, 4010: 1}
    assert [lr(s) for s in expected] == pytest.approx(list(expected.values()), rel=1e-12)


def test_many_chained_lets_compile():
    count = 150
    source = ("let s0 = linear(1, 0, 10)\n"
              + "".join(f"let s{i} = s{i - 1} >> linear(1, 0, 10)\n" for i in range(1, count))
              + f"schedule lr = s{count - 1}\n")
    lr = schedlang.compile(source)["lr"]
    steps = [0, 5, 10 * count - 5, 10 * count, 10 * count + 7]
    expected = [1.0, 0.5, 0.5, 0.0, 0.0]
    assert [lr(s) for s in steps] == expected
    assert lr.torch(torch.tensor(steps)).tolist() == expected


def test_a_long_sequence_compiles_flat_in_every_target():
    count = 90
    lr = schedlang.compile("schedule lr = " + " >> ".join(["linear(1, 0, 10)"] * count))["lr"]
    assert len(lr.expr.args) == count + 1  # one flat list of branches
    steps = list(range(0, 10 * count + 3, 7))
    expected = [0.0 if s >= 10 * count else 1 - (s % 10) / 10 for s in steps]
    assert [lr(s) for s in steps] == pytest.approx(expected, abs=1e-15)
    assert lr.torch(torch.tensor(steps)).tolist() == pytest.approx(expected, abs=1e-15)


# -- 9. each segment is computed in its own local step ------------------------------------------

def test_no_precision_is_lost_after_a_long_prefix():
    lr = schedlang.compile("constant(1, 1e9) >> linear(1e-6, 0, 100)")["lr"]
    steps = [10**9, 10**9 + 50, 10**9 + 99]
    exact = [1e-6, 5e-7, 1e-8]
    assert [lr(s) for s in steps] == pytest.approx(exact, rel=1e-14)
    assert lr.torch(torch.tensor(steps)).tolist() == pytest.approx(exact, rel=1e-14)
    assert lr.torch(torch.tensor(steps), dtype=torch.float32).tolist() == [
        float(torch.tensor(v, dtype=torch.float32)) for v in exact]


def test_a_decay_to_zero_after_a_warmup_never_goes_negative():
    lr = schedlang.compile("warmup(linear, 3) >> linear(0.3, 0, 7777777)")["lr"]
    steps = list(range(7777770, 7777782))
    assert min(lr(s) for s in steps) == 0.0
    assert lr.torch(torch.tensor(steps)).min().item() == 0.0


def test_two_hundred_chained_defs_compile_flat():
    count = 200
    source = ("def f0(x) = x\n" + "".join(f"def f{i}(x) = f{i - 1}(x) + 1\n" for i in range(1, count))
              + f"schedule lr = f{count - 1}(linear(1, 0, 10))\n")
    lr = schedlang.compile(source)["lr"]
    assert [lr(0), lr(5), lr(50)] == [200.0, 199.5, 199.0]
    assert len(lr.expr.args) == 2 and not lr.expr.args[0].expr.has(type(lr.expr))  # one flat table


def test_arithmetic_with_a_constant_keeps_the_table_flat():
    lr = schedlang.compile("-(0.5 * (linear(1, 0, 10) >> constant(2, 5)) / 4)")["lr"]
    assert [type(e) for e, _ in lr.expr.args].count(type(lr.expr)) == 0
    assert [lr(0), lr(10), lr(20)] == [-0.125, -0.25, -0.25]


# -- found by the fuzzer: Mod of a fractional step, restart index of a stretched schedule -------

@pytest.mark.parametrize("source, step, expected", [
    ("constant(1, 2) >> stretch(cycle(cosine(1, 0, 1000) for 1), 3)", 788, 1.0),
    ("stretch(cosine_restarts(7, 6e-4, 7), 10)", 70, 7.0),
    ("stretch(cosine_restarts(0.25, 0.3, 7, mult=3), 10)", 70, 0.25),
    ("stretch(repeat(cosine_restarts(0.3, 6e-4, 2, mult=3) for 50, times=7), 2)", 100, 0.3),
    ("stretch((constant(0.25, 17) >> exp(2, 0.5, 100)) for 100 >> stretch(repeat(cosine_restarts(7, 1e-3, 5,"
     " mult=2) for 105, times=1), 2) for 1, 10)", 1000, 7.0),
])
def test_fractional_steps_are_exact_in_every_target(source, step, expected):
    lr = schedlang.compile(source)["lr"]
    assert lr(step) == expected
    assert lr.torch(torch.tensor([step])).item() == expected


# -- 8. float64 overflow is refused at check time; the reference saturates like torch ------------

@pytest.mark.parametrize("source, step", [
    ("exp(1, 2, 10)", 10240),
    ("10 ** (t / 1000)", 308255),
    ("constant(1, 100) >> exp(1e-3, 1.001, 1)", 710238),  # 1.001 ** t itself overflows first
])
def test_overflow_is_refused_with_its_first_step(source, step):
    with pytest.raises(SchedlangError, match=f"overflows float64 from step {step} on"):
        schedlang.compile(source)


@pytest.mark.parametrize("run, refused", [(15, False), (2047, False), (2048, True), (None, True)])
def test_a_finite_run_allows_a_value_that_overflows_after_it(run, refused):
    """SPEC §4 refuses a value that is not finite on its domain; with `run = N` the domain is
    the run (steps 0 .. N, N being the value its last scheduler step sets).  optax's own test of
    exponential_decay(decay_rate=2) runs 15 steps; 2 ** (t / 2) overflows from step 2048."""
    call = "optax.exponential_decay(init_value=1.0, transition_steps=2, decay_rate=2.0)"
    source = call if run is None else f"run = {run}\nschedule lr = {call}"
    if refused:
        with pytest.raises(SchedlangError, match="overflows float64 from step 2048 on") as info:
            schedlang.compile(source)
        assert ("run = N" in info.value.hint) == (run is None)
        return
    lr = schedlang.compile(source)["lr"]
    assert [lr(s) for s in (0, 14, 2046)] == [1.0, 2.0 ** 7, 2.0 ** 1023]


def test_a_capped_growing_value_is_finite_everywhere():
    lr = schedlang.compile("optax.exponential_decay(init_value=1e-5, transition_steps=100, "
                           "decay_rate=2.0, end_value=1e-3)")["lr"]
    steps = [0, 700, 102_400, 10**9]
    assert [lr(s) for s in steps] == [1e-5, 1e-3, 1e-3, 1e-3]
    assert lr.torch(torch.tensor(steps)).tolist() == [1e-5, 1e-3, 1e-3, 1e-3]


def test_a_finite_growing_schedule_is_accepted():
    assert schedlang.compile("exp(1, 2, 10) for 5000")["lr"](10**6) == 2.0 ** 500


# -- 6. exact powers with huge exponents stay formulas -------------------------------------------

@pytest.mark.parametrize("source, step, expected", [
    ("constant(1, 2_000_000) >> max(100 * 0.999 ** t, 1e-4)", 2_000_100, 100 * 0.999 ** 100),
    ("(0.99 ** t) for 1_000_000 >> constant(1)", 1_000_001, 1.0),
    ("exp(1e-3, 0.9999, 1) for 1_000_000 >> constant(1e-5)", 10, 1e-3 * 0.9999 ** 10),
])
def test_huge_exact_powers_compile_fast(source, step, expected):
    started = time.process_time()
    lr = schedlang.compile(source)["lr"]
    assert time.process_time() - started < 5  # was 12.8 s to over a minute
    assert lr(step) == pytest.approx(expected, rel=1e-12)
    assert lr.torch(torch.tensor([step])).item() == pytest.approx(expected, rel=1e-12)


def test_a_power_is_still_computed_as_a_power():
    lr = schedlang.compile("step(1, 0.5, 10)")["lr"]
    assert [lr(s) for s in (0, 10, 35)] == [1.0, 0.5, 0.125]  # exactly, as 0.5 ** k
    assert schedlang.equivalent(lr, "0.5 ** floor(t / 10)")


def test_equivalent_finds_a_late_difference_after_a_huge_power_quickly():
    started = time.process_time()
    verdict = schedlang.equivalent("step(1, 0.5, 3)",
                                   "step(1, 0.5, 3) + (if t >= 2147483647 then 1e-3 else 0)")
    assert verdict.different and verdict.counterexample.step == 2147483647
    assert time.process_time() - started < 5


def test_the_finiteness_check_of_a_stretched_restart_schedule_is_bounded():
    started = time.process_time()
    lr = schedlang.compile("warmup(cosine, 1, start=1e-5) >> stretch(exp(1.5, 0.9999, 100, staircase=true)"
                           " - (7 / cosine_restarts(6e-4, 1.5, 3, mult=2)), 3)")["lr"]
    assert time.process_time() - started < 10  # ran past a minute deciding cos(...) == 0 in sympy
    assert lr(100) == pytest.approx(lr.torch(torch.tensor([100])).item(), rel=1e-12)


def test_bound_values_give_one_flat_table():
    program = schedlang.load(ROOT / "examples" / "wsd.sched")
    for schedule in program:
        pairs = schedule.expr.args
        assert not any(isinstance(value, type(schedule.expr)) or value.has(type(schedule.expr))
                       for value, _ in pairs)
    assert [float(c.rhs) for _, c in program["weight_decay"].expr.args[:-1]] == [1000, 40000, 50000]


def test_an_infinity_only_a_parameter_value_could_reach_is_decided_when_bound():
    # inverse_sqrt's start value has a `total / 0` branch for total = 0, which a period
    # never is: the file is valid, and each binding is checked on its own.
    source = ("param total: int = 100\n"
              "schedule lr = repeat((warmup(linear, 7) >> inverse_sqrt(0.3, total)) for 17, times=2)")
    lr = schedlang.compile(source)["lr"]
    assert [lr(k) for k in (0, 7, 16, 17, 24, 40)] == pytest.approx([0, 0.3, 0.3, 0, 0.3, 0.3])
    small = schedlang.compile(source, params={"total": 3})["lr"]
    assert small(12) == pytest.approx(0.3 * (3 / 5) ** 0.5)
    # the modules keep `total` a parameter: the unreachable branch prints as NaN (a fuzz crash)
    program = schedlang.compile(source)
    for target in ("python", "torch", "cerebras"):
        assert "def lr" in emit(program, target, "r.sched", "R")
    with pytest.raises(schedlang.SchedlangError, match="not finite"):
        schedlang.compile("param a: float = 0\nschedule lr = if a > 0 then 1 / a else 1 / a")


def test_a_fractional_parameter_bound_is_compared_in_int64():
    # `t < 0.8 * total` computed with a float32 step is inexact past 2**24: the boundary moved
    import types

    program = schedlang.compile("param total: int = 100\nschedule lr = if t < 0.8 * total then 1 else 2")
    module = types.ModuleType("bound_generated")
    exec(compile(emit(program, "torch", "b.sched", "B"), "<b>", "exec"), module.__dict__)  # noqa: S102
    for total in (2**25 + 3, 2**31 - 7, 10**12 + 1):
        edge = -(-4 * total // 5)            # the first step with t >= 0.8 * total
        steps = torch.tensor([edge - 1, edge], dtype=torch.int64)
        got = module.lr(steps, total=total, _compute=torch.float32).tolist()
        assert got == [1.0, 2.0], total


#: (fraction, total): ``fraction * total`` is whole, but one step above it in floats
#: (``0.55 * 100 == 55.00000000000001``), so a float comparison lets the edge step through.
ROUNDING_UP = [("0.55", 100), ("0.07", 5000), ("0.56", 100_000), ("0.17", 3_000_000)]


@pytest.mark.parametrize("fraction, total", ROUNDING_UP)
def test_a_parameter_bound_that_rounds_up_in_floats_is_exact_in_every_target(fraction, total):
    # The Python reference compared `t < (11/20)*total` in floats: step 55 read the first
    # segment at total = 100 (Schedule.__call__, compile --target python, the classes' float lr)
    import types

    assert float(fraction) * total > int(fraction.replace("0.", "")) * total // 100
    source = (f"param total: int = {total}\n"
              f"schedule lr = constant(1, {fraction} * total) >> linear(2, 3, total)")
    program = schedlang.compile(source)
    edge = int(fraction.replace("0.", "")) * total // 100
    steps = [edge - 1, edge, edge + 1]
    expected = [1.0, 2.0, 2 + 1 / total]
    assert [program["lr"](k) for k in steps] == pytest.approx(expected, rel=1e-15)
    for target in ("python", "torch"):
        module = types.ModuleType(f"edge_{target}")
        exec(compile(emit(program, target, "e.sched", "E"), "<e>", "exec"), module.__dict__)  # noqa: S102
        if target == "python":
            got = [module.lr(k, total=total) for k in steps]
        else:
            got = module.lr(torch.tensor(steps), total=total).tolist()
            assert module.lr(torch.tensor(steps[:2]), total=total,
                             _compute=torch.float32).tolist() == [1.0, 2.0]
        assert got == pytest.approx(expected, rel=1e-15), target


def test_a_restart_period_that_rounds_up_in_floats_is_whole_in_every_target():
    # 0.07 * 100000 is 7000.000000000001 in floats: the reference's restart loop put step 7000
    # in the first cycle, and torch/JAX emit refused the period as not whole
    import types

    source = ("param total: int = 100000 where total > 0\n"
              "schedule lr = cosine_restarts(1, 0, 0.07 * total, mult=2)")
    program = schedlang.compile(source)
    steps = [6999, 7000, 7001, 20999, 21000]
    expected = [program["lr"].expr.xreplace({schedlang.t: k}).evalf(20) for k in steps]
    assert float(expected[1]) == 1.0 and float(expected[4]) == 1.0  # cycles start at 7000 and 21000
    for target in ("python", "torch"):
        module = types.ModuleType(f"restart_{target}")
        exec(compile(emit(program, target, "r.sched", "R"), "<r>", "exec"), module.__dict__)  # noqa: S102
        got = ([module.lr(k) for k in steps] if target == "python"
               else module.lr(torch.tensor(steps)).tolist())
        assert got == pytest.approx([float(v) for v in expected], rel=1e-12, abs=1e-15), target
    with pytest.raises(schedlang.SchedlangError, match="whole number >= 1"):
        schedlang.compile("schedule lr = cosine_restarts(1, 0, 10, mult=1.5)")


def test_an_exp_warmup_into_restarts_of_a_parameter_length_is_accepted():
    # restart_index(0, ...) is 0 whatever the cycle length: the target is positive (fuzz class)
    source = ("param w: int = 10 where w > 0\n"
              "schedule lr = warmup(exp, 10, start=1e-3) >> cosine_restarts(0.25, 3e-4, 2 * w, mult=2)")
    lr = schedlang.compile(source)["lr"]
    assert lr(0) == pytest.approx(1e-3) and lr(10) == pytest.approx(0.25)


def test_a_nested_table_is_printed_in_local_steps_in_the_reference():
    # `x - (linear >> ... >> 0.97 ** t)`: the inner table is not the top-level `if`, and its
    # last branch was printed as t/3 - 1000000100/3, which cancels in floats (a fuzz find)
    source = ("schedule lr = linear(0.1, 0.5, 20) - (constant(0.1, 1000000100) >> "
              "stretch(0.97 ** t, 3))")
    lr = schedlang.compile(source)["lr"]
    step = 1_000_000_101
    assert lr(step) == pytest.approx(0.5 - 0.97 ** (1 / 3), rel=1e-14)
