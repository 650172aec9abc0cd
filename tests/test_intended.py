"""Saying that what `check` would warn about is meant (issue 31): `a >> jump b` declares the jump
at that join, a length written in `ba` counts steps on purpose under a batch ramp.  The values
never change; only the warnings do, and `check --strict` passes when every one is declared."""

from __future__ import annotations

import contextlib
import io

import pytest
from helpers import ROOT

import schedlang
from schedlang import build as sb
from schedlang.cli.commands import main
from schedlang.errors import SchedlangError
from schedlang.syntax import ir
from schedlang.syntax.fmt import format_source
from schedlang.syntax.parser import parse

THIS = __file__
DROPS = "schedule lr = constant(1, 10) >> {a}constant(0.5, 10) >> {b}linear(0.25, 0, 10)\n"


def check(tmp_path, text: str, *flags: str) -> tuple[int, str]:
    path = tmp_path / "s.sched"
    path.write_text(text)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["check", str(path), *flags])
    return code, err.getvalue()


def test_a_declared_jump_is_not_reported_and_an_undeclared_one_still_is(tmp_path):
    code, err = check(tmp_path, DROPS.format(a="", b=""))
    assert code == 0 and err.count("warning: schedule 'lr' jumps") == 2
    assert "hint: if the jump is meant, say so: write `>> jump` before this segment" in err
    assert check(tmp_path, DROPS.format(a="", b=""), "--strict")[0] == 2

    code, err = check(tmp_path, DROPS.format(a="jump ", b=""), "--strict")
    assert code == 2 and "jumps at step 20: the segment before `>>` ends at 0.5" in err
    assert "jumps at step 10" not in err

    code, err = check(tmp_path, DROPS.format(a="jump ", b="jump "), "--strict")
    assert code == 0 and err == ""


def test_jump_changes_no_value():
    plain = schedlang.compile(DROPS.format(a="", b=""))["lr"]
    declared = schedlang.compile(DROPS.format(a="jump ", b="jump "))["lr"]
    assert plain.expr == declared.expr and plain.duration == declared.duration == 30
    assert [declared(k) for k in (9, 10, 19, 20, 29, 30)] == [1, 0.5, 0.5, 0.25, 0.025, 0]


def test_jump_parses_only_right_after_the_sequence_operator():
    tree = parse("constant(1, 2) >> jump constant(2, 2) >> constant(2)")
    (stmt,) = tree.statements
    assert isinstance(stmt.value, ir.Seq) and not stmt.value.jump and stmt.value.first.jump
    for text, message in [("jump constant(1)", "'jump' here is out of place"),
                          ("constant(1, 2) >> jump", "ends in the middle"),
                          ("let jump = 1\nschedule lr = constant(jump)", "'jump' is a word of the language"),
                          ("constant(jump)", "'jump' is a word of the language"),
                          ("constant(1, 2) jump constant(2)", "'jump' here is out of place"),
                          ("constant(1, 2) >> jump jump constant(2)", "'jump' here is out of place")]:
        with pytest.raises(SchedlangError, match=message) as info:
            parse(text)
        if "out of place" in message:
            assert info.value.hint.startswith("`jump` comes right after `>>`: `a >> jump b`")


def test_a_declared_jump_nested_in_a_let_keeps_its_declaration(tmp_path):
    text = ("let tail = constant(0.5, 10) >> jump constant(0.1, 10)\n"
            "schedule lr = constant(0.5, 10) >> tail\n")
    assert check(tmp_path, text, "--strict") == (0, "")
    code, err = check(tmp_path, text.replace("jump ", ""), "--strict")
    assert code == 2 and "jumps at step 20" in err


def test_fmt_keeps_jump_and_breaks_a_long_chain_before_each_junction():
    assert format_source("constant(1,10)>>jump   constant(0.5, 10)") == \
        "constant(1, 10) >> jump constant(0.5, 10)\n"
    long = ("schedule lr = constant(0.001, 100000) >> jump constant(0.0005, 100000) >> "
            "jump constant(0.00025, 100000) >> constant(0.00025)")
    assert format_source(long) == (
        "schedule lr = constant(0.001, 100000)\n"
        "    >> jump constant(0.0005, 100000)\n"
        "    >> jump constant(0.00025, 100000)\n"
        "    >> constant(0.00025)\n")


def test_the_builder_declares_a_jump_with_sb_jump_and_prints_it():
    lr = sb.constant(1, 10) >> sb.jump(sb.constant(0.5, 10)) >> sb.linear(0.5, 0, 10)
    assert lr.to_source() == "constant(1, 10) >> jump constant(0.5, 10) >> linear(0.5, 0, 10)\n"
    assert sb.to_python(lr.to_source()) == \
        "lr = sb.constant(1, 10) >> sb.jump(sb.constant(0.5, 10)) >> sb.linear(0.5, 0, 10)"
    assert [lr(k) for k in (9, 10, 20)] == [1, 0.5, 0.5]
    with pytest.raises(SchedlangError, match=r"sb.jump\(...\) only makes sense right after `>>`") as info:
        sb.jump(sb.constant(0.5, 10)) >> sb.constant(1)  # noqa: B018
    assert info.value.span.source.filename == THIS


def test_a_long_built_chain_keeps_every_declared_jump(tmp_path):
    lr = sb.constant(1, 5)
    for i in range(60):  # each link checked alone, the chain lowered once (test_build_hostile)
        lr = lr >> (sb.jump(sb.constant(1 / (i + 2), 5)) if i % 2 else sb.constant(1 / (i + 1), 5))
    code, err = check(tmp_path, lr.to_source(), "--strict")
    assert code == 0 and err == ""


def test_a_length_in_ba_counts_steps_on_purpose_under_a_batch_ramp(tmp_path):
    text = ("param seq_len: int = 2048\nbatch = stages(256, [512], [1e9tok])\n"
            "schedule lr = warmup(linear, {n}) >> cosine(3e-4, 3e-5, 20e9tok)\n")
    code, err = check(tmp_path, text.format(n="2000"), "--strict")
    assert code == 2 and "a length of 2000 steps from step 0 meets the batch ramp" in err
    assert "or write it in ba (2000ba) if steps are meant" in err
    assert check(tmp_path, text.format(n="2000ba"), "--strict") == (0, "")
    a, b = (schedlang.compile(text.format(n=n))["lr"] for n in ("2000", "2000ba"))
    assert a.expr == b.expr


def test_the_deepseek_example_declares_its_drop_and_its_step_warmup(tmp_path):
    path = ROOT / "examples" / "deepseek_v3.sched"
    code, err = check(tmp_path, path.read_text(), "--strict")
    assert code == 0 and err == ""
    undeclared = path.read_text().replace(">> jump ", ">> ").replace("2000ba)", "2000)")
    code, err = check(tmp_path, undeclared)
    assert "jumps at step 242913" in err and "meets the batch ramp" in err
    assert schedlang.compile(undeclared)["lr"].expr == schedlang.load(path)["lr"].expr
