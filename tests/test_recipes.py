"""The gallery's recipes in examples/ say what their papers say, at their boundaries."""

import math

import pytest
from helpers import ROOT

import schedlang


def lr(name, schedule="lr"):
    return schedlang.load(ROOT / "examples" / f"{name}.sched")[schedule]


def test_gpt3_cosine_to_ten_percent_then_held():
    f = lr("gpt3")
    assert f(0) == 0 and f(750) == pytest.approx(6e-4)
    assert f(750 + (520_000 - 750) // 2) == pytest.approx(6e-4 * 0.55, rel=1e-6)
    assert f(520_000) == pytest.approx(6e-5) and f(599_999) == pytest.approx(6e-5)


@pytest.mark.parametrize("name, peak, warmup, total", [("llama_cosine", 3e-4, 2000, 500_000),
                                                        ("chinchilla", 1e-4, 1500, 470_000)])
def test_cosine_to_a_tenth(name, peak, warmup, total):
    f = lr(name)
    assert f(warmup // 2) == pytest.approx(peak / 2)
    assert f(warmup) == pytest.approx(peak)
    assert f(total) == pytest.approx(peak / 10) and f(10 * total) == pytest.approx(peak / 10)


def test_minicpm_linear_and_one_minus_sqrt_cooldowns():
    linear, sqrt_ = lr("minicpm_wsd"), lr("minicpm_wsd", "lr_sqrt")
    for f in (linear, sqrt_):
        assert f(1000) == f(89_999) == pytest.approx(1e-2)
        assert f(100_000) == 0
    assert linear(95_000) == pytest.approx(5e-3)
    assert sqrt_(95_000) == pytest.approx(1e-2 * (1 - math.sqrt(0.5)))


def test_noam_is_the_paper_formula():
    f = lr("noam")
    for t in (0, 1, 3998, 3999, 4000, 100_000):
        s = t + 1
        assert f(t) == pytest.approx(512**-0.5 * min(s**-0.5, s * 4000**-1.5), rel=1e-12)


def test_bert_linear_warmup_and_decay():
    f = lr("bert_linear")
    assert f(5000) == pytest.approx(5e-5) and f(10_000) == pytest.approx(1e-4)
    assert f(505_000) == pytest.approx(5e-5) and f(1_000_000) == 0


def test_resnet_divides_by_ten_every_30_epochs():
    f, epoch = lr("resnet_multistep"), 5005
    assert f(30 * epoch - 1) == pytest.approx(0.1) and f(30 * epoch) == pytest.approx(0.01)
    assert f(60 * epoch) == pytest.approx(1e-3) and f(90 * epoch) == pytest.approx(1e-3)
