"""``schedlang export``: ``.sched`` programs -> other systems' configuration formats.

Which formats can be written is a column of the one table (``formats.TABLE``, ``Format.writer``):
``cerebras_yaml.export`` writes a ModelZoo ``schedulers:`` block, ``preset_call`` the
formats whose schedule is one preset call (composer-yaml, hf-args, deepspeed-json,
megatron-args).  Exports are deterministic (same input, same bytes) and are read back with the
format's own reader and proven equal to the original before they are returned.
"""

from __future__ import annotations


def export_cerebras_yaml(source, filename, params, verify, schedules):
    from .cerebras_yaml import export as export_cerebras

    return export_cerebras(source, filename, params, verify, schedules)


def export_composer_yaml(source, filename, params, verify, schedules):
    from .preset_call import export_composer

    return export_composer(source, filename, params, verify, schedules)


def export_hf_args(source, filename, params, verify, schedules):
    from .preset_call import export_hf

    return export_hf(source, filename, params, verify, schedules)


def export_deepspeed_json(source, filename, params, verify, schedules):
    from .preset_call import export_deepspeed

    return export_deepspeed(source, filename, params, verify, schedules)


def export_megatron_args(source, filename, params, verify, schedules):
    from .preset_call import export_megatron

    return export_megatron(source, filename, params, verify, schedules)


def _writers() -> dict:
    from . import TABLE

    return {f.name: globals()[f.writer] for f in TABLE if f.writer}


#: Every export format: its name -> ``writer(source, filename, params, verify, schedules) -> text``,
#: derived from ``formats.TABLE``; ``--format`` choices derive from it.
WRITERS = _writers()
FORMATS = tuple(WRITERS)


def export(source: str | bytes, filename: str = "<string>", *, format: str = "cerebras-yaml",  # noqa: A002
           params: dict | None = None, verify: bool = True, schedules: list[str] | None = None) -> str:
    """``source`` (.sched text) in another format; ``params`` bind its parameters (export writes numbers)."""
    from ..errors import SchedlangError
    from ..limits import check_size

    if format not in WRITERS:
        raise SchedlangError(f"unknown export format '{format}'", hint="one of " + ", ".join(FORMATS))
    check_size(source, filename)
    return WRITERS[format](source, filename, params, verify, schedules)
