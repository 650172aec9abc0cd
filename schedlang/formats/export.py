"""``schedlang export``: ``.sched`` programs -> other systems' configuration formats.

Which formats can be written is a column of the one table (``formats.TABLE``, ``Format.writer``):
``cerebras_yaml.export`` writes a ModelZoo ``schedulers:`` block, ``preset_call`` the
formats whose schedule is one preset call (composer-yaml, hf-args, deepspeed-json,
megatron-args).  Exports are deterministic (same input, same bytes) and are read back with the
format's own reader and proven equal to the original before they are returned.
"""

from __future__ import annotations

from ..errors import SchedlangError
from ..limits import check_size
from ..program import compile as compile_source
from ..syntax import ir
from ..syntax.parser import parse
from . import READERS, TABLE


def export_cerebras_yaml(source, filename, params, verify, schedules):
    from .cerebras_yaml import export as export_cerebras  # lazy: a format loads on use

    return export_cerebras(source, filename, params, verify, schedules)


def export_composer_yaml(source, filename, params, verify, schedules):
    from .preset_call import export_composer  # lazy: a format loads on use

    return export_composer(source, filename, params, verify, schedules)


def export_hf_args(source, filename, params, verify, schedules):
    from .preset_call import export_hf  # lazy: a format loads on use

    return export_hf(source, filename, params, verify, schedules)


def export_deepspeed_json(source, filename, params, verify, schedules):
    from .preset_call import export_deepspeed  # lazy: a format loads on use

    return export_deepspeed(source, filename, params, verify, schedules)


def export_megatron_args(source, filename, params, verify, schedules):
    from .preset_call import export_megatron  # lazy: a format loads on use

    return export_megatron(source, filename, params, verify, schedules)


def proven(original, text: str, fmt: str, filename: str, *, params: dict | None = None,
           schedules: list[str] | None = None, style: str = "presets", rtol=0, rebind: dict | None = None,
           strict: bool = True) -> None:
    """The one read-back-and-prove step of every export: ``text`` read back with the format's own
    reader (``formats.READERS[fmt]``), compiled with the ``params`` it declares, and each schedule
    it carries (of ``schedules``, if given) proven equal to ``original``'s (again with ``rebind``
    bound in both, for a group parameter's other values).  A difference (and, ``strict``, an
    undecided proof) is an internal error: the writer wrote something else."""
    from ..verify import equivalent  # lazy: numpy (verify.float_scan)

    back_source = READERS[fmt](text, f"{filename} (exported)", style)
    declared = {s.name for s in parse(back_source).statements if isinstance(s, ir.Param)}
    back = compile_source(back_source, params={k: v for k, v in (params or {}).items() if k in declared})
    pairs = [(original, back)]
    if rebind:
        pairs.append((original.rebind(rebind), back.rebind(rebind)))
    for first, exported in pairs:
        for name, schedule in first.schedules.items():
            if (schedules and name not in schedules) or name not in exported.schedules:
                continue
            verdict = equivalent(schedule, exported[name], rtol=rtol)
            if verdict.different or (strict and not verdict):
                where = f"at {verdict.counterexample}" if verdict.different else f"({verdict.method})"
                raise SchedlangError(f"internal error: the export of '{name}' differs from the original "
                                     f"{where}", schedule.span, hint="please report this with the file")


def _writers() -> dict:
    return {f.name: globals()[f.writer] for f in TABLE if f.writer}


#: Every export format: its name -> ``writer(source, filename, params, verify, schedules) -> text``,
#: derived from ``formats.TABLE``; ``--format`` choices derive from it.
WRITERS = _writers()
FORMATS = tuple(WRITERS)


def export(source: str | bytes, filename: str = "<string>", *, format: str = "cerebras-yaml",  # noqa: A002
           params: dict | None = None, verify: bool = True, schedules: list[str] | None = None) -> str:
    """``source`` (.sched text) in another format; ``params`` bind its parameters (export writes numbers)."""
    if format not in WRITERS:
        raise SchedlangError(f"unknown export format '{format}'", hint="one of " + ", ".join(FORMATS))
    check_size(source, filename)
    return WRITERS[format](source, filename, params, verify, schedules)
