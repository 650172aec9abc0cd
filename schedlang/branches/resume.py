"""``schedlang resume STATE NEW --was OLD --branch``: a resumed run that leaves OLD on purpose.

``resume`` alone asks NEW to continue OLD exactly from the checkpoint.  A cooldown branched
from a stable-phase checkpoint does not, on purpose; what must hold is that it leaves OLD only
after the checkpoint and with no jump.  NEW's *branch point* is the start of its segment (its
last breakpoint) at or before the first step where it differs from OLD:

* NEW equals OLD at every step from the checkpoint up to (and at) the branch point, and the
  branch point is at or after the checkpoint: accepted (exit 0), the segment starting there
  takes NEW away from OLD continuously (``trunk for C >> cooldown(...)``);
* NEW's segment starts at the first differing step itself (``trunk for C >> constant(F)``):
  a jump there, named with both values (exit 1);
* NEW's segment starts before the checkpoint: it left OLD before the run resumed, so the
  resumed run jumps at the checkpoint from OLD's curve to NEW's (exit 1).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..resume.check import ResumeVerdict, resume_check


@dataclass(frozen=True)
class BranchVerdict:
    """``resume --branch``'s answer: ``status`` ``"branch"`` (accepted), ``"continues"`` (NEW
    does not leave OLD at all: accepted), ``"jump"`` or ``"unknown"``; ``branch_point`` (the step
    NEW's departing segment starts), ``jump_step``, and the resume verdict it is read from."""

    status: str
    resume: ResumeVerdict
    branch_point: int | None = None
    jump_step: int | None = None
    old: float | None = None
    new: float | None = None
    reason: str | None = None

    @property
    def accepted(self) -> bool:
        return self.status in ("branch", "continues")


def resume_branch(state_path, new, was=None, params=None) -> BranchVerdict:
    """Whether ``new`` leaves the run checkpointed in ``state_path`` only after the checkpoint,
    with no jump (``resume_check``'s arguments)."""
    verdict = resume_check(state_path, new, was=was, params=params)
    if verdict.equivalent:
        return BranchVerdict("continues", verdict)
    if verdict.unknown:
        return BranchVerdict("unknown", verdict, reason=verdict.reason)
    ce = verdict.counterexample
    if not ce.earliest:
        return BranchVerdict("unknown", verdict, reason=f"a difference at step {ce.step}, but an earlier "
                                                         "step could be neither proven equal nor different")
    starts = [int(b) for b in verdict.run_lr.breakpoints if b.is_Integer and int(b) <= ce.step]
    point = max(starts, default=0)
    if point == ce.step:
        return BranchVerdict("jump", verdict, point, ce.step, ce.a, ce.b,
                             f"NEW's segment starting at step {ce.step} jumps from OLD's {ce.a!r} "
                             f"to {ce.b!r}")
    if point < verdict.step:
        return BranchVerdict("jump", verdict, point, verdict.step, ce.a, ce.b,
                             f"NEW leaves OLD at step {point}, before the checkpoint: the resumed run "
                             f"jumps at step {verdict.step} from OLD's {ce.a!r} to NEW's {ce.b!r}")
    return BranchVerdict("branch", verdict, point)


__all__ = ["BranchVerdict", "resume_branch"]
