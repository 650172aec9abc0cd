"""Megatron's batch-size schedules, exactly as its code computes them, as pure functions.

Both functions return a *threshold table* ``((theta_0, B_0), (theta_1, B_1), ...)``:
whole sample counts ``0 = theta_0 < theta_1 < ...`` and global batch sizes
``B_i > 0`` (samples per optimizer step).  The optimizer step ``k`` whose samples
consumed *before* it, ``S_k``, satisfy ``theta_i <= S_k < theta_{i+1}`` (the last
entry: ``theta_i <= S_k``) uses ``B_i``; ``S_0 = 0`` and ``S_{k+1} = S_k + B(S_k)``.
That is how Megatron-LM's training loop drives the calculator: before step ``k`` it
calls ``update_num_microbatches(consumed_train_samples)``, trains
``data_parallel_size * micro_batch_size * num_microbatches`` samples and adds exactly
that to ``consumed_train_samples`` (the lr scheduler advances by the same number).

``step_batch_size_schedule`` -- Megatron-LM main / megatron-core >= 0.18
(``StepBatchsizeNumMicroBatchesCalculator``, Megatron-LM #4411; checked against
megatron-core 0.19.2; its calculator module is the same file in 0.18.0 to 0.19.2),
``--step-batch-size-schedule "THR:BS THR:BS ..."``:

* entries are separated by spaces or commas; each is ``THR:BS`` (split at the first
  ``:``); both numbers are parsed by ``int(float(x) * m)`` after ``x.strip().upper()``
  with a one-letter suffix ``K``/``M``/``B``/``T`` giving ``m = 10**3, 10**6, 10**9,
  10**12`` (so ``4.1M`` is ``int(4.1 * 1e6) = 4_099_999``, ``2.01K`` is ``2009``,
  ``1e3K`` is ``10**6``, lower-case suffixes work, ``64.9`` is ``64``);
* with ``seq_length`` (Megatron-LM always passes its ``--seq-length``) thresholds are
  tokens and become samples by ``thr // seq_length`` (floor: ``90B`` tokens at 2048 is
  43 945 312 samples, so a ``0:32 90B:64`` run switches at step 1 373 291, after
  89 999 998 976 tokens); without it they are samples;
* the entries are sorted by threshold; the first must be 0, the thresholds strictly
  increasing (two token thresholds in one sample collapse and fail), every batch > 0.

``rampup_batch_size`` -- megatron-core <= 0.17 (``RampupBatchsizeNumMicroBatchesCalculator``,
checked against 0.16.1; 0.17.1 has the same module file),
``--rampup-batch-size START INCR R --global-batch-size G``:
with ``n = (G - START) // INCR`` (asserted exact, ``n = 0`` divides by zero) and the
*float* ``r = R / n``::

    B(S) = G                                if S > R
    B(S) = START + INCR * int(S / r)        otherwise (Python float division)

The float division is not exact: ``32 8 7200`` with ``G = 248`` gives 144 at
``S = 4000`` where the exact ``floor(4000 * 27 / 7200) = 15`` would give 152.  The
table's thresholds are the smallest ``S`` at which Python's own expression reaches
each increment, found around the exact rational ``ceil(j R / n)`` (the expression is
monotone in ``S``), in O(n).  megatron-core 0.18 and later ignore
``--rampup-batch-size`` (a constant ``--global-batch-size``).

``switch_steps(table)`` lists where each entry takes effect: the stages of
``core.clock.Clock`` (the one closed-form walk, ``k_{i+1} = k_i + ceil((theta_{i+1} -
S_{k_i}) / B_i)``; entries passed inside one step are skipped).

Errors: whatever Megatron refuses (an assert, a ``ValueError``, a float that does not
convert, a division by zero, and the training loop's assert that the number of
microbatches never decreases) raises ``ValueError`` here, saying what is wrong and
what Megatron does; the caller locates it.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from ...core.clock import Clock

__all__ = ["rampup_batch_size", "step_batch_size_schedule", "switch_steps", "batch_at_samples"]

Table = tuple[tuple[int, int], ...]

_SUFFIXES = (("T", 1_000_000_000_000), ("B", 1_000_000_000), ("M", 1_000_000), ("K", 1_000))
_STEP_FLAG = "--step-batch-size-schedule"
_RAMP_FLAG = "--rampup-batch-size"


# --------------------------------------------------------------------------- the step schedule


def _parse_number(text: str, what: str, entry: str) -> int:
    """Megatron's ``StepBatchsizeNumMicroBatchesCalculator._parse_numeric_value``, errors explained."""
    value = text.strip().upper()
    multiplier = 1
    for suffix, scale in _SUFFIXES:
        if value.endswith(suffix):
            multiplier = scale
            value = value[:-1]
            break
    try:
        number = float(value)
    except ValueError:
        raise ValueError(
            f"{_STEP_FLAG}: {what} {text!r} of entry {entry!r} is not a number (a decimal "
            f"number with an optional suffix K, M, B or T); Megatron's float({value!r}) raises "
            f"ValueError") from None
    try:
        return int(number * multiplier)
    except (OverflowError, ValueError):
        raise ValueError(
            f"{_STEP_FLAG}: {what} {text!r} of entry {entry!r} is {number * multiplier!r}, not a "
            f"finite number; Megatron's int() of it raises") from None


