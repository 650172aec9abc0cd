"""Pairs of programs for ``schedlang.equivalent``'s soundness property.

``equal_pair(seed)`` gives two programs equal at every step *by construction*
(a rewrite that preserves the meaning); ``perturbed_pair(seed)`` two programs that
differ at some step by construction.  ``check_pair`` runs ``equivalent`` and
returns what is wrong, if anything:

* an equal pair must never be refuted (``equivalent`` or ``unknown`` are fine);
* a perturbed pair must never be proven equal;
* every counterexample is re-evaluated with ``fuzzing.exact`` (not schedlang's own
  ``exact_eval``) and must really differ.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from fractions import Fraction

from . import exact
from .runner import Hang, time_budget


@dataclass(frozen=True)
class Pair:
    a: str
    b: str
    equal: bool  # by construction
    rewrite: str  # what was done
    params: dict = field(default_factory=dict)

    def describe(self) -> str:
        bound = f", params={self.params!r}" if self.params else ""
        return f"[{self.rewrite}{bound}]\n  a: {self.a.strip()}\n  b: {self.b.strip()}"


def num(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"({x.numerator} / {x.denominator})"


class PairGenerator:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def value(self) -> Fraction:
        return Fraction(self.rng.randint(0, 16), self.rng.choice((8, 10, 1000)))

    def segment(self):
        r = self.rng
        kind = r.choice(("linear", "constant", "cosine", "poly", "linear"))
        v0, v1 = self.value(), self.value()
        while kind != "constant" and v1 == v0:
            v1 = self.value()
        return kind, v0, v1, r.choice((1, 2, 3, 5, 10, 17, 100, 1000))

    @staticmethod
    def call(seg) -> str:
        kind, v0, v1, n = seg
        if kind == "constant":
            return f"constant({num(v0)}, {n})"
        if kind == "poly":
            return f"poly({num(v0)}, {num(v1)}, {n}, power=2)"
        return f"{kind}({num(v0)}, {num(v1)}, {n})"

    def tail(self) -> str:
        r = self.rng
        return r.choice((f"constant({num(self.value())})",
                         f"step({num(self.value())}, 0.5, {r.choice((3, 10))})",
                         f"exp(1, 0.9, {r.choice((5, 50))})",
                         f"cosine_restarts(1, 0.1, {r.choice((4, 10))})"))

    def segments(self, k=None):
        return [self.segment() for _ in range(k or self.rng.randint(1, 4))]

    def chain(self, segs) -> str:
        return " >> ".join(self.call(s) for s in segs)

    # -- equal by construction ----------------------------------------------------------

    def equal(self) -> Pair:  # noqa: C901 - one rewrite per branch
        r = self.rng
        segs = self.segments()
        rest = f" >> {self.tail()}" if r.random() < 0.5 else ""
        base = self.chain(segs) + rest
        rewrite = r.choice(("reassociate", "split", "double", "half", "for", "repeat", "stretch",
                            "minmax", "clamp", "multistep", "param-warmup", "param-scale"))
        if rewrite == "reassociate" and len(segs) >= 3:
            a, b, c = self.call(segs[0]), self.call(segs[1]), self.chain(segs[2:])
            return Pair(f"({a} >> {b}) >> ({c}){rest}", f"{a} >> ({b} >> ({c}{rest}))", True, rewrite)
        if rewrite == "split":
            i = r.randrange(len(segs))
            kind, v0, v1, n = segs[i]
            if n >= 2 and kind in ("linear", "constant"):
                k = r.randint(1, n - 1)
                if kind == "constant":
                    two = f"constant({num(v0)}, {k}) >> constant({num(v0)}, {n - k})"
                else:
                    vm = v0 + (v1 - v0) * k / n
                    two = f"linear({num(v0)}, {num(vm)}, {k}) >> linear({num(vm)}, {num(v1)}, {n - k})"
                parts = [self.call(s) for s in segs]
                parts[i] = two
                return Pair(base, " >> ".join(parts) + rest, True, rewrite)
        if rewrite == "double":
            return Pair(f"2 * ({base})", f"({base}) + ({base})", True, rewrite)
        if rewrite == "half":
            return Pair(f"({base}) * 0.5", f"({base}) / 2", True, rewrite)
        if rewrite == "for" and len(segs) >= 2:
            a, b = self.call(segs[0]), self.chain(segs[1:])
            c = self.tail()
            return Pair(f"(({a} >> {b}) for {segs[0][3]}) >> {c}", f"{a} >> {c}", True, rewrite)
        if rewrite == "repeat":
            times = r.choice((2, 3))
            chain = self.chain(segs)
            return Pair(f"repeat({chain}, times={times})", " >> ".join([f"({chain})"] * times), True, rewrite)
        if rewrite == "stretch":
            kind, v0, v1, n = segs[0]
            k = r.choice((2, 3, 10))
            kind = "linear" if kind == "poly" else kind
            return Pair(f"stretch({self.call((kind, v0, v1, n))}, {k})", self.call((kind, v0, v1, n * k)),
                        True, rewrite)
        if rewrite == "minmax":
            return Pair(f"min({base}, {base})", f"max({base}, {base}) + 0", True, rewrite)
        if rewrite == "clamp":
            lo, hi = sorted((self.value(), self.value()))
            return Pair(f"clamp({base}, {num(lo)}, {num(hi)})", f"min(max({base}, {num(lo)}), {num(hi)})",
                        True, rewrite)
        if rewrite == "multistep":
            v, ms = self.value() + 1, sorted(r.sample(range(1, 300), r.randint(1, 3)))
            vals = [v * Fraction(1, 2) ** i for i in range(len(ms) + 1)]
            return Pair(f"multistep({num(v)}, 0.5, [{', '.join(map(str, ms))}])",
                        f"piecewise([{', '.join(map(num, vals))}], [{', '.join(map(str, ms))}])",
                        True, rewrite)
        if rewrite == "param-warmup":
            head = ("param w: int = 10 where w > 0\nparam p: float = 1e-3 where p > 0\n"
                    "param n: int = 100 where n > 0\n")
            params = r.choice(({}, {"w": 7, "n": 33}, {"p": "0.5"}))
            return Pair(head + "schedule lr = warmup(linear, w) >> cosine(p, 0, n)",
                        head + "schedule lr = linear(0, p, w) >> cosine(p, 0, n)", True, rewrite, params)
        if rewrite == "param-scale":
            head = "param p: float = 2 where p > 0\n"
            params = r.choice(({}, {"p": 3}))
            return Pair(head + f"schedule lr = p * ({base}) + p * ({base})",
                        head + f"schedule lr = 2 * p * ({base})", True, rewrite, params)
        return Pair(base, f"({base})", True, "parenthesize")

    # -- different by construction ------------------------------------------------------

    def perturbed(self) -> Pair:
        r = self.rng
        segs = self.segments()
        rest = f" >> {self.tail()}" if r.random() < 0.5 else ""
        base = self.chain(segs) + rest
        kind = r.choice(("off-by-one", "late", "late", "param", "tiny"))
        if kind == "off-by-one":
            i = r.randrange(len(segs))
            k, v0, v1, n = segs[i]
            if k == "constant":
                v1 = v0 + 1  # make the next segment start visibly elsewhere
                k = "linear"
            changed = list(segs)
            changed[i] = (k, v0, v1, n + 1)
            segs[i] = (k, v0, v1, n)
            return Pair(self.chain(segs) + rest, self.chain(changed) + rest, False, kind)
        if kind == "late":
            step = r.choice((777_777, 123_457, 2**31 - 1))
            return Pair(base, f"({base}) + (if t >= {step} then 1e-3 else 0)", False, kind)
        if kind == "param":
            head = "param p: float = 2 where p > 0\n"
            return Pair(head + f"schedule lr = p * ({base}) + 1", head + f"schedule lr = 2 * ({base}) + 1",
                        False, kind, {"p": r.choice((3, "0.5"))})
        return Pair(base, f"({base}) + 1e-13", False, kind)


def equal_pair(seed: int) -> Pair:
    return PairGenerator(seed).equal()


def perturbed_pair(seed: int) -> Pair:
    return PairGenerator(seed).perturbed()


#: Hand-written cases, among them a known defect (see tests/test_equivalent_soundness.py).
CASES = (
    Pair("param p: float = 1 where p > 0\nschedule lr = abs(p) * linear(1, 0, 10)",
         "param p: float = 1 where p > 0\nschedule lr = p * linear(1, 0, 10)", False,
         "abs(p) vs p with p bound below its where clause", {"p": -2}),
    Pair("linear(1, 0, 100)", "linear(1, 0.5, 50) >> linear(0.5, 0, 50)", True, "split"),
    Pair("step(1, 0.5, 10)", "step(1, 0.5, 11)", False, "off-by-one"),
    Pair("constant(1e-3) + (if t >= 777777 then 1e-3 else 0)", "constant(1e-3)", False, "late"),
)


@dataclass
class Outcome:
    pair: Pair
    status: str | None = None  # equivalent / different / unknown, None on an error
    method: str | None = None
    problem: str | None = None


def check_pair(pair: Pair, budget: float = 10.0) -> Outcome:
    import schedlang

    outcome = Outcome(pair)
    try:
        with time_budget(budget):
            verdict = schedlang.equivalent(pair.a, pair.b, params=pair.params or None)
    except Hang:
        outcome.problem = f"hang: equivalent took more than {budget:g} s"
        return outcome
    except schedlang.SchedlangError as exc:
        if pair.equal:
            outcome.problem = f"SchedlangError on a valid pair: {str(exc).splitlines()[0]}"
        return outcome  # a perturbed pair may be refused (e.g. a where clause violated)
    except Exception as exc:  # noqa: BLE001 - any other exception is a finding
        outcome.problem = f"crash: {type(exc).__name__}: {exc}"
        return outcome
    outcome.status, outcome.method = verdict.status, verdict.method
    if pair.equal and verdict.status == "different":
        outcome.problem = f"refuted an equal pair: {verdict}"
    if not pair.equal and verdict.status == "equivalent":
        outcome.problem = f"proved a different pair equal ({verdict.method})"
    if verdict.status == "different" and verdict.counterexample is not None:
        wrong = _recheck(pair, verdict.counterexample)
        if wrong:
            outcome.problem = (outcome.problem + "; " if outcome.problem else "") + wrong
    return outcome


def _recheck(pair: Pair, cx) -> str | None:
    """None when the counterexample's step really differs (our own exact evaluation)."""
    import schedlang

    params = {**pair.params, **{k: str(v) for k, v in (cx.params or {}).items()}}
    values = []
    for source in (pair.a, pair.b):
        program = schedlang.compile(source) if not params else None
        if program is None:
            declared = schedlang.compile(source).params
            program = schedlang.compile(source, {k: v for k, v in params.items() if k in declared})
        schedule = next(iter(program))
        expr = schedule.expr
        value = exact.Evaluator(expr)(cx.step)[0]
        values.append(value)
    a, b = values
    if exact.to_float(a) != cx.a and abs(exact.to_float(a) - cx.a) > 1e-12 * max(1.0, abs(cx.a)):
        return f"counterexample a = {cx.a!r} at step {cx.step}, exact {exact.to_float(a)!r}"
    if exact._cmp(a, b) == 0:
        return f"bogus counterexample: both sides are {exact.to_float(a)!r} at step {cx.step}"
    return None
