"""`schedlang import` of SambaFlow flags: the documented schedules, proven equal."""

from __future__ import annotations

import pytest
from anchors import reference as R
from helpers import run_cli

import schedlang
from schedlang import formats
from schedlang.library.presets import PRESETS

HAVE_PRESETS = "sambaflow.cosine_schedule_with_warmup" in PRESETS

COMMAND = """# run.sh
python gpt2_task.py run --model-name gpt2 \\
    --lr_schedule cosine_schedule_with_warmup \\
    --learning_rate 0.00025 --warmup_steps=100 --max_steps 1000 --steps_this_run 500
"""


def styles():
    return ("core", "presets") if HAVE_PRESETS else ("core",)


@pytest.mark.parametrize("flags, expected", [
    (["--lr_schedule", "cosine_schedule_with_warmup", "--learning_rate", "0.001", "--warmup_steps", "10",
      "--max_steps", "100"], "warmup(linear, 10) >> cosine(1e-3, 1e-4, 90)"),
    (["--lr_schedule", "polynomial_decay_schedule_with_warmup", "--learning_rate", "0.001",
      "--warmup_steps", "10", "--max_steps", "100"], "warmup(linear, 10) >> linear(1e-3, 0, 90)"),
    (["--lr_schedule", "cosine_schedule_with_warmup", "--learning_rate", "0.001", "--max_steps", "100",
      "--end_lr_ratio", "0.01"], "cosine(1e-3, 1e-5, 100)"),
    (["--lr_schedule", "fixed_lr", "--learning_rate", "0.01", "--warmup_steps", "10"], "constant(0.01)"),
])
def test_flags_import_equal(flags, expected):
    for style in styles():
        source = formats.from_sambaflow(flags, style=style)
        verdict = schedlang.equivalent(schedlang.compile(source), expected)
        assert verdict, (style, verdict)


def test_command_line_text_with_continuations_and_other_flags():
    source = formats.from_sambaflow(COMMAND, "run.sh", style="core")
    expected = "warmup(linear, 100) >> cosine(2.5e-4, 2.5e-5, 900)"
    assert schedlang.equivalent(schedlang.compile(source), expected)


@pytest.mark.parametrize("name, kwargs", [
    ("cosine_schedule_with_warmup", {"learning_rate": 0.5, "warmup_steps": 4, "max_steps": 12}),
    ("polynomial_decay_schedule_with_warmup", {"learning_rate": 0.5, "warmup_steps": 3, "max_steps": 9,
                                               "end_lr_ratio": 0.2}),
])
def test_values_match_the_documented_formulas(name, kwargs):
    steps = range(16)
    expected = R.sambaflow_values(name, kwargs, steps)
    flags = ["--lr_schedule", name] + [x for k, v in kwargs.items() for x in (f"--{k}", str(v))]
    for style in styles():
        schedule = schedlang.compile(formats.from_sambaflow(flags, style=style))["lr"]
        assert [schedule(s) for s in steps] == pytest.approx(expected, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("text, message, column", [
    ("--lr_schedule cosine_with_warmup --learning_rate 1", "not a SambaFlow built-in schedule", 15),
    ("--lr_schedule fixed_lr --learning_rate fast", "--learning_rate must be a number", 40),
    ("--lr_schedule cosine_schedule_with_warmup --learning_rate 1 --warmup_steps 20 --max_steps=10",
     "must be larger than --warmup_steps", 91),
])
def test_errors_point_at_the_flag_value(text, message, column):
    with pytest.raises(schedlang.SchedlangError) as info:
        formats.from_sambaflow(text, "run.sh")
    assert message in info.value.message
    assert (info.value.line, info.value.column) == (1, column), str(info.value)


@pytest.mark.parametrize("style", ["presets", "core"])
def test_an_error_the_lowering_raises_lands_on_the_flag_it_came_from(style):
    """The tree the import lowers carries each flag's span on the numbers read from it, so an error
    in a number the file computes (core style's ``max_steps - warmup_steps``) is at ``--max_steps``
    too, not a quote of the generated line."""
    text = "--lr_schedule cosine_schedule_with_warmup --learning_rate 0.1 --max_steps 1" + "0" * 30 + \
        " --warmup_steps 10"
    with pytest.raises(schedlang.SchedlangError) as info:
        formats.from_sambaflow(text, "run.sh", style=style)
    assert "a duration must be at most" in info.value.message
    assert info.value.span.source.filename == "run.sh"
    assert (info.value.line, info.value.column) == (1, text.index("1" + "0" * 30) + 1), str(info.value)


def test_missing_schedule_flag():
    with pytest.raises(schedlang.SchedlangError, match="no --lr_schedule"):
        formats.from_sambaflow("python train.py --learning_rate 1", "run.sh")


def test_cli_file_and_inline_flags(tmp_path):
    path = tmp_path / "run.sh"
    path.write_text(COMMAND)
    from_file = run_cli("import", path, "--lower")
    assert from_file.returncode == 0, from_file.stderr
    inline = run_cli("import", "--lower", "--flags", "--lr_schedule", "cosine_schedule_with_warmup",
                     "--learning_rate", "0.00025", "--warmup_steps", "100", "--max_steps", "1000")
    assert inline.returncode == 0, inline.stderr
    assert schedlang.equivalent(schedlang.compile(from_file.stdout), schedlang.compile(inline.stdout))
