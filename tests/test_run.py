"""The run's length in the file (SPEC §14): ``run = N``, ``prog.run``/``run_tokens``/``run_samples``,
``check``'s run report and its cut warning, ``eval``/``plot`` over the run, ``verify`` within it."""

from __future__ import annotations

import json

import pytest

import schedlang
from schedlang import SchedlangError
from schedlang.cli import main
from schedlang.cli.analysis import summarise
from schedlang.cli.ranges import eval_steps, plot_steps
from schedlang.syntax import ir
from schedlang.syntax.fmt import format_source
from schedlang.syntax.parser import parse

#: allenai/OLMo#887: a schedule set for 5e12 tokens, a run of 4e12.
OLMO = """\
param seq_len: int = 4096
batch = 1024
run = 4e12tok
schedule lr = warmup(linear, 2000) >> cosine(3e-4, 3e-5, 5e12tok) >> constant(3e-5)
schedule wd = constant(0.1)
"""
#: Megatron-Bridge PR#2857: a 10-iteration smoke run with a 2000-iteration warmup.
SMOKE = """\
run = 10
schedule lr = warmup(linear, 2000) >> cosine(1e-3, 1e-4, 100_000)
"""
WHOLE = """\
param total: int = 10_000
run = total
schedule lr = warmup(linear, 100) >> cosine(1e-3, 0, total - 100)
"""
#: HF's cosine with restarts, the way a 10,000-step run is imported as a curve that never ends.
PERIODIC = """\
run = 10_000
schedule lr = warmup(linear, 100) >> cosine_restarts(1e-3, 0, 9900)
"""


def _cli(capsys, tmp_path, *args, files: dict[str, str]):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    code = main([str(tmp_path / a) if a in files else a for a in args])
    out, err = capsys.readouterr()
    return code, out, err


# -- the statement ---------------------------------------------------------------------------

def test_run_is_a_statement_and_stays_a_name_elsewhere():
    module = parse("param run: int = 500\nrun = run\nschedule lr = cosine(1, 0, run)")
    assert [type(s) for s in module.statements] == [ir.Param, ir.RunDecl, ir.ScheduleDecl]
    assert module.statements[0].name == "run"
    assert module.statements[1].value == ir.Name(module.statements[1].value.span, "run")
    prog = schedlang.compile("param run: int = 500\nrun = run\nschedule lr = cosine(1, 0, run)")
    assert prog.run == 500 and prog["lr"].duration == 500


def test_fmt_lays_out_run_like_batch():
    text = "param seq_len: int = 4\nbatch   =  8\nrun  =   4_000tok   # the run\nschedule lr = 1\n"
    assert format_source(text) == ("param seq_len: int = 4\nbatch = 8\nrun = 4_000tok  # the run\n"
                                   "schedule lr = 1\n")


@pytest.mark.parametrize("text, message", [
    ("run = 0\nschedule lr = 1", "a run of 0 steps trains no step"),
    ("run = 1.5\nschedule lr = 1", "a whole number of steps, not 3/2"),
    ("run = 10\nrun = 20\nschedule lr = 1", "declares `run` twice"),
    ("run = cosine(1, 0, 10)\nschedule lr = 1", "not a schedule"),
    ("run = t\nschedule lr = 1", "not a schedule"),
    ("batch = 8\nrun = 100tok\nschedule lr = 1", "a run counted in tokens needs the tokens per sample"),
    ("run = 2**70\nschedule lr = 1", "at most"),
    ("param total: float = 10.5\nrun = total\nschedule lr = 1", "a whole number of steps, not 21/2"),
])
def test_a_run_that_is_not_a_length_is_refused_at_the_statement(text, message):
    with pytest.raises(SchedlangError, match=message) as caught:
        schedlang.compile(text)
    assert caught.value.span is not None and caught.value.span.line in (1, 2)


# -- prog.run, run_tokens, run_samples ---------------------------------------------------------

