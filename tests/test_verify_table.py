"""A table of schedule pairs with the verdict ``schedlang.equivalent`` must give.

EQ: proven equivalent.  DIFF: different, and the counterexample is the
earliest differing step (given as the last item).  EQ_OR_UNKNOWN: a true
equality the prover may not manage to prove; it must never be called
different.  Whatever the expectation, a near miss must never be equivalent.
"""

import pytest

import schedlang
from schedlang import equivalent

EQ, DIFF, EQ_OR_UNKNOWN = "eq", "diff", "eq-or-unknown"

P = "param w: int\nparam n: int\nparam p: float where p > 0\n"
POSITIVE = "param w: int where w > 0\nparam n: int where n > 0\nparam p: float where p > 0\n"
WARMUP_COSINE = P + "schedule lr = warmup(linear, w) >> cosine(p, 0, n)"
HAND = (P + "schedule lr = if t < w then p * t / w else if t < w + n then "
        "p * (1 + cos(pi * (t - w) / n)) / 2 else {tail}")
TOTAL = "param total: int\nparam warm: int where warm < total and warm > 0\n"

TABLE = [
    # -- equal in different forms ---------------------------------------------------------
    ("split linear", "linear(1, 0, 100)", "linear(1, 0.5, 50) >> linear(0.5, 0, 50)", EQ),
    ("step vs piecewise", "step(1, 0.5, 10) for 30",
     "piecewise([1, 0.5, 0.25, 0.125], [10, 20, 30])", EQ),
    ("multistep vs ifs", "multistep(1, 0.1, [10, 20])",
     "(if t >= 10 then 0.1 else 1) * (if t >= 20 then 0.1 else 1)", EQ),
    ("multistep unsorted", "multistep(1, 0.5, [20, 10])", "multistep(1, 0.5, [10, 20])", EQ),
    (">> vs if", "cosine(1, 0, 50) >> linear(0, 1, 50)",
     "if t < 50 then 0.5 + 0.5 * cos(pi * t / 50) else if t < 100 then (t - 50) / 50 else 1", EQ),
    ("cosine = poly at n=1", "cosine(1, 0, 1)", "poly(1, 0, 1)", EQ),
    ("cosine = poly at n=2", "cosine(1, 0, 2)", "poly(1, 0, 2)", EQ),
    ("poly power 1 = linear", "poly(1, 0, 100, power=1)", "linear(1, 0, 100)", EQ),
    ("clamp = min max", "clamp(t / 100, 0.1, 0.5)", "min(max(t / 100, 0.1), 0.5)", EQ),
    ("warmup = min", "warmup(linear, 10) >> constant(1)", "min(t / 10, 1)", EQ),
    ("restarts = cycle", "cosine_restarts(1, 0, 10)", "cycle(cosine(1, 0, 10))", EQ),
    ("repeat = unrolled", "repeat(linear(1, 0, 10), 3)",
     "linear(1, 0, 10) >> linear(1, 0, 10) >> linear(1, 0, 10)", EQ),
    ("stretch", "stretch(linear(1, 0, 10), 3)", "linear(1, 0, 30)", EQ),
    ("inverse sqrt", "inverse_sqrt(1, 100)", "if t < 100 then 1 else 10 / sqrt(t)", EQ),
    ("step = floor power", "step(1, 0.5, 10)", "0.5 ** floor(t / 10)", EQ),
    ("step regrouped", "step(1, 0.25, 20)", "0.5 ** (2 * floor(t / 20))", EQ),
    ("step residues", "step(1, 0.5, 10)",
     "0.25 ** floor(t / 20) * 0.5 ** (floor(t / 10) - 2 * floor(t / 20))", EQ),
    ("cyclic = cycle", "cyclic(0, 1, 5)", "cycle(linear(0, 1, 5) >> linear(1, 0, 5))", EQ),
    ("constant split", "constant(1, 10) >> constant(1)", "constant(1)", EQ),
    ("reassociate", "(linear(1, 0.5, 10) >> linear(0.5, 0.2, 5)) >> cosine(0.2, 0, 7)",
     "linear(1, 0.5, 10) >> (linear(0.5, 0.2, 5) >> cosine(0.2, 0, 7))", EQ),
    ("cosine warmup", "warmup(cosine, 10) >> constant(1)",
     "if t < 10 then 0.5 - 0.5 * cos(pi * t / 10) else 1", EQ),
    ("cut linear", "linear(0, 1, 100) for 50", "linear(0, 0.5, 50)", EQ),
    ("scaled", "2 * linear(1, 0, 10)", "linear(2, 0, 10)", EQ),
    ("scaled warmup", "1e-3 * (if t < 10 then t / 10 else 1)", "warmup(linear, 10) >> constant(1e-3)", EQ),
    ("pythagoras", "sin(pi * t / 6) ** 2 + cos(pi * t / 6) ** 2", "constant(1)", EQ),
    ("piecewise vs if", "piecewise([1, 2], [5])", "if t >= 5 then 2 else 1", EQ),
    ("abs", "abs(t - 10) / 10", "if t < 10 then (10 - t) / 10 else (t - 10) / 10", EQ),
    ("exp vs power", "0.5 ** (t / 10)", "exp(-t * log(2) / 10)", EQ),
    ("linear vs max", "linear(1, 0, 100)", "max(1 - t / 100, 0)", EQ),
    ("symbolic warmup cosine", WARMUP_COSINE, HAND.format(tail="0"), EQ),
    # `t <= w` divides by w at t = 0: equal only for w > 0 (a length may be 0, SPEC §1)
    # and at t = w it gives p where a zero-length cosine (n = 0) already holds 0
    ("symbolic <= boundary", POSITIVE + WARMUP_COSINE[len(P):],
     POSITIVE + HAND.format(tail="0").replace("if t < w then", "if t <= w then")[len(P):], EQ),
    ("symbolic <= boundary, w may be 0", WARMUP_COSINE,
     HAND.format(tail="0").replace("if t < w then", "if t <= w then"), EQ_OR_UNKNOWN),
    ("symbolic hold", "param n: int\nschedule lr = linear(1, 0, n) >> constant(0)",
     "param n: int\nschedule lr = linear(1, 0, n)", EQ),
    ("symbolic step", "param k: int where k > 0\nparam v: float\nschedule lr = step(v, 0.5, k)",
     "param k: int where k > 0\nparam v: float\nschedule lr = v * 0.5 ** floor(t / k)", EQ),
    ("symbolic where", TOTAL + "schedule lr = warmup(linear, warm) >> linear(1, 0, total - warm)",
     TOTAL + "schedule lr = if t < warm then t / warm else if t < total then "
             "1 - (t - warm) / (total - warm) else 0", EQ),
    ("symbolic min threshold", "param w: int\nparam n: int\nschedule lr = if t < min(w, n) then 1 else 2",
     "param w: int\nparam n: int\nschedule lr = if t < w and t < n then 1 else 2", EQ),
    ("restarts mult unrolled", "cosine_restarts(1, 0, 10, mult=2)",
     "cosine(1, 0, 10) >> cosine(1, 0, 20) >> cosine(1, 0, 40) >> cosine_restarts(1, 0, 80, mult=2)",
     EQ_OR_UNKNOWN),
    # -- near misses ----------------------------------------------------------------------
    ("split off by one", "linear(1, 0, 100)", "linear(1, 0.5, 50) >> linear(0.5, 0, 51)", DIFF, 51),
    ("piecewise late", "step(1, 0.5, 10) for 30",
     "piecewise([1, 0.5, 0.25, 0.125], [10, 20, 31])", DIFF, 30),
    ("step period", "step(1, 0.5, 10)", "step(1, 0.5, 11)", DIFF, 10),
    ("multistep milestone", "multistep(1, 0.1, [10, 20])", "multistep(1, 0.1, [10, 21])", DIFF, 20),
    ("cosine end", "cosine(1, 0, 100)", "cosine(1, 0.001, 100)", DIFF, 1),
    ("< vs <=", "if t < 10 then 1 else 0", "if t <= 10 then 1 else 0", DIFF, 10),
    ("warmup length", "warmup(linear, 10) >> constant(1)", "warmup(linear, 11) >> constant(1)", DIFF, 1),
    ("end value", "linear(1, 0, 100)", "linear(1, 0, 100) >> constant(0.001)", DIFF, 100),
    ("cosine vs poly n=3", "cosine(1, 0, 3)", "poly(1, 0, 3)", DIFF, 1),
    ("cyclic down", "cyclic(0, 1, 5)", "cyclic(0, 1, 5, 6)", DIFF, 6),
    ("restart period", "cosine_restarts(1, 0, 10)", "cosine_restarts(1, 0, 11)", DIFF, 1),
    ("repeat count", "repeat(linear(1, 0, 10), 3)", "repeat(linear(1, 0, 10), 4)", DIFF, 30),
    ("late tail", "step(1, 0.5, 10)", "0.5 ** floor(t / 10) * (if t < 1000 then 1 else 0.999)",
     DIFF, 1000),
    ("step cut", "step(1, 0.5, 10)", "step(1, 0.5, 10) for 1000", DIFF, 1010),
    ("tiny constant", "constant(0.001)", "constant(0.0010000000001)", DIFF, 0),
    ("stretch off", "stretch(linear(1, 0, 10), 3)", "linear(1, 0, 31)", DIFF, 1),
    ("clamp high", "clamp(t / 100, 0.1, 0.5)", "clamp(t / 100, 0.1, 0.51)", DIFF, 51),
    ("piecewise vs multistep", "piecewise([1, 0.5], [10])", "multistep(1, 0.5, [11])", DIFF, 10),
    ("sqrt shifted", "inverse_sqrt(1, 100)", "if t < 100 then 1 else 10 / sqrt(t + 1)", DIFF, 100),
    ("order swapped", "linear(1, 0.5, 10) >> constant(0.5, 5) >> linear(0.5, 0, 5)",
     "linear(1, 0.5, 10) >> linear(0.5, 0, 5) >> constant(0.5, 5)", DIFF, 11),
    ("staircase", "step(1, 0.5, 10) for 40", "piecewise([1, 0.5, 0.25, 0.25, 0.0625], [10, 20, 30, 40])",
     DIFF, 30),
    ("symbolic tail", WARMUP_COSINE, HAND.format(tail="p / 1000"), DIFF, None),
    ("symbolic length", "param n: int\nschedule lr = linear(1, 0, n)",
     "param n: int\nschedule lr = linear(1, 0, n + 1)", DIFF, None),
    ("symbolic min off", "param w: int\nparam n: int\nschedule lr = if t < min(w, n) then 1 else 2",
     "param w: int\nparam n: int\nschedule lr = if t < w or t < n then 1 else 2", DIFF, None),
    ("symbolic warmup off", WARMUP_COSINE, HAND.format(tail="0").replace("p * t / w", "p * t / (w + 1)"),
     DIFF, None),
]


