"""``schedlang.build``: the language as Python objects (SPEC §9).

Tables: every example file written with ``build`` (tests/build_examples.py) gives the very
formula its file gives; every preset case (tests/anchors/preset_cases.py) replayed through
``build`` gives the formula of its text; mistakes are reported at this file's lines with the
language's own messages and hints; ``to_source`` round trips.
"""

from __future__ import annotations

import inspect
import operator
import re
from fractions import Fraction
from pathlib import Path

import build_examples
import pytest
import sympy as sp
from helpers import ROOT

import schedlang
from schedlang import build as sb
from schedlang.library import stdlib
from schedlang.library.presets import LIBRARIES, PRESETS, Rejected
from schedlang.syntax import ir
from schedlang.syntax.fmt import _shape, format_source
from schedlang.syntax.parser import parse

EXAMPLES = sorted((ROOT / "examples").glob("*.sched"))
HERE = Path(__file__).resolve()


def line_of(marker: str) -> int:
    """The line of this file that carries ``# <marker>`` (error locations are asserted against it)."""
    lines = HERE.read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if line.rstrip().endswith(f"# {marker}"))


# -- the examples, written with build --------------------------------------------------------------


def test_every_example_has_a_built_twin():
    functions = [n for n, f in vars(build_examples).items()
                 if inspect.isfunction(f) and f.__module__ == "build_examples"]
    assert sorted(p.stem for p in EXAMPLES) == sorted(functions)


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_built_with_python_is_its_file(path):
    built = getattr(build_examples, path.stem)()
    if not isinstance(built, schedlang.Program):
        built = built.program()
    file = schedlang.load(path)
    assert list(built.schedules) == list(file.schedules)
    assert list(built.params) == list(file.params)
    assert built.values == file.values
    for schedule in file:
        # The same tree lowers to the same formula, exactly; the prover agrees.
        assert built[schedule.name].expr == schedule.expr
        assert schedlang.equivalent(built[schedule.name], schedule)


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_to_source_round_trips(path):
    built = getattr(build_examples, path.stem)()
    source = built.to_source()
    assert format_source(source) == source
    program = built if isinstance(built, schedlang.Program) else built.program()
    again = schedlang.compile(source)
    for schedule in program:
        assert again[schedule.name].expr == schedule.expr
        assert schedlang.equivalent(again[schedule.name], schedule)


# -- every preset, through build -------------------------------------------------------------------


def replay(node, env):
    """Build the piece a ``.sched`` node says with ``schedlang.build`` calls (the test's own reading)."""
    if isinstance(node, ir.Module):
        schedules = {}
        for stmt in node.statements:
            if isinstance(stmt, ir.Param):
                default = None if stmt.default is None else replay(stmt.default, env)
                where = None
                if stmt.where is not None:
                    where = (lambda clause, name: lambda p: replay(clause, {**env, name: p}))(
                        stmt.where, stmt.name)
                env[stmt.name] = sb.param(stmt.name, stmt.type, default, where=where)
            elif isinstance(stmt, ir.Let):
                env[stmt.name] = replay(stmt.value, env)
            else:
                schedules[stmt.name] = env[stmt.name] = replay(stmt.value, env)
        return sb.program(**schedules)
    if isinstance(node, ir.Number):
        return node.value
    if isinstance(node, ir.Duration):
        from schedlang.semantics.lower_expressions import TIME_UNITS

        per = TIME_UNITS[node.unit][0]
        return sb.time(node.value, node.unit, env[per] if per else None)
    if isinstance(node, (ir.String, ir.Bool)):
        return node.value
    if isinstance(node, ir.Name):
        if node.id in env:
            return env[node.id]
        found = sb
        for part in node.id.split("."):
            found = getattr(found, part)
        return found
    if isinstance(node, ir.List):
        return [replay(i, env) for i in node.items]
    if isinstance(node, ir.Call):
        function = replay(node.func, {})
        keywords = {k.name: replay(k.value, env) for k in node.keywords}
        return function(*(replay(a, env) for a in node.args), **keywords)
    ops = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
           "**": operator.pow, "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
           "==": operator.eq, "!=": operator.ne, "and": operator.and_, "or": operator.or_}
    if isinstance(node, ir.BinOp):
        return ops[node.op](replay(node.left, env), replay(node.right, env))
    if isinstance(node, ir.Unary):
        return -replay(node.operand, env) if node.op == "-" else replay(node.operand, env)
    if isinstance(node, ir.Compare):
        assert len(node.ops) == 1
        return ops[node.ops[0]](*(replay(o, env) for o in node.operands))
    if isinstance(node, ir.BoolOp):
        return ops[node.op](replay(node.left, env), replay(node.right, env))
    if isinstance(node, ir.Not):
        return ~replay(node.operand, env)
    if isinstance(node, ir.If):
        return sb.if_(replay(node.cond, env), replay(node.then, env), replay(node.other, env))
    if isinstance(node, ir.For):
        return replay(node.body, env).for_(replay(node.steps, env))
    if isinstance(node, ir.Seq):
        return replay(node.first, env) >> replay(node.then, env)
    raise AssertionError(type(node))


