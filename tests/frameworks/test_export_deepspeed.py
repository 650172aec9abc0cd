"""``schedlang export --format deepspeed-json``: every DeepSpeed preset row exported, the
config's scheduler block run through the real ``deepspeed.runtime.lr_schedules`` class, and
its values compared with the original schedule at every step (the export itself is read
back and proven equal before it is returned)."""

import json

import pytest

import schedlang
from schedlang.errors import SchedlangError
from schedlang.formats.export import export

from .deepspeed_cases import DEEPSPEED, deepspeed_values

LR_ROWS = [c for c in DEEPSPEED if c.options.get("read") != "momentum"]


@pytest.mark.parametrize("case", LR_ROWS, ids=lambda c: c.source[:70])
def test_exported_config_drives_deepspeed_like_the_original(case):
    config = json.loads(export(case.source, "ds.sched", format="deepspeed-json"))
    block = config["scheduler"]
    lr = config.get("optimizer", {}).get("params", {}).get("lr", 1.0)
    theirs = deepspeed_values(block["type"], block["params"], len(case.compared), lr=lr)
    ours = schedlang.compile(case.source)["lr"].values(case.compared)
    assert ours == pytest.approx(theirs, rel=1e-12, abs=1e-15)


def test_what_deepspeed_cannot_say_is_refused():
    with pytest.raises(SchedlangError, match="one deepspeed.\\* preset"):
        export("warmup(linear, 10) >> cosine(1e-3, 0, 90)", format="deepspeed-json")
    with pytest.raises(SchedlangError, match="derives from its scheduler"):
        export("deepspeed.OneCycle.get_mom(cycle_min_lr=1e-4, cycle_max_lr=1e-3)", format="deepspeed-json")
