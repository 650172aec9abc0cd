"""``schedlang export``: ``.sched`` programs -> other systems' configuration formats.

Which formats can be written is a field of each format's declaration (``Format.writer``, next
to its reader in the format's module).  ``export`` hands the writer its format's own reader,
with which the writer reads its text back, merged into the configuration it is written for
(``common/into.py``), and proves it equal to the original (``common/proof.py``) before returning
it.  Exports are deterministic (same input, same bytes).
"""

from __future__ import annotations

from ..errors import SchedlangError
from ..limits import check_size
from . import find, table


def export(source: str | bytes, filename: str = "<string>", *, format: str = "cerebras-yaml",  # noqa: A002
           params: dict | None = None, verify: bool = True, schedules: list[str] | None = None,
           into=None) -> str:
    """``source`` (.sched text) in another format; ``params`` bind its parameters (export writes numbers).

    ``into`` (a path, or ``common.into.Original``) is the configuration the written keys or flags go
    into, usually the one the file was imported from: the writer writes for that run (Megatron's
    lengths in its unit) and proves its text merged into it.  Without it the proof merges into the
    format's defaults, and the output says so (docs/import_export.md, "Export")."""
    f = find(format) if isinstance(format, str) else None
    if f is None or not f.writer:
        writers = [f.name for f in table() if f.writer]
        raise SchedlangError(f"unknown export format '{format}'", hint="one of " + ", ".join(writers))
    check_size(source, filename)
    from .common.into import original  # lazy: `schedlang check` loads this module, not the formats

    return f.writer(source, filename, params, verify, schedules, read=f.reader, into=original(into))
