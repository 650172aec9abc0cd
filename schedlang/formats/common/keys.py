"""The keys a content recognizer looks at, read as text (a file is parsed once, by its reader):
a format's ``recognizes`` asks these, and each format knows only its own keys."""

from __future__ import annotations

import re

_JSON_KEYS = re.compile(r'"([A-Za-z_][\w-]*)"\s*:')
_YAML_TOP = re.compile(r"^([A-Za-z_][\w-]*)[ \t]*:", re.MULTILINE)
_YAML_NESTED = re.compile(r"^(?:[ \t]*-[ \t]+|[ \t]+)([A-Za-z_][\w-]*)[ \t]*:", re.MULTILINE)


def json_keys(text: str) -> set[str]:
    """Every key of a JSON text, at any depth."""
    return set(_JSON_KEYS.findall(text))


def yaml_keys(text: str) -> tuple[set[str], set[str]]:
    """A YAML text's top-level keys and its nested ones (indented, or in a list item)."""
    return set(_YAML_TOP.findall(text)), set(_YAML_NESTED.findall(text))
