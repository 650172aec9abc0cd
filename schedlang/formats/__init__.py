"""``schedlang.formats``: every framework's configuration format, one module each that declares
itself (sqlglot's dialect layout): its ``FORMAT`` (``common/format.py``) says its name, the
framework's words for the file, its file names, how to recognise its content, its reader
(config -> ``.sched`` source) and, where the format can say the schedule, its writer
(``schedlang export``).  This package only lists those modules: their order is the guessing
priority and the order ``import --help`` and docs/import_export.md list them.  Adding a format is
writing its module and naming it in ``MODULES`` (docs/import_export.md, "Adding a format").

The modules load on first use (``table``): ``schedlang check`` loads no format, while the
command line's ``--format`` choices and ``import --help`` read the table only when asked
(``NAMES``); the files are read by ``common/reading.py``, guessed by ``common/guess.py``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from importlib import import_module
from pathlib import Path

from ..errors import SchedlangError

#: The format modules, in guessing priority: formats sharing a suffix are asked in this order
#: whether they recognise a file (a document's keys are tried in order; a command line must
#: name one launcher).
MODULES = ("megatron_args", "cerebras_yaml", "composer_yaml", "timm_args", "hf_args", "mmengine_config",
           "keras_json", "optax_script", "olmo_core_json", "deepspeed_json", "sambaflow", "torchtitan_toml")


@functools.cache
def _declared(module: str):
    """The ``Format`` that ``module`` declares (loading it); one that declares none is a mistake of
    whoever listed it."""
    from .common.format import Format  # lazy: formats load on use (check loads none)

    declared = getattr(import_module(f".{module}", __name__), "FORMAT", None)
    if not isinstance(declared, Format):
        raise TypeError(f"schedlang/formats/{module}.py is listed in MODULES but declares no "
                        "FORMAT = Format(...) (docs/import_export.md, 'Adding a format')")
    return declared


@functools.cache
def table() -> tuple:
    """Every format's declaration (``Format``), from its module, in ``MODULES`` order; a name
    declared twice is a mistake of whoever added it."""
    formats = []
    for module in MODULES:
        declared = _declared(module)
        if any(f.name == declared.name for f in formats):
            raise TypeError(f"two modules declare the format '{declared.name}'")
        formats.append(declared)
    return tuple(formats)


def find(name: str):
    """The format called ``name`` (None if none is), loading the modules in ``MODULES`` order only
    up to its own: an export in the first listed format loads one format module, not all."""
    for module in MODULES:
        declared = _declared(module)
        if declared.name == name:
            return declared
    return None


def by_name(name: str):
    """The format called ``name``; an unknown name is an error naming the formats."""
    found = find(name)
    if found is None:
        raise SchedlangError(f"unknown import format '{name}'", hint="one of " + ", ".join(NAMES))
    return found


class _Names(Sequence):
    """The formats' names (of those with a writer, ``writers``), read from the modules only when
    asked: what argparse's ``choices`` hold, so building the command line loads no format."""

    def __init__(self, writers: bool = False):
        self.writers = writers

    def _names(self) -> tuple[str, ...]:
        return tuple(f.name for f in table() if f.writer or not self.writers)

    def __getitem__(self, index):
        return self._names()[index]

    def __contains__(self, name) -> bool:  # argparse's check of a choice: load up to its module
        found = find(name) if isinstance(name, str) else None
        return found is not None and (bool(found.writer) or not self.writers)

    def __len__(self) -> int:
        return len(self._names())

    def __repr__(self) -> str:
        return repr(self._names())


#: Every format's name (``--format`` choices of ``import``); ``EXPORTS``: those that export.
NAMES = _Names()
EXPORTS = _Names(writers=True)


def __getattr__(name: str):
    """``TABLE``, ``READERS``, ``FORMATS`` and each format's reader (``from_<name>``, ``-`` as ``_``, named
    after its format) on first use: built from the modules, which load then."""
    if name == "TABLE":
        return table()
    if name == "READERS":
        return {f.name: f.reader for f in table()}
    if name == "FORMATS":
        return tuple(NAMES)
    for f in table() if name.startswith("from_") else ():
        if f.reader.__name__ == name:
            return f.reader
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def help_text() -> str:
    """The formats for ``schedlang import --help``: one line each, from the table."""
    from .common import listing  # lazy: formats load on use (check loads none)

    return listing.help_text(table())


def markdown_table() -> str:
    """The formats for docs/import_export.md (``python -m schedlang.formats``), from the table."""
    from .common import listing  # lazy: formats load on use (check loads none)

    return listing.markdown_table(table())


def import_file(path: str | Path, format: str | None = None, style: str = "presets",  # noqa: A002
                options: dict | None = None) -> str:
    """Read ``path`` (``-``: standard input) in ``format``, guessed when not given, as ``.sched``
    source (``common/reading.py``); ``options`` go to readers that take them."""
    from .common import reading  # lazy: formats load on use (check loads none)

    return reading.import_file(path, format, style, options, by_name=by_name, guess_format=guess_format)


def guess_format(path: Path, text: str | None = None) -> str:
    """The format of ``path``, from its name and, when given, ``text`` (``common/guess.py``)."""
    from .common import guess  # lazy: formats load on use (check loads none)

    return guess.guess_format(table(), path, text)
