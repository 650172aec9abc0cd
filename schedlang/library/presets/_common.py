"""What the preset modules share: the preset segment, argument helpers, composites.

A preset is a ``stdlib.Builtin`` with a dotted name whose build function
returns a ``PresetSegment``: an ordinary ``Segment`` that also remembers what
the anchor library's composites read off their children (Cerebras'
``initial_val`` and ModelZoo's ``total_iters``, whether a torch scheduler's
chainable update is a pure ratio).  Everything past a composite is a plain
``Segment``: the extra fields only matter to the composite that receives the
child directly.

Durations follow one rule: a preset whose anchor holds its end value from
some step on is finite (so ``>>`` and SequentialLR work on it); one that keeps
changing forever (periodic cosines, exponential decays, restarts) is infinite.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from ...core.algebra import Segment, hold_for, sequence
from ..stdlib import REQUIRED, Arg, ArgumentError, Builtin, Kind
from .kinds import FLAG, OPTION, PAIRS, SCHEDULES, C, D, L, S, V  # noqa: F401 - the presets' kinds


@dataclass(frozen=True)
class Rejected:
    """A library schedule with no closed form: using it is an error that says why and what to use."""

    name: str
    reason: str


@dataclass(frozen=True)
class PresetSegment(Segment):
    """A preset's schedule plus the facts about it that anchor composites use."""

    initial: sp.Expr | None = None      # Cerebras ``initial_val`` (ChainedScheduler divides by it)
    total_iters: sp.Expr | None = None  # ModelZoo derives SequentialLR milestones from it
    base: sp.Expr | None = None         # torch: the optimizer lr the child was given
    #: torch: the same call with another ``lr`` when this one was given none (``SequentialLR(lr=)``
    #: passes its own lr to such children); None when ``lr`` was given.
    with_lr: object = field(default=None, compare=False, repr=False)
    ratio_chainable: bool = False       # torch: its chainable step multiplies by f(t)/f(t-1)
    label: str = ""


def preset(name: str, build, *args: Arg, doc: str | None = None, clock_from_lengths: bool = False) -> Builtin:
    """A dotted builtin; ``doc`` replaces the build function's docstring when given."""
    if doc is not None:
        build = _with_doc(build, doc)
    return Builtin(name, tuple(args), build, clock_from_lengths=clock_from_lengths)


def _with_doc(build, doc: str):
    def call(**kwargs):
        return build(**kwargs)

    call.__doc__ = doc
    call.__name__ = getattr(build, "__name__", "preset")
    return call


def arg(name: str, kind: Kind, default=REQUIRED, choices: tuple[str, ...] = (), *,
        empty_ok: bool = False) -> Arg:
    """An argument; whole-number defaults become sympy integers like parsed numbers do."""
    if isinstance(default, int) and not isinstance(default, bool):
        default = sp.Integer(default)
    return Arg(name, kind, default, choices, empty_ok)


def frac(text: str) -> sp.Rational:
    """An exact default written the way the library writes it (``"0.3"``, ``"1e4"``)."""
    return sp.Rational(text)


def number(value, name: str) -> sp.Expr:
    """An argument that decides the *shape* of a schedule must be a number, not a parameter."""
    if not (isinstance(value, sp.Basic) and value.is_number):
        raise ArgumentError(name, f"'{name}' must be a number here, not an expression of "
                                  "parameters (it decides the shape of the schedule)")
    return value


def whole(value, name: str, minimum: int = 1) -> int:
    value = number(value, name)
    if not value.is_integer or value < minimum:
        raise ArgumentError(name, f"'{name}' must be a whole number >= {minimum}, not {value}")
    return int(value)


def positive_steps(value, name: str, allow_zero: bool = False):
    """A count of steps given as a plain number: whole and positive (or >= 0)."""
    if isinstance(value, sp.Basic) and value.is_number:
        if not value.is_integer or value < 0 or (value == 0 and not allow_zero):
            want = "a whole number >= 0" if allow_zero else "a positive whole number"
            raise ArgumentError(name, f"'{name}' must be {want} of steps, not {value}")
    return value


def increasing(values, name: str, strictly: bool = True):
    """Check the order of milestones wherever it is known (parameters may stay symbolic)."""
    for a, b in zip(values, values[1:]):
        gap = b - a
        if gap.is_number and (gap <= 0 if strictly else gap < 0):
            raise ArgumentError(name, f"'{name}' must be increasing, got "
                                      f"[{', '.join(str(v) for v in values)}]")
    return list(values)


def sequential(children: list[Segment], milestones, name: str) -> Segment:
    """Child ``i`` from milestone ``i-1`` to ``i``, each seeing its own local step from 0.

    This is SequentialLR in torch and Cerebras and optax's ``join_schedules``: a
    child is cut (or held) at the next milestone whatever its own length.
    """
    if len(milestones) != len(children) - 1:
        raise ArgumentError("milestones", f"{name} needs one milestone fewer than schedulers: got "
                                          f"{len(children)} schedulers and {len(milestones)} milestones")
    bounds = increasing(milestones, "milestones")
    if bounds and bounds[0].is_number and bounds[0] <= 0:
        raise ArgumentError("milestones", "milestones must be positive step numbers")
    if not bounds:
        return children[0]
    starts = [sp.Integer(0), *bounds]
    pieces = [hold_for(children[0], bounds[0] - starts[0])]
    for i, child in enumerate(children[1:], start=1):
        pieces.append(child if i == len(children) - 1 else hold_for(child, bounds[i] - starts[i]))
    return sequence(*pieces)
