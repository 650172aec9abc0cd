#!/usr/bin/env python3
"""Write docs/cookbook.md from tests/anchors/preset_cases.py (runs every anchor library).

    python tools/gen_cookbook.py [--check]

``--check`` writes nothing and exits 1 when the committed file differs.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from anchors.cookbook import COOKBOOK, render  # noqa: E402


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        same = COOKBOOK.exists() and COOKBOOK.read_text(encoding="utf-8") == text
        print("docs/cookbook.md is up to date" if same else "docs/cookbook.md is stale")
        return 0 if same else 1
    COOKBOOK.write_text(text, encoding="utf-8")
    print(f"wrote {COOKBOOK.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
