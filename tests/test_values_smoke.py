import pytest

import schedlang


@pytest.mark.parametrize("step, value", [(0, 0.0), (250, 0.0005), (500, 0.001), (750, 0.00055),
                                         (1000, 1e-4), (1001, 1e-4), (10**12, 1e-4)])
def test_issue_example(step, value):
    lr = schedlang.compile("warmup(linear, 500) >> cosine(0.001, 1e-4, 500)")["lr"]
    assert lr(step) == pytest.approx(value, rel=1e-12, abs=1e-18)
