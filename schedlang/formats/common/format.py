"""The declaration every format module makes (``FORMAT = Format(...)``) and the path every reader
takes through it.

A format is one module of ``schedlang.formats`` that ends with its ``Format``: its name, the
framework's words for the file, the file names it comes in, how to recognise its content, its
reader and, where the format can say the schedule, its writer.  ``formats/__init__.py`` lists
the modules and builds the table, the guesser and ``import_file`` from these declarations, so
nothing about a format is written outside its module (docs/import_export.md, "Adding a format").

Every reader goes the same way (``reader``): the style checked, bounded input
(``limits.check_size``), the format's tree lowered as it is (``lowered``: a node built with the
configuration's span reports there), and an error in expression text a format still writes moved
to the configuration's own line and column (``source_text`` remembers every value it wrote).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from dataclasses import dataclass

from ...errors import SchedlangError
from ...limits import check_size
from ...program import compile_parsed
from ...syntax import ir, unparse
from ...syntax.fmt import format_source
from .source_text import GENERATED, imported_error

STYLES = ("presets", "core")
#: The file names of a command line or shell script (one command per file).
SHELL = (".sh", ".bash", ".txt", ".args", ".flags", ".cmd")
YAML = (".yaml", ".yml")


@dataclass(frozen=True)
class Format:
    """One configuration format: what the command line, ``import --help``, the guesser and
    docs/import_export.md all read (nothing about a format is written anywhere else)."""

    name: str
    what: str  # the framework's own words for the file
    suffixes: tuple[str, ...]  # the file names it comes in
    #: ``recognizes(text, suffix)``: is this text (of a file with that suffix) this format?
    #: Formats sharing a suffix are asked in the order ``formats/__init__.py`` lists them.
    recognizes: Callable[[str, str], bool]
    reader: Callable  # ``reader(text, filename, style[, options]) -> .sched source``
    #: ``writer(source, filename, params, verify, schedules, read, into) -> text``; ``read`` is this
    #: format's own reader, which the writer hands to ``proof.proven``; ``into`` the configuration
    #: (``into.Original``, or None) the text is written for and proven merged into.
    writer: Callable | None = None
    #: The suffixes of documents that are this format when no format recognizes them (a YAML
    #: file in the legacy ModelZoo layout): a document's keys are tried in priority order, while
    #: a command line must name exactly one launcher.
    fallback: tuple[str, ...] = ()
    names: tuple[str, ...] = ()  # whole file names that are this format (``args.yaml``: timm's)
    #: The flags that make a launch line a schedule of this command-line format
    #: (``shell_words.one_command``); None for the formats that are not command lines.
    schedule_flags: re.Pattern | None = None
    #: ``unrecognized(text, filename)``: what the format says of a file of its suffix that no
    #: format recognizes, before the guesser's own error (a training script whose scheduler is a
    #: framework's own call is refused at that call); None to say nothing.
    unrecognized: Callable[[str, str], None] | None = None

    @property
    def shell(self) -> bool:
        """A command line or shell script (one command per file)."""
        return self.schedule_flags is not None


def reader(name: str, read: Callable | None, source: Callable, *, takes_options: bool = False):
    """The public reader of a format whose module has ``read(text, filename)`` and ``source(config,
    filename, style)``; with ``takes_options`` (and no ``read``) its ``source(text, filename, style,
    options)`` reads the text itself and takes ``import --option KEY=VALUE``."""
    def read_format(text: str, filename: str = "<string>", style: str = "presets", options=None) -> str:
        check_style(style)
        with importing(text, filename):
            if takes_options:
                return checked(source(text, filename, style, options), filename)
            return checked(source(read(text, filename), filename, style), filename)

    read_format.__name__ = "from_" + name.replace("-", "_")
    read_format.__doc__ = f"``.sched`` source for a ``{name}`` configuration."
    read_format.takes_options = takes_options
    return read_format


@contextlib.contextmanager
def importing(text: str, filename: str):
    """The shared path of every reader: the text within the size limit (text given to the API as
    well as files); an error at a part of the tree no configuration span was given for named as
    the configuration's refusal."""
    check_size(text, filename)
    try:
        yield
    except SchedlangError as exc:
        raise imported_error(exc, filename) from None


def checked(generated: ir.Module, filename: str) -> str:
    """What every import returns: the format's tree, lowered as it is (``lowered``), printed by
    ``unparse`` in the canonical layout (``schedlang fmt``'s), so ``import``'s output, to standard
    output or ``-o``, passes ``fmt --check`` as written."""
    if not isinstance(generated, ir.Module):  # a format written against the old recipe: text
        raise TypeError(f"a format's source returns an ir.Module (statements.module), not "
                        f"{type(generated).__name__}")
    lowered(generated, filename)
    return format_source(unparse.module(generated), GENERATED)


def lowered(tree: ir.Module, filename: str) -> None:
    """The format's tree compiled as it is: an error at a node that carries the configuration's
    span is that span's (a preset's numbers past the largest step too: lowering refuses them at
    the argument, ``steps.refuse_call_past_steps``); one at a part the format made up itself is
    the configuration's refusal (``source_text.imported_error``)."""
    try:
        compile_parsed(tree)
    except SchedlangError as exc:
        raise imported_error(exc, filename) from None


def check_style(style: str) -> None:
    if style not in STYLES:
        raise SchedlangError(f"unknown import style '{style}'", hint="one of " + ", ".join(STYLES))
