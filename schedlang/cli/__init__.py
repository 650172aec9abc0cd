"""``schedlang`` on the command line, and what it prints: the subcommands (``commands``), their
argument carets, output files, ``--json`` documents, tables, plots, progress, highlighting,
the generated reference pages and the docs site's playground.  May import everything.
"""


def main(argv: list[str] | None = None) -> int:
    """The ``schedlang`` command (``pyproject.toml``'s entry point); the commands module is
    imported on the first call, so importing ``schedlang.cli.playground`` stays light."""
    from .commands import main as run

    return run(argv)
