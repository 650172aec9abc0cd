"""Every preset recipe compiles to the torch target and gives the reference's values there."""

from __future__ import annotations

import pytest
from anchors.preset_cases import CASES, max_error

import schedlang

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.preset}:{c.source[:60]}")
def test_torch_target_matches_reference(case):
    schedule = schedlang.compile(case.source, params=case.params)["lr"]
    steps = list(case.compared)
    reference = schedule.values(steps)
    got = schedule.torch(torch.tensor(steps, dtype=torch.int64), dtype=torch.float64).tolist()
    assert max_error(got, reference, 1e-3) <= 1e-12


def test_scheduler_class_drives_an_optimizer():
    prog = schedlang.compile("torch.LinearLR(lr=0.1, start_factor=0.1, total_iters=4) >> "
                             "torch.CosineAnnealingLR(lr=0.1, T_max=6)")
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
    sched = prog.scheduler_class("Migrated")(opt)
    seen = []
    for _ in range(12):
        seen.append(float(opt.param_groups[0]["lr"]))
        opt.step()
        sched.step()
    assert seen == pytest.approx(prog["lr"].values(range(12)), rel=1e-12, abs=1e-15)