def step_batch_size_schedule(text: str, seq_length: int | None) -> Table:
    """The threshold table of ``--step-batch-size-schedule text`` (see the module docstring).

    ``seq_length``: tokens per sample; thresholds are tokens when it is given (as
    Megatron-LM always gives it) and samples when it is ``None``.  Returns
    ``((samples_threshold, batch), ...)`` sorted, first threshold 0, exactly the
    calculator's parsed ``schedule``: the batch of an optimizer step whose samples
    consumed before it are ``S`` is that of the last entry with threshold ``<= S``.

    Raises ``ValueError`` for everything megatron-core 0.19 refuses when it builds
    the calculator, and for a batch that decreases along the run (the calculator
    accepts it; Megatron-LM's training loop asserts, when the run reaches it, that
    the number of microbatches never decreases).  Divisibility of a batch by
    ``micro_batch_size * data_parallel_size`` is checked by Megatron only for the
    entry in force at each step (after a resume with more GPUs, an early entry may be
    indivisible); it needs the parallel layout, so it is not checked here.
    """
    if seq_length is not None and seq_length <= 0:
        raise ValueError(
            f"{_STEP_FLAG}: the sequence length must be positive, got {seq_length}; Megatron "
            f"divides each token threshold by it (ZeroDivisionError at 0)")
    schedule = _step_entries(text, seq_length)
    schedule.sort(key=lambda item: item[0])  # stable, as Megatron's list.sort
    if not schedule:
        raise ValueError(f"{_STEP_FLAG}: the schedule {text!r} has no entries (Megatron asserts "
                         f"at least one)")
    unit = f"samples (tokens // seq_length {seq_length})" if seq_length is not None else "samples"
    if schedule[0][0] != 0:
        raise ValueError(
            f"{_STEP_FLAG}: the first (smallest) threshold must be 0, got {schedule[0][0]} {unit} "
            f"from entry {schedule[0][2]!r} (Megatron asserts it)")
    _refuse_repeated_threshold(schedule, seq_length, unit)
    for _, batch, entry in schedule:
        if batch <= 0:
            raise ValueError(
                f"{_STEP_FLAG}: batch sizes must be positive, got {batch} from entry {entry!r} "
                f"(Megatron asserts it)")
    table = tuple((threshold, batch) for threshold, batch, _ in schedule)
    _refuse_decrease(table, _STEP_FLAG)
    return table


def _step_entries(text: str, seq_length: int | None) -> list[tuple[int, int, str]]:
    """``(samples_threshold, batch, entry)`` of each ``THRESHOLD:BATCH_SIZE`` entry of
    ``text``, in the order written, parsed as megatron-core parses them (a token threshold
    floor-divided by ``seq_length``)."""
    entries = text.strip().replace(",", " ").split()
    schedule: list[tuple[int, int, str]] = []
    for entry in entries:
        if ":" not in entry:
            raise ValueError(
                f"{_STEP_FLAG}: invalid entry {entry!r}, expected THRESHOLD:BATCH_SIZE (Megatron "
                f"raises ValueError)")
        threshold_text, batch_text = entry.split(":", 1)
        threshold = _parse_number(threshold_text, "threshold", entry)
        batch = _parse_number(batch_text, "batch size", entry)
        if seq_length is not None:
            threshold //= seq_length
        schedule.append((threshold, batch, entry))
    return schedule


