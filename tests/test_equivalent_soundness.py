"""Soundness of ``schedlang.equivalent`` on generated pairs (docs/testing.md).

* Pairs equal by construction (re-associated ``>>``, a ``linear``/``constant`` split in
  two, ``2*s`` vs ``s + s``, ``s * 0.5`` vs ``s / 2``, ``((a >> b) for dur(a)) >> c`` vs
  ``a >> c``, ``repeat`` vs its unrolling, ``stretch``, ``clamp`` vs ``min``/``max``,
  ``multistep`` vs ``piecewise``, symbolic parameters with ``where`` clauses) are never
  refuted; the rate of "proven" is tracked.
* Perturbed pairs (a duration off by one, a term that differs only from step 777777 or
  2**31 - 1 on, a parameter-dependent factor, 1e-13) are never proven equal.
* Every counterexample is re-evaluated with ``tests/fuzzing/exact.py`` and really differs.
"""

import pytest
from fuzzing.pairs import CASES, check_pair, equal_pair, perturbed_pair

PAIRS = 24  # of each kind in CI
BUDGET_S = 4.0


def _run(make, seeds):
    outcomes = [check_pair(make(seed), budget=BUDGET_S) for seed in seeds]
    problems = [f"{o.pair.describe()}\n  -> {o.problem}" for o in outcomes if o.problem]
    return outcomes, problems


def test_equal_pairs_are_never_refuted():
    outcomes, problems = _run(equal_pair, range(PAIRS))
    proven = sum(o.status == "equivalent" for o in outcomes)
    print(f"proven {proven}/{len(outcomes)}")
    assert not problems, "\n\n".join(problems)


def test_equal_pairs_are_mostly_proven():
    """Not a soundness matter, but a drop in the proven rate is worth seeing."""
    outcomes = [check_pair(equal_pair(seed), budget=BUDGET_S) for seed in range(100, 112)]
    proven = sum(o.status == "equivalent" for o in outcomes)
    assert proven >= len(outcomes) // 2, [(o.pair.rewrite, o.status) for o in outcomes]


def test_perturbed_pairs_are_never_proven():
    outcomes, problems = _run(perturbed_pair, range(PAIRS))
    assert not problems, "\n\n".join(problems)
    assert any(o.status == "different" for o in outcomes)


@pytest.mark.parametrize("case", [c for c in CASES if "abs(p)" not in c.rewrite], ids=lambda c: c.rewrite)
def test_hand_written_cases(case):
    outcome = check_pair(case, budget=BUDGET_S)
    assert not outcome.problem, f"{case.describe()}\n  -> {outcome.problem}"


def test_abs_p_against_p_with_p_outside_its_where_clause():
    """Was proven equal although p = -2 makes them differ; now p = -2 is refused."""
    case = next(c for c in CASES if "abs(p)" in c.rewrite)
    outcome = check_pair(case, budget=BUDGET_S)
    assert not outcome.problem, f"{case.describe()}\n  -> {outcome.problem}"
