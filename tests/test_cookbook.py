"""docs/cookbook.md is generated from the conformance cases and must not drift."""

from __future__ import annotations

import pytest
from anchors import reference as R
from anchors.cookbook import COOKBOOK, render


def test_cookbook_is_up_to_date():
    try:
        text = render()
    except R.AnchorUnavailable as exc:
        pytest.skip(f"an anchor library is unavailable, so the results cannot be regenerated: {exc}")
    committed = COOKBOOK.read_text(encoding="utf-8") if COOKBOOK.exists() else ""
    assert committed == text, "docs/cookbook.md is stale: run `python tools/gen_cookbook.py`"