def _preset_cases():
    from anchors.preset_cases import CASES

    first = {}
    for case in CASES:  # one case per preset keeps this fast; conformance runs them all
        first.setdefault(case.preset, case)
    return list(first.values())


PRESET_CASES = _preset_cases()


@pytest.mark.parametrize("case", PRESET_CASES, ids=[c.preset for c in PRESET_CASES])
def test_every_preset_built_with_python_is_its_text(case):
    text = schedlang.compile(case.source, params=case.params or None)
    built = replay(parse(case.source), {})
    built = built.rebind(case.params) if case.params else built
    for schedule in text:
        mine = built[schedule.name]
        assert mine.expr == schedule.expr or schedlang.equivalent(mine, schedule)


def _run_python(code: str) -> dict:
    namespace = {"sb": sb, "Fraction": Fraction}
    exec(compile(code, "<to_python>", "exec"), namespace)  # our own printer's output
    return namespace


@pytest.mark.parametrize("case", PRESET_CASES, ids=[c.preset for c in PRESET_CASES])
def test_to_python_of_every_preset_case_builds_its_text(case):
    """The cookbook's Python spelling of each recipe (``sb.to_python``) builds the same schedule."""
    text = schedlang.compile(case.source, params=case.params or None)
    namespace = _run_python(sb.to_python(case.source))
    built = namespace.get("prog") or namespace["lr"].program()
    built = built.rebind(case.params) if case.params else built
    for schedule in text:
        assert built[schedule.name].expr == schedule.expr


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_to_python_of_every_example_builds_its_file(path):
    file = schedlang.load(path)
    namespace = _run_python(sb.to_python(path.read_text(encoding="utf-8")))
    built = namespace.get("prog") or namespace["lr"].program()
    for schedule in file:
        assert built[schedule.name].expr == schedule.expr


def test_to_python_spells_the_language_in_python():
    code = sb.to_python("param lambda: float = 0.1 where lambda > 0\nschedule lr = "
                        "if (t < 3 and not t == 1) or t > 8 then lambda else 0.1234567890123456789")
    assert code.splitlines() == [
        'lambda_ = sb.param("lambda", float, 0.1, where="lambda > 0")',
        'lr = sb.if_((sb.t < 3) & ~(sb.t == 1) | (sb.t > 8), lambda_, Fraction("0.1234567890123456789"))',
        "prog = sb.program(lr=lr)"]
    namespace = _run_python(code)
    assert namespace["prog"]["lr"].expr == schedlang.compile(
        "if (t < 3 and not t == 1) or t > 8 then 0.1 else 0.1234567890123456789")["lr"].expr


