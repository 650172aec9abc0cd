"""The run's time in samples and tokens (SPEC §12): a batch schedule and its exact maps.

A run takes ``b_k`` samples in optimizer step ``k``.  The batch is piecewise constant: a
table of entries ``(theta_i, B_i)`` says that step ``k`` takes ``B_i`` samples when the
samples consumed *before* it, ``S_k = b_0 + ... + b_{k-1}``, satisfy
``theta_i <= S_k < theta_{i+1}`` (``theta_0 = 0``; Megatron's rule: the entry with the
largest threshold at most ``S_k``).  Every sample holds ``seq_len`` tokens, so the tokens
consumed before step ``k`` are ``T_k = seq_len * S_k``.

Between switches the run is linear, so the whole run is a short list of *stages*, found
in closed form, one per table entry actually used (no loop over steps)::

    k_{i+1} = k_i + ceil((theta_{i+1} - S_{k_i}) / B_i)
    S_{k_{i+1}} = S_{k_i} + B_i * (k_{i+1} - k_i)

An entry whose threshold the run has already passed when the previous stage ends takes no
step (its stage is empty and left out).  Within stage ``i``: ``S_k = S_{k_i} + B_i (k - k_i)``.
The inverse, the first step whose consumed-before count reaches ``N``, is
``k_i + ceil((N - S_{k_i}) / B_i)`` in the stage that contains ``N``.  Everything here is
Python integers (and ``Fraction`` for token counts that are not whole samples): exact at
10**15 tokens and far beyond.

A resumed run (``Clock.resumed``) starts its table at the checkpoint's step and count instead
of at step 0: the batch is a function of the samples consumed, so a new table applies from
the checkpoint's count (Megatron's rule), whatever the batches before it were; the steps
before it keep the stages of the run that wrote the checkpoint.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field
from fractions import Fraction

import sympy as sp

from .algebra import at, branches, flatten, piecewise, strict_bound, t

#: What a clock unit counts, for messages.
UNITS = {"sp": "samples", "tok": "tokens"}


@dataclass(frozen=True)
class Stage:
    """Steps ``first .. `` (up to the next stage's first step) each take ``batch`` samples;
    ``samples`` were consumed before ``first``."""

    first: int
    samples: int
    batch: int


def _ceil_div(a, b) -> int:
    """``ceil(a / b)`` for a whole or ``Fraction`` ``a`` and a positive whole ``b``, exactly."""
    return -((-Fraction(a)) // b)


@dataclass(frozen=True)
class Clock:
    """A batch table (sample thresholds, batches) and the tokens per sample.

    ``table`` is ``((0, B_0), (theta_1, B_1), ...)`` with strictly increasing whole
    thresholds in samples and positive whole batches; ``seq_len`` is ``None`` when the
    program never counts tokens.  ``start`` (step, samples consumed before it) is where the
    table takes over, ``(0, 0)`` for a run from its start; ``history`` the stages before it
    (``resumed``).
    """

    table: tuple[tuple[int, int], ...]
    seq_len: int | None = None
    start: tuple = (0, 0)
    history: tuple[Stage, ...] = ()
    stages: tuple[Stage, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        if not self.table or self.table[0][0] != 0:
            raise ValueError("a batch table starts at threshold 0")
        for (a, _), (b, _) in zip(self.table, self.table[1:]):
            if not b > a:
                raise ValueError("batch thresholds must increase strictly")
        if any(batch < 1 for _, batch in self.table):
            raise ValueError("every batch is at least 1 sample")
        first, samples = self.start
        if first < 0 or samples < 0 or any(s.first >= first for s in self.history):
            raise ValueError("a resumed table starts at a step >= 0, after its history")
        object.__setattr__(self, "stages", self.history + _stages(self.table, first, samples))

    @classmethod
    def resumed(cls, history: Clock, step: int, samples, table: tuple[tuple[int, int], ...],
                seq_len: int | None) -> Clock:
        """The run that reached ``step`` with ``samples`` consumed (whole, or a ``Fraction``
        where the checkpoint counted tokens that are not whole samples of ``seq_len``) and
        takes its batches from ``table`` from then on, at the samples consumed.

        Before ``step`` it keeps ``history``'s stages (the original plan, in this clock's
        samples: scaled when ``seq_len`` changed), those that begin below ``samples``, so
        that the consumed-before counts still increase with the stages; a step whose count
        the checkpoint measured otherwise is at most mis-placed before ``step``, never after.
        """
        scale = Fraction(1) if seq_len is None or history.seq_len is None else \
            Fraction(history.seq_len, seq_len)
        kept = tuple(Stage(s.first, _plain(s.samples * scale), _plain(s.batch * scale))
                     for s in history.stages if s.first < step and s.samples * scale < samples)
        if step > 0 and not kept:
            raise ValueError(f"{step} steps consumed no sample: every step takes at least one")
        return cls(table, seq_len, (step, _plain(samples)), kept)

    # -- counts at a step ----------------------------------------------------------

    def stage_of_step(self, k: int) -> Stage:
        """The stage step ``k`` belongs to (binary search over the stages)."""
        lo, hi = 0, len(self.stages) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.stages[mid].first <= k:
                lo = mid
            else:
                hi = mid - 1
        return self.stages[lo]

    def batch_at(self, k: int) -> int:
        """Samples in step ``k``."""
        return self.stage_of_step(k).batch

    def samples_at(self, k: int) -> int:
        """``S_k``: samples consumed before step ``k``."""
        stage = self.stage_of_step(k)
        return stage.samples + stage.batch * (k - stage.first)

    def tokens_at(self, k: int) -> int:
        """``T_k = seq_len * S_k``: tokens consumed before step ``k``."""
        return self.tokens_per_sample * self.samples_at(k)

    # -- the inverses --------------------------------------------------------------

    def step_at_samples(self, n) -> int:
        """The first step ``k`` with ``S_k >= n`` (``n`` whole or a ``Fraction``)."""
        if n <= 0:
            return 0
        lo, hi = 0, len(self.stages) - 1
        while lo < hi:  # the last stage whose first step consumed-before is below n
            mid = (lo + hi + 1) // 2
            if self.stages[mid].samples < n:
                lo = mid
            else:
                hi = mid - 1
        stage = self.stages[lo]
        return stage.first + _ceil_div(n - stage.samples, stage.batch)

    def step_at_tokens(self, n) -> int:
        """The first step ``k`` with ``T_k >= n``."""
        return self.step_at_samples(Fraction(n) / self.tokens_per_sample)

    def step_at(self, amount, unit: str) -> int:
        """``step_at_samples`` or ``step_at_tokens`` by the unit's name (``sp``, ``tok``)."""
        return self.step_at_samples(amount) if unit == "sp" else self.step_at_tokens(amount)

    def count_at(self, k: int, unit: str) -> int:
        """``S_k`` or ``T_k`` by the unit's name."""
        return self.samples_at(k) if unit == "sp" else self.tokens_at(k)

    def per_sample(self, unit: str) -> int:
        """What one sample counts in ``unit``: 1 sample, or ``seq_len`` tokens."""
        return 1 if unit == "sp" else self.tokens_per_sample

    @property
    def tokens_per_sample(self) -> int:
        if self.seq_len is None:
            raise ValueError("this run counts no tokens: declare `param seq_len`")
        return self.seq_len

    @property
    def constant(self) -> bool:
        return len(self.stages) == 1

    # -- sympy ---------------------------------------------------------------------

    def count_function(self, unit: str) -> type[ClockCountBase]:
        """``S_k`` (``unit == "sp"``) or ``T_k`` as one sympy function of the global step:
        ``count(k)``, a lookup in this clock's stages (``ClockCountBase``), shared by every
        segment on that clock."""
        return count_function(self.stages, self.per_sample(unit), unit)

    def count_expr(self, step: sp.Symbol, unit: str, first: int = 0, last: int | None = None) -> list:
        """``S`` (or ``T``) at global step ``first + step`` as ``(formula, bound)`` pairs, one
        per stage that meets steps ``first .. last - 1``: the formula holds for local steps
        below ``bound`` (``None`` for the last pair).  Linear in ``step`` with whole
        coefficients, so every printer keeps it exact in integers."""
        per = self.per_sample(unit)
        out = []
        for index, stage in enumerate(self.stages):
            end = self.stages[index + 1].first if index + 1 < len(self.stages) else None
            if end is not None and end <= first:
                continue
            if last is not None and stage.first >= last:
                break
            formula = per * (stage.samples + stage.batch * (step + first - stage.first))
            stop = None if end is None or (last is not None and end >= last) else end - first
            out.append((sp.expand(formula), stop))
            if stop is None:
                break
        return out


