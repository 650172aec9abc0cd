"""OLMo-core's batch-size scheduler (``BatchSizeSchedulerCallback``, ai2-olmo-core 3.0.0) as a
threshold table, and the lr factor it applies, as pure functions.

OLMo-core gives batch sizes in *tokens* (``batch_sizes=[32768, 65536, ...]``) and the points
where each applies as ``Duration``s of one unit (``schedule=[0, 200000, ...]`` tokens or
steps, starting at 0, strictly increasing; each batch an integer factor of the one before).
Before loading the batch of update ``k`` the callback takes the *latest* event that is due
(``T_k >= theta`` tokens consumed before the batch, or ``k >= theta`` steps) and:

* a smaller batch applies at once;
* a larger one, ``r`` times the current, waits until the data loader's
  ``batches_processed % r == 0``.  Within one epoch ``batches_processed`` is ``T_k / b``
  (every switch happens on a multiple of the new batch, so the current batch divides
  ``T_k``), which makes the condition ``T_k % new_batch == 0``.  While it waits, a later
  event that falls due replaces it (only the latest due event is looked at).

Each change multiplies the base lr by ``sqrt(new / old)``, so update ``k`` trains at
``sqrt(b_k / b_0)`` times the lr its scheduler gives (``olmo_core.batch_size_lr_factor``,
lowered from ``switches``).

The switches are found in closed form, interval by interval between the events' thresholds
(no walk over steps), and returned as the table ``core.clock.Clock`` takes: batch sizes in
samples (tokens / ``seq_len``, which must divide every batch, as OLMo-core's data loader
requires) switching at the samples consumed before the switching step, which is exact
because ``S_k`` increases strictly.  A run is taken as one epoch (``batches_processed``
restarts at an epoch boundary).  Errors are OLMo-core's own configuration errors, raised as
``ValueError`` for the caller to locate.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["batch_size_schedule", "switches", "UNITS"]

UNITS = ("tokens", "steps")


def _check(batch_sizes: Sequence[int], schedule: Sequence[int], seq_len: int) -> None:
    """``BatchSizeSchedulerCallback.__post_init__``'s checks, and whole samples per batch."""
    if len(batch_sizes) != len(schedule):
        raise ValueError("batch_sizes and schedule should have the same number of items")
    if not schedule:
        raise ValueError("the batch size schedule is empty")
    if schedule[0] != 0:
        raise ValueError("batch size schedule must start at 0")
    # before the factor check, which divides by them (OLMo-core itself fails there with a
    # ZeroDivisionError on a batch of 0)
    for size in batch_sizes:
        _check_size(size, seq_len)
    _check_events(batch_sizes, schedule)


def _check_size(size: int, seq_len: int) -> None:
    if size <= 0:
        raise ValueError(f"a batch of {size} tokens: every batch size must be positive")
    if size % seq_len:
        raise ValueError(f"a batch of {size} tokens is not a whole number of {seq_len}-token sequences")


def _check_events(batch_sizes: Sequence[int], schedule: Sequence[int]) -> None:
    """Each event after the one before it, changing the batch by a whole factor."""
    for (size, start), (after, later) in zip(zip(batch_sizes, schedule), zip(batch_sizes[1:], schedule[1:])):
        if later <= start:
            raise ValueError("subsequent events in the batch size schedule must be configured to occur "
                             "after previous events")
        if after == size:
            raise ValueError("invalid batch size schedule, duplicate batch size in schedule")
        if max(after, size) % min(after, size):
            raise ValueError("invalid batch size schedule, batch size can only be changed by an "
                             "integer factor")


def switches(batch_sizes: Sequence[int], schedule: Sequence[int],
             unit: str = "tokens") -> list[tuple[int, int, int]]:
    """Where the batch changes: ``[(step, tokens_before, batch_tokens), ...]`` from ``(0, 0, b_0)``."""
    b, k0, t0 = batch_sizes[0], 0, 0
    out = [(0, 0, b)]
    start = 1  # the callback runs once before each batch; step 0 took event 0
    while True:
        found = _next_switch(batch_sizes, schedule, unit, b, k0, t0, start)
        if found is None:
            return out
        step, target = found
        t0, k0, b = t0 + b * (step - k0), step, target
        out.append((k0, t0, b))
        start = k0 + 1


def _next_switch(sizes, schedule, unit, b, k0, t0, start):
    """The first step ``>= start`` at which the latest due event changes the batch ``b`` (the
    stage began at step ``k0`` with ``t0`` tokens consumed), and its batch; None if never."""
    def position(step):  # what the events count, before the batch of `step`
        return step if unit == "steps" else t0 + b * (step - k0)

    def first_reaching(theta):  # the first step >= start whose position reaches theta
        if unit == "steps":
            return max(start, theta)
        return max(start, k0 + max(0, -((t0 - theta) // b) if theta > t0 else 0))

    n = len(schedule)
    due = max(i for i in range(n) if schedule[i] <= position(start))
    for i in range(due, n):
        lo = start if i == due else first_reaching(schedule[i])
        hi = first_reaching(schedule[i + 1]) if i + 1 < n else None  # the next event takes over
        target = sizes[i]
        if target == b or (hi is not None and lo >= hi):
            continue
        if target < b:
            return lo, target
        # a larger batch waits for T_k % target == 0, i.e. (t0 / b + k - k0) % (target / b) == 0
        ratio = target // b
        step = lo + (-(t0 // b + lo - k0)) % ratio
        if hi is None or step < hi:
            return step, target
    return None


def batch_size_schedule(batch_sizes: Sequence[int], schedule: Sequence[int], seq_len: int,
                        unit: str = "tokens") -> tuple[tuple[int, int], ...]:
    """The threshold table (samples consumed before the switch, samples per step) of
    ``core.clock.Clock`` that OLMo-core's callback follows."""
    if unit not in UNITS:
        raise ValueError(f"the schedule counts tokens or steps, not {unit!r}")
    _check(batch_sizes, schedule, seq_len)
    return tuple((tokens // seq_len, batch // seq_len)
                 for _, tokens, batch in switches(batch_sizes, schedule, unit))
