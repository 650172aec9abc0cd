"""The x axis of ``eval`` and ``plot``: optimizer steps, or the samples or tokens consumed
(SPEC §12, ``--axis samples|tokens``).

On a count axis a position ``x`` (0-based: the ``x``-th token of the run) is read at the step
that trains it, the last step ``k`` with ``T_k <= x`` (``step_at(tokens=x + 1) - 1``), so two
runs with other batch schedules are compared where they stand on the same data: the picture
of a resumed run on more GPUs lies on the original, and a warmup counted in steps under a
batch ramp shows how many tokens it really lasts (the #2609 trap).  Every file needs a batch
schedule (``batch = ...``, or a constant ``param batch_size``) and, for tokens, ``seq_len``.
"""

from __future__ import annotations

from ..errors import SchedlangError, Span

AXES = ("steps", "samples", "tokens")


def require_clock(program, axis: str, path: str, span: Span | None = None) -> None:
    """Refuse a count axis for a file whose run has no batch schedule (or tokens per sample),
    at ``span``: the ``--axis`` argument that asks for what the file does not have."""
    if axis == "steps":
        return
    try:
        clock = program.clock
    except SchedlangError as exc:
        raise SchedlangError(f"--axis {axis}: {path} has no batch schedule", span, hint=exc.hint) from None
    if axis == "tokens" and clock.seq_len is None:
        raise SchedlangError(f"--axis tokens: {path} does not say how many tokens a sample holds", span,
                             hint="declare `param seq_len: int = 4096`, or use --axis samples")


def steps_at(program, axis: str, positions) -> list[int]:
    """The step that trains each position of ``positions`` (counts on ``axis``)."""
    if axis == "steps":
        return list(positions)
    return [program.step_at(**{axis: x + 1}) - 1 for x in positions]


def count_at(program, axis: str, step: int) -> int:
    """How far along ``axis`` the run is before ``step``."""
    if axis == "steps":
        return step
    return program.samples_at(step) if axis == "samples" else program.tokens_at(step)


def default_positions(programs, axis: str, steps: range) -> range:
    """``steps`` (a default range of steps, from ``cli.ranges``) as the same share of the runs
    on a count axis: from 0 to the furthest count any file reaches at its last step, with as
    many points."""
    if axis == "steps":
        return steps
    end = max(count_at(p, axis, steps.stop - 1) for p in programs)
    points = max(len(steps) - 1, 1)
    stride = max(1, -(-end // points))
    return range(0, stride * points + 1, stride)