def test_every_preset_and_builtin_is_an_attribute_with_its_signature():
    for name, entry in {**stdlib.SCHEDULES, **PRESETS}.items():
        function = sb
        for part in name.split("."):
            function = getattr(function, part)
        assert function.name == name
        if isinstance(entry, Rejected):
            assert entry.reason in function.__doc__
            continue
        signature = inspect.signature(function)
        assert list(signature.parameters) == [a.name for a in entry.args], name
        for arg in entry.args:
            assert f"    {arg.name}: " in function.__doc__
            required = signature.parameters[arg.name].default is inspect.Parameter.empty
            assert required == (arg.default is stdlib.REQUIRED)
        assert entry.signature() in function.__doc__
    for library in LIBRARIES:
        namespace = getattr(sb, library)
        assert {n.split(".")[1] for n in PRESETS if n.startswith(library + ".")} <= set(dir(namespace))
    assert set(stdlib.SCHEDULES) | set(stdlib.MATH) | set(LIBRARIES) | {"t", "pi", "e"} <= set(dir(sb))
    assert list(inspect.signature(sb.clamp).parameters) == ["x", "y", "z"]
    assert "OPTION" not in str(inspect.signature(sb.cyclic))
    assert "Literal['triangular', 'triangular2', 'exp_range']" in str(inspect.signature(sb.cyclic))


# -- composing ---------------------------------------------------------------------------------------


def test_a_bound_piece_is_a_schedule():
    lr = sb.warmup(sb.linear, 500) >> sb.cosine(1e-3, 1e-4, 500)
    reference = schedlang.compile("warmup(linear, 500) >> cosine(1e-3, 1e-4, 500)")["lr"]
    assert lr.duration == 1000
    assert lr.expr == reference.expr
    assert [lr(s) for s in (0, 250, 500, 999, 5000)] == [reference(s) for s in (0, 250, 500, 999, 5000)]
    assert lr.values(range(3)) == reference.values(range(3))
    torch = pytest.importorskip("torch")
    steps = torch.arange(0, 1200, 7)
    assert torch.equal(lr.torch(steps), reference.torch(steps))


def test_operators_build_what_the_text_says():
    t = sb.t
    cases = [
        (sb.if_((t < 10) & ~(t == 3), 1, 2 * t), "if t < 10 and not t == 3 then 1 else 2 * t"),
        (sb.if_(sb.or_(t < 2, t > 8) | (t >= 5), 1, 0), "if t < 2 or t > 8 or t >= 5 then 1 else 0"),
        ((0.5 - t / 4) ** 2 * -1, "(0.5 - t / 4) ** 2 * -1"),
        (2 ** -(t / 10), "2 ** -(t / 10)"),
        (-(t ** 2) + 100, "-t ** 2 + 100"),
        (sb.min(t, 5, sb.max(1, t / 2)) + abs(t - 3), "min(t, 5, max(1, t / 2)) + abs(t - 3)"),
        (sb.cosine(1, 0, 10).for_(5) >> sb.constant(1, 3) >> 0.5,
         "cosine(1, 0, 10) for 5 >> constant(1, 3) >> 0.5"),
        (sb.if_(t < 3, 1, 0).for_(4) >> sb.step(1, 0.5, 2),
         "(if t < 3 then 1 else 0) for 4 >> step(1, 0.5, 2)"),
        (Fraction(1, 3) * sb.exp(-t / 100), "1 / 3 * exp(-t / 100)"),
        (sb.exp(1, 0.5, 10, staircase=True), "exp(1, 0.5, 10, staircase=true)"),
        (sb.sin(sb.pi * t / 8) ** 2 + sb.e ** 0, "sin(pi * t / 8) ** 2 + e ** 0"),
        (sb.cyclic(0.1, 1, 10, None, "triangular2"), 'cyclic(0.1, 1, 10, mode="triangular2")'),
        (sb.warmup(sb.cosine, 5, start=0.1) >> sb.poly(1, 0, 10, power=2), "warmup(cosine, 5, start=0.1) >> "
                                                                           "poly(1, 0, 10, power=2)"),
        (sb.repeat(sb.linear(1, 0, 10), 3), "repeat(linear(1, 0, 10), 3)"),
        (sb.torch.SequentialLR(schedulers=[sb.torch.LinearLR(lr=0.1, total_iters=5),
                                           sb.torch.ExponentialLR(lr=0.1, gamma=0.9)], milestones=[5]),
         "torch.SequentialLR(schedulers=[torch.LinearLR(lr=0.1, total_iters=5), "
         "torch.ExponentialLR(lr=0.1, gamma=0.9)], milestones=[5])"),
        (sb.optax.piecewise_constant_schedule(0.1, boundaries_and_scales=[(10, 0.5), [20, 0.1]]),
         "optax.piecewise_constant_schedule(0.1, boundaries_and_scales=[[10, 0.5], [20, 0.1]])"),
    ]
    for built, source in cases:
        reference = schedlang.compile(source)["lr"]
        assert built.expr == reference.expr, source
        assert _shape(parse(built.to_source())) == _shape(parse(source)), source
        assert format_source(built.to_source()) == built.to_source()