def test_run_in_steps_with_params_bound_like_any_other():
    assert schedlang.compile(WHOLE).run == 10_000
    assert schedlang.compile(WHOLE, {"total": 5000}).run == 5000
    prog = schedlang.compile(WHOLE)
    assert prog.run_tokens is None and prog.run_samples is None  # no batch schedule
    assert schedlang.compile("schedule lr = 1").run is None


def test_a_run_whose_parameter_is_unbound_is_not_known_yet():
    prog = schedlang.compile("param total: int\nrun = total\nschedule lr = cosine(1, 0, total)")
    assert not prog.run_is_bound
    with pytest.raises(SchedlangError, match="parameter 'total', which has no value"):
        prog.run
    assert prog.rebind({"total": 300}).run == 300


def test_run_on_the_token_clock_trains_the_steps_whose_count_is_below_it():
    # 8 samples * 4 tokens = 32 tokens a step, 64 from 200 samples (step 25) on
    text = ("param seq_len: int = 4\nbatch = stages(8, [16], [200sp])\nrun = 1000tok\n"
            "schedule lr = cosine(1, 0, 2000tok)")
    prog = schedlang.compile(text)
    k = prog.run
    assert prog.tokens_at(k - 1) < 1000 <= prog.tokens_at(k)  # section 12's rule
    assert k == 29 and prog.run_tokens == prog.tokens_at(29) == 1056 and prog.run_samples == 264
    # a whole number of batches ends exactly there
    assert schedlang.compile(text.replace("1000tok", "992tok")).run == 28