def _stages(table: tuple[tuple[int, int], ...], first: int = 0, samples=0) -> tuple[Stage, ...]:
    """The stages of a batch table from step ``first`` with ``samples`` consumed before it,
    in closed form per entry (see the module docstring).  A count that is not whole (tokens
    measured in parts of a sample) is compared with the thresholds by its whole samples."""
    index = _entry_at(table, math.floor(samples))
    stages = [Stage(first, samples, table[index][1])]
    while True:
        stage = stages[-1]
        following = index + 1
        if following == len(table):
            return tuple(stages)
        steps = _ceil_div(table[following][0] - math.floor(stage.samples), stage.batch)
        first, samples = stage.first + steps, stage.samples + stage.batch * steps
        index = _entry_at(table, math.floor(samples))
        stages.append(Stage(first, samples, table[index][1]))


def _entry_at(table: tuple[tuple[int, int], ...], samples: int) -> int:
    """The entry in force at ``samples`` consumed: the last whose threshold is at most it."""
    lo, hi = 0, len(table) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if table[mid][0] <= samples:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _plain(value):
    """A ``Fraction`` that is whole as an ``int`` (the counts print and compare as before)."""
    return int(value) if isinstance(value, Fraction) and value.denominator == 1 else value


def threshold_in_samples(amount: Fraction, unit: str, seq_len: int | None) -> int:
    """A switch threshold as the least whole ``S`` with the count at least ``amount``:
    ``S >= amount`` samples, or ``seq_len * S >= amount`` tokens (``ceil(amount / seq_len)``,
    exact; Megatron's presets floor instead and say so)."""
    if unit == "sp":
        return _ceil_div(amount, 1)
    if seq_len is None:
        raise ValueError("a threshold in tokens needs `param seq_len`")
    return _ceil_div(amount, seq_len)