def test_numbers_are_the_decimals_python_shows():
    assert sb.constant(0.1).expr == sp.Rational(1, 10)
    assert sb.constant(3e-4).expr == sp.Rational(3, 10_000)
    assert sb.constant(Fraction(1, 3)).expr == sp.Rational(1, 3)
    assert sb.constant(sp.Rational(2, 7)).expr == sp.Rational(2, 7)
    assert sb.constant(Fraction(1, 2**60)).expr == sp.Rational(1, 2**60)
    assert schedlang.compile(sb.constant(Fraction(1, 2**60)).to_source())["lr"].expr == sp.Rational(1, 2**60)
    assert sb.constant(-0.25).to_source() == "constant(-0.25)\n"
    with pytest.raises(schedlang.SchedlangError, match="expected a number"):
        sb.constant(float("nan"))
    with pytest.raises(schedlang.SchedlangError, match="digits"):
        sb.constant(10**500)


def test_to_source_writes_numbers_and_units_as_the_python_wrote_them():
    """A literal in the caller's line that is a .sched literal with the same exact value is kept
    (issue 31: ``sb.time(10e12, "tok")`` printed ``10000000000000tok``); anything else, and a
    literal with more digits than the float holds, is written from the value."""
    lr = sb.constant(2.2e-4, sb.time(10e12, "tok") - 2000 * 3072 * sb.time(4_096, "tok"))
    assert lr.to_source() == "constant(2.2e-4, 10e12tok - 6144000 * 4_096tok)\n"
    assert sb.cosine(1e-3, -1.5e-5, 1_000).to_source() == "cosine(1e-3, -1.5e-5, 1_000)\n"
    assert (3e-4 * sb.t).to_source() == "3e-4 * t\n" and (sb.t / 4e3).to_source() == "t / 4e3\n"
    assert sb.constant(0.1000000000000000000001).to_source() == "constant(0.1)\n"  # what Python holds
    peak = 3e-4
    assert sb.constant(peak).to_source() == "constant(0.0003)\n"  # a name: the value's digits
    assert sb.constant(0x10).to_source() == "constant(16)\n"  # not a .sched literal


def test_to_source_keeps_the_names_the_python_gave_as_lets():
    peak = sb.param("peak", float, 1e-3, where="peak > 0")
    total = sb.param("total", int, 50_000)
    tail = total / 5
    decay = sb.linear(peak, 0, tail)
    lr = (sb.warmup(sb.linear, 1000)
          >> sb.constant(peak, total - 1000 - tail)
          >> decay)
    source = sb.program(lr=lr, weight_decay=0.1 * lr / peak).to_source()
    assert source == ("param peak: float = 1e-3 where peak > 0\n"
                      "param total: int = 50_000\n"
                      "let tail = total / 5\n"
                      "let decay = linear(peak, 0, tail)\n"
                      "schedule lr = warmup(linear, 1000) >> constant(peak, total - 1000 - tail)"
                      " >> decay\n"
                      "schedule weight_decay = 0.1 * lr / peak\n")
    again = schedlang.compile(source)
    assert again["lr"].expr == lr.expr and again["weight_decay"].duration == 50_000


