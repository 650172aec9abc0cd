"""Cooldown branches of a trunk, with their certificate (SPEC §14, ``docs/runs.md``).

``certificate`` writes the branch of a trunk file (``trunk for C >> cooldown(shape, N, F)``
with ``run = C + N``) and proves each claim of its certificate; ``configs`` writes it as the
configuration a framework resumes with, proven equal from the branch point; ``resume``
judges a resumed run that leaves its original schedule on purpose (``resume --branch``).
May import: ``resume`` and what it may.
"""

from .certificate import Branch, Claim, branch

__all__ = ["Branch", "Claim", "branch"]
