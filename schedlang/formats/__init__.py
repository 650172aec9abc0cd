"""``schedlang.formats``: every framework's configuration format, one module each that declares
itself (sqlglot's dialect layout): its ``FORMAT`` (``common/format.py``) says its name, the
framework's words for the file, its file names, how to recognise its content, its reader
(config -> ``.sched`` source) and, where the format can say the schedule, its writer
(``schedlang export``).  This package only lists those modules: their order is the guessing
priority and the order ``import --help`` and docs/import_export.md list them.  Adding a format is
writing its module and naming it in ``MODULES`` (docs/import_export.md, "Adding a format").

The modules load on first use (``table``): ``schedlang check`` loads no format, while the
command line's ``--format`` choices and ``import --help`` read the table only when asked
(``NAMES``).

Importers *read data*; none of them evaluates text as code.  Each returns ``.sched`` source
(so the result can be reviewed, edited and committed) that compiles to the same function of
the step as the original, which the tests prove with ``schedlang.equivalent``.
``schedlang.from_python(fn)`` is not an importer: it is a second front end (Python code traced
with a symbolic step, ``schedlang/tracer.py``) and returns a ``Schedule``.

``style="presets"`` (the default) writes the framework's own preset names
(``<framework>.<Class>(...)``); ``style="core"`` (``--lower`` on the command line) writes plain
standard-library calls (``linear``, ``cosine``, ``>>``).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from importlib import import_module
from pathlib import Path

from ..errors import SchedlangError
from ..limits import STDIN, input_name, read_source_text

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
    width = max(len(f.name) for f in table())
    lines = ["formats (--format):"]
    for f in table():
        names = ", ".join(f.suffixes)
        lines.append(f"  {f.name:<{width}}  {f.what} [{names}]" + ("; export too" if f.writer else ""))
    return "\n".join(lines)


def markdown_table() -> str:
    """The formats for docs/import_export.md, from the table (tests/formats/test_common.py keeps the docs
    current: run ``python -m schedlang.formats`` and paste, or let the test say what differs)."""
    rows = ["| format | what | file names | export |", "|---|---|---|---|"]
    for f in table():
        rows.append(f"| `{f.name}` | {f.what} | {', '.join(f'`{s}`' for s in f.suffixes)} | "
                    f"{'yes' if f.writer else 'no'} |")
    return "\n".join(rows)


def import_file(path: str | Path, format: str | None = None, style: str = "presets",  # noqa: A002
                options: dict | None = None) -> str:
    """Read ``path`` (``-``: standard input) in ``format`` (guessed from the name and the content
    when not given); ``options`` go to readers that take them.

    The input is read once, bounded (``limits.read_source``: a file over the limit is refused,
    never cut); a command-line format refuses a file holding several commands."""
    from .common.format import YAML  # lazy: formats load on use (check loads none)
    from .common.shell_words import one_command  # lazy: formats load on use (check loads none)

    path = Path(path) if str(path) != STDIN else path
    if format is not None:
        by_name(format)
    else:
        guess_format(Path(str(path)))  # the name first: an unknown suffix is refused unread
    text = read_source_text(path)
    name = input_name(path)
    fmt = by_name(format or guess_format(Path(str(path)), text))
    if not options:
        result = fmt.reader(text, name, style)
    elif not getattr(fmt.reader, "takes_options", False):
        raise SchedlangError(f"the {fmt.name} format takes no options")
    else:
        result = fmt.reader(text, name, style, options=dict(options))
    if fmt.shell and not str(path).lower().endswith(YAML):
        # after the reader, so that its own error at a flag comes first
        one_command(text, name, fmt.schedule_flags)
    return result


def guess_format(path: Path, text: str | None = None) -> str:
    """The format of ``path``: a format that claims its whole name (``args.yaml``), else the
    formats whose suffixes fit its name, and of those, when ``text`` is given, the first in
    ``MODULES`` order that recognises it (``Format.recognizes``), or the format that falls back on
    the suffix; a command line (no fallback) must fit exactly one.  A name no format takes, or
    content that fits none or several of the command-line formats its name allows, is an error
    whose hint names the formats that fit."""
    for f in table():
        if path.name in f.names:
            return f.name
    if str(path) == STDIN:
        raise SchedlangError("standard input has no name to tell its format by",
                             hint="pass --format " + " or --format ".join(NAMES))
    suffix = path.suffix.lower()
    fitting = [f for f in table() if suffix in f.suffixes]
    if not fitting:
        raise SchedlangError(f"cannot tell the format of {input_name(path)} from its name",
                             hint="pass --format " + " or --format ".join(NAMES))
    if text is None:
        return fitting[0].name
    read = text
    if suffix == ".py":  # a script is guessed by what it calls, in its own modules too
        from .common.pyconfig.syntax import with_modules  # lazy: formats load on use (check loads none)

        read = with_modules(path, text)
    found = [f for f in fitting if f.recognizes(read, suffix)]
    fallback = [f for f in fitting if suffix in f.fallback]
    if fallback:  # a document: its keys are tried in priority order
        return (found or fallback)[0].name
    if len(found) == 1 or found and suffix == ".py":  # a script: by what it calls, in priority order
        return found[0].name
    if len(fitting) == 1:  # the one format of this suffix: its reader says what is wrong
        return fitting[0].name
    names = " or ".join(f"--format {f.name}" for f in (found or fitting))
    for f in fitting if not found else ():  # a format may say why: a scheduler it cannot follow
        if f.unrecognized is not None:
            f.unrecognized(text, input_name(path))
    if found:
        raise SchedlangError(f"{input_name(path)} could be any of " + ", ".join(f.name for f in found),
                             hint=f"pass {names}")
    raise SchedlangError(f"{input_name(path)} looks like none of the formats of a {suffix} file "
                         f"({', '.join(f.name for f in fitting)})", hint=f"pass {names}")
