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

import math
from dataclasses import dataclass, field
from fractions import Fraction

import sympy as sp

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
