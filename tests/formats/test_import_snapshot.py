"""Every config under ``tests/frameworks/configs`` imports, in both styles, to the bytes it did
before the formats built ``ir`` trees (issue 40): the snapshot was written by main's commit
47d1303 (``python tests/formats/test_import_snapshot.py`` with that tree first on ``PYTHONPATH``,
run from the repository root), so a format moved from text templates to ``unparse`` must print
what the templates printed, and fail where they failed, at the same place."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = Path("tests/frameworks/configs")
SNAPSHOT = Path(__file__).with_name("import_snapshot.json")
STYLES = ("presets", "core")


def _configs() -> list[Path]:
    return sorted(p.relative_to(ROOT) for p in (ROOT / CONFIGS).rglob("*") if p.is_file())


def imported(path: Path, style: str) -> dict:
    """What ``import_file`` makes of ``path`` (relative to the repository root, the cwd): its text,
    or its error's message and place."""
    from schedlang.errors import SchedlangError
    from schedlang.formats import import_file

    try:
        return {"text": import_file(path, style=style)}
    except SchedlangError as exc:
        span = exc.span
        where = None if span is None else [span.source.filename, span.line, span.column,
                                           span.end_line, span.end_column]
        return {"error": exc.message, "at": where, "hint": exc.hint}


def _key(path: Path, style: str) -> str:
    return f"{path.as_posix()} {style}"


_WANT = json.loads(SNAPSHOT.read_text()) if SNAPSHOT.exists() else {}


@pytest.mark.parametrize("key", sorted(_WANT))
def test_import_matches_snapshot(key, monkeypatch):
    monkeypatch.chdir(ROOT)
    name, style = key.rsplit(" ", 1)
    assert imported(Path(name), style) == _WANT[key]


def test_snapshot_covers_every_config():
    assert sorted(_WANT) == sorted(_key(p, s) for p in _configs() for s in STYLES)


def main() -> None:  # pragma: no cover - run once, from the tree the snapshot is of
    os.chdir(ROOT)
    found = {_key(p, s): imported(p, s) for p in _configs() for s in STYLES}
    SNAPSHOT.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
    print(f"{len(found)} imports written to {SNAPSHOT}", file=sys.stderr)


if __name__ == "__main__":
    main()
