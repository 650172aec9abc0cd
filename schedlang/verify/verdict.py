"""What ``equivalent`` answers: a ``Verdict`` (equivalent, different or unknown) and, for
different, the ``Counterexample``.  Its own module because every stage of the prover makes
verdicts and ``schedlang.verify`` exports them (SPEC §5: ``v.counterexample``)."""

from __future__ import annotations

from dataclasses import dataclass, field

EQUIVALENT, DIFFERENT, UNKNOWN = "equivalent", "different", "unknown"


@dataclass(frozen=True)
class Counterexample:
    """A step where the two schedules provably differ (``params``: values chosen for free ones)."""

    step: int
    a: float
    b: float
    params: dict = field(default_factory=dict)
    a_exact: str | None = None
    b_exact: str | None = None
    earliest: bool = True  # False when some earlier step could be neither proven equal nor different
    difference: str | None = None  # a - b to 3 digits (floats may print the same)

    def __str__(self) -> str:
        where = ", ".join(f"{k} = {v}" for k, v in self.params.items())
        return (f"step {self.step}{f' (with {where})' if where else ''}: "
                f"{_shown(self.a, self.a_exact)} vs {_shown(self.b, self.b_exact)}"
                + (f" (a - b = {self.difference})" if self.a == self.b and self.difference else ""))


def _shown(value: float, exact: str | None) -> str:
    """A float that tells two close values apart; the exact fraction when it is short."""
    text = repr(value)
    if exact is not None and "/" in exact and len(exact) <= 24:
        text += f" (= {exact})"
    return text


@dataclass(frozen=True)
class Verdict:
    """``equivalent`` / ``different`` / ``unknown``; truthy only when equivalent."""

    status: str
    method: str | None = None
    counterexample: Counterexample | None = None
    reason: str | None = None

    def __bool__(self) -> bool:
        return self.status == EQUIVALENT

    @property
    def equivalent(self) -> bool:
        return self.status == EQUIVALENT

    @property
    def different(self) -> bool:
        return self.status == DIFFERENT

    @property
    def unknown(self) -> bool:
        return self.status == UNKNOWN

    def __str__(self) -> str:
        if self.status == EQUIVALENT:
            return f"equivalent (proven: {self.method})"
        if self.status == DIFFERENT:
            return f"different at {self.counterexample} (found: {self.method})"
        return f"unknown: {self.reason}"

