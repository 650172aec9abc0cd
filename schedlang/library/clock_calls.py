"""The calls of the run's clock (SPEC §12): ``on_samples`` / ``on_tokens``, ``stages(...)``, the
frameworks' batch schedule presets and OLMo-core's lr factor, one row each, like every other name
a program may call.

A row is a ``ClockCall``: a ``Builtin`` (signature, docs, the function) with its ``role``, what
lowering does with it:

* ``on_clock``: a schedule counted in steps put on the sample or token clock (``unit``);
* ``batch``: a batch schedule, a table of (sample threshold, batch); it goes in ``batch = ...``;
* ``from_batch``: a schedule read off the file's batch schedule.

Lowering (``semantics/lower_calls``) dispatches on the role (``call_<role>``) and reads each
call's arguments as its role needs; ``semantics/names``, highlighting, completion, hover, the
builder and its stub read the same rows.  The functions are pure: the frameworks' rules are in
``presets/megatron_batch.py`` and ``presets/olmo_core_batch.py`` (imported on use: the presets
load in 0.1 s), an error is a ``ValueError`` or an ``ArgumentError`` that lowering locates.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from fractions import Fraction

import sympy as sp

from ..core.algebra import Segment, tau
from ..core.clock import threshold_in_samples
from ..limits import MAX_BATCH_STAGES
from .stdlib import Arg, ArgumentError, Builtin, Kind

Table = tuple[tuple[int, int], ...]


class Role(enum.StrEnum):
    """What lowering does with a call of the clock (``Lowerer.call_<role>``)."""

    ON_CLOCK = "on_clock"      #: a schedule counted in steps, put on the run's sample or token clock
    BATCH = "batch"            #: a batch schedule (``batch = ...`` only)
    FROM_BATCH = "from_batch"  #: a schedule read off the file's batch schedule


@dataclass(frozen=True)
class ClockCall(Builtin):
    role: Role = Role.ON_CLOCK
    unit: str | None = None  # on_clock: the clock it puts its schedule on ("sp", "tok")

    def __post_init__(self):
        object.__setattr__(self, "role", Role(self.role))  # a misspelt role fails at import


# -- on the clock --------------------------------------------------------------------------


def on_samples(schedule: Segment) -> Segment:
    """``schedule`` with its ``t`` and its length counting the samples consumed before the step:
    a framework's schedule whose counter is the samples consumed (Megatron's ``num_steps``),
    placed on the run's clock; the file needs a batch schedule."""
    return replace(schedule, clock="sp")


def on_tokens(schedule: Segment) -> Segment:
    """``schedule`` with its ``t`` and its length counting the tokens consumed before the step,
    placed on the run's clock; the file needs a batch schedule (and ``param seq_len``)."""
    return replace(schedule, clock="tok")


# -- batch schedules -----------------------------------------------------------------------


def stages(first: int, batches: list[int], thresholds: list[tuple[Fraction, str]],
           seq_len: int | None) -> Table:
    """``stages(b0, [b1, ...], [th1, ...])``: a batch schedule for ``batch = ...``, ``b0`` samples
    per step until the samples or tokens consumed before a step reach ``th1`` (``sp`` or ``tok``),
    then ``b1``, and so on; thresholds increase strictly, a threshold in tokens needs
    ``param seq_len``.  Each threshold becomes the least sample count reaching it."""
    if len(batches) != len(thresholds):
        raise ArgumentError(None, f"stages() has {len(batches)} batch sizes after the first but "
                                  f"{len(thresholds)} thresholds",
                            hint="one threshold per later batch: stages(b0, [b1, b2], [th1, th2])")
    table = [(0, first)]
    for index, (batch, (amount, unit)) in enumerate(zip(batches, thresholds)):
        if unit == "tok" and seq_len is None:
            raise ArgumentError("thresholds", "a threshold in tokens needs the tokens per sample",
                                hint="declare `param seq_len: int = 4096`", item=index)
        samples = threshold_in_samples(amount, unit, seq_len)
        if samples <= table[-1][0]:
            shown = "0" if len(table) == 1 else "the threshold before it"
            raise ArgumentError("thresholds", f"this threshold is {samples} samples, not above {shown}",
                                hint="thresholds increase strictly, each above 0 samples", item=index)
        table.append((samples, batch))
    return tuple(table)


def megatron_step_schedule(schedule: str, seq_length: int | None = None) -> Table:
    """``megatron.step_batch_size_schedule("0:16 2.4B:320", seq_length=...)``: Megatron-LM
    main's ``--step-batch-size-schedule`` (megatron-core >= 0.18), exact to its parser;
    ``seq_length`` defaults to the file's ``seq_len`` (Megatron-LM passes its ``--seq-length``)."""
    from .presets import megatron_batch  # lazy: presets (0.1 s), only files with a Megatron batch

    return megatron_batch.step_batch_size_schedule(schedule, seq_length)