@pytest.mark.parametrize("row", TABLE, ids=[row[0] for row in TABLE])
def test_table(row):
    name, a, b, expected, *rest = row
    pa, pb = schedlang.compile(a), schedlang.compile(b)
    verdict = equivalent(pa, pb)
    assert verdict.status in ("equivalent", "different", "unknown")
    if expected == EQ:
        assert verdict, f"{name}: {verdict}"
        assert verdict.method
    elif expected == EQ_OR_UNKNOWN:
        assert not verdict.different, f"{name}: {verdict}"
    else:
        assert not verdict, f"{name}: a near miss was called equivalent ({verdict.method})"
        assert verdict.different, f"{name}: {verdict}"
        ce = verdict.counterexample
        if rest[0] is not None:
            assert ce.step == rest[0]
            sa, sb = pa["lr"], pb["lr"]
            assert sa(ce.step) != sb(ce.step) or ce.a_exact != ce.b_exact
            assert all(sa(k) == sb(k) for k in range(max(0, ce.step - 3), ce.step))
        else:
            assert ce.params
            sa = schedlang.compile(a, params=ce.params)["lr"]
            sb = schedlang.compile(b, params=ce.params)["lr"]
            assert sa(ce.step) != sb(ce.step)


def test_table_is_large_enough():
    assert len(TABLE) >= 40
    assert sum(row[3] == DIFF for row in TABLE) >= 15


