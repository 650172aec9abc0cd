"""``schedlang.equivalent`` as an API, ``schedlang verify``/``show`` and the ``check`` warnings."""

import pytest

import schedlang
from schedlang import SchedlangError, equivalent
from schedlang.cli import main
from schedlang.cli.analysis import summarise
from schedlang.verify import Verdict

FILE_A = "param w: int = 10\nparam n: int = 100\nschedule lr = warmup(linear, w) >> cosine(1e-3, 0, n)\n"
FILE_B = ("param w: int = 10\nparam n: int = 100\nschedule lr = if t < w then 1e-3 * t / w "
          "else if t < w + n then 1e-3 * (1 + cos(pi * (t - w) / n)) / 2 else 0\n")


# -- API ------------------------------------------------------------------------------------


def test_inputs_schedule_program_and_source():
    prog = schedlang.compile("schedule lr = linear(1, 0, 10)\nschedule wd = constant(0.1)")
    assert equivalent(prog, "linear(1, 0, 10)")
    assert equivalent(prog["wd"], "constant(0.1)")
    only = schedlang.compile("schedule other = constant(2)")
    assert equivalent(only, "constant(2)")
    with pytest.raises(SchedlangError):
        equivalent(schedlang.compile("schedule a = constant(1)\nschedule b = constant(2)"), "constant(1)")


def test_verdict_is_three_valued_and_truthy_only_when_equivalent():
    yes, no = equivalent("constant(1)", "constant(1)"), equivalent("constant(1)", "constant(2)")
    assert isinstance(yes, Verdict) and yes and yes.equivalent and yes.method == "symbolic"
    assert not no and no.different and no.counterexample.step == 0
    assert (no.counterexample.a, no.counterexample.b) == (1.0, 2.0)
    unknown = Verdict("unknown", reason="x")
    assert not unknown and unknown.unknown
    assert "different" in str(no) and "equivalent" in str(yes)


def test_params_bind_both_sides_and_earliest_step():
    a = "param n: int\nschedule lr = linear(1, 0, n)"
    b = "param n: int\nschedule lr = linear(1, 0, n) >> constant(0.5)"
    verdict = equivalent(a, b, params={"n": 40})
    assert verdict.different and verdict.counterexample.step == 40
    assert not verdict.counterexample.params
    assert equivalent(schedlang.compile(a), schedlang.compile(a), params={"n": 3})
    with pytest.raises(SchedlangError, match="neither"):
        equivalent(a, a, params={"nope": 1})


def test_free_parameters_counterexample_names_values():
    a = "param n: int\nschedule lr = linear(1, 0, n)"
    verdict = equivalent(a, "param n: int\nschedule lr = linear(1, 0, n + 2)")
    assert verdict.different and "n" in verdict.counterexample.params


def test_different_constraints_use_both():
    a = "param n: int where n > 5\nschedule lr = if n > 3 then constant(1) else constant(2)"
    assert equivalent(a, "constant(1)")


def test_tolerance():
    assert not equivalent("constant(1)", "constant(1.0001)")
    verdict = equivalent("constant(1)", "constant(1.0001)", rtol=1e-3)
    assert verdict and verdict.method == "tolerance"
    assert equivalent("linear(1, 0.5, 100)", "linear(1, 0.50001, 100)", rtol=1e-4).method == "tolerance"
    assert equivalent("linear(1, 0.5, 100)", "linear(1, 0.6, 100)", rtol=1e-4).different
    with pytest.raises(SchedlangError):
        equivalent("constant(1)", "constant(1)", rtol=-1)


def test_exhaustive_methods():
    # equal only at integer steps, on a finite stretch: decided step by step
    verdict = equivalent("cosine(1, 0, 2) >> constant(0, 30)", "poly(1, 0, 2) >> constant(0, 30)")
    assert verdict
    wiggle = "if t < 60 then sin(pi * t) * t / 7 + 1 else 1"
    assert equivalent(wiggle, "constant(1)")
    # equal at every integer step, not as formulas of a real t: decided one step at a time
    exact = equivalent("(floor(t * t / 2)) for 50", "(t * t / 2 - (1 - cos(pi * t)) / 4) for 50")
    assert exact and exact.method == "exhaustive-exact"
    enclosed = equivalent("(floor(t * t / 2) + sqrt(2)) for 50",
                          "(t * t / 2 - (1 - cos(pi * t)) / 4 + sqrt(2)) for 50")
    assert enclosed and enclosed.method == "exhaustive-interval"
    late = equivalent("(floor(t * t / 2) + sqrt(2)) for 50",
                      "(t * t / 2 - (1 - cos(pi * t)) / 4 + sqrt(2)) for 51")
    assert late.different and late.counterexample.step == 51