def test_to_source_drops_names_that_would_change_or_clash():
    s = sb.constant(1, 2)
    for _ in range(3):
        s = s >> sb.constant(2, 2)  # one name for several pieces: no let
    assert s.to_source() == "constant(1, 2) >> constant(2, 2) >> constant(2, 2) >> constant(2, 2)\n"
    inner = sb.warmup(sb.linear, 10) >> sb.linear(1, 0, 100)
    halved = sb.scale(inner, 0.5, scale_warmup=True)  # under scale() a let would not be scaled
    text = (sb.constant(1, 3) >> halved).to_source()
    assert text == ("let halved = scale(warmup(linear, 10) >> linear(1, 0, 100), 0.5, scale_warmup=true)\n"
                    "schedule lr = constant(1, 3) >> halved\n")
    assert schedlang.compile(text)["lr"].duration == 58
    cosine = sb.cosine(1, 0, 10)  # a built-in's name is not a let
    assert (cosine >> sb.constant(0)).to_source() == "cosine(1, 0, 10) >> constant(0)\n"


@pytest.mark.parametrize("built", [
    lambda: sb.constant(0.1),
    lambda: sb.warmup(sb.linear, 10) >> sb.cosine(1, 0.1, 90) >> sb.constant(0.1, 5),
    lambda: sb.if_(sb.t < 5, sb.t / 5, 1),
    lambda: (sb.linear(1, 0, 10) + sb.cosine(0, 1, 10)) / 2,
    lambda: sb.hf.cosine(lr=1e-3, num_warmup_steps=10, num_training_steps=100),
    lambda: sb.param("total", int, 100, where="total > 10").__rtruediv__(1) + 0 * sb.t,
    lambda: sb.cosine(sb.param("peak", "group", 0.1), 0, sb.param("n", int, 100, where=lambda n: n > 0)),
    lambda: sb.scale(sb.linear(1, 0, 100), 0.5),
], ids=["constant", "chain", "if", "sum", "hf", "param", "group-param", "scale"])
def test_to_source_compiles_to_the_same_schedule(built):
    piece = built()
    source = piece.to_source()
    assert format_source(source) == source
    again = schedlang.compile(source)["lr"]
    assert again.expr == piece.expr
    assert schedlang.equivalent(again, piece)
    assert schedlang.equivalent(piece, source)


def test_params_bind_and_make_scheduler_classes():
    total = sb.param("total", int)
    peak = sb.param("peak", float, 3e-4, where="peak > 0")
    lr = sb.warmup(sb.linear, 500) >> sb.cosine(peak, 0.1 * peak, total - 500)
    prog = sb.program(lr=lr, weight_decay=sb.constant(0.1), params={"total": 10_000})
    assert isinstance(prog, schedlang.Program)
    assert prog["lr"](250) == pytest.approx(1.5e-4)
    assert schedlang.equivalent(lr.bind(total=10_000), "warmup(linear, 500) >> cosine(3e-4, 3e-5, 9500)")
    assert schedlang.equivalent(lr, prog, params={"total": 10_000})
    assert "param total: int = 10000" in lr.bind(total=10_000).to_source()
    with pytest.raises(schedlang.SchedlangError, match="needs a value for parameter 'total'"):
        lr(3)
    with pytest.raises(schedlang.SchedlangError, match="must satisfy"):
        lr.bind(total=10_000, peak=-1)
    torch = pytest.importorskip("torch")
    cls = prog.scheduler_class("GPT")
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    scheduler = cls(optimizer, total=2000)
    for _ in range(600):
        optimizer.step()
        scheduler.step()
    assert optimizer.param_groups[0]["lr"] == pytest.approx(prog.rebind({"total": 2000})["lr"](600))
    assert lr.bind(total=10_000).scheduler_class("Built") is not None


