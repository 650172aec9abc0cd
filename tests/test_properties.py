"""Hypothesis: any program either compiles or raises SchedlangError, never anything else."""

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import schedlang

NAMES = ["t", "peak", "total", "x", "pi", "e", "loss", "cosin", "linear", "warmup"]
CALLS = ["linear", "cosine", "poly", "exp", "step", "constant", "sin", "log", "sqrt", "floor", "min",
         "max", "clamp", "abs", "multistep", "piecewise", "warmup", "repeat", "cycle", "stretch",
         "inverse_sqrt", "cosine_restarts", "cyclic", "onecycle", "torch.StepLR", "nope"]


def expressions():
    atoms = st.one_of(
        st.integers(-3, 2000).map(str),
        st.sampled_from(["0.5", "1e-3", "0.1", "1_000", "3ba", "2ep", '"cos"', "true", "false"]),
        st.sampled_from(NAMES),
    )

    def extend(inner):
        return st.one_of(
            st.tuples(inner, st.sampled_from(["+", "-", "*", "/", "**", ">>", "<", "==", "and", "for"]),
                      inner).map(lambda p: f"({p[0]} {p[1]} {p[2]})"),
            st.tuples(st.sampled_from(CALLS), st.lists(inner, max_size=4)).map(
                lambda p: f"{p[0]}({', '.join(p[1])})"),
            st.lists(inner, max_size=3).map(lambda items: "[" + ", ".join(items) + "]"),
            st.tuples(inner, inner, inner).map(lambda p: f"(if {p[0]} then {p[1]} else {p[2]})"),
            inner.map(lambda x: f"-{x}"),
        )

    return st.recursive(atoms, extend, max_leaves=12)


def programs():
    header = st.sampled_from(["", "param peak: float = 1e-3\n", "param total: int\n",
                              "param total: int = 100 where total > 0\n", "def f(a) = a * t\n"])
    return st.tuples(header, expressions()).map(lambda p: f"{p[0]}schedule lr = {p[1]}\n")


def compiles_or_reports(source: str) -> None:
    try:
        program = schedlang.compile(source)
    except schedlang.SchedlangError as error:
        assert str(error)
        return
    for schedule in program:
        for step in (0, 1, 99, 100, 101, 10**6):
            try:
                value = schedule(step)
            except schedlang.SchedlangError:
                continue
            assert isinstance(value, float)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_random_programs_compile_or_raise_schedlang_error(source):
    compiles_or_reports(source)


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet="()[],.=<>+-*/ #\n\"'tx01e_:ab>>cosinelarpm", max_size=40))
def test_random_text_compiles_or_raises_schedlang_error(text):
    compiles_or_reports(text)


@settings(max_examples=60, deadline=None)
@given(st.floats(1e-6, 1.0), st.floats(0.0, 1.0), st.integers(1, 5000), st.integers(1, 5000))
def test_warmup_then_cosine_hits_its_boundaries(peak, ratio, warm, decay):
    lr = schedlang.compile(f"warmup(linear, {warm}) >> cosine({peak!r}, {peak * ratio!r}, {decay})")["lr"]
    assert lr(0) == 0
    assert math.isclose(lr(warm), peak, rel_tol=1e-12)
    assert math.isclose(lr(warm + decay), peak * ratio, rel_tol=1e-12, abs_tol=1e-300)
    assert lr(10 * (warm + decay)) == lr(warm + decay)
