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


@pytest.mark.parametrize("kwargs", [dict(max_lr=0.1, total_steps=300),
                                    dict(max_lr=0.1, epochs=5, steps_per_epoch=40, pct_start=0.25,
                                         anneal_strategy="linear", three_phase=True)])
def test_torch_one_cycle_lr_ends_at_total_steps_and_can_be_followed(kwargs):
    """torch's OneCycleLR raises past ``total_steps``: the preset lasts ``total_steps`` steps, like
    its ``.momentum`` twin, so ``>>`` can follow it; every step before the end is torch's."""
    torch = pytest.importorskip("torch")
    import schedlang

    words = {True: "true", False: "false"}
    call = "torch.OneCycleLR(" + ", ".join(
        f"{k}={words[v] if isinstance(v, bool) else repr(v).replace(chr(39), chr(34))}"
        for k, v in kwargs.items()) + ")"
    total = kwargs.get("total_steps") or kwargs["epochs"] * kwargs["steps_per_epoch"]
    alone = schedlang.compile(call)["lr"]
    assert alone.duration == total
    assert schedlang.compile(call.replace("OneCycleLR(", "OneCycleLR.momentum("))["lr"].duration == total
    followed = schedlang.compile(f"{call} >> constant(0.5, 10)")["lr"]
    assert followed.duration == total + 10
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, **kwargs)
    for step in range(total):
        assert followed(step) == pytest.approx(optimizer.param_groups[0]["lr"], rel=1e-12, abs=1e-15)
        optimizer.step()
        scheduler.step()
    assert [followed(total + i) for i in range(10)] == [0.5] * 10
    assert followed(total + 10) == 0.5
    with pytest.raises(ValueError):
        scheduler.step()  # torch's own end: one step past total_steps