def test_a_time_default_declares_its_parameter():
    """Composer's ``t_max=1dur`` counts with ``max_duration``: a file declares it, and from
    Python the call does (required until bound); the user's own param() of it wins."""
    lr = sb.composer.CosineAnnealingScheduler(lr=0.1)
    assert list(lr.params) == ["max_duration"]
    assert "param max_duration: int\n" in lr.to_source()
    with pytest.raises(schedlang.SchedlangError, match="needs a value for parameter 'max_duration'"):
        lr(3)
    text = schedlang.compile("param max_duration: int = 100\n"
                             "schedule lr = composer.CosineAnnealingScheduler(lr=0.1)")
    assert lr.bind(max_duration=100).expr == text["lr"].expr
    mine = sb.param("max_duration", int, 100, where="max_duration > 0")
    both = sb.composer.CosineAnnealingScheduler(lr=0.1) + 0 * mine
    assert both.params["max_duration"].stmt.where is not None
    assert both(50) == pytest.approx(text["lr"](50))


def test_a_long_chain_builds_in_linear_work():
    chain = sb.constant(1.0, 1)
    for i in range(1, 300):
        chain = chain >> sb.constant(1.0 / (i + 1), 1)
    assert chain.duration == 300
    assert chain(299) == pytest.approx(1 / 300)


# -- mistakes, located at the Python line ------------------------------------------------------------


def error_of(build) -> schedlang.SchedlangError:
    with pytest.raises(schedlang.SchedlangError) as info:
        build()
    return info.value


def assert_here(error, marker: str, text: str | None = None):
    line = line_of(marker)
    assert error.filename == str(HERE), str(error)
    assert error.line == line, str(error)
    shown = str(error)
    assert f"{HERE}:{line}:" in shown
    assert HERE.read_text(encoding="utf-8").splitlines()[line - 1].rstrip() in shown  # the caret quotes it
    if text is not None:
        column = HERE.read_text(encoding="utf-8").splitlines()[line - 1].index(text) + 1
        assert error.column == column, shown


def test_missing_argument():
    error = error_of(lambda: sb.cosine(1, 0))  # missing
    assert error.message == "cosine() is missing 'n'"
    assert error.hint == "signature: cosine(v0, v1, n)"
    assert_here(error, "missing", "sb.cosine(1, 0)")


def test_misspelt_keyword():
    error = error_of(lambda: sb.poly(1, 0, 10, pwr=2))  # keyword
    assert error.message == "poly() has no argument 'pwr'"
    assert error.hint == "did you mean 'power'?"
    assert_here(error, "keyword", "pwr=2")


def test_misspelt_names():
    with pytest.raises(AttributeError) as info:
        sb.cosin  # noqa: B018 # name
    assert info.value.hint == "did you mean 'cosine'?"
    assert_here(info.value, "name")
    with pytest.raises(AttributeError) as info:
        sb.torch.StepLRR  # noqa: B018 # preset
    assert info.value.hint == "did you mean 'StepLR'?"
    assert_here(info.value, "preset")
    assert not hasattr(sb, "nonsense") and hasattr(sb, "cosine")


def test_nothing_follows_an_infinite_schedule():
    lr = sb.constant(1)  # infinite
    error = error_of(lambda: lr >> sb.linear(1, 0, 10))
    assert error.message == "nothing can follow an infinite schedule"
    assert_here(error, "infinite", "sb.constant(1)")


def test_argument_errors_point_at_the_argument():
    error = error_of(lambda: sb.cosine(1, 0, 10.5))  # fractional
    assert "10.5" in error.message or "whole" in error.message
    assert_here(error, "fractional", "10.5")
    error = error_of(lambda: sb.cyclic(0.1, 1, 10, mode="triangle"))  # option
    assert error.hint == "did you mean 'triangular'?"
    assert_here(error, "option", '"triangle"')
    error = error_of(lambda: sb.warmup("linear", 10))  # shape
    assert "warmup shape" in error.message
    assert_here(error, "shape", '"linear"')


