"""Text and tree: the grammar's parser, the syntax tree (``ir``) and ``fmt``'s layout engine.

Nothing here knows what a schedule means; a ``.sched`` text becomes an ``ir.Module`` whose
nodes carry spans, and ``fmt`` lays a parse tree out again.  May import: ``errors``, ``limits``.
"""

import sys as _sys


def _load_lark() -> None:
    """Import lark with the third-party ``regex`` module hidden, when neither is loaded yet.

    lark imports ``regex`` whenever it is installed (about 10-18 ms of a one-line ``schedlang
    check``, issue 39 item 17) and uses it only for ``Lark(regex=True)`` and ``\\p{...}``
    character classes, which the grammar has none of (``tables.py``: ``'regex': False``).  A
    ``None`` entry in ``sys.modules`` makes ``import regex`` raise ``ImportError`` (lark's own
    fallback to ``re``); the entry is removed once lark is loaded, so any later ``import regex``
    (a tokenizer's) finds the real module.
    """
    if "lark" in _sys.modules or "regex" in _sys.modules:
        return
    _sys.modules["regex"] = None  # type: ignore[assignment]
    try:
        import lark  # noqa: F401 - lazy: loaded here once, with regex hidden (see above)
    finally:
        if _sys.modules.get("regex", False) is None:
            del _sys.modules["regex"]


_load_lark()
