"""Hostile input to ``schedlang.build`` (issue 28): the file's limits applied as each piece is
built, with the file's messages and quickly; bad parameter values at the caller's own line."""

from __future__ import annotations

import time
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
import sympy

import schedlang
from schedlang import build as sb
from schedlang.errors import SchedlangError
from schedlang.limits import MAX_SEGMENTS

THIS = __file__


@pytest.mark.parametrize("value, message", [
    (Decimal("1e-999999"), "this number is out of range"),
    (Decimal("1e999999"), "this number is out of range"),
    (Decimal("-1e999999"), "this number is out of range"),
    (10**5000, "digits; schedlang reads at most 400"),
    (-(10**5000), "digits; schedlang reads at most 400"),
    (10**401, "this number has 402 digits; schedlang reads at most 400"),
    (Fraction(1, 10**2000), "digits; schedlang reads at most 400"),
], ids=["1e-999999", "1e999999", "-1e999999", "10**5000", "-10**5000", "10**401", "1/10**2000"])
def test_huge_and_tiny_numbers_are_refused_quickly(value, message):
    start = time.process_time()
    with pytest.raises(SchedlangError, match=message) as info:
        sb.constant(value)
    assert time.process_time() - start < 1.0
    assert info.value.span is not None and info.value.span.source.filename == THIS


def test_numbers_within_the_limits_still_build():
    assert sb.constant(Decimal("1.5e-300"))(0) == 1.5e-300
    assert sb.constant(10**300)(0) == 1e300
    assert sb.constant(Fraction(1, 3)).schedule.expr * 3 == 1


@pytest.fixture(scope="module")
def longest():
    """A loop that would join 100,000 pieces, stopped at the file's limit: (the chain it built,
    its pieces, the CPU seconds, the error).  Built once for the tests below (10,000 pieces)."""
    piece = sb.constant(1).for_(1)
    start = time.process_time()
    chain, built = piece, 1
    with pytest.raises(SchedlangError, match="schedlang takes at most") as info:
        for _ in range(100_000):
            chain = chain >> piece  # the error's line
            built += 1
    return chain, built, time.process_time() - start, info.value


def test_a_chain_of_10000_pieces_builds_and_stops_at_the_file_limit(longest):
    """The builder's cap is the file's (``MAX_SEGMENTS``, 10,000): it refused a chain at 1,001
    pieces (issue 39 item 18).  Linear: ``benchmarks/bench_build.py`` times 2,500, 5,000 and
    10,000 pieces; only a generous bound on the whole is asserted here."""
    chain, built, seconds, error = longest
    assert built == MAX_SEGMENTS == 10_000 and chain.duration == MAX_SEGMENTS
    assert f"joins {MAX_SEGMENTS + 1} schedules with >>; schedlang takes at most {MAX_SEGMENTS}" in str(error)
    assert error.span.source.filename == THIS and error.span.line == _line_of("# the error's line")
    assert seconds < 60  # about 0.4 ms a piece, quiet


@pytest.mark.slow  # about 10 s of CPU quiet: a 10,000-branch schedule lowered, checked and printed
def test_the_longest_chain_is_used_and_is_a_file_that_compiles(longest):
    chain = longest[0]
    assert chain(0) == 1 and chain(MAX_SEGMENTS - 1) == 1
    assert schedlang.compile(chain.to_source())["lr"].duration == MAX_SEGMENTS


def test_a_chain_built_one_link_at_a_time_is_lowered_in_linear_work(monkeypatch):
    """Each ``>>`` checks its new join alone; the whole chain is sequenced once, when needed
    (it was lowered again at every link: 500 pieces 1.2 s, 2,000 pieces 9.4 s)."""
    from schedlang.build import checks
    from schedlang.semantics.lower_expressions import flatten_seq

    def branches(known):  # the size of a piece already lowered: what sequencing it reads
        expr = getattr(known.value, "expr", None)
        return len(expr.args) if isinstance(expr, sympy.Piecewise) else 1

    pieces, read = [], []
    real = checks.lower_piece

    def counting(module, node, known=None):
        known = known or {}
        pieces.append(len(flatten_seq(node, stop=lambda n: id(n) in known)))
        read.append(sum(branches(k) for k in known.values()))
        return real(module, node, known)

    monkeypatch.setattr(checks, "lower_piece", counting)
    chain = sb.warmup(sb.linear, 5)
    for i in range(400):
        chain = chain >> sb.constant(1 + i % 7, 3)
    assert max(pieces) <= 2 and max(read) <= 4  # quadratic: link i read the i-branch table
    pieces.clear()
    assert chain(5 + 3 * 399) == 1 + 399 % 7 and chain(0) == 0 and chain(4) == 0.8
    assert pieces == [400]  # the chain once: its first link (lowered whole) and 399 pieces
    assert chain.duration == 5 + 3 * 400


def test_a_mistake_deep_in_a_long_chain_is_reported_at_its_own_link():
    chain = sb.constant(1, 2)
    for _ in range(50):
        chain = chain >> sb.constant(2, 2)
    chain = chain >> sb.constant(3)
    with pytest.raises(SchedlangError, match="nothing can follow an infinite schedule") as info:
        chain >> sb.constant(4, 2)  # noqa: B018
    assert info.value.span.source.filename == THIS
    with pytest.raises(SchedlangError, match="warmup"):
        (chain.for_(200) >> sb.warmup(sb.linear, 2))(0)


def test_a_chain_joined_from_two_long_halves_counts_both():
    half = sb.constant(1).for_(1)
    while 2 * half._segments <= MAX_SEGMENTS:  # doubled: 14 joins, not 5,000 links
        half = half >> half
    assert half._segments <= MAX_SEGMENTS < 2 * half._segments
    with pytest.raises(SchedlangError, match="schedlang takes at most"):
        half >> half  # noqa: B018


PEAK = sb.param("peak", float, default=6e-4, where="peak > 0")
N = sb.param("n", int, default=10)
LR = sb.cosine(PEAK, 0, N)


def _line_of(text: str) -> int:
    lines = open(THIS, encoding="utf-8").read().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line and "_line_of" not in line)


@pytest.mark.parametrize("make, marker, message", [
    (lambda: sb.program(lr=LR, params={"nope": 3}), '{"nope": 3}', "has no parameter 'nope'"),
    (lambda: LR.bind(peak=float("nan")), 'peak=float("nan")', "must be a number"),
    (lambda: LR.bind(peak="<code>"), 'peak="<code>"', "must be a number"),
    (lambda: LR.bind(n=True), "n=True", "must be a number, not True"),
    (lambda: LR.bind(n=np.int64(10)), "n=np.int64(10)", "must be a number, not int64"),
    (lambda: LR.bind(n=2.5), "n=2.5", "is an int"),
    (lambda: LR.program(params={"peak": -1.0}), '{"peak": -1.0}', "must satisfy"),
])
def test_bad_parameter_values_name_the_callers_line(make, marker, message):
    with pytest.raises(SchedlangError, match=message) as info:
        make()
    span = info.value.span
    assert span is not None and span.source.filename == THIS
    assert span.line == _line_of(marker), str(info.value)
