"""``schedlang.importers.import_file``: the name SPEC section 7 gives the Python import.  The
readers live in ``schedlang.formats`` (import from there); this module only keeps the spelled
entry point, with no module aliases under it."""

from .formats import import_file

__all__ = ["import_file"]
