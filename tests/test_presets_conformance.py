"""Every preset against the real library, at every step of a long horizon.

The cases live in ``anchors/preset_cases.py`` (the cookbook renders the same
table); a library that is not installed, or whose pinned sources cannot be
fetched, skips its cases.
"""

from __future__ import annotations

import pytest
from anchors import reference as R
from anchors.cookbook import evaluate
from anchors.preset_cases import CASES, max_error


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.preset}:{c.source[:60]}")
def test_preset_matches_anchor(case):
    try:
        ours, anchor = evaluate(case)
    except R.AnchorUnavailable as exc:
        pytest.skip(str(exc))
    assert len(ours) == len(anchor)
    error = max_error(ours, anchor, case.floor)
    if error > case.tolerance:
        worst = max(case.compared, key=lambda i: abs(ours[i] - anchor[i]))
        pytest.fail(f"max error {error:.3g} > {case.tolerance:g}; at t={worst}: schedlang "
                    f"{ours[worst]!r}, {case.library} {anchor[worst]!r}")
