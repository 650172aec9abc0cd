"""``schedlang`` on the command line, and what it prints: the subcommands (``commands``), their
argument carets, output files, ``--json`` documents, tables, plots, progress, highlighting,
the generated reference pages and the docs site's playground.  May import everything.
"""

from .commands import main

__all__ = ["main"]  # the ``schedlang`` command (``pyproject.toml``'s entry point)