def test_unprovable_tail_is_unknown_not_equivalent():
    verdict = equivalent("floor(t * t / 2)", "t * t / 2 - (1 - cos(pi * t)) / 4")
    assert verdict.unknown and "could not be proven" in verdict.reason


def test_unknown_is_never_equivalent_when_values_drift_late():
    # agree for a very long time, then differ: either found or unknown, never equivalent
    verdict = equivalent("1 / (t + 1)", "1 / (t + 1) + (if t < 300000 then 0 else 1e-9)")
    assert not verdict


# -- CLI ------------------------------------------------------------------------------------


@pytest.fixture
def files(tmp_path):
    a, b = tmp_path / "a.sched", tmp_path / "b.sched"
    a.write_text(FILE_A)
    b.write_text(FILE_B)
    return str(a), str(b)


def test_cli_verify_equivalent(files, capsys):
    assert main(["verify", *files]) == 0
    assert "equivalent (proven: symbolic)" in capsys.readouterr().out
    assert main(["verify", files[0], files[1], "-D", "w=20"]) == 0


def test_cli_verify_different_prints_table(files, capsys):
    assert main(["verify", files[0], "-e", "warmup(linear, 10) >> cosine(1e-3, 0, 101)"]) == 1
    out = capsys.readouterr().out
    assert "different" in out and "step 11" in out
    assert ">       11" in out


def test_cli_verify_inline_and_errors(capsys):
    assert main(["verify", "-e", "linear(1, 0, 10)", "-e", "linear(1, 0, 10) >> constant(0)"]) == 0
    assert main(["verify", "-e", "constant(1)", "-e", "constant(1.0001)", "--rtol", "1e-3"]) == 0
    assert main(["verify", "-e", "constant(1)"]) == 2
    assert main(["verify", "-e", "constant(1)", "-e", "constant(1)", "--rtol", "x"]) == 2
    assert main(["verify", "-e", "constant(", "-e", "constant(1)"]) == 2
    assert "error" in capsys.readouterr().err


def test_cli_verify_unknown_exits_2(capsys):
    assert main(["verify", "-e", "cosine_restarts(1, 0, 10, mult=2)", "-e",
                 "cosine(1, 0, 10) >> cosine(1, 0, 20) >> cosine(1, 0, 40) >> "
                 "cosine_restarts(1, 0, 80, mult=3)"]) in (1, 2)


def test_cli_show(files, capsys):
    assert main(["show", files[0]]) == 0
    assert "[0, " in capsys.readouterr().out
    assert main(["show", files[0], "--latex"]) == 0
    out = capsys.readouterr().out
    assert "\\begin{cases}" in out and "\\cos" in out


# -- check warnings -------------------------------------------------------------------------


def _warnings(src):
    return summarise(schedlang.compile(src)).warnings


def test_jump_warning_names_step_and_values():
    (warning,) = _warnings("linear(0, 1e-3, 100) >> cosine(5e-4, 0, 100)")
    assert "step 100" in warning and "0.001" in warning and "0.0005" in warning


@pytest.mark.parametrize("src", [
    "warmup(linear, 10) >> cosine(1e-3, 0, 100)",
    "step(1, 0.5, 10)",
    "multistep(1, 0.5, [10, 20])",
    "piecewise([1, 0.5], [10])",
    "cosine_restarts(1, 0, 10)",
    "cyclic(0, 1, 5)",
    "linear(1, 0.5, 10) >> step(0.5, 0.5, 3)",
])
def test_intended_jumps_are_quiet(src):
    assert _warnings(src) == []


def test_negative_and_unreached_end():
    assert any("negative from step 6" in w for w in _warnings("linear(1, -1, 10)"))
    assert any("never reaches" in w for w in _warnings("cosine(1, 0.1, 100) for 50"))
    assert _warnings("cosine(1, 0.1, 100) for 150") == []


