"""``python -m schedlang.formats``: the table of formats as docs/import_export.md shows it."""

from . import markdown_table

print(markdown_table())
