"""``schedlang export``: ``.sched`` programs -> other systems' configuration formats.

``cerebras_yaml.export`` writes a ModelZoo ``schedulers:`` block; see that
module for what it accepts.  Exports are deterministic (same input, same
bytes) and are read back and proven equal to the original before they are
returned.
"""

from __future__ import annotations


def _cerebras_yaml(source, filename, params, verify, schedules):
    from .cerebras_yaml_writer import export as export_cerebras

    return export_cerebras(source, filename, params, verify, schedules)


def _composer_yaml(source, filename, params, verify, schedules):
    from .preset_call import export_composer

    return export_composer(source, filename, params, verify, schedules)


def _hf_args(source, filename, params, verify, schedules):
    from .preset_call import export_hf

    return export_hf(source, filename, params, verify, schedules)


#: Every export format: its name -> ``writer(source, filename, params, verify,
#: schedules) -> text``.  One line per format; ``--format`` choices derive from it.
def _deepspeed_json(source, filename, params, verify, schedules):
    from .preset_call import export_deepspeed

    return export_deepspeed(source, filename, params, verify, schedules)


def _megatron_args(source, filename, params, verify, schedules):
    from .preset_call import export_megatron

    return export_megatron(source, filename, params, verify, schedules)


WRITERS = {
    "cerebras-yaml": _cerebras_yaml,
    "composer-yaml": _composer_yaml,
    "hf-args": _hf_args,
    "deepspeed-json": _deepspeed_json,
    "megatron-args": _megatron_args,
}
FORMATS = tuple(WRITERS)


def export(source: str | bytes, filename: str = "<string>", *, format: str = "cerebras-yaml",  # noqa: A002
           params: dict | None = None, verify: bool = True, schedules: list[str] | None = None) -> str:
    """``source`` (.sched text) in another format; ``params`` bind its parameters (export writes numbers)."""
    from ..errors import SchedlangError

    if format not in WRITERS:
        raise SchedlangError(f"unknown export format '{format}'", hint="one of " + ", ".join(FORMATS))
    return WRITERS[format](source, filename, params, verify, schedules)
