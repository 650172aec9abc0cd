"""The configuration an export is merged into (``schedlang export --into ORIGINAL``).

An export is a claim about a run, and a run is the whole configuration: the flags or keys a
writer writes mean what they mean only next to the rest of it (Megatron-LM's iteration lengths
are scaled by the command's ``--global-batch-size``; an HF ``warmup_ratio`` left in the original
overrides a warmup the export leaves out).  So every writer proves its text *merged*: into the
original it is given (``Original``), or, without one, into the format's defaults, which its output
names.  Each writer owns its merge rule (which keys it replaces, which of the original's it
removes because they belong to the schedule it states in full); this module holds what they share:
the original, read once and bounded, and the text edits by span.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ...errors import SchedlangError, Span
from ...limits import check_size


@dataclass(frozen=True)
class Original:
    """The text and name of the configuration an export is merged into."""

    text: str
    filename: str


def original(into) -> Original | None:
    """``into`` as an ``Original``: a path (str or Path), an ``Original``, or None."""
    if into is None or isinstance(into, Original):
        return into
    path = Path(into)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SchedlangError(f"cannot read the configuration to export into, {path}: {exc.strerror}",
                             hint="--into names the config the schedule was imported from") from None
    check_size(data, str(path))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise SchedlangError(f"{path} is not UTF-8 text", hint="--into names a config file") from None
    return Original(text, str(path))


def offset(text: str, line: int, column: int) -> int:
    """The index in ``text`` of 1-based ``line`` and ``column``."""
    lines = text.splitlines(keepends=True)
    return sum(len(x) for x in lines[:line - 1]) + column - 1


def blanked(text: str, spans: list[tuple[Span, Span]]) -> str:
    """``text`` with each region from the start of a pair's first span to the end of its second
    replaced by spaces (line breaks kept), so every other line and column stays where it was."""
    chars = list(text)
    for first, last in spans:
        start = offset(text, first.line, first.column)
        end = offset(text, last.end_line, last.end_column)
        for i in range(start, max(start, end)):
            if chars[i] not in "\r\n":
                chars[i] = " "
    return "".join(chars)


def where(span: Span | None) -> str:
    """``line:column`` of a span in its file, for the output's comments."""
    return f"{span.line}:{span.column}" if span is not None else "?"


def document(into: Original) -> dict:
    """The original JSON or YAML document as data (YAML by PyYAML's safe loader, as the frameworks
    read it); a document that is no mapping cannot take keys."""
    if into.filename.lower().endswith((".yaml", ".yml")):
        import yaml  # lazy: PyYAML, only for YAML originals

        data = yaml.safe_load(into.text)
    else:

        try:
            data = json.loads(into.text)
        except ValueError as exc:
            raise SchedlangError(f"{into.filename} is not JSON: {exc}",
                                 hint="--into names the config the schedule was imported from") from None
    if not isinstance(data, dict):
        raise SchedlangError(f"{into.filename} is not a mapping of keys, so the export cannot go into it")
    return data


def dumped(into: Original, data: dict) -> str:
    """``data`` in the original's syntax: JSON (indent 2), or YAML in the original's key order
    (PyYAML's safe dumper; the original's comments are not kept)."""
    if into.filename.lower().endswith((".yaml", ".yml")):
        import yaml  # lazy: PyYAML, only for YAML originals

        return yaml.safe_dump(data, sort_keys=False, default_flow_style=False)

    return json.dumps(data, indent=2) + "\n"