def test_both_directions_agree():
    for row in TABLE[::16]:
        forward, backward = equivalent(row[1], row[2]), equivalent(row[2], row[1])
        assert forward.status == backward.status or EQ_OR_UNKNOWN == row[3]


@pytest.mark.parametrize("a, b, differing", [
    ("constant(1)", "constant(1 + 1e-20)", ("1.00000000000000000000", "1.00000000000000000001")),
    ("linear(1, 0, 10) + t * 1e-19", "linear(1, 0, 10)", ("0.9000000000000000001", "0.9000000000000000000")),
    ("cosine(1, 0, 10)", "cosine(1, 0, 10) + 1e-30 * (t - 3) ** 2",
     ("1.00000000000000000000000000000", "1.00000000000000000000000000001")),
])
def test_cli_table_shows_the_digits_where_the_two_sides_differ(tmp_path, capsys, a, b, differing):
    """Values that round to the same float are printed with the digits that tell them apart."""
    from schedlang.cli import main

    (tmp_path / "a.sched").write_text(a + "\n", encoding="utf-8")
    (tmp_path / "b.sched").write_text(b + "\n", encoding="utf-8")
    assert main(["verify", str(tmp_path / "a.sched"), str(tmp_path / "b.sched")]) == 1
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith(">"))
    _, step, shown_a, shown_b = row.split()
    assert (shown_a, shown_b) == differing
    assert shown_a != shown_b


def test_cli_table_keeps_short_digits_where_the_values_are_equal(tmp_path, capsys):
    from schedlang.cli import main

    (tmp_path / "a.sched").write_text("linear(1, 0, 10)\n", encoding="utf-8")
    (tmp_path / "b.sched").write_text("linear(1, 0, 10) >> constant(0.5)\n", encoding="utf-8")
    assert main(["verify", str(tmp_path / "a.sched"), str(tmp_path / "b.sched")]) == 1
    rows = [line.lstrip("> ").split() for line in capsys.readouterr().out.splitlines()
            if line.lstrip("> ")[:1].isdigit()]
    assert [r[-2:] for r in rows] == [["0.2", "0.2"], ["0.1", "0.1"], ["0.0", "0.5"], ["0.0", "0.5"],
                                      ["0.0", "0.5"]]
