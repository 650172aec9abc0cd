"""Which format a file is in (``formats.guess_format``), from its name and, when read, its content:
``Format.names``, ``Format.suffixes``, ``Format.recognizes`` and ``Format.fallback``, asked in
``formats.MODULES`` order."""

from __future__ import annotations

from pathlib import Path

from ...errors import SchedlangError
from ...limits import STDIN, input_name


def guess_format(formats: tuple, path: Path, text: str | None = None) -> str:
    """The format of ``path`` among ``formats`` (``formats.table()``): a format that claims its whole
    name (``args.yaml``), else the formats whose suffixes fit its name, and of those, when ``text``
    is given, the first in ``MODULES`` order that recognises it (``Format.recognizes``), or the
    format that falls back on the suffix; a command line (no fallback) must fit exactly one.  A name
    no format takes, or content that fits none or several of the command-line formats its name
    allows, is an error whose hint names the formats that fit."""
    for f in formats:
        if path.name in f.names:
            return f.name
    if str(path) == STDIN:
        raise SchedlangError("standard input has no name to tell its format by",
                             hint="pass --format " + " or --format ".join(f.name for f in formats))
    suffix = path.suffix.lower()
    fitting = [f for f in formats if suffix in f.suffixes]
    if not fitting:
        raise SchedlangError(f"cannot tell the format of {input_name(path)} from its name",
                             hint="pass --format " + " or --format ".join(f.name for f in formats))
    if text is None:
        return fitting[0].name
    read = _read(path, suffix, text)
    found = [f for f in fitting if f.recognizes(read, suffix)]
    fallback = [f for f in fitting if suffix in f.fallback]
    if fallback:  # a document: its keys are tried in priority order
        return (found or fallback)[0].name
    if len(found) == 1 or found and suffix == ".py":  # a script: by what it calls, in priority order
        return found[0].name
    if len(fitting) == 1:  # the one format of this suffix: its reader says what is wrong
        return fitting[0].name
    raise _undecided(path, suffix, text, fitting, found)


def _read(path: Path, suffix: str, text: str) -> str:
    """What the recognizers read: the text, and for a script the text of its own modules too (a
    script is guessed by what it calls)."""
    if suffix != ".py":
        return text
    from .pyconfig.syntax import with_modules  # lazy: formats load on use (check loads none)

    return with_modules(path, text)


def _undecided(path: Path, suffix: str, text: str, fitting: list, found: list) -> SchedlangError:
    """The error for content that fits none (``found`` empty) or several of the formats its name
    allows, ``fitting``; a format that can say why it does not fit raises its own first."""
    names = " or ".join(f"--format {f.name}" for f in (found or fitting))
    for f in fitting if not found else ():  # a format may say why: a scheduler it cannot follow
        if f.unrecognized is not None:
            f.unrecognized(text, input_name(path))
    if found:
        return SchedlangError(f"{input_name(path)} could be any of " + ", ".join(f.name for f in found),
                              hint=f"pass {names}")
    return SchedlangError(f"{input_name(path)} looks like none of the formats of a {suffix} file "
                          f"({', '.join(f.name for f in fitting)})", hint=f"pass {names}")
