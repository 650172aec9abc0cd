"""A schedule as a native Composer scheduler, reading Composer time.

Composer's scheduler protocol (``composer.optim.scheduler.ComposerScheduler``) is a
callable ``scheduler(state, ssr=1.0) -> float`` of the Trainer's ``State`` that
returns a multiplier alpha of the optimizer's initial lr: the Trainer wraps it in a
``LambdaLR`` (``compile_composer_scheduler``), so every param group gets
``initial_lr * alpha``.  The object here reads the count ``k`` of one time unit from
``state.timestamp`` and returns

    alpha(state) = f(k) / lr,    k = state.timestamp.<unit>

where f is the schedule and ``lr`` the optimizer's initial lr (1.0 by default: the
optimizer is built with ``lr=1.0``, alpha *is* f(k), and ``1.0 * alpha == f(k)``
exactly; with another ``lr`` the product can differ from f(k) by one rounding).

Units (``UNITS``, one table): ``ba`` batches (optimizer steps, the default), ``ep``
epochs, ``sp`` samples, ``tok`` tokens, ``iter`` iterations.  ``dur`` (the fraction
of ``max_duration`` done, a real number in [0, 1]) is refused: a schedlang step is a
whole count.  Write ``0.5dur`` *inside* the file, where the ``composer.*`` presets
turn it into ``floor(0.5 * max_duration)`` steps with ``param max_duration: int``
(the run length in the unit read here).  ``ssr`` (scale_schedule_ratio) other than
1 is refused too: bind the durations of the scaled run instead.

When Composer applies the value: the Trainer steps its schedulers after batch b but
before it advances ``state.timestamp``, so batch b trains with alpha at time
``max(b - 1, 0)``, the one-batch lag every Composer scheduler has (its own included).
A schedule that must hold at batch k exactly goes in as the torch scheduler class
with ``step_schedulers_every_batch=True`` (docs/guides/composer_trainer.py).
"""

from __future__ import annotations

from ..errors import SchedlangError

#: Composer time unit -> the ``Timestamp`` attribute holding its count.
UNITS = {"ba": "batch", "ep": "epoch", "sp": "sample", "tok": "token", "iter": "iteration"}


def _unit_name(unit) -> str:
    """``"ba"``, or ``composer.core.TimeUnit.BATCH`` (whose ``value`` is ``"ba"``)."""
    return str(getattr(unit, "value", unit))


def _refuse_group_params(schedule) -> None:
    """Composer multiplies every group's initial lr by one ``alpha``: a ``group`` parameter,
    which a torch class reads per group, would silently take its default in every group."""
    group = schedule.program.group_params if schedule.program is not None else {}
    used = {s.name for s in schedule.symbolic_expr.free_symbols}
    for name, info in group.items():
        if name in used:
            raise SchedlangError(f"group parameter '{name}' has a value per param group, but a Composer "
                                 "scheduler gives every group one multiplier of its initial lr",
                                 info.span, hint="give the groups their own initial lr (Composer scales "
                                                 "each by the schedule) and make the parameter a float")


class ComposerScheduler:
    """``alpha(state, ssr=1.0) = f(state.timestamp.<unit>) / lr``; see the module docstring."""

    def __init__(self, schedule, unit="ba", lr: float = 1.0):
        name = _unit_name(unit)
        if name == "dur":
            raise SchedlangError(
                "a schedlang schedule cannot read Composer time in 'dur': it is the fraction of "
                "max_duration done, and a schedule's step is a whole count",
                schedule.span,
                hint="read unit='ba' and write '0.5dur' in the file with 'param max_duration: int' "
                     "(the run length in batches), as the composer.* presets do")
        if name not in UNITS:
            raise SchedlangError(f"Composer time unit {name!r} cannot be read as a step",
                                 schedule.span, hint=f"use one of {', '.join(UNITS)}")
        if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not lr > 0:
            raise SchedlangError(f"lr must be the optimizer's initial lr, a number > 0, not {lr!r}",
                                 hint="build the optimizer with lr=1.0 and leave lr at its default")
        self.schedule = schedule
        self.unit = name
        self.lr = float(lr)
        schedule._require_bound()  # an unbound parameter fails here, not mid-run
        _refuse_group_params(schedule)

    def __repr__(self) -> str:
        return f"<ComposerScheduler {self.schedule.name} in {self.unit!r}, lr={self.lr!r}>"

    def step_of(self, state) -> int:
        """The count of ``self.unit`` in ``state.timestamp`` (a Composer ``Time`` or an int)."""
        attribute = UNITS[self.unit]
        try:
            value = getattr(state.timestamp, attribute)
        except AttributeError:
            raise SchedlangError(f"the state has no timestamp.{attribute} to read Composer time "
                                 f"in {self.unit!r}",
                                 hint="pass the Composer Trainer's State (or an object with "
                                      f"state.timestamp.{attribute})") from None
        return int(getattr(value, "value", value))

    def __call__(self, state, ssr: float = 1.0) -> float:
        if ssr != 1.0:
            raise SchedlangError(f"scale_schedule_ratio={ssr!r}: a schedlang schedule is not "
                                 "stretched by Composer", self.schedule.span,
                                 hint="leave scale_schedule_ratio at 1.0 and bind the durations "
                                      "of the scaled run (params=...)")
        return self.schedule(self.step_of(state)) / self.lr