def megatron_rampup(start: int, increment: int, samples: int, global_batch_size: int,
                    micro_batch_size: int | None = None, data_parallel_size: int | None = None) -> Table:
    """``megatron.rampup_batch_size(start, increment, samples, global_batch_size=...)``:
    megatron-core <= 0.17's ``--rampup-batch-size``, its float division included
    (0.18 and later ignore the flag)."""
    from .presets import megatron_batch  # lazy: presets (0.1 s), only files with a Megatron batch

    return megatron_batch.rampup_batch_size(start, increment, samples, global_batch_size,
                                            micro_batch_size=micro_batch_size,
                                            data_parallel_size=data_parallel_size, limit=MAX_BATCH_STAGES)


def olmo_batch_schedule(batch_sizes: list[int], schedule: list[int], units: str = "tokens", *,
                        seq_len: int) -> Table:
    """``olmo_core.batch_size_schedule(batch_sizes=[...], schedule=[...], units="tokens")``:
    OLMo-core's ``BatchSizeSchedulerCallback``, batch sizes in tokens, an increase waiting
    for a whole number of the new batches (``library/presets/olmo_core_batch.py``)."""
    from .presets import olmo_core_batch  # lazy: presets (0.1 s), only files with an OLMo-core batch

    return olmo_core_batch.batch_size_schedule(batch_sizes, schedule, seq_len, units)


def olmo_lr_factor(units: str = "tokens", *, batches: tuple) -> Segment:
    """``olmo_core.batch_size_lr_factor(units=...)``: the ``sqrt(new / old)`` by which
    OLMo-core's batch-size callback multiplies the base lr at each change, from the step
    whose batch changed on; ``units`` as the scheduler's it multiplies (``"tokens"``: on the
    token clock read after the step, ``"steps"``: on the step clock)."""
    # batches: the arguments of the file's olmo_core.batch_size_schedule (sizes, schedule, units)
    from .presets import olmo_core_batch  # lazy: presets (0.1 s), only files with an OLMo-core batch

    switches = olmo_core_batch.switches(*batches)  # (step, tokens before, batch)
    factors = [sp.sqrt(sp.Rational(batch, switches[0][2])) for _, _, batch in switches]
    # the factor of a switch at step s holds from step s on; read after the step, update k
    # counts T_{k+1} = T_k + its batch, so from T_s + b_s tokens on
    ends = [step if units == "steps" else tokens + batch for step, tokens, batch in switches[1:]]
    pieces = [(factor, sp.Lt(tau, end)) for factor, end in zip(factors, ends)]
    expr = sp.Piecewise(*pieces, (factors[-1], True)) if pieces else factors[-1]
    return Segment(expr) if units == "steps" else Segment(expr, clock="tok", evaluation="after")


# -- the rows ------------------------------------------------------------------------------

OLMO_UNITS = ("tokens", "steps")

#: Every call of the run's clock, by name.
CLOCK_CALLS: dict[str, ClockCall] = {c.name: c for c in (
    ClockCall("on_samples", (Arg("schedule", Kind.SCHEDULE),), on_samples, unit="sp"),
    ClockCall("on_tokens", (Arg("schedule", Kind.SCHEDULE),), on_tokens, unit="tok"),
    ClockCall("stages", (Arg("first", Kind.CONST), Arg("batches", Kind.VALUES),
                         Arg("thresholds", Kind.VALUES)), stages, role=Role.BATCH),
    ClockCall("megatron.step_batch_size_schedule", (Arg("schedule", Kind.OPTION),
                                                    Arg("seq_length", Kind.CONST, None)),
              megatron_step_schedule, role=Role.BATCH),
    ClockCall("megatron.rampup_batch_size", (
        *(Arg(name, Kind.CONST) for name in ("start", "increment", "samples", "global_batch_size")),
        *(Arg(name, Kind.CONST, None) for name in ("micro_batch_size", "data_parallel_size"))),
        megatron_rampup, role=Role.BATCH),
    ClockCall("olmo_core.batch_size_schedule", (Arg("batch_sizes", Kind.VALUES), Arg("schedule", Kind.VALUES),
                                                Arg("units", Kind.OPTION, "tokens", OLMO_UNITS)),
              olmo_batch_schedule, role=Role.BATCH),
    ClockCall("olmo_core.batch_size_lr_factor", (Arg("units", Kind.OPTION, "tokens", OLMO_UNITS),),
              olmo_lr_factor, role=Role.FROM_BATCH),
)}


def of_role(role: Role) -> dict[str, ClockCall]:
    """The rows of one role, in table order."""
    return {name: call for name, call in CLOCK_CALLS.items() if call.role is role}


__all__ = ["CLOCK_CALLS", "ClockCall", "Role", "of_role"]
