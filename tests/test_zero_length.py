"""Zero-length segments (SPEC §1): a length of 0 covers no step.

In a sequence it is skipped (``warmup(linear, 0) >> b`` is ``b``); on its own it holds
its end value.  Periods (``every``, ``period``) must stay positive.
"""

import pytest
import torch

import schedlang
from schedlang.errors import SchedlangError

# (program with a zero length, the program it means)
CASES = [
    ("warmup(linear, 0) >> cosine(1e-3, 1e-5, 100)", "cosine(1e-3, 1e-5, 100)"),
    ("warmup(cosine, 0, start=1e-6) >> linear(1, 0, 10)", "linear(1, 0, 10)"),
    ("warmup(exp, 0, start=1e-6) >> constant(1)", "constant(1)"),
    ("linear(1, 0, 0)", "constant(0)"),
    ("cosine(1, 0.5, 0)", "constant(0.5)"),
    ("poly(1, 0.25, 0, power=2)", "constant(0.25)"),
    ("constant(3, 0) >> linear(2, 0, 4)", "linear(2, 0, 4)"),
    ("linear(1, 0, 10) >> constant(5, 0) >> constant(2)", "linear(1, 0, 10) >> constant(2)"),
    ("linear(1, 0, 10) >> cosine(7, 3, 0)", "linear(1, 0, 10) >> constant(3)"),
    ("linear(1, 0, 10) for 0 >> constant(2)", "constant(2)"),
    ("scale(linear(1, 0, 1) >> constant(2), 0.5)", "constant(2)"),
    ("onecycle(1, 0)", "constant(1 / 250000)"),
    ("param w: int = 0 where w >= 0\nschedule lr = warmup(linear, w) >> cosine(1, 0, 10)",
     "cosine(1, 0, 10)"),
]


@pytest.mark.parametrize("source, meaning", CASES)
def test_a_zero_length_means_what_spec_says(source, meaning):
    ours, theirs = schedlang.compile(source)["lr"], schedlang.compile(meaning)["lr"]
    assert schedlang.equivalent(ours, theirs)
    steps = list(range(0, 16)) + [99, 100, 101, 2**31 - 1]
    assert [ours(k) for k in steps] == [theirs(k) for k in steps]
    values = ours.torch(torch.tensor(steps)).tolist()
    assert values == pytest.approx([theirs(k) for k in steps], rel=1e-15, abs=0)


def test_a_zero_length_warmup_parameter_binds_to_zero_everywhere():
    source = "param w: int = 5 where w >= 0\nschedule lr = warmup(linear, w) >> cosine(1, 0, 10)"
    program = schedlang.compile(source)
    expected = [schedlang.compile("cosine(1, 0, 10)")["lr"](k) for k in range(14)]
    assert [schedlang.compile(source, params={"w": 0})["lr"](k) for k in range(14)] == expected
    cls = program.scheduler_class("Warm")
    for lr in (1.0, torch.tensor(1.0)):
        opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=lr)
        scheduler, seen = cls(opt, w=0), []
        for _ in range(14):
            seen.append(float(opt.param_groups[0]["lr"]))
            scheduler.step()
        assert seen == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("source, message", [
    ("step(1, 0.5, 0)", "a period must be positive, not 0"),
    ("cosine_restarts(1, 0, 0)", "a period must be positive, not 0"),
    ("linear(1, 0, -3)", "a length must be at least 0, not -3"),
    ("cycle(linear(1, 0, 0))", "a zero-length schedule has no steps to repeat"),
    ("param w: int = 0\nschedule lr = step(1, 0.5, w)", "a period must be positive, not 0"),
])
def test_periods_stay_positive(source, message):
    with pytest.raises(SchedlangError, match=message):
        schedlang.compile(source)
