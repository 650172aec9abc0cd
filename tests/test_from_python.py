"""`schedlang.from_python`: tracing LambdaLR-style functions; refusing what is not closed form."""

from __future__ import annotations

import functools
import inspect
import math
from math import cos, pi

import pytest
import sympy

import schedlang


def line_of(fn, text: str) -> int:
    """The file line number of the first line of ``fn`` containing ``text``."""
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


# -- functions that trace ------------------------------------------------------------------------


def linear_warmup_decay(step, warmup=10, total=100):
    return min(step / warmup, max(0.0, (total - step) / (total - warmup)))


def documented_step_schedule(current_step, decay_steps=100, gamma=0.5):
    # SambaFlow's custom-scheduler example (docs): int() of a floor is already whole
    num_cycles = int(math.floor(current_step / decay_steps))
    return gamma ** num_cycles


def cosine_to_floor(step):
    progress = min(1.0, step / 50)
    return 0.1 + 0.9 * 0.5 * (1.0 + cos(pi * progress))


def _helper(step, every):
    return math.floor(step / every)


def uses_a_helper(step):
    return 0.5 ** _helper(step, 7) * float(1)


def test_linear_warmup_then_decay():
    schedule = schedlang.from_python(linear_warmup_decay)
    assert set(schedule.program.params) == {"warmup", "total"}
    verdict = schedlang.equivalent(schedule, "warmup(linear, 10) >> linear(1, 0, 90)")
    assert verdict, verdict


def test_documented_step_schedule_and_params():
    schedule = schedlang.from_python(documented_step_schedule)
    assert schedlang.equivalent(schedule, "step(1, 0.5, 100)")
    faster = schedlang.from_python(documented_step_schedule, params={"decay_steps": 10, "gamma": 0.1})
    assert schedlang.equivalent(faster, "step(1, 0.1, 10)")
    assert faster(25) == pytest.approx(0.01)


def test_math_names_imported_from_math_and_helpers():
    assert schedlang.equivalent(schedlang.from_python(cosine_to_floor), "cosine(1, 0.1, 50)")
    assert schedlang.equivalent(schedlang.from_python(uses_a_helper), "step(1, 0.5, 7)")


def test_lambdas_partials_and_exact_decimals():
    schedule = schedlang.from_python(lambda s: 0.1 * 0.95 ** s)
    assert schedlang.equivalent(schedule, "0.1 * 0.95 ** t")
    assert schedule.expr.has(schedlang.t) and not schedule.expr.atoms(sympy.Float)
    partial = functools.partial(linear_warmup_decay, warmup=20)
    assert schedlang.equivalent(schedlang.from_python(partial), "warmup(linear, 20) >> linear(1, 0, 80)")
    assert schedlang.equivalent(schedlang.from_python(lambda s: 3), "constant(3)")


def test_a_traced_schedule_compiles_like_any_other():
    schedule = schedlang.from_python(linear_warmup_decay, name="lr")
    assert "def lr(" in schedule.program.python_source()
    assert [schedule(s) for s in (0, 5, 10, 55, 100, 200)] == pytest.approx([0, 0.5, 1, 0.5, 0, 0])


# -- functions that are refused, at the offending line ----------------------------------------


def branches(step):
    if step < 100:
        return step / 100
    return 1.0


def loops(step):
    value = 1.0
    while step > 0:
        value *= 0.9
    return value


def truncates(step):
    return 0.5 ** int(step / 100)


def counts(step):
    return sum(0.9 for _ in range(step))


def ternary(step):
    return 1.0 if step < 10 else 0.5


@pytest.mark.parametrize("fn, text, message, hint", [
    (branches, "if step < 100", "an `if` on the step", "if t < 100 then ... else ..."),
    (loops, "while step > 0", "a `while` loop on the step", "no closed form"),
    (truncates, "int(step / 100)", "int() of a value that depends on the step", "floor(t/100)"),
    (counts, "range(step)", "the step used as a count", "closed form"),
    (ternary, "if step < 10 else", "a conditional expression on the step", "if t < 10 then"),
])
def test_refusals_name_the_line_and_suggest_schedlang(fn, text, message, hint):
    with pytest.raises(schedlang.SchedlangError) as info:
        schedlang.from_python(fn)
    err = info.value
    assert message in err.message
    assert hint in (err.hint or ""), err.hint
    assert err.filename == __file__
    assert err.line == line_of(fn, text)
    rendered = str(err)
    assert text in rendered and "^" in rendered


def test_round_and_non_numbers_and_missing_values():
    with pytest.raises(schedlang.SchedlangError, match="round"):
        schedlang.from_python(lambda s: round(s / 10))
    with pytest.raises(schedlang.SchedlangError, match="returned str"):
        schedlang.from_python(lambda s: "fast")
    with pytest.raises(schedlang.SchedlangError, match="no value for the function's argument 'total'"):
        schedlang.from_python(lambda s, total: s / total)
    with pytest.raises(schedlang.SchedlangError, match="has no argument 'nope'"):
        schedlang.from_python(linear_warmup_decay, params={"nope": 1})


def test_not_finite_is_the_usual_check():
    with pytest.raises(schedlang.SchedlangError, match="not finite at step 0"):
        schedlang.from_python(lambda s: 1 / s)


def test_real_transformers_lambda_is_refused_at_its_if():
    optimization = pytest.importorskip("transformers.optimization")
    fn = functools.partial(optimization._get_linear_schedule_with_warmup_lr_lambda,
                           num_warmup_steps=10, num_training_steps=100)
    with pytest.raises(schedlang.SchedlangError) as info:
        schedlang.from_python(fn)
    err = info.value
    assert err.filename.endswith("optimization.py")
    assert "current_step < num_warmup_steps" in str(err)
    assert "if t < num_warmup_steps then" in err.hint
