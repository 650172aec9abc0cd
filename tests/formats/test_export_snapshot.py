"""Every config under ``tests/frameworks/configs`` that a format exports, imported and exported
back to its own format merged into itself (``export --into``), gives the bytes it gave before the
formats built ``ir`` trees (issue 40), or the same refusal.

The snapshot was written by ``python tests/formats/test_export_snapshot.py`` at main's e6cd845;
the presets-style entries are byte for byte what main's commit 47d1303 (before issue 40) wrote.
Of the core-style ones, five refusals say another closest scheduler than 47d1303 did (issue 41's
export by proof ranks the candidates; two were a parser error there). The test runs every
presets-style export and the core-style ones that write a file (a refusal of a core-style file is
a search over every candidate, about a minute more of the suite for messages that
``test_export_by_proof`` checks)."""

from __future__ import annotations

import json
import os
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = Path("tests/frameworks/configs")
SNAPSHOT = Path(__file__).with_name("export_snapshot.json")
STYLES = ("presets", "core")


def exported(path: Path, style: str) -> dict | None:
    """What ``export`` makes of ``path``'s import in ``style``, written back to its format into
    ``path``: its text, or its error's message; None when its format does not export or it does
    not import."""
    from schedlang.errors import SchedlangError
    from schedlang.formats import EXPORTS, guess_format, import_file
    from schedlang.formats.export import export

    try:
        fmt = guess_format(path, path.read_text(encoding="utf-8"))
        text = import_file(path, style=style)
    except SchedlangError:
        return None
    if fmt not in EXPORTS:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return {"text": export(text, "lr.sched", format=fmt, into=str(path))}
        except SchedlangError as exc:
            return {"error": exc.message}


def _configs() -> list[Path]:
    return sorted(p.relative_to(ROOT) for p in (ROOT / CONFIGS).rglob("*") if p.is_file())


_WANT = json.loads(SNAPSHOT.read_text()) if SNAPSHOT.exists() else {}
_RUN = sorted(k for k, v in _WANT.items() if k.endswith(" presets") or "text" in v)


@pytest.mark.parametrize("key", _RUN)
def test_export_matches_snapshot(key, monkeypatch):
    monkeypatch.chdir(ROOT)
    name, style = key.rsplit(" ", 1)
    assert exported(Path(name), style) == _WANT[key]


def test_the_snapshot_has_every_exporting_config():
    names = {k.rsplit(" ", 1)[0] for k in _WANT}
    assert len(names) >= 40 and names <= {p.as_posix() for p in _configs()}
    assert sum("text" in v for v in _WANT.values()) >= 30  # written files, not only refusals


def main() -> None:  # pragma: no cover - run once, from the tree the snapshot is of
    os.chdir(ROOT)
    found = {f"{p.as_posix()} {s}": got for p in _configs() for s in STYLES
             if (got := exported(p, s)) is not None}
    SNAPSHOT.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
    print(f"{len(found)} exports written to {SNAPSHOT}", file=sys.stderr)


if __name__ == "__main__":
    main()