#: The largest count a formula on the sample or token clock reads: beyond it (2**62 tokens,
#: 4.6e18, about 10**5 times a frontier run) the count saturates, so every target computes it
#: in int64.
SATURATION = 2**62


class ClockCountBase(sp.Function):
    """``S_k`` or ``T_k``, the samples or tokens consumed before global step ``k``: a lookup in
    the stages of one batch schedule (each subclass, made by ``count_function``, is one clock).

    A segment on the token clock is its formula at ``count(k) - start``, one formula whatever
    the number of stages: the stages are a table the count reads (the reference code finds
    ``k``'s stage by bisection), not one branch of the formula per stage.  ``count(k)`` at a
    whole ``k`` is evaluated exactly, so every exact consumer (end values, the checks, the
    exact evaluator) reads it as a number.  Past the step where the count would exceed
    ``SATURATION`` it holds its value there (``saturation``), so int64 holds it at any step.
    """

    nargs = 1
    is_real = True
    is_nonnegative = True
    #: Set on each subclass: the stages' first steps, counts before them, counts per step
    #: (in the clock's unit), the step past which the count holds, and the unit's name.
    firsts: tuple = ()
    befores: tuple = ()
    per_step: tuple = ()
    saturation: int = 0
    unit: str = "tok"
    whole: bool = True

    @classmethod
    def eval(cls, k):
        if k.is_Integer and k >= 0:
            value = cls.value(int(k))
            return sp.Rational(value.numerator, value.denominator) if isinstance(value, Fraction) \
                else sp.Integer(value)
        return None

    @classmethod
    def value(cls, k: int):
        """The count before step ``k >= 0``, exactly (int, or a ``Fraction`` after a resume
        that measured tokens in parts of a sample)."""
        k = min(k, cls.saturation)
        index = bisect.bisect_right(cls.firsts, k) - 1
        return cls.befores[index] + cls.per_step[index] * (k - cls.firsts[index])

    def _eval_is_integer(self):
        return True if self.whole and self.args[0].is_integer else None

    def _eval_is_finite(self):
        return True


