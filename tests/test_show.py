"""``schedlang show``: one row per segment, and the core printer's text of every example.

Every example's rows must tile ``[0, ∞)`` in order, and each row's formula must give the
schedule's value on its steps; ``core_text.text`` of every example must compile back to the
same schedule (the text ``import --lower`` writes).
"""

import pytest
import sympy as sp
from helpers import ROOT

import schedlang
from schedlang import t
from schedlang.cli import main, show
from schedlang.codegen.sched import text
from schedlang.core.algebra import branches
from schedlang.core.special import restart_index
from schedlang.errors import SchedlangError

EXAMPLES = sorted((ROOT / "examples").glob("*.sched"))


def _probe_steps(start, end):
    start = int(start)
    last = start + 2000 if end is None else int(end) - 1
    return sorted({start, start + 1, (start + last) // 2, last} & set(range(start, last + 1)))


def test_every_example_is_a_table_of_rows_that_give_its_values():
    for path in EXAMPLES:
        for schedule in schedlang.load(path):
            found = show.rows(schedule.expr)
            assert found[0][0] == 0 and found[-1][1] is None, (path, schedule.name)
            for (_, end, _), (start, _, _) in zip(found, found[1:]):
                assert end == start, (path, schedule.name)
            for start, end, formula in found:
                for step in _probe_steps(start, end):
                    want = schedule(step)
                    got = float(formula.xreplace({t: step}).evalf(30))
                    assert abs(got - want) <= 1e-12 * max(1.0, abs(want)), (path, schedule.name, step)


def test_every_example_expr_is_one_flat_table():
    # one-cycle's phases end at `t <= c` and a multistep's milestones are `30ep`: both used
    # to stay a table inside a table (or a count of indicator tables) in `.expr`
    for path in EXAMPLES:
        for schedule in schedlang.load(path):
            for value, _ in branches(schedule.expr):
                assert not value.has(sp.Piecewise), (path.name, schedule.name, schedule.expr)


def test_show_prints_rows_and_latex_cases(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(["show", "examples/wsd.sched"]) == 0
    out = capsys.readouterr().out
    assert "lr (50000 steps):\n  [0, 1000):      t/1000000\n  [1000, 40000):  1/1000\n" in out
    assert "  [50000, ∞):     0\n" in out
    assert main(["show", "--latex", "examples/wsd.sched"]) == 0
    out = capsys.readouterr().out
    assert r"\frac{1}{1000} & 1000 \le t < 40000" in out and r"0 & 50000 \le t \end{cases}" in out


def test_show_prints_the_run_before_the_schedules(capsys, tmp_path):
    path = tmp_path / "run.sched"
    path.write_text("param seq_len: int = 4\nbatch = 8\nrun = 1000tok\nschedule lr = linear(1, 0, 100)\n")
    assert main(["show", str(path)]) == 0
    assert capsys.readouterr().out.startswith(
        "run: 32 steps (the last update is step 31), 256 samples, 1,024 tokens\nlr (100 steps):\n")
    assert main(["show", "--latex", str(path)]) == 0
    assert capsys.readouterr().out.startswith("% run: 32 steps")


def test_a_phase_table_inside_a_segment_is_split_into_rows():
    one_cycle = schedlang.load(ROOT / "examples" / "one_cycle.sched")["lr"]
    assert [(int(a), b if b is None else int(b)) for a, b, _ in show.rows(one_cycle.expr)] == \
        [(0, 2500), (2500, 10000), (10000, None)]


def test_restart_index_is_explained_where_it_appears():
    sgdr = schedlang.load(ROOT / "examples" / "sgdr.sched")["lr"]
    assert "restart_index(t, T, m): the cycle holding step t" in show.text(sgdr.expr)


def test_core_text_of_every_example_compiles_back_to_it():
    for path in EXAMPLES:
        for schedule in schedlang.load(path):
            try:
                written = text(schedule.expr)
            except SchedlangError:
                assert schedule.expr.has(restart_index), (path, schedule.name)  # documented: no core form
                continue
            again = schedlang.compile(f"schedule {schedule.name} = {written}\n")[schedule.name]
            near = [int(b) + d for b in schedule.breakpoints if b.is_Integer for d in (-1, 0, 1)]
            steps = sorted({0, 1, 123_457, *[s for s in near if s >= 0]})
            # The same values up to rounding: the example's own functions keep its parameters
            # symbolic (``peak - peak*t/(total - warmup)`` cancels near the end in floats, 1e-10),
            # the text has them bound.  A lost parenthesis would be far off.
            assert again.values(steps) == pytest.approx(schedule.values(steps), rel=1e-9, abs=1e-300), \
                (path, schedule.name, written)


def test_a_token_clock_segment_is_one_row_reading_the_count():
    """A cosine in tokens over a 41-stage batch ramp is one row reading T(t), explained under
    the table (issue 39 item 13: not a row per batch stage)."""
    prog = schedlang.compile("param seq_len: int = 4\n"
                             "batch = megatron.rampup_batch_size(1, 1, 16400, global_batch_size=41)\n"
                             "schedule lr = warmup(linear, 100) >> cosine(1e-3, 1e-4, 1e6tok)"
                             " >> constant(1e-4)\n")
    shown = show.text(prog["lr"].expr).splitlines()
    assert len(shown) == 4 and "T(t)" in shown[1]
    assert shown[3].startswith("  T(t): the tokens consumed before step t") and "41 batch stages" in shown[3]