def _refuse_repeated_threshold(schedule: list[tuple[int, int, str]], seq_length: int | None,
                               unit: str) -> None:
    """Refuses two entries of the sorted ``schedule`` with one threshold, as Megatron asserts
    (as tokens, two thresholds within one sample of each other are one)."""
    for (before, _, first), (after, _, second) in zip(schedule, schedule[1:]):
        if after <= before:  # sorted: equal
            why = (f"; as tokens, they are within one sample of {seq_length} tokens"
                   if seq_length is not None else "")
            raise ValueError(
                f"{_STEP_FLAG}: thresholds must be strictly increasing, but entries {first!r} and "
                f"{second!r} both give {after} {unit}{why} (Megatron asserts it)")


def _refuse_decrease(table: Table, flag: str) -> None:
    previous = None
    for step, samples, batch in switch_steps(table):
        if previous is not None and batch < previous:
            raise ValueError(
                f"{flag}: the batch decreases from {previous} to {batch} at step {step} ({samples} "
                f"samples consumed); Megatron-LM's training loop asserts there that the number of "
                f"microbatches never decreases (the calculator alone would accept it)")
        previous = batch


# --------------------------------------------------------------------------- the linear ramp


def _first_reaching(predicate, guess: int) -> int:
    """The smallest ``S >= 0`` with ``predicate(S)``, for a monotone predicate false at 0.

    Gallops from ``guess`` (expected within a step or two of the answer) and bisects.
    """
    if predicate(guess):
        hi, step = guess, 1
        lo = guess - step
        while lo > 0 and predicate(lo):
            hi, step = lo, step * 2
            lo = max(hi - step, 0)
        lo = max(lo, 0)  # predicate(lo) is false (it is at 0)
    else:
        lo, step = guess, 1
        hi = guess + step
        while not predicate(hi):
            lo, step = hi, step * 2
            hi = lo + step
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if predicate(mid):
            hi = mid
        else:
            lo = mid
    return hi


def rampup_batch_size(start: int, increment: int, ramp_samples: int, global_batch_size: int, *,
                      micro_batch_size: int | None = None, data_parallel_size: int | None = None,
                      decrease_batch_size_if_needed: bool = False, limit: int | None = None) -> Table:
    """The threshold table of megatron-core <= 0.17's ``--rampup-batch-size start increment
    ramp_samples`` with ``--global-batch-size global_batch_size`` (module docstring).

    Returns ``((samples_threshold, batch), ...)``, first threshold 0, strictly increasing,
    no two neighbours with the same batch: the global batch of the optimizer step whose
    samples consumed before it are ``S`` is that of the last entry with threshold ``<= S``.
    The last entry's batch is ``global_batch_size`` (rounded down as below), from at most
    ``ramp_samples + 1`` samples on.

    The batch is the calculator's *running* global batch,
    ``data_parallel_size * micro_batch_size * get_num_microbatches()``, which is what
    Megatron-LM's loop trains and adds to ``consumed_train_samples``.  It equals
    ``get_current_global_batch_size()`` except with ``decrease_batch_size_if_needed``,
    where each batch is rounded down to a multiple of ``micro_batch_size *
    data_parallel_size`` (the rest are counted as skipped samples); that needs both sizes.
    Without it, and given both sizes, every batch the run reaches must be such a
    multiple (Megatron asserts at the step that reaches one that is not); the check is
    skipped when the sizes are ``None``.

    The work is O(entries): one per increment, or one per sample where several increments
    fall within one sample (``min(n, ramp_samples + 1)`` changes of the batch at most).
    ``limit`` refuses a ramp of more changes before any entry is computed (a ramp of 10**9
    increments is refused at once, not built until memory runs out).
    """
    _check_ramp_numbers(start, increment, ramp_samples, global_batch_size)
    n = _increments(start, increment, global_batch_size)
    changes = min(n, ramp_samples + 1)
    if limit is not None and changes > limit:
        raise ValueError(
            f"{_RAMP_FLAG}: the ramp {start} -> {global_batch_size} in steps of {increment} over "
            f"{ramp_samples} samples changes the batch up to {changes} times; schedlang follows at "
            f"most {limit} changes of a batch schedule")
    per_increment = ramp_samples / n  # megatron-core's float rampup_samples_per_increment
    if per_increment == 0.0:
        raise ValueError(
            f"{_RAMP_FLAG}: zero ramp-up samples: megatron-core computes 0 / 0.0 at the first "
            f"update (ZeroDivisionError); leave out {_RAMP_FLAG} for a constant batch")
    multiple = _layout(micro_batch_size, data_parallel_size, decrease_batch_size_if_needed)

    def reaches(j: int):
        return lambda s: s / per_increment >= j  # int(x) >= j  <=>  x >= j, for x >= 0

    if reaches(n + 1)(ramp_samples):
        raise ValueError(  # never for sizes a run has; the calculator asserts it
            f"{_RAMP_FLAG}: float rounding takes the ramp past the global batch size before "
            f"{ramp_samples} samples (megatron-core asserts)")
    raw = _ramp_thresholds(start, increment, ramp_samples, global_batch_size, n, reaches)
    result = _rounded_and_merged(raw, multiple, decrease_batch_size_if_needed)
    if multiple is not None:
        _check_divisible(result, multiple)
    return result