_COUNT_FUNCTIONS: dict = {}


def count_function(stages: tuple[Stage, ...], per: int, unit: str) -> type[ClockCountBase]:
    """The ``ClockCountBase`` of ``stages`` (``per`` counts a sample), one class per clock (made
    once: equal clocks give the same function, so their formulas compare equal)."""
    key = (stages, per, unit)
    found = _COUNT_FUNCTIONS.get(key)
    if found is not None:
        return found
    last = stages[-1]
    saturation = max((SATURATION // per - last.samples) // last.batch + last.first, last.first)
    befores = tuple(_plain(Fraction(s.samples) * per) for s in stages)
    found = type("T" if unit == "tok" else "S", (ClockCountBase,), {
        "firsts": tuple(s.first for s in stages), "befores": befores,
        "per_step": tuple(s.batch * per for s in stages), "saturation": int(saturation),
        "unit": unit, "whole": all(isinstance(b, int) for b in befores),
        "__module__": __name__})
    if len(_COUNT_FUNCTIONS) >= 256:  # a long-lived editor compiles many clocks: keep the recent
        del _COUNT_FUNCTIONS[next(iter(_COUNT_FUNCTIONS))]
    _COUNT_FUNCTIONS[key] = found
    return found


def expand_counts(expr: sp.Expr) -> sp.Expr:
    """``expr`` (in the public step ``t``) with every count ``T(t + c)`` written out as one
    branch per batch stage its branch meets, each a whole-coefficient linear formula of the
    step: the form the core text prints (the language has no count), the prover compares, and
    the array targets print for a count in parts of a sample (a resumed run's).

    Every target reads a whole count as one lookup in a table of the stages instead
    (``codegen/counts.py``): a branch per stage made a 1,000-stage ramp's torch class take 15 s
    to build and its call 34 ms."""
    if not expr.has(ClockCountBase):
        return expr
    out = []
    low = sp.Integer(0)
    for value, cond in branches(flatten(expr)):
        high = strict_bound(cond)
        if value.has(ClockCountBase):
            out += _expanded_branch(value, low, high, at, t)
        else:
            out.append((value, cond))
        if high is not None:
            low = high
    return piecewise(out) if len(out) > 1 or out[0][1] != sp.true else out[0][0]


def _expanded_branch(value, low, high, at, t) -> list:
    """``value``, used for ``low <= t < high`` (``high`` None: no end), as one branch per
    stretch where every count it reads stays in one stage."""
    counts = sorted(value.atoms(ClockCountBase), key=sp.default_sort_key)
    shifts = []
    for count in counts:
        shift = count.args[0] - t
        if shift.free_symbols or not shift.is_Integer:
            raise ValueError(f"a count at {count.args[0]} is not a shifted step")
        shifts.append(int(shift))
    cuts = set()
    for count, shift in zip(counts, shifts):
        for first in type(count).firsts[1:]:
            cut = first - shift
            if low < cut and (high is None or cut < high):
                cuts.add(cut)
    edges = [low, *sorted(cuts)]
    pairs = []
    for index, start in enumerate(edges):
        stop = edges[index + 1] if index + 1 < len(edges) else high
        formulas = {}
        for count, shift in zip(counts, shifts):
            cls = type(count)
            stage = bisect.bisect_right(cls.firsts, int(start) + shift) - 1
            step = t + shift
            if stop is None and stage == len(cls.firsts) - 1:  # the count holds past saturation
                step = sp.Min(step, cls.saturation)
            formulas[count] = cls.befores[stage] + cls.per_step[stage] * (step - cls.firsts[stage])
        formula = at(value.xreplace({c: sp.expand(f) for c, f in formulas.items()}), t)
        pairs.append((formula, sp.true if stop is None else sp.Lt(t, stop)))
    return pairs