def test_report_has_budget():
    report = summarise(schedlang.compile("constant(0.5, 10)"))
    assert report.summaries[0].budget == 5.0
    assert "lr budget 5" in report.text


def test_cli_check_strict(tmp_path, capsys):
    path = tmp_path / "jump.sched"
    path.write_text("linear(0, 1e-3, 100) >> cosine(5e-4, 0, 100)\n")
    assert main(["check", str(path)]) == 0
    assert main(["check", str(path), "--strict"]) == 2
    assert "jumps at step 100" in capsys.readouterr().err


def test_reference_negative_integer_base():
    # cos(pi * t) becomes (-1)**t in sympy; the reference printed it as -1.0**t (= -1)
    lr = schedlang.compile("cos(pi * t)")["lr"]
    assert [lr(k) for k in range(4)] == [1.0, -1.0, 1.0, -1.0]
    assert schedlang.compile("cosine(1 / 7, 0, 1)")["lr"](0) == pytest.approx(1 / 7)


def test_params_override_values_of_compiled_schedules():
    a = schedlang.compile("param n: int = 10\nschedule lr = linear(1, 0, n)")
    b = schedlang.compile("param n: int = 10\nschedule lr = linear(1, 0, 10)")
    assert equivalent(a, b)
    verdict = equivalent(a, b, params={"n": 20})
    assert verdict.different and verdict.counterexample.step == 1
    with pytest.raises(SchedlangError):
        equivalent(a, b, params={"n": 2.5})


def test_jump_hidden_by_a_cut_is_not_reported_later():
    src = "((linear(0, 1, 10) >> constant(0.5, 10)) for 5) >> linear(0.5, 0, 20)"
    assert not any("step 10" in w for w in _warnings(src))


def test_a_crossing_of_a_power_whose_base_starts_negative_is_solved():
    """HF's ``warmup_stable_decay`` with ``1-sqrt`` is ``max(0, 1 - sqrt(t/100 - 3/2))`` on its
    decay: the comparison inside ``max`` is in ``sqrt(b)`` with ``b < 0`` before the decay; it is
    solved from the decay's first step on, so the prover proves it equal to the cooldown (the
    certificate of ``branch --format hf-args``) and still finds a different floor."""
    hf = schedlang.compile('schedule lr = hf.warmup_stable_decay(lr=0.001, num_warmup_steps=0, '
                           'num_training_steps=250, num_decay_steps=100, num_stable_steps=150, '
                           'decay_type="1-sqrt", min_lr_ratio=0)')["lr"]
    same = schedlang.compile("schedule lr = constant(0.001) for 150 >> cooldown(sqrt, 100, 0)")["lr"]
    other = schedlang.compile("schedule lr = constant(0.001) for 150 >> cooldown(sqrt, 100, 1e-5)")["lr"]
    assert schedlang.equivalent(hf, same).method == "symbolic"
    verdict = schedlang.equivalent(hf, other)
    assert verdict.different and verdict.counterexample.step == 151


def test_the_same_formula_needs_no_rule(monkeypatch):
    """Two sides that are one formula (an export read back as written) are equivalent before any
    proof rule reads them (issue 39 item 17: a 96-stage token clock's sides were expanded per
    stage and normalised); one number apart, the rules still run and refute them."""
    import schedlang.verify.prover as prover

    ramp = ("param seq_len: int = 4096\nbatch = megatron.rampup_batch_size(32, 32, 2000000, "
            "global_batch_size=3104)\nschedule lr = on_samples(megatron.OptimizerParamScheduler("
            "init_lr=0, max_lr={peak}, min_lr=3e-05, lr_warmup_steps=100000, lr_decay_steps=10000000, "
            'lr_decay_style="cosine"))\n')
    calls = []
    real = prover.normalise
    monkeypatch.setattr(prover, "normalise", lambda e: calls.append(e) or real(e))
    verdict = equivalent(ramp.format(peak="0.0003"), ramp.format(peak="0.0003"))
    assert verdict and verdict.method == "symbolic" and not calls
    assert not equivalent("constant(1, 10) >> linear(1, 0, 5)", "constant(1, 10) >> linear(1, 0.5, 5)")
    assert calls  # a different pair still goes through the rules