def test_refused_presets_say_why():
    error = error_of(lambda: sb.torch.ReduceLROnPlateau(lr=0.1))  # plateau
    assert error.message == "torch.ReduceLROnPlateau is not a closed-form schedule"
    assert "metric" in error.hint
    assert_here(error, "plateau")


def test_whole_schedule_checks_report_where_the_piece_was_built():
    lr = 1 / sb.t  # not finite
    error = error_of(lambda: lr(3))
    assert error.message == "schedule 'lr' is not finite at step 0"
    assert_here(error, "not finite")
    warm = sb.warmup(sb.linear, 10)  # lonely warmup
    error = error_of(lambda: sb.program(lr=warm))
    assert "only makes sense right before `>>`" in error.message
    assert_here(error, "lonely warmup")
    error = error_of(lambda: sb.program(lr=sb.constant(1), wd=sb.linear(1, 0, 10) >> warm))
    assert "must be followed by `>>`" in error.message
    assert_here(error, "lonely warmup")  # the piece that is wrong


def test_where_text_is_located_in_the_python_line():
    error = error_of(lambda: sb.param("total", int, where="total > "))  # where syntax
    assert error.message == "the file ends in the middle of an expression"
    assert_here(error, "where syntax")
    warm = sb.param("warm", int, 10, where="warm > totl")  # where name
    error = error_of(lambda: warm.program())
    assert error.message == "unknown name 'totl'"
    assert_here(error, "where name", "totl")


def test_conditions_have_no_python_truth_value():
    error = error_of(lambda: 0 < sb.t < 10)  # chained
    assert "(a < b) & (b < c)" in error.hint
    assert_here(error, "chained")


def test_two_parameters_of_one_name():
    a, b = sb.param("total", int, 10), sb.param("total", int, 20)
    error = error_of(lambda: sb.linear(1, 0, a) >> sb.linear(0, 1, b))  # same name
    assert error.message == "two different parameters are named 'total'"
    assert_here(error, "same name")
    same = sb.param("total", int, 10)  # one declaration twice is one parameter
    assert (sb.linear(1, 0, a) >> sb.linear(0, 1, same)).duration == 20


# -- the docs' snippets run ----------------------------------------------------------------------


def _python_blocks(path: Path, section: str | None = None) -> list[str]:
    import re

    text = path.read_text(encoding="utf-8")
    if section is not None:
        text = text.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", text, re.S)


def test_docs_python_page_runs():
    namespace: dict = {}
    blocks = _python_blocks(ROOT / "docs" / "python.md")
    assert len(blocks) >= 4
    for block in blocks:
        exec(compile(block, "docs/python.md", "exec"), namespace)  # the docs' own code
    assert namespace["lr"].to_source() == "warmup(linear, 500) >> cosine(0.001, 0.0001, 9500)\n"


def test_readme_python_section_leads_with_build_and_runs(monkeypatch):
    monkeypatch.chdir(ROOT)  # the README loads examples/ as a user in the checkout would
    blocks = _python_blocks(ROOT / "README.md", "Python")
    assert blocks[0].startswith("from schedlang import build as sb")
    first, *rest = blocks
    *body, mistake = first.rstrip().splitlines()
    namespace: dict = {}
    exec(compile("\n".join(body), "README.md", "exec"), namespace)
    with pytest.raises(schedlang.SchedlangError, match="did you mean 'power'"):
        exec(compile(mistake, "README.md", "exec"), namespace)
    for block in rest:
        exec(compile(block, "README.md", "exec"), {})


def test_home_page_walk_through_runs():
    namespace: dict = {}
    for block in _python_blocks(ROOT / "docs" / "index.md"):
        exec(compile(block, "docs/index.md", "exec"), namespace)
    assert namespace["opt"].param_groups[0]["lr"] == namespace["lr"](1000)


