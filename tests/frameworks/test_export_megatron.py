"""``schedlang export --format megatron-args``: every Megatron lr row exported as
Megatron-LM flags, imported back (``--format megatron-args``) and compared at every step
with the real ``OptimizerParamScheduler`` of the row; rows whose lengths are not whole
numbers of samples are refused with the reason."""

import pytest

import schedlang
from schedlang.errors import SchedlangError
from schedlang.formats import from_megatron_args
from schedlang.formats.export import export

from .megatron_cases import MEGATRON

LR_ROWS = [c for c in MEGATRON if c.options.get("read", "lr") == "lr"]


@pytest.mark.parametrize("case", LR_ROWS, ids=lambda c: c.source[33:100])
def test_exported_flags_give_megatrons_values(case):
    try:
        flags = export(case.source, "m.sched", format="megatron-args")
    except SchedlangError as exc:
        assert "whole numbers" in str(exc)  # a fractional warmup length
        return
    back = schedlang.compile(from_megatron_args(flags, "flags.sh"))["lr"]
    assert back.values(case.compared) == pytest.approx(case.reference(), rel=1e-12, abs=1e-18)


def test_only_the_lr_scheduler_exports():
    with pytest.raises(SchedlangError, match="one megatron.\\* preset"):
        export("linear(1, 0, 10)", format="megatron-args")
    with pytest.raises(SchedlangError, match="not a scheduler Megatron-LM configures"):
        export("megatron.OptimizerParamScheduler.get_wd(start_wd=0.01, end_wd=0.1, wd_incr_steps=100, "
               'wd_incr_style="linear")', format="megatron-args")
