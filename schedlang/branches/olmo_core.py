"""OLMo-core branches from a trunk whose batch is OLMo-core's ``BatchSizeSchedulerCallback``
(``batch = olmo_core.batch_size_schedule(...)``, ``branch --format olmo-core-json``).

The callback multiplies each group's ``initial_lr`` by ``sqrt(new / old)`` at every batch change
(and again on resume: ``initial_lr`` is reset to the config's lr when the checkpoint is loaded,
then ``post_checkpoint_loaded`` scales it by the latest due event).  A ``ComposableScheduler``
whose stages give ``start_lr`` and ``end_lr`` themselves never reads ``initial_lr``, so the
branch is written as one: a stage holding the trunk's value ``a`` up to the first update of the
branch, then the cooldown.

* In steps (``units="steps"``) update ``k`` reads ``k + 1``: the cooldown is one stage of
  ``N`` steps (linear or cosine) from ``C + 1``, whatever the batch.
* In tokens update ``k`` reads the tokens seen through it, ``x_k = T_k + B_k``: within a run of
  steps at one batch ``B_j`` the branch's ``a + (F - a) (T_k - T_c) / N`` is the line
  ``f_j(x) = a + (F - a) (x - B_j - T_c) / N``, shifted by ``B_j``.  A linear cooldown is written
  as one linear stage per batch (``f_j`` from a point at or before its first update to one
  after its last; a constant stage fills the tokens no update reads), each end an exact decimal
  (the points are chosen on the grid where ``f_j`` has one).  A cosine stage is a whole
  half-cosine from its start to its end, so a cosine cooldown is one stage only at one batch.

Resume: the resumed trainer builds the data loader at the config's ``global_batch_size`` (the
callback's first size: ``post_attach`` sets it so), restores ``global_step``, the tokens seen and
``batches_processed = tokens // batch``, and ``post_checkpoint_loaded`` applies only the latest
due event (an increase waits for ``batches_processed % ratio == 0``).  That is the trunk's state
at the branch point unless an increase is pending there (the trunk still at an earlier size, or
at its first); then the resumed run trains at another batch than the branch, and it is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from ..errors import SchedlangError, Span
from ..formats.common.numbers import decimal_text
from ..syntax import ir
from ..syntax.parser import parse

SIZES_CALL = "olmo_core.batch_size_schedule"


@dataclass(frozen=True)
class Callback:
    """The trunk's ``olmo_core.batch_size_schedule(...)``: where it is, its sizes (tokens), points
    and units."""

    span: Span
    sizes: tuple[int, ...]
    points: tuple[int, ...]
    units: str


def batch_decl(text: str, filename: str) -> ir.BatchDecl | None:
    """The trunk file's ``batch = ...`` statement, or None."""
    return next((s for s in parse(text, filename).statements if isinstance(s, ir.BatchDecl)), None)


def callback_of(text: str, filename: str) -> Callback | None:
    """The trunk file's batch-size callback, or None when its batch is something else."""
    decl = batch_decl(text, filename)
    call = decl.value if decl is not None else None
    if not isinstance(call, ir.Call) or call.func.id != SIZES_CALL:
        return None
    given = dict(zip(("batch_sizes", "schedule", "units"), call.args))
    given.update({k.name: k.value for k in call.keywords})
    units = given["units"].value if isinstance(given.get("units"), ir.String) else "tokens"

    def whole(node) -> tuple[int, ...]:
        items = node.items if isinstance(node, ir.List) else ()
        if not items or not all(isinstance(i, ir.Number) and i.value.denominator == 1 for i in items):
            raise SchedlangError("branch --format olmo-core-json reads the batch-size schedule's sizes and "
                                 "points, which must be written as whole numbers here", node.span,
                                 hint="write each batch size and point as a number")
        return tuple(int(i.value) for i in items)

    return Callback(call.span, whole(given["batch_sizes"]), whole(given["schedule"]), units)


