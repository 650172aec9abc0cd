"""The Python API of SPEC §5, and schedules built from sympy expressions."""

from pathlib import Path

import pytest
import sympy as sp

import schedlang
from schedlang import t


def test_spec_api_names():
    source = "param total: int\nschedule lr = warmup(linear, 500) >> cosine(1e-3, 1e-4, total - 500)"
    prog = schedlang.compile(source, params={"total": 10_000})
    lr = prog["lr"]
    assert isinstance(lr, schedlang.Schedule)
    assert lr(250) == pytest.approx(5e-4)
    assert isinstance(lr.expr, sp.Expr) and lr.expr.free_symbols == {schedlang.t}
    assert lr.duration == 10_000
    assert issubclass(schedlang.SchedlangError, Exception)


def test_symbolic_parameters_stay_symbolic():
    prog = schedlang.compile("param total: int\nparam peak: float = 1e-3\n"
                             "schedule lr = cosine(peak, 0, total)")
    lr = prog["lr"]
    assert {s.name for s in lr.expr.free_symbols} == {"t", "total"}
    assert str(lr.duration) == "total"
    assert {s.name for s in lr.symbolic_expr.free_symbols} == {"t", "total", "peak"}
    total = prog.params["total"].symbol
    assert total.is_integer and total.is_nonnegative
    with pytest.raises(schedlang.SchedlangError, match="needs a value for parameter 'total'"):
        lr(3)


def test_where_positive_sets_assumption():
    prog = schedlang.compile("param p: float = 1 where p > 0\nparam n: int = 3 where n > 0\nschedule lr = p")
    assert prog.params["p"].symbol.is_positive and prog.params["n"].symbol.is_positive
    assert prog.params["n"].symbol.is_integer


def test_load_and_params(tmp_path):
    path = tmp_path / "x.sched"
    path.write_text("param w: int = 10\nschedule lr = warmup(linear, w) >> constant(2)")
    assert schedlang.load(path, params={"w": 4})["lr"](2) == 1.0
    assert schedlang.load(path, params={"w": "20"})["lr"](5) == 0.5
    with pytest.raises(schedlang.SchedlangError, match="no parameter 'v'"):
        schedlang.load(path, params={"v": 1})


def test_bytes_and_filename_in_errors():
    with pytest.raises(schedlang.SchedlangError) as info:
        schedlang.compile(b"cosin(1, 0, 10)", filename="a.sched")
    assert (info.value.filename, info.value.line, info.value.column) == ("a.sched", 1, 1)


@pytest.mark.parametrize("bad", [-1, 1.5, "x", None])
def test_bad_steps(bad):
    lr = schedlang.compile("constant(1)")["lr"]
    with pytest.raises(schedlang.SchedlangError):
        lr(bad)


def test_from_sympy_is_checked():
    peak = sp.Symbol("peak", positive=True)
    lr = schedlang.Schedule.from_sympy(peak * (1 - t / 100), 100, params={"peak": 0.5})
    assert lr(0) == 0.5 and lr(50) == 0.25 and lr(1000) == 0.0
    with pytest.raises(schedlang.SchedlangError, match="depends on 'loss'"):
        schedlang.Schedule.from_sympy(sp.Symbol("loss") * t)
    with pytest.raises(schedlang.SchedlangError, match="not finite at step 0"):
        schedlang.Schedule.from_sympy(1 / t)
    with pytest.raises(schedlang.SchedlangError, match="no closed form"):
        schedlang.Schedule.from_sympy(sp.gamma(t + 1))
    with pytest.raises(schedlang.SchedlangError, match="at least 0"):
        schedlang.Schedule.from_sympy(t, duration=-1)
    plain_t = sp.Symbol("t")
    assert schedlang.Schedule.from_sympy(sp.floor(plain_t / 3), None)(7) == 2


def test_exact_decimals():
    lr = schedlang.compile("0.1 + 0.2")["lr"]
    assert lr.expr == sp.Rational(3, 10)
    assert lr(0) == 0.3


def test_exact_integer_floor_far_out():
    lr = schedlang.compile("step(1, 0.5, 3)")["lr"]
    assert lr(3 * 10**15 - 1) == 0.5 ** (10**15 - 1)
    cyc = schedlang.compile("repeat(linear(0, 1, 7))")["lr"]
    assert cyc(7 * 10**14 + 3) == pytest.approx(3 / 7, rel=1e-15)


def test_the_main_schedule_is_named_else_lr_else_the_only_one():
    """One rule (``Program.main_schedule``) for every command that needs one schedule."""
    two = schedlang.compile("schedule a = constant(1)\nschedule b = constant(2)\n")
    assert two.main_schedule("b").name == "b"
    with pytest.raises(schedlang.SchedlangError, match="none is named 'lr'"):
        schedlang.equivalent(two, "constant(1)")
    with pytest.raises(schedlang.SchedlangError, match="a Cerebras LRScheduler sets one schedule"):
        two.main_schedule(purpose="a Cerebras LRScheduler sets one schedule")
    with_lr = schedlang.compile("schedule wd = constant(1)\nschedule lr = constant(2)\n")
    assert with_lr.main_schedule().name == "lr"
    assert schedlang.compile("schedule wd = constant(1)\n").main_schedule().name == "wd"
    assert schedlang.equivalent(with_lr, "constant(2)").equivalent


def test_rebinding_adds_no_module():
    """The in-process reference takes the values as arguments (none are baked into its text),
    so a parameter search of any length loads one module per file."""
    import sys

    program = schedlang.load("examples/gpt_pretrain.sched", params={"total": 10_000})
    program["lr"](250)
    before = {name for name in sys.modules if name.startswith("schedlang_")}
    values = [program.rebind({"total": 3000 + 100 * k})["lr"](2500) for k in range(20)]
    assert {name for name in sys.modules if name.startswith("schedlang_")} == before
    fresh = schedlang.load("examples/gpt_pretrain.sched", params={"total": 4900})["lr"](2500)
    assert values[19] == fresh


def test_compiling_with_new_values_adds_no_module():
    """``compile`` with other values prints the same reference text, and a loaded text is
    cached by its content: twenty compilations of one file load one module."""
    import sys

    source = Path("examples/gpt_pretrain.sched").read_text(encoding="utf-8")
    schedlang.compile(source, params={"total": 10_000})["lr"](250)
    before = {name for name in sys.modules if name.startswith("schedlang_")}
    values = [schedlang.compile(source, params={"total": 3000 + 100 * k})["lr"](2500) for k in range(20)]
    assert {name for name in sys.modules if name.startswith("schedlang_")} == before
    assert len(set(values)) > 1  # the values did reach the reference
