"""Property tests: meaning-preserving rewrites are proven equivalent, perturbations never are.

Programs are random sequences of ``linear``/``cosine``/``constant``/``poly``
segments with small rational values.  Rewrites: split a linear or constant
segment in two, reassociate ``>>``, and write the whole sequence as one
``if ... then ... else`` chain in the global step.  A perturbation adds 1/7 to
the first value of one segment, so the earliest difference is exactly where
that segment starts.
"""

from fractions import Fraction

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedlang import equivalent

KINDS = ("linear", "cosine", "constant", "poly")
SETTINGS = settings(max_examples=8, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


def num(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"({x.numerator} / {x.denominator})"


values = st.integers(0, 16).map(lambda k: Fraction(k, 8))
segments = st.tuples(st.sampled_from(KINDS), values, values, st.integers(1, 12))
programs = st.lists(segments, min_size=1, max_size=5)


def call(seg) -> str:
    kind, v0, v1, n = seg
    if kind == "constant":
        return f"constant({num(v0)}, {n})"
    if kind == "poly":
        return f"poly({num(v0)}, {num(v1)}, {n}, power=2)"
    return f"{kind}({num(v0)}, {num(v1)}, {n})"


def source(segs) -> str:
    return " >> ".join(call(s) for s in segs)


def formula(seg, start: int) -> str:
    kind, v0, v1, n = seg
    local = f"(t - {start})"
    if kind == "linear":
        return f"{num(v0)} + ({num(v1 - v0)}) * {local} / {n}"
    if kind == "cosine":
        return f"{num(v1)} + ({num(v0 - v1)}) * (1 + cos(pi * {local} / {n})) / 2"
    if kind == "poly":
        return f"({num(v0 - v1)}) * (1 - {local} / {n}) ** 2 + {num(v1)}"
    return num(v0)


def end_value(seg) -> Fraction:
    kind, v0, v1, _ = seg
    return v0 if kind == "constant" else v1


def as_if_chain(segs) -> str:
    text, start = [], 0
    for seg in segs:
        text.append(f"if t < {start + seg[3]} then {formula(seg, start)} else ")
        start += seg[3]
    return "".join(text) + num(end_value(segs[-1]))


def split(segs, index: int, at: int):
    kind, v0, v1, n = segs[index]
    if kind not in ("linear", "constant") or n < 2:
        return None
    k = 1 + at % (n - 1)
    if kind == "constant":
        parts = [("constant", v0, v1, k), ("constant", v0, v1, n - k)]
    else:
        mid = v0 + (v1 - v0) * Fraction(k, n)
        parts = [("linear", v0, mid, k), ("linear", mid, v1, n - k)]
    return segs[:index] + parts + segs[index + 1:]


def reassociate(segs, index: int) -> str:
    if len(segs) < 3:
        return source(segs)
    i = index % (len(segs) - 2)
    calls = [call(s) for s in segs]
    grouped = calls[:i] + [f"({calls[i]} >> ({calls[i + 1]} >> {calls[i + 2]}))"] + calls[i + 3:]
    return " >> ".join(grouped)


@SETTINGS
@given(programs, st.integers(0, 100), st.integers(0, 100), st.sampled_from(["split", "assoc", "if"]))
def test_rewrites_are_equivalent(segs, index, at, how):
    original = source(segs)
    if how == "split":
        rewritten = split(segs, index % len(segs), at)
        other = source(rewritten) if rewritten else as_if_chain(segs)
    elif how == "assoc":
        other = reassociate(segs, index)
    else:
        other = as_if_chain(segs)
    verdict = equivalent(original, other)
    assert verdict, f"{original}  vs  {other}: {verdict}"


@SETTINGS
@given(programs, st.integers(0, 100), st.booleans())
def test_perturbations_are_never_equivalent(segs, index, chain):
    i = index % len(segs)
    kind, v0, v1, n = segs[i]
    changed = segs[:i] + [(kind, v0 + Fraction(1, 7), v1, n)] + segs[i + 1:]
    other = as_if_chain(changed) if chain else source(changed)
    verdict = equivalent(source(segs), other)
    assert not verdict
    assert verdict.different, verdict
    assert verdict.counterexample.step == sum(s[3] for s in segs[:i])


def symbolic_pair(segs):
    """The sequence with durations ``d0, d1, ...`` left free, and its global if-chain."""
    params = "".join(f"param d{i}: int where d{i} > 0\n" for i in range(len(segs)))
    calls, chain, start = [], [], "0"
    for i, (kind, v0, v1, _) in enumerate(segs):
        n = f"d{i}"
        calls.append(call((kind, v0, v1, n)))
        local = f"(t - ({start}))"
        if kind == "linear":
            body = f"{num(v0)} + ({num(v1 - v0)}) * {local} / {n}"
        elif kind == "cosine":
            body = f"{num(v1)} + ({num(v0 - v1)}) * (1 + cos(pi * {local} / {n})) / 2"
        elif kind == "poly":
            body = f"({num(v0 - v1)}) * (1 - {local} / {n}) ** 2 + {num(v1)}"
        else:
            body = num(v0)
        start = f"{start} + {n}"
        chain.append(f"if t < {start} then {body} else ")
    chain.append(num(end_value(segs[-1])))
    return params + "schedule lr = " + " >> ".join(calls), params + "schedule lr = " + "".join(chain)


@settings(max_examples=6, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(segments, min_size=1, max_size=4))
def test_symbolic_durations_proven_for_all_values(segs):
    a, b = symbolic_pair(segs)
    verdict = equivalent(a, b)
    assert verdict and verdict.method == "symbolic", verdict


def _close(x: float, y: float) -> bool:
    return abs(x - y) <= 1e-12 * max(1.0, abs(x), abs(y))


@settings(max_examples=6, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(programs, st.integers(0, 100), st.sampled_from(["v0", "v1", "n"]))
def test_any_perturbation_verdict_matches_the_reference(segs, index, what):
    """Changing any number: whatever the verdict, it agrees with the plain-Python values."""
    import schedlang

    i = index % len(segs)
    kind, v0, v1, n = segs[i]
    changed = {"v0": (kind, v0 + Fraction(1, 7), v1, n), "v1": (kind, v0, v1 + Fraction(1, 7), n),
               "n": (kind, v0, v1, n + 1)}[what]
    a, b = source(segs), source(segs[:i] + [changed] + segs[i + 1:])
    verdict = equivalent(a, b)
    sa, sb = schedlang.compile(a)["lr"], schedlang.compile(b)["lr"]
    horizon = sum(s[3] for s in segs) + 3
    if verdict:
        assert all(_close(sa(k), sb(k)) for k in range(horizon))
    elif verdict.different:
        step = verdict.counterexample.step
        assert all(_close(sa(k), sb(k)) for k in range(step))
        assert sa(step) != sb(step)