def test_run_at_the_scale_of_a_large_run_is_exact():
    prog = schedlang.compile(OLMO)
    assert prog.run == -(-4 * 10**12 // (1024 * 4096))  # the first step that reaches 4e12
    assert prog.run_tokens == prog.run * 1024 * 4096 and isinstance(prog.run_tokens, int)
    assert prog.run_samples == prog.run * 1024


def test_run_in_samples_and_a_binding_that_moves_the_clock():
    text = "param bs: int = 8\nbatch = bs\nrun = 100sp\nschedule lr = 1"
    assert schedlang.compile(text).run == 13
    assert schedlang.compile(text, {"bs": 10}).run == 10
    assert schedlang.compile(text, {"bs": 10}).run_samples == 100


# -- check ---------------------------------------------------------------------------------------

def test_check_shows_the_run_s_end_and_each_value_at_the_last_update():
    report = summarise(schedlang.compile(OLMO))
    prog = schedlang.compile(OLMO)
    last = prog.run - 1
    assert f"run: {prog.run:,} steps (the last update is step {last:,}), {prog.run_samples:,} samples, " \
           f"{prog.run_tokens:,} tokens" in report.text
    assert f"at the last update (step {last:,}): lr {prog['lr'](last):.6g}, wd 0.1" in report.text
    assert report.run["steps"] == prog.run and report.run["tokens"] == prog.run_tokens
    assert report.run["last_update"] == {"step": last, "values": {"lr": prog["lr"](last), "wd": 0.1}}


def test_check_warns_at_the_run_when_it_cuts_a_decay_short():
    prog = schedlang.compile(OLMO)
    [warning] = [w for w in summarise(prog).warnings if w.code == "run-cuts-phase"]
    assert warning.span.line == 3  # the `run` statement
    end = prog.step_at(tokens=prog.tokens_at(2000) + 5 * 10**12)
    assert f"inside the phase of schedule 'lr' from step 2,000 to {end:,}" in warning.message
    assert f"it got {prog.run - 2000:,} of its {end - 2000:,} steps" in warning.message
    assert f"({prog.run_tokens - prog.tokens_at(2000):,} of {prog.tokens_at(end) - prog.tokens_at(2000):,} " \
           f"tokens)" in warning.message
    assert f"lr is {prog['lr'](prog.run):.6g} there, not the 3e-05 it was heading for" in warning.message
    assert f"run = {prog.tokens_at(end):_}tok" in warning.hint


def test_a_smoke_run_shorter_than_its_warmup_is_a_cut():
    [warning] = summarise(schedlang.compile(SMOKE)).warnings
    assert warning.code == "run-cuts-phase"
    assert "from step 0 to 2,000: it got 10 of its 2,000 steps, and lr is 5e-06 there, not the 0.001" \
        in warning.message
    assert "run = 2_000" in warning.hint


@pytest.mark.parametrize("text", [
    WHOLE,  # the run ends where the decay does
    "run = 500\nschedule lr = warmup(linear, 100) >> constant(1e-3, 1000) >> cosine(1e-3, 0, 100)",
    "run = 5000\nschedule lr = warmup(linear, 100) >> cosine(1e-3, 0, 1000)",  # past the end: held
    "run = 1000\nschedule lr = warmup(linear, 100) >> constant(1e-3)",  # the tail never ends
])
def test_no_cut_where_the_run_ends_at_a_phase_s_end_or_in_a_constant(text):
    assert [w for w in summarise(schedlang.compile(text)).warnings if w.code == "run-cuts-phase"] == []


def test_check_cli_prints_the_run_and_strict_fails_on_a_cut(capsys, tmp_path):
    code, out, err = _cli(capsys, tmp_path, "check", "smoke.sched", files={"smoke.sched": SMOKE})
    assert code == 0 and "run: 10 steps (the last update is step 9)" in out
    assert "smoke.sched:1:1: warning: the run ends at step 10" in err and "^^^^^^^^" in err
    code, _, err = _cli(capsys, tmp_path, "check", "smoke.sched", "--strict", files={"smoke.sched": SMOKE})
    assert code == 2 and "the run ends at step 10" in err
    code, out, _ = _cli(capsys, tmp_path, "check", "smoke.sched", "--json", files={"smoke.sched": SMOKE})
    doc = json.loads(out)
    assert doc["run"]["steps"] == 10 and doc["run"]["last_update"]["step"] == 9
    assert doc["warnings"][0]["message"].startswith("the run ends at step 10")


def test_check_of_a_run_with_an_unbound_length(capsys, tmp_path):
    text = "param total: int\nrun = total\nschedule lr = cosine(1, 0, total)"
    code, out, _ = _cli(capsys, tmp_path, "check", "a.sched", files={"a.sched": text})
    assert code == 0 and "run: total (bind total to know its length)" in out
    code, out, _ = _cli(capsys, tmp_path, "check", "a.sched", "-D", "total=40", files={"a.sched": text})
    assert code == 0 and "run: 40 steps" in out


def test_show_prints_the_run(capsys, tmp_path):
    code, out, _ = _cli(capsys, tmp_path, "show", "a.sched", files={"a.sched": SMOKE})
    assert code == 0 and out.startswith("run: 10 steps (the last update is step 9)\nlr (102000 steps):")


# -- eval and plot over the run ------------------------------------------------------------------

def test_eval_and_plot_default_to_the_run():
    periodic = schedlang.compile(PERIODIC)
    assert eval_steps(periodic) == range(0, 10_001, 1000)  # not four cycles of the restarts
    shown = plot_steps(periodic)
    assert 10_000 - shown.step < shown[-1] <= 10_000  # no step past the run's end
    smoke = schedlang.compile(SMOKE)
    assert list(eval_steps(smoke)) == list(range(11))
    odd = schedlang.compile("run = 1234\nschedule lr = cosine(1, 0, 5000)")
    assert eval_steps(odd)[-1] <= 1234 and len(eval_steps(odd)) == 10
    # a file without a run is looked at as before, up to the schedules' horizon and past it
    free = schedlang.compile("schedule lr = cosine(1, 0, 5000)")
    assert eval_steps(odd, free)[-1] >= 5000


def test_eval_cli_stops_at_the_run(capsys, tmp_path):
    code, out, _ = _cli(capsys, tmp_path, "eval", "a.sched", "--csv", files={"a.sched": SMOKE})
    assert code == 0 and out.splitlines()[-1].startswith("10,")


# -- verify within the run -----------------------------------------------------------------------

WRITTEN = PERIODIC.replace("cosine_restarts(1e-3, 0, 9900)", "cosine(1e-3, 0, 9900)")


def test_verify_a_difference_only_after_the_run_is_not_a_difference_of_it(capsys, tmp_path):
    files = {"hf.sched": PERIODIC, "written.sched": WRITTEN}
    code, out, _ = _cli(capsys, tmp_path, "verify", "hf.sched", "written.sched", files=files)
    assert code == 0, out
    assert "equivalent within the run (steps 0..9,999)" in out
    assert "after the run: a difference at step 10000: 0.001 (= 1/1000) vs 0.0" in out
    code, out, _ = _cli(capsys, tmp_path, "verify", "hf.sched", "written.sched", "--json", files=files)
    doc = json.loads(out)
    assert code == 0 and doc["verdict"] == "equivalent"
    assert doc["steps"] == {"start": 0, "stop": 10_000, "from": "run"}
    assert doc["after_run"]["step"] == 10_000


def test_verify_a_difference_within_the_run_is_one(capsys, tmp_path):
    other = WRITTEN.replace("cosine(1e-3, 0, 9900)", "cosine(1e-3, 0, 9800) >> constant(0)")
    files = {"a.sched": WRITTEN, "b.sched": other}
    code, out, _ = _cli(capsys, tmp_path, "verify", "a.sched", "b.sched", files=files)
    assert code == 1 and "different within the run (steps 0..9,999): first difference at step 101" in out


def test_verify_runs_that_differ_stop_unless_steps_are_given(capsys, tmp_path):
    files = {"a.sched": WRITTEN, "b.sched": WRITTEN.replace("run = 10_000", "run = 5000")}
    code, _, err = _cli(capsys, tmp_path, "verify", "a.sched", "b.sched", files=files)
    assert code == 2 and "the runs differ: A trains 10,000 steps and B 5,000" in err
    assert "--steps 0:5000" in err and "Traceback" not in err
    code, out, _ = _cli(capsys, tmp_path, "verify", "a.sched", "b.sched", "--steps", "0:5000", files=files)
    assert code == 0 and "equivalent on steps 0..4,999" in out


def test_verify_with_one_run_declared_compares_within_it(capsys, tmp_path):
    files = {"a.sched": PERIODIC}
    code, out, _ = _cli(capsys, tmp_path, "verify", "a.sched", "-e",
                        "warmup(linear, 100) >> cosine(1e-3, 0, 9900)", files=files)
    assert code == 0 and "within the run (steps 0..9,999; A's run, B declares none)" in out


def test_verify_steps_range_and_its_errors(capsys, tmp_path):
    files = {"a.sched": "cosine(1, 0, 100) >> constant(0)", "b.sched": "cosine(1, 0, 100) >> constant(1)"}
    code, out, _ = _cli(capsys, tmp_path, "verify", "a.sched", "b.sched", "--steps", "100", files=files)
    assert code == 0 and "equivalent on steps 0..99" in out
    code, out, _ = _cli(capsys, tmp_path, "verify", "a.sched", "b.sched", "--steps", "50:101", files=files)
    assert code == 1 and "first difference at step 100" in out
    code, _, err = _cli(capsys, tmp_path, "verify", "a.sched", "b.sched", "--steps", "9:3", files=files)
    assert code == 2 and "holds no step" in err and "^" in err
    code, _, err = _cli(capsys, tmp_path, "verify", "a.sched", "b.sched", "--steps", "1:2:3", files=files)
    assert code == 2 and "expects START:STOP" in err


def test_verify_schedule_picks_the_schedule_of_each_side(capsys, tmp_path):
    a = "schedule lr = 1\nschedule wd = linear(0.1, 0, 10)"
    files = {"a.sched": a, "b.sched": a.replace("linear(0.1, 0, 10)", "linear(0.1, 0, 20)")}
    code, _, _ = _cli(capsys, tmp_path, "verify", "a.sched", "b.sched", files=files)
    assert code == 0  # lr
    code, out, _ = _cli(capsys, tmp_path, "verify", "a.sched", "b.sched", "--schedule", "wd", files=files)
    assert code == 1 and "first difference at step 1" in out
    code, _, err = _cli(capsys, tmp_path, "verify", "a.sched", "b.sched", "--schedule", "mom", files=files)
    assert code == 2 and "no schedule named 'mom'" in err


TOKENS = """\
param seq_len: int = 1000
batch = 8
run = 1_000_000tok
schedule lr = linear(0, 1e-3, 80000tok) >> cosine(1e-3, 1e-4, 800000tok) >> constant(1e-4)
"""


def test_verify_on_the_token_axis_compares_functions_of_the_tokens_consumed(capsys, tmp_path):
    files = {"g8.sched": TOKENS, "g16.sched": TOKENS.replace("batch = 8", "batch = 16"),
             "steps.sched": TOKENS.replace("batch = 8", "batch = 16").replace("80000tok", "10")}
    code, _, err = _cli(capsys, tmp_path, "verify", "g8.sched", "g16.sched", files=files)
    assert code == 2 and "A trains 125 steps and B 63" in err  # on the step axis: other runs
    assert "(--axis tokens)" in err
    code, out, _ = _cli(capsys, tmp_path, "verify", "g8.sched", "g16.sched", "--axis", "tokens",
                        files=files)
    assert code == 0 and "A placed on B's batch schedule" in out
    assert "equivalent within the run (steps 0..62)" in out
    # a warmup counted in steps lasts other tokens: a difference on the token axis
    code, out, _ = _cli(capsys, tmp_path, "verify", "g8.sched", "steps.sched", "--axis", "tokens",
                        files=files)
    assert code == 1 and "first difference at step 1" in out
    code, out, _ = _cli(capsys, tmp_path, "verify", "g8.sched", "g16.sched", "--axis", "samples", "--json",
                        files=files)
    assert code == 0 and json.loads(out)["axis"] == "samples"
    code, _, err = _cli(capsys, tmp_path, "verify", "g8.sched", "-e", "1", "--axis", "tokens", files=files)
    assert code == 2 and "B declares no batch schedule" in err


def test_equivalent_within_a_range_of_steps():
    a, b = "cosine(1, 0, 100) >> constant(0)", "cosine(1, 0, 100) >> constant(1)"
    assert not schedlang.equivalent(a, b)
    assert schedlang.equivalent(a, b, stop=100)
    assert schedlang.equivalent(a, b, stop=101).counterexample.step == 100
    assert schedlang.equivalent("linear(0, 1, 10) >> constant(1)", "constant(1)", start=10)
    # free parameters: every admissible value, within the range
    sym = "param n: int where n > 10\nschedule lr = cosine(1, 0, n) >> constant({})"
    assert schedlang.equivalent(sym.format(0), sym.format(1), stop=11)
    assert not schedlang.equivalent(sym.format(0), sym.format(1), stop=12)


# -- the builder ---------------------------------------------------------------------------------

def test_the_builder_takes_the_run():
    from schedlang import build as sb

    total = sb.param("total", int, 1000)
    prog = sb.program(lr=sb.warmup(sb.linear, 100) >> sb.cosine(1e-3, 1e-4, total - 100), run=total)
    assert prog.run == 1000
    assert "run = total\n" in prog.to_source()
    assert schedlang.compile(prog.to_source()).run == 1000
    seq = sb.param("seq_len", int, 4)
    prog = sb.program(lr=sb.constant(1), batch=sb.stages(8, [16], [sb.time(200, "sp")], seq_len=seq),
                      run=sb.time(1000, "tok"))
    assert (prog.run, prog.run_tokens) == (29, 1056)
    python = sb.to_python(prog.to_source())
    assert 'run=sb.time(1000, "tok")' in python
    with pytest.raises(SchedlangError, match="a run of 0 steps"):
        sb.program(lr=sb.constant(1), run=0)
