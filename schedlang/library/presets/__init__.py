"""Presets: other libraries' schedulers under their own namespaces (``torch.StepLR`` ...).

Each preset is a ``stdlib.Builtin`` whose name is dotted; a library's schedule
that has no closed form is a ``Rejected`` entry that says why and what to use.
One module per library holds its presets (``PRESETS``) and refusals
(``REJECTED``); ``docs/presets.md`` lists them with their anchors.
"""

from __future__ import annotations

from importlib import import_module

from ..stdlib import Builtin
from ._common import Rejected

PRESETS: dict[str, Builtin | Rejected] = {}

#: Namespaces in the order the docs list them.
LIBRARIES = ("cerebras", "torch", "composer", "hf", "sambaflow", "optax", "timm", "keras", "megatron",
             "deepspeed", "torchtitan", "mmengine", "olmo_core")


def register(*entries: Builtin | Rejected) -> None:
    for entry in entries:
        if entry.name in PRESETS:
            raise ValueError(f"preset {entry.name} registered twice")
        PRESETS[entry.name] = entry


def _load() -> None:
    for library in LIBRARIES:
        module = import_module(f".{library}", __name__)
        register(*module.PRESETS, *getattr(module, "REJECTED", ()))


def namespace(library: str) -> dict[str, Builtin | Rejected]:
    """The presets of one library, in registration order."""
    return {name: p for name, p in PRESETS.items() if name.split(".", 1)[0] == library}


_load()

__all__ = ["LIBRARIES", "PRESETS", "Rejected", "namespace", "register"]