def _check_ramp_numbers(start, increment, ramp_samples, global_batch_size) -> None:
    """Refuses a ``--rampup-batch-size`` number (or the global batch) that is not a whole
    number, or not positive (ramp-up samples: not negative) as megatron-core asserts."""
    for name, value, least in (("start batch size", start, 1), ("batch size increment", increment, 1),
                               ("ramp-up samples", ramp_samples, 0),
                               ("global batch size", global_batch_size, 1)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{_RAMP_FLAG}: the {name} must be a whole number, got {value!r}")
        if value < least:
            raise ValueError(
                f"{_RAMP_FLAG}: the {name} must be {'positive' if least else 'non-negative'}, got "
                f"{value} (megatron-core asserts it)")


def _increments(start: int, increment: int, global_batch_size: int) -> int:
    """How many increments take the batch from ``start`` to ``global_batch_size``: refused
    where megatron-core asserts (not a whole number of them) or divides by 0 (none)."""
    diff = global_batch_size - start
    if diff < 0:
        raise ValueError(
            f"{_RAMP_FLAG}: the global batch size {global_batch_size} is below the start batch size "
            f"{start} (megatron-core asserts it is greater than or equal)")
    if diff % increment:
        raise ValueError(
            f"{_RAMP_FLAG}: the ramp {start} -> {global_batch_size} ({diff}) is not a whole number of "
            f"increments of {increment} (megatron-core asserts it)")
    n = diff // increment
    if n == 0:
        raise ValueError(
            f"{_RAMP_FLAG}: the start batch size equals the global batch size {global_batch_size}: "
            f"no increments, and megatron-core computes ramp_samples / 0 (ZeroDivisionError); "
            f"leave out {_RAMP_FLAG}")
    return n


def _ramp_thresholds(start: int, increment: int, ramp_samples: int, global_batch_size: int, n: int,
                     reaches) -> list[tuple[int, int]]:
    """``(first samples, batch)`` of the start and of each increment the ramp reaches within
    ``ramp_samples`` (``reaches(j)``: whether a sample count has reached increment ``j``,
    in megatron-core's float terms), then the global batch after the ramp if not yet there;
    thresholds may repeat (several increments within one sample)."""
    raw: list[tuple[int, int]] = [(0, start)]
    if n > ramp_samples:  # several increments within one sample: one entry per sample reached
        per_increment = ramp_samples / n
        for samples in range(1, ramp_samples + 1):
            reached = min(int(samples / per_increment), n)  # megatron-core's own expression
            if reached != (raw[-1][1] - start) // increment:
                raw.append((samples, start + reached * increment))
    else:
        for j in range(1, n + 1):
            first = _first_reaching(reaches(j), -(-j * ramp_samples // n))
            if first > ramp_samples:
                break
            raw.append((first, start + j * increment))
    if raw[-1][1] != global_batch_size:
        raw.append((ramp_samples + 1, global_batch_size))
    return raw


def _rounded_and_merged(raw: list[tuple[int, int]], multiple: int | None, decrease: bool) -> Table:
    """The table of ``raw``: each batch rounded down to a multiple of ``multiple`` where
    ``decrease`` (--decrease-batch-size-if-needed) says so, the last of the entries at one
    threshold kept, and an entry with its predecessor's batch dropped."""
    table: list[tuple[int, int]] = []
    for threshold, batch in raw:
        if multiple is not None and decrease:
            batch = batch // multiple * multiple
        if table and table[-1][0] == threshold:
            table[-1] = (threshold, batch)  # several increments within one sample: the last holds
        else:
            table.append((threshold, batch))
    merged: list[tuple[int, int]] = []
    for threshold, batch in table:
        if not merged or merged[-1][1] != batch:
            merged.append((threshold, batch))
    return tuple(merged)


def _check_divisible(result: Table, multiple: int) -> None:
    """Refuses a batch the run reaches that is 0 or not divisible by ``multiple``
    (micro_batch_size * data_parallel_size), as megatron-core asserts at that step."""
    for step, samples, batch in switch_steps(result, check=False):
        if batch == 0:
            raise ValueError(
                f"{_RAMP_FLAG}: at step {step} ({samples} samples consumed) the batch rounds down "
                f"to 0 microbatches of micro_batch_size * data_parallel_size = {multiple}: "
                f"Megatron would train nothing and never advance")
        if batch % multiple:
            raise ValueError(
                f"{_RAMP_FLAG}: at step {step} ({samples} samples consumed) the global batch "
                f"{batch} is not divisible by micro_batch_size * data_parallel_size = {multiple}; "
                f"megatron-core asserts there (--decrease-batch-size-if-needed rounds it down)")


def _layout(micro_batch_size, data_parallel_size, decrease):
    if micro_batch_size is None and data_parallel_size is None:
        if decrease:
            raise ValueError(
                f"{_RAMP_FLAG}: decrease_batch_size_if_needed rounds each batch down to a multiple "
                f"of micro_batch_size * data_parallel_size: give both")
        return None
    if micro_batch_size is None or data_parallel_size is None:
        raise ValueError(f"{_RAMP_FLAG}: give both micro_batch_size and data_parallel_size, or neither")
    for name, value in (("micro_batch_size", micro_batch_size), ("data_parallel_size", data_parallel_size)):
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"{_RAMP_FLAG}: {name} must be a positive whole number, got {value!r} "
                             f"(megatron-core asserts micro_batch_size * data_parallel_size > 0)")
    return micro_batch_size * data_parallel_size


# --------------------------------------------------------------------------- walking a table


def batch_at_samples(table: Table, samples: int) -> int:
    """The batch of the step whose samples consumed before it are ``samples``."""
    return table[bisect_right(table, samples, key=lambda entry: entry[0]) - 1][1]


def switch_steps(table: Sequence[tuple[int, int]], *, check: bool = True) -> list[tuple[int, int, int]]:
    """Where each entry of a threshold table takes effect: the stages of
    :class:`schedlang.core.clock.Clock` (the one closed-form walk), as tuples.

    Returns ``[(first_step, samples_before, batch), ...]``: from step ``first_step``
    (0-based; ``samples_before`` samples consumed before it) the batch is ``batch``,
    until the next item.  The first item is ``(0, 0, B_0)``.  An entry whose whole
    interval is passed within one step never takes effect and is left out; an entry
    with the same batch as the one before it is kept (it is still a separate entry).
    A first batch of 0 (``rampup_batch_size`` rounding down to no microbatch, which it
    reports) never advances: the run is ``[(0, 0, 0)]``.  ``check=False`` only skips
    restating the table's shape in this module's words (``Clock`` checks it anyway).
    """
    if check:
        if not table or table[0][0] != 0:
            raise ValueError("a batch threshold table starts at threshold 0")
        if any(b <= a for (a, _), (b, _) in zip(table, table[1:])):
            raise ValueError("batch thresholds must be strictly increasing")
    if table[0][1] <= 0:
        return [(0, 0, table[0][1])]
    return [(stage.first, stage.samples, stage.batch) for stage in Clock(tuple(table)).stages]
