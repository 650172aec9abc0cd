"""The formats' table as ``import --help`` and docs/import_export.md show it (``formats.help_text``,
``formats.markdown_table``), built from the declarations ``formats.table()`` loads and hands over."""

from __future__ import annotations


def help_text(formats: tuple) -> str:
    """The formats for ``schedlang import --help``: one line each, from the table."""
    width = max(len(f.name) for f in formats)
    lines = ["formats (--format):"]
    for f in formats:
        names = ", ".join(f.suffixes)
        lines.append(f"  {f.name:<{width}}  {f.what} [{names}]" + ("; export too" if f.writer else ""))
    return "\n".join(lines)


def markdown_table(formats: tuple) -> str:
    """The formats for docs/import_export.md, from the table (tests/formats/test_common.py keeps the docs
    current: run ``python -m schedlang.formats`` and paste, or let the test say what differs)."""
    rows = ["| format | what | file names | export |", "|---|---|---|---|"]
    for f in formats:
        rows.append(f"| `{f.name}` | {f.what} | {', '.join(f'`{s}`' for s in f.suffixes)} | "
                    f"{'yes' if f.writer else 'no'} |")
    return "\n".join(rows)