def resumed_batch(callback: Callback, step: int, tokens: int) -> tuple[int, int] | str:
    """The data loader's (batch in tokens, ``batches_processed``) when a run resumed at ``step``
    with ``tokens`` seen loads its batch: the config's batch (the first size), the restored
    count, then the latest due event; a text saying why OLMo-core fails instead."""
    current = callback.sizes[0]
    processed = tokens // current
    position = step if callback.units == "steps" else tokens
    target = callback.sizes[max(i for i, p in enumerate(callback.points) if p <= position)]
    if target > current:
        if target % current:
            return f"{target} is not a multiple of {current}: its assert fails"
        if processed % (target // current) == 0:
            return target, processed // (target // current)
    elif target < current:
        if current % target:
            return f"{current} is not a multiple of {target}: its assert fails"
        return target, processed * (current // target)
    return current, processed


def check_resume(callback: Callback, branch) -> None:
    """Refuse a branch point where OLMo-core's resumed run would not train at the trunk's batch."""
    clock = branch.program.clock
    seq = clock.seq_len
    step, tokens = branch.step, clock.tokens_at(branch.step)
    if _resumes_as_trunk(callback, clock, step):
        return
    batch = clock.batch_at(step) * seq
    got = resumed_batch(callback, step, tokens)
    resumed = f"resumed there at {got[0]} tokens a step" if isinstance(got, tuple) else \
        f"resumed there fails ({got})"
    nearest = [k for k in (_nearest(callback, clock, step, -1), _nearest(callback, clock, step, 1))
               if k is not None]
    hint = ("branch where no batch increase is pending: " + " or ".join(
        f"--at {clock.tokens_at(k)}tok (step {k})" if branch.at.unit == "tok" else f"--at {k}"
        for k in nearest)) if nearest else "branch where no batch increase is pending"
    raise SchedlangError(
        f"OLMo-core's BatchSizeSchedulerCallback resumes from the latest due event only: at step {step} "
        f"({tokens} tokens seen) the trunk trains at {batch} tokens a step with a larger batch pending, "
        f"and a run {resumed} (the config's first batch, {callback.sizes[0]}, until the increase can "
        "apply), so the branch's batch and tokens are not the resumed run's", callback.span, hint=hint)


def _resumes_as_trunk(callback: Callback, clock, step: int) -> bool:
    seq = clock.seq_len
    tokens, batch = clock.tokens_at(step), clock.batch_at(step) * seq
    return tokens % batch == 0 and resumed_batch(callback, step, tokens) == (batch, tokens // batch)


def _nearest(callback: Callback, clock, step: int, direction: int, reach: int = 100_000) -> int | None:
    k = step + direction
    while 0 <= k and abs(k - step) <= reach:
        if _resumes_as_trunk(callback, clock, k):
            return k
        k += direction
    return None


def stage(duration: int, start: Fraction, end: Fraction, shape: str = "linear") -> str:
    text = f"olmo_core.ComposableSchedulerStage(duration={duration}, "
    if shape != "linear":
        text += f"shape=\"{shape}\", "
    return text + f"start_lr={decimal_text(start)}, end_lr={decimal_text(end)})"


def composable(peak: str, units: str, stages: list[str], branch) -> str:
    """The ComposableScheduler of the branch.  OLMo-core ignores its ``t_max``; the trainer's
    ``max_duration`` is set one update past the run (what the run's end reads: ``C + N + 1`` steps,
    or ``T_run + B_run`` tokens) and ``hard_stop`` ends the run, as for the other branches."""
    program = branch.program
    t_max = branch.run + 1 if units == "steps" else \
        program.tokens_at(branch.run) + program.clock.batch_at(branch.run) * program.clock.seq_len
    return (f"olmo_core.ComposableScheduler(lr={peak}, units=\"{units}\", t_max={t_max}, "
            f"stages=[{', '.join(stages)}])")


def step_stages(shape: str, a: Fraction, to: Fraction, c: int, n: int) -> list[str]:
    """In steps: update ``k`` reads ``k + 1``; hold ``a`` up to ``C + 1``, cool down over ``N``."""
    return [stage(c + 1, a, a), stage(n, a, to, shape)]


def token_stages(shape: str, a: Fraction, to: Fraction, branch, callback: Callback) -> list[str]:
    """In tokens: the stages whose value at ``x_k = T_k + B_k`` is the branch's at every update
    ``k`` from the branch point to the run's end (and ``F`` at the run's end)."""
    clock, program = branch.program.clock, branch.program
    seq, end = clock.seq_len, branch.run
    start, n = branch.tokens, branch.length.amount
    segments = _batch_segments(clock, branch.step, end)
    x_end = program.tokens_at(end) + clock.batch_at(end) * seq  # what the run's end reads
    if shape != "linear":
        if len(segments) > 1 or x_end < start + n + segments[0][2]:
            raise _curve_across_batches(shape, segments, branch, callback)
        batch = segments[0][2]
        return [stage(start + batch, a, a), stage(n, a, to, shape)]
    return _linear_token_stages(a, to, branch, callback, segments, x_end)


def _batch_segments(clock, c: int, end: int) -> list[list[int]]:
    """The updates ``c`` to ``end - 1`` as runs of one batch: ``[first step, last step, batch
    tokens]`` each (consecutive stages of one batch size joined)."""
    seq = clock.seq_len
    segments: list[list[int]] = []
    for s in clock.stages:
        first, last = max(s.first, c), end - 1
        nxt = next((t.first for t in clock.stages if t.first > s.first), None)
        if nxt is not None:
            last = min(last, nxt - 1)
        if first > last:
            continue
        if segments and segments[-1][2] == s.batch * seq:
            segments[-1][1] = last
        else:
            segments.append([first, last, s.batch * seq])
    return segments


def _curve_across_batches(shape: str, segments: list[list[int]], branch,
                          callback: Callback) -> SchedlangError:
    """The refusal of a curved cooldown whose tokens cross a batch change."""
    clock, program = branch.program.clock, branch.program
    seq = clock.seq_len
    change = segments[1][0] if len(segments) > 1 else branch.run
    last = clock.stages[-1].first + 1  # past the last change (where the trunk's factor jumps)
    return SchedlangError(
        f"a {shape} cooldown across a batch change (step {change}: {segments[0][2]} -> "
        f"{clock.batch_at(change) * seq} tokens) is not one of OLMo-core's stages: a "
        f"ComposableScheduler {shape} stage is a whole half-cosine over its tokens, and the tokens "
        "seen through each update move by the batch at each change", callback.span,
        hint=f"a linear cooldown (written as one stage per batch), or a {shape} one branched where "
             f"the batch no longer changes: --at {program.tokens_at(last)}tok (step {last}) or later")


def _linear_token_stages(a: Fraction, to: Fraction, branch, callback: Callback,
                         segments: list[list[int]], x_end: int) -> list[str]:
    """A linear cooldown in tokens: per batch segment, a hold to the first token count where the
    line is an exact decimal and a linear stage between such counts (and ``F`` at the run's end)."""
    program = branch.program
    start, n = branch.tokens, branch.length.amount
    slope = (to - a) / n
    grid = _odd_part(slope.denominator)

    def line(x: int, batch: int) -> Fraction:
        return a + slope * (x - batch - start)

    def at_or_below(x: int, batch: int) -> int:  # the largest x' <= x where the line is a decimal
        return x - (x - batch - start) % grid

    def above(x: int, batch: int) -> int:  # the smallest x' > x so
        return x + 1 + (batch + start - x - 1) % grid

    reads = [(program.tokens_at(f) + b, program.tokens_at(last + 1), b) for f, last, b in segments]
    starts = [at_or_below(first, b) for first, _, b in reads]
    out, cur, value = [], 0, a
    for j, ((_, last, b), p) in enumerate(zip(reads, starts)):
        if p < max(cur, 1) or (j and p <= reads[j - 1][1]):
            raise _no_grid(branch, grid, callback)
        if p > cur:
            out.append(stage(p - cur, value, value))
        final = j == len(reads) - 1
        e = start + n + b if final else at_or_below(starts[j + 1], b)
        if final and e > x_end:
            e = above(last, b)
        if e <= last or (final and e > x_end) or e <= p:
            raise _no_grid(branch, grid, callback)
        out.append(stage(e - p, line(p, b), line(e, b)))
        cur, value = e, line(e, b)
        if final:
            out += _to_floor(value, to, e, x_end, lambda: _no_grid(branch, grid, callback))
    return out


def _to_floor(value: Fraction, to: Fraction, e: int, x_end: int, refusal) -> list[str]:
    """The stage from the last grid point ``e`` (value ``value``) to ``F`` at the run's end
    (none where the line is already there); ``refusal()`` where the end leaves no room for it."""
    if value == to:
        return []
    if e >= x_end:
        raise refusal()
    return [stage(x_end - e, value, to)]


def _odd_part(denominator: int) -> int:
    for prime in (2, 5):
        while denominator % prime == 0:
            denominator //= prime
    return denominator


def _no_grid(branch, grid: int, callback: Callback) -> SchedlangError:
    n = branch.length.amount
    near = sorted({2 ** i * 5 ** j for i in range(80) for j in range(40) if 2 ** i * 5 ** j < 4 * n + 4})
    below = max((m for m in near if m <= n), default=None)
    above = min((m for m in near if m > n), default=None)
    return SchedlangError(
        f"the linear cooldown's values at OLMo-core's stage ends are not exact decimals: (F - lr) / N has "
        f"the factor {grid} in its denominator, more than the batch leaves room for", callback.span,
        hint="a cooldown whose length is 2^i * 5^j tokens: "
             + " or ".join(f"{m}tok" for m in (below, above) if m is not None))
