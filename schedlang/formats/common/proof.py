"""The one read-back-and-prove step of every export.

A writer hands ``proven`` its own format's reader (``Format.reader``, given to it by
``formats.export``), so the step needs no table of formats and no format module imports another
to prove its output: the import graph of ``formats`` has no cycle.
"""

from __future__ import annotations

from collections.abc import Callable

from ...errors import SchedlangError
from ...program import compile as compile_source
from ...syntax import ir
from ...syntax.parser import parse


def proven(original, text: str, read: Callable, filename: str, *, params: dict | None = None,
           schedules: list[str] | None = None, style: str = "presets", rtol=0, rebind: dict | None = None,
           strict: bool = True, into: str | None = None, runs: bool = True) -> None:
    """``text`` read back with ``read`` (the format's own reader), compiled with the ``params`` it
    declares, and each schedule it carries (of ``schedules``, if given) proven equal to
    ``original``'s (again with ``rebind`` bound in both, for a group parameter's other values),
    and, where the format states the run's length (``runs``), the run read back equal to
    ``original``'s (SPEC §14: exports write ``run`` back).
    A difference (and, ``strict``, an undecided proof) is an internal error: the writer wrote
    something else.  ``into`` names the configuration ``text`` is the export merged into
    (``common/into.py``): a refusal of that merge on import is the reason the export cannot be
    written for that run."""
    from ...verify import equivalent  # lazy: numpy (verify.float_scan)

    label = into or f"{filename} (exported)"  # the original's name: its suffix picks the reader
    try:
        back_source = read(text, label, style)
    except SchedlangError as exc:
        if into is None:
            raise
        raise SchedlangError(f"the export cannot be written into {into}: merged into it, the config "
                             f"does not import: {exc.message}", exc.span, hint=exc.hint) from None
    declared = {s.name for s in parse(back_source).statements if isinstance(s, ir.Param)}
    back = compile_source(back_source, params={k: v for k, v in (params or {}).items() if k in declared})
    if runs and original.run_length is not None and back.run != original.run:
        raise SchedlangError(f"the run is {original.run} steps, but the written configuration trains "
                             f"{back.run}", original.run_length.span,
                             hint="no length this format can state trains this run with this schedule "
                                  "(its scheduler's length is tied to the run's): make the schedule end "
                                  "where the framework's does, or drop `run = ...` to export the "
                                  "schedule alone")
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