def test_a_compiled_schedule_points_to_build_for_composing():
    a = schedlang.compile("cosine(1, 0, 10)")["lr"]
    with pytest.raises(TypeError, match="schedlang.build"):
        a >> a  # noqa: B018
    with pytest.raises(schedlang.SchedlangError, match="cannot be part of a built one"):
        sb.constant(1, 5) >> a  # noqa: B018


def test_the_type_stub_is_current_and_names_everything():
    """schedlang/build/__init__.pyi (what Pylance and mypy read) is generated from the table."""
    import ast

    from schedlang.build import stub

    assert stub.STUB.read_text(encoding="utf-8") == stub.render(), \
        "run `python -m schedlang.build.stub` and commit schedlang/build/__init__.pyi"
    tree = ast.parse(stub.render())
    defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    defined |= {n.target.id for n in tree.body if isinstance(n, ast.AnnAssign)}
    assert set(sb.__all__) | {"t", "pi", "e"} <= defined
    methods = {f"{c.name}.{m.name}" for c in tree.body if isinstance(c, ast.ClassDef)
               for m in c.body if isinstance(m, ast.FunctionDef)}
    for name in PRESETS:
        head, _, last = name.rpartition(".")
        as_method = f"_{head.replace('.', '_')}.{last}"
        assert as_method in methods or f"_{name.replace('.', '_')}.__call__" in methods, name


def test_columns_count_characters_and_follow_arguments_across_lines():
    error = error_of(lambda: ("é→", sb.cosine(1, 0)))  # unicode
    assert_here(error, "unicode", "sb.cosine(1, 0)")
    error = error_of(lambda: sb.poly(1, 0,
                                     10, pwr=2))  # next line
    assert_here(error, "next line", "pwr=2")


def test_without_a_source_file_the_error_shows_the_piece():
    """``python -c`` and the plain REPL keep no source lines: the caret quotes the piece built."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=str(ROOT))
    code = "from schedlang import build as sb\nsb.cosine(1, 0)\n"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                            timeout=120)
    assert result.returncode == 1
    shown = "<string>:2:1: error: cosine() is missing 'n'\n   2 | cosine(1, 0)\n     | ^^^^^^^^^^^^"
    assert shown in result.stderr


@pytest.mark.parametrize("build, message", [
    (lambda: sb.param("a\nschedule evil", int), "is not a name"),
    (lambda: sb.param("if", int), "word of the language"),
    (lambda: sb.param("x", "int) = 1\nschedule y"), "unknown parameter type"),
    (lambda: sb.cyclic(0.1, 1, 10, mode='x"\nschedule evil = 1'), "cannot be a schedlang string"),
    (lambda: sb.program(**{"x-y": sb.constant(1)}), "cannot name a schedule"),
    (lambda: sb.cosine(**{"n) >> evil(": 1}), "has no argument"),
    (lambda: sb.constant(float("inf")), "expected a number"),
    (lambda: sb.constant(object()), "expected a number, got object"),
    (lambda: sb.time(1, "eons"), "unknown time unit"),
    (lambda: sb.time(2, "ep"), "pass the 'steps_per_epoch' parameter"),
    (lambda: getattr(sb.torch, "StepLR.x"), "has no preset"),
])
def test_hostile_input_is_refused_before_it_reaches_text(build, message):
    with pytest.raises(schedlang.SchedlangError, match=re.escape(message)):
        build()


def test_schedlang_build_is_an_attribute_and_jax_works():
    assert schedlang.build is sb
    jnp = pytest.importorskip("jax.numpy")
    lr = sb.warmup(sb.linear, 5) >> sb.cosine(1e-3, 1e-4, 20)
    values = lr.jax(jnp.arange(0, 30))
    assert [float(v) for v in values] == pytest.approx([lr(k) for k in range(30)], rel=1e-6, abs=1e-9)
