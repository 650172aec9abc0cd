"""A configuration file read into ``.sched`` source (``formats.import_file``): its format named or
guessed, the file read once, bounded, and handed to the format's reader.

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

from pathlib import Path

from ...errors import SchedlangError
from ...limits import STDIN, input_name, read_source_text
from .format import YAML
from .shell_words import one_command


def import_file(path: str | Path, format: str | None = None, style: str = "presets",  # noqa: A002
                options: dict | None = None, *, by_name, guess_format) -> str:
    """Read ``path`` (``-``: standard input) in ``format`` (guessed from the name and the content
    when not given); ``options`` go to readers that take them.  ``by_name`` and ``guess_format`` are
    ``formats``' own, handed over (a module of ``formats`` never imports the package).

    The input is read once, bounded (``limits.read_source``: a file over the limit is refused,
    never cut); a command-line format refuses a file holding several commands."""
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
