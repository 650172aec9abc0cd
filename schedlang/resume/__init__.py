"""Does a resumed run continue the schedule it was checkpointed in? (SPEC §10, ``docs/resume.md``)

``state`` reads a checkpoint's scheduler state as data; ``check`` recovers the schedule that
wrote it and proves the new one equal from the resume step.
May import: ``formats``, ``verify``, ``program`` and what they may.
"""

from .check import ResumeVerdict, resume_check

__all__ = ["ResumeVerdict", "resume_check"]
