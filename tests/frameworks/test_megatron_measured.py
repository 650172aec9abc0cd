"""A class given measured counts against megatron-core's scheduler under skipped iterations
(issue 36 item 4b): the value is the formula at the measured count (SPEC §12).

Megatron-LM's loop (``train_step``) steps ``OptimizerParamScheduler`` by the global batch only
when the update succeeded; a skipped iteration (a NaN loss, an inf gradient) still consumes
its samples, so the batch calculator (a function of ``consumed_train_samples``) moves on while
the scheduler's ``num_steps`` lags by that batch.  Under a batch ramp the lagging count falls
between the plan's steps.  The schedlang class is driven as a user drives it:
``step(samples=batch)`` after each successful update, nothing after a skipped one, and sets
the lr Megatron sets at every iteration.
"""

from __future__ import annotations

import pytest

import schedlang

from .real import real
from .test_megatron_batch import Loop, ramp_calculator, scheduler_019

torch = pytest.importorskip("torch")

RAMP = dict(start=4, increment=4, samples=96)
GBS = 16
SCHEDULER = dict(init_lr=0.0, max_lr=1.0, min_lr=0.1, lr_warmup_steps=40, lr_decay_steps=400,
                 lr_decay_style="cosine", start_wd=0.1, end_wd=0.1, wd_incr_steps=400,
                 wd_incr_style="constant")
SCHED = (f"batch = megatron.rampup_batch_size({RAMP['start']}, {RAMP['increment']}, {RAMP['samples']}, "
         f"global_batch_size={GBS})\n"
         "schedule lr = on_samples(megatron.OptimizerParamScheduler(init_lr=0, max_lr=1, min_lr=0.1, "
         "lr_warmup_steps=40, lr_decay_steps=400, lr_decay_style=\"cosine\"))\n")
SKIPPED = {3, 6, 7, 15, 30}  # iterations whose update is skipped


def _module(version):
    if version == "0.19.2":
        return scheduler_019()
    return real("megatron.core.optimizer_param_scheduler")


@pytest.mark.parametrize("version", ["installed", "0.19.2"])
def test_skipped_iterations_follow_megatron_at_every_step(version):
    module = _module(version)
    megatron_opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.0)
    megatron = module.OptimizerParamScheduler(megatron_opt, **SCHEDULER)
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.0)
    sched = schedlang.compile(SCHED).scheduler_class("Run")(opt)
    loop = Loop(ramp_calculator(RAMP["start"], RAMP["increment"], RAMP["samples"], GBS))
    off_plan = 0
    prog = sched.program
    for iteration in range(60):
        _, batch = loop.step()
        if iteration not in SKIPPED:
            megatron.step(increment=batch)
            sched.step(samples=batch)
        assert sched.samples == megatron.num_steps
        off_plan += prog.samples_at(prog.step_at(samples=sched.samples)) != sched.samples
        assert opt.param_groups[0]["lr"] == pytest.approx(megatron_opt.param_groups[0]["lr"],
                                                          rel=1e-12, abs=1e-15), iteration
    assert off_plan > 10  # the lagging count really fell between the plan's steps
