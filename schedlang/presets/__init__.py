"""Presets: other libraries' schedulers under their own namespaces (``torch.StepLR`` ...).

Each preset is a ``stdlib.Builtin`` whose name is dotted; a library's schedule
that has no closed form is a ``Rejected`` entry that says why and what to use.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..stdlib import Builtin


@dataclass(frozen=True)
class Rejected:
    name: str
    reason: str


PRESETS: dict[str, Builtin | Rejected] = {}


def register(*entries: Builtin | Rejected) -> None:
    for entry in entries:
        PRESETS[entry.name] = entry


register(
    Rejected("torch.ReduceLROnPlateau",
             "ReduceLROnPlateau changes the lr when a metric stops improving, so its value depends "
             "on training data, not on the step alone; pick a fixed decay such as "
             "torch.StepLR or cosine(...) instead"),
)
