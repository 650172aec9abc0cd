"""``cooldown(shape, n, to)`` (SPEC §14): the mirror of ``warmup``, from the value the schedule
before ``>>`` holds at its end to ``to``.  Its values against the frameworks' real code are
``tests/frameworks/test_cooldown.py``; every target runs it through ``torch_cases.STDLIB_CASES``."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from helpers import run_cli

import schedlang
from schedlang import build as sb
from schedlang.library import stdlib


@pytest.mark.parametrize("shape", stdlib.COOLDOWN_SHAPES)
def test_continuous_by_construction_and_at_to_from_local_step_n(shape):
    prog = schedlang.compile("param peak: float = 2e-3\n"
                             f"schedule lr = linear(0, peak, 10) >> cosine(peak, 1e-3, 30) >> "
                             f"cooldown({shape}, 20, 1e-5)")
    lr = prog["lr"]
    assert lr.duration == 60
    assert lr(40) == pytest.approx(1e-3, rel=1e-15)  # the value the cosine holds at its end
    assert lr(60) == lr(10**9) == pytest.approx(1e-5, rel=1e-15)
    assert 1e-5 < lr(59) < lr(41) < 1e-3


def test_the_shapes_are_the_documented_formulas():
    q = 0.3
    c = {"linear": 1 - q, "cosine": (1 + math.cos(math.pi * q)) / 2, "sqrt": 1 - math.sqrt(q),
         "megatron_exponential": 2 * 0.5 ** q - 1}
    for shape, coefficient in c.items():
        lr = schedlang.compile(f"constant(2, 10) >> cooldown({shape}, 10, 0.5)")["lr"]
        assert lr(13) == pytest.approx(0.5 + 1.5 * coefficient, rel=1e-14), shape
    lr = schedlang.compile("constant(2, 10) >> cooldown(exp, 10, 0.5)")["lr"]
    assert lr(13) == pytest.approx(2 * 0.25 ** q, rel=1e-14)


def test_up_as_well_as_down_and_after_a_schedule_that_is_cut_with_for():
    lr = schedlang.compile("cosine(1, 0, 100) for 50 >> cooldown(linear, 10, 1)")["lr"]
    assert lr(50) == pytest.approx(0.5) and lr(55) == pytest.approx(0.75) and lr(60) == 1


def test_zero_length_holds_to_and_chains_start_where_the_one_before_ends():
    lr = schedlang.compile("constant(1, 5) >> cooldown(sqrt, 0, 0.25) >> cooldown(linear, 4, 0)")["lr"]
    assert [lr(k) for k in range(4, 10)] == [1, 0.25, 0.1875, 0.125, 0.0625, 0]


def test_a_cooldown_is_proven_equal_to_the_presets_wsd_decays():
    for style, shape in [("minus_sqrt", "sqrt"), ("exponential", "megatron_exponential")]:
        megatron = schedlang.compile(
            'megatron.OptimizerParamScheduler(max_lr=3e-4, min_lr=3e-5, lr_warmup_steps=20, '
            f'lr_decay_steps=300, lr_decay_style="WSD", wsd_decay_steps=80, lr_wsd_decay_style="{style}")')
        ours = schedlang.compile(f"warmup(linear, 20) >> constant(3e-4, 200) >> cooldown({shape}, 80, 3e-5)")
        assert schedlang.equivalent(megatron["lr"], ours["lr"])
    hf = schedlang.compile('hf.warmup_stable_decay(lr=1, num_warmup_steps=10, num_stable_steps=50, '
                           'num_decay_steps=40, decay_type="1-sqrt", min_lr_ratio=0.1)')
    ours = schedlang.compile("warmup(linear, 10, start=0.1) >> constant(1, 50) >> cooldown(sqrt, 40, 0.1)")
    assert schedlang.equivalent(hf["lr"], ours["lr"])


def test_symbolic_lengths_and_values_bind_later():
    source = ("param total: int where total > 100\nparam floor: float = 0\n"
              "schedule lr = constant(1, total - total / 10) >> cooldown(cosine, total / 10, floor)")
    lr = schedlang.compile(source, params={"total": 1000})["lr"]
    assert lr.duration == 1000 and lr(950) == pytest.approx(0.5) and lr(1000) == 0


def test_scale_shortens_a_cooldown_as_a_decay_and_keeps_the_warmup():
    text = "scale(warmup(linear, 10) >> constant(1, 100) >> cooldown(linear, 100, 0), 0.5)"
    lr = schedlang.compile(text)["lr"]
    assert lr.duration == 110 and lr(60) == 1 and lr(85) == pytest.approx(0.5) and lr(110) == 0


TOKENS = """param seq_len: int = 4096
batch = stages(3072, [6144, 15360], [100e9tok, 469e9tok])
schedule lr = warmup(linear, 2000) >> constant(2.2e-4, 10e12tok) >> cooldown(sqrt, 4.8e12tok, 2.2e-5)
"""


def test_on_the_token_clock_it_reads_the_tokens_consumed_before_the_step():
    prog = schedlang.compile(TOKENS)
    lr = prog["lr"]
    start = prog.tokens_at(2000) + 10 * 10**12
    first = prog.step_at(tokens=start)
    assert lr(first - 1) == pytest.approx(2.2e-4, rel=1e-15)
    for k in (first, first + 1, first + 54_321):
        q = (prog.tokens_at(k) - start) / 4.8e12
        assert lr(k) == pytest.approx(2.2e-5 + (2.2e-4 - 2.2e-5) * (1 - math.sqrt(q)), rel=1e-12)
    end = prog.step_at(tokens=start + 48 * 10**11)
    assert lr.duration == end and lr(end - 1) > 2.2e-5 and lr(end) == pytest.approx(2.2e-5, rel=1e-15)


def test_check_reports_no_jump_into_a_cooldown_on_the_token_clock(tmp_path):
    """The first step of a token-clock sqrt cooldown reads its curve a batch past its start
    (0.1% lower here): that is the clock, not a jump."""
    path = tmp_path / "c.sched"
    path.write_text(TOKENS)
    result = run_cli("check", path)
    assert result.returncode == 0 and "jumps at step" not in result.stderr, result.stderr


@pytest.mark.parametrize("text, message, caret", [
    ("cooldown(sqrt, 10, 0) >> constant(1)", "nothing comes before this one", "cooldown(sqrt, 10, 0)"),
    ("cooldown(sqrt, 10, 0)", "only makes sense right after `>>`", "cooldown(sqrt, 10, 0)"),
    ("constant(1) >> cooldown(sqrt, 10, 0)", "this one never ends", "constant(1)"),
    ("warmup(linear, 10) >> cooldown(sqrt, 10, 0)", "a cooldown has none", "cooldown(sqrt, 10, 0)"),
    ("constant(1, 10) >> cooldown(minus_sqrt, 10, 0)", "must be a cooldown shape", "minus_sqrt"),
    ("constant(1, 10) >> cooldown(exp, 10, 0)", "positive start and a positive target",
     "cooldown(exp, 10, 0)"),
    ("constant(1, 10) >> 2 * cooldown(linear, 10, 0)", "only makes sense right after", "cooldown(linear"),
])
def test_mistakes_are_located_errors_with_a_hint(text, message, caret):
    with pytest.raises(schedlang.SchedlangError) as info:
        schedlang.compile(text)
    error = info.value
    assert message in error.message and error.hint
    assert error.span.line == 1 and error.span.column == text.index(caret) + 1


def test_the_target_is_a_number():
    with pytest.raises(schedlang.SchedlangError, match="'to' of cooldown\\(\\) cannot depend on the step t"):
        schedlang.compile("constant(1, 10) >> cooldown(linear, 10, t / 100)")


def test_a_framework_shape_name_is_pointed_at_its_name_here():
    with pytest.raises(schedlang.SchedlangError) as info:
        schedlang.compile("constant(1, 10) >> cooldown(exponential, 10, 0)")
    assert info.value.hint == "'exponential' is called megatron_exponential here"
    with pytest.raises(schedlang.SchedlangError, match="must be a warmup shape"):
        schedlang.compile("warmup(sqrt, 10) >> constant(1)")  # warmup keeps its own three


def test_the_builder_has_cooldown_and_every_shape():
    lr = (sb.constant(1e-3, 100) >> sb.cooldown(sb.sqrt, 50, 1e-5)
          >> sb.cooldown(sb.megatron_exponential, 10, 0))
    assert lr.to_source() == ("constant(1e-3, 100) >> cooldown(sqrt, 50, 1e-5) >> "
                              "cooldown(megatron_exponential, 10, 0)\n")
    assert lr(125) == pytest.approx(1e-5 + (1e-3 - 1e-5) * (1 - math.sqrt(0.5)))
    assert lr.duration == 160 and lr(160) == 0
    for shape in stdlib.COOLDOWN_SHAPES:
        piece = sb.constant(1, 10) >> sb.cooldown(getattr(sb, shape), 10, 0.5)
        assert piece(20) == 0.5
    with pytest.raises(schedlang.SchedlangError, match="never ends"):
        sb.constant(1) >> sb.cooldown(sb.linear, 10, 0)


def test_to_python_writes_a_shape_that_is_no_function():
    text = "schedule lr = constant(1, 10) >> cooldown(megatron_exponential, 5, 0)\n"
    assert "sb.cooldown(sb.megatron_exponential, 5, 0)" in sb.to_python(text)


def test_the_minicpm_recipe_written_by_hand_is_the_sqrt_and_linear_cooldowns():
    """``examples/minicpm_wsd.sched`` writes the 1-sqrt cooldown as a formula; the built-in is it."""
    path = Path(__file__).resolve().parents[1] / "examples" / "minicpm_wsd.sched"
    example = schedlang.load(path)
    head = "\n".join(line for line in path.read_text(encoding="utf-8").splitlines()
                     if line.startswith(("param", "let")))
    ours = schedlang.compile(head + "\nschedule lr = warmup(linear, warmup) >> constant(peak, stable) >> "
                             "cooldown(linear, cooldown, 0)\nschedule lr_sqrt = warmup(linear, warmup) >> "
                             "constant(peak, stable) >> cooldown(sqrt, cooldown, 0)\n")
    for name in ("lr", "lr_sqrt"):
        verdict = schedlang.equivalent(example[name], ours[name])
        assert verdict and "proven" in str(verdict), (name, verdict)


# -- a trunk counted in steps, branched at a token count (SPEC §14's example) ---------------

HEAD = """param seq_len: int = 4096
batch = stages(3072, [6144, 15360], [100e9tok, 469e9tok])
"""


def test_the_spec_example_a_step_trunk_for_a_token_count_then_a_cooldown():
    branch = schedlang.compile(HEAD + "let trunk = warmup(linear, 2000) >> constant(2.2e-4)\n"
                               "schedule lr = trunk for 10e12tok >> cooldown(sqrt, 4.8e12tok, 2.2e-5)\n")
    # the same run written with the constant's length in tokens: 10T less the warmup's tokens
    warm = branch.tokens_at(2000)
    plain = schedlang.compile(HEAD + f"schedule lr = warmup(linear, 2000) >> constant(2.2e-4, "
                              f"{10 * 10**12 - warm}tok) >> cooldown(sqrt, 4.8e12tok, 2.2e-5)\n")
    assert branch["lr"].duration == plain["lr"].duration == branch.step_at(tokens=148 * 10**11)
    assert schedlang.equivalent(branch["lr"], plain["lr"])


def test_a_decaying_trunk_is_cut_at_the_first_step_reaching_the_count_and_cooled_from_there():
    prog = schedlang.compile(HEAD + "schedule lr = cosine(1e-3, 1e-4, 300_000) for 10e12tok >> "
                             "cooldown(linear, 1e12tok, 0)\n")
    lr, cut = prog["lr"], prog.step_at(tokens=10**13)

    def trunk(k):
        return 1e-4 + 0.9e-3 * (1 + math.cos(math.pi * k / 300_000)) / 2

    assert lr(cut - 1) == pytest.approx(trunk(cut - 1), rel=1e-12)  # the trunk in its own steps
    for k in (cut, cut + 1, cut + 777):  # from the trunk's value at the cut, on the token clock
        q = (prog.tokens_at(k) - 10**13) / 10**12
        assert lr(k) == pytest.approx(trunk(cut) * (1 - q), rel=1e-12)
    assert lr(prog.step_at(tokens=11 * 10**12)) == 0


def test_a_trunk_cut_at_a_count_alone_holds_its_value_at_the_cut():
    prog = schedlang.compile(HEAD + "schedule lr = linear(1, 0, 500_000) for 10e12tok\n")
    cut = prog.step_at(tokens=10**13)
    assert prog["lr"].duration == cut
    assert prog["lr"](cut) == prog["lr"](10**8) == pytest.approx(1 - cut / 500_000, rel=1e-12)
