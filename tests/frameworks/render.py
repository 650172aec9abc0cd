"""Framework case rows rendered as schedlang source, from the same dict the real call gets."""

from __future__ import annotations


def sched_args(kwargs: dict) -> str:
    """Keyword arguments as schedlang source: strings double-quoted, numbers as written."""
    def value(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        return f'"{v}"' if isinstance(v, str) else repr(v)
    return ", ".join(f"{k}={value(v)}" for k, v in kwargs.items())
