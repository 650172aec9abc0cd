#!/usr/bin/env python3
"""Write docs/atlas.md: every pair of namesake schedules across libraries, each verdict proven.

    python tools/gen_atlas.py [--check]

The families and calls are in tests/anchors/atlas_pairs.py; every verdict is computed
by ``schedlang.equivalent`` (tests/anchors/atlas.py).  ``--check`` writes nothing and
exits 1 when the committed file differs.  The page is deterministic; the time the
generation took is printed, not written into it.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from anchors.atlas import ATLAS, render  # noqa: E402


def main(argv: list[str]) -> int:
    start = time.perf_counter()
    text = render()
    took = f"(generated in {time.perf_counter() - start:.1f} s)"
    if "--check" in argv:
        same = ATLAS.exists() and ATLAS.read_text(encoding="utf-8") == text
        print(f"docs/atlas.md is {'up to date' if same else 'stale'} {took}")
        return 0 if same else 1
    ATLAS.write_text(text, encoding="utf-8")
    print(f"wrote {ATLAS.relative_to(ROOT)} {took}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
