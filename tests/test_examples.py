"""Every file in examples/ compiles, checks, evaluates and round-trips through the generated module."""

import math
from pathlib import Path

import pytest
from helpers import ROOT, run_cli

import schedlang

EXAMPLES = sorted((ROOT / "examples").glob("*.sched"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_checks(path: Path):
    program = schedlang.load(path)
    assert len(program) >= 1
    for schedule in program:
        end = schedule.duration if isinstance(schedule.duration, int) else 20_000
        for step in sorted({0, 1, end // 2, end - 1, end, end + 1, 10 * end}):
            value = schedule(step)
            assert math.isfinite(value)


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_generated_module_matches_reference(path: Path):
    program = schedlang.load(path)
    namespace = {}
    exec(compile(program.python_source(), str(path), "exec"), namespace)
    for schedule in program:
        function = namespace["SCHEDULES"][schedule.name]
        for step in (0, 7, 999, 1000, 123_456, 10**9):
            assert function(step) == schedule(step)


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_cli_check(path, capsys):
    from schedlang.cli import main

    assert main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert all(f"schedule {s.name}:" in out for s in schedlang.load(path))


def test_cli_check_process():
    result = run_cli("check", "examples/warmup_cosine.sched")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("schedule lr: 1000 steps")


def test_step_decay_example_values():
    lr = schedlang.load(ROOT / "examples" / "step_decay.sched")["lr"]
    # 500 steps per epoch: 5 warmup epochs, then x0.1 at epochs 30, 60, 80
    assert lr(0) == 0
    assert lr(2500) == pytest.approx(0.1)
    assert lr(2500 + 25 * 500 - 1) == pytest.approx(0.1)
    assert lr(2500 + 25 * 500) == pytest.approx(0.01)
    assert lr(2500 + 75 * 500) == pytest.approx(1e-4)
