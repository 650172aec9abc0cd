"""OLMo-core's batch-size scheduler (issue 27): ``batch = olmo_core.batch_size_schedule(...)`` and
``olmo_core.batch_size_lr_factor()`` against ai2-olmo-core 3.0.0's own
``BatchSizeSchedulerCallback`` driving its own data-loader setter and scheduler, at every step:
the batch of each step (an increase waits for ``batches_processed % ratio == 0``; a later event
overrides a waiting one; decreases apply at once) and the lr with the base lr scaled by
``sqrt(new / old)`` at each change, in tokens and in steps."""

from __future__ import annotations

import functools
import types

import pytest

import schedlang
from schedlang.errors import SchedlangError
from schedlang.library.presets import olmo_core_batch

from .olmo_core_cases import batch_callback, batch_size_setter, olmo

SEQ = 4096
LR = 3e-4


@functools.cache
def loader_class():
    """A data loader holding what the callback reads and sets, with OLMo-core's own setter (built
    on first use, inside a test: OLMo-core's file is read then, so a missing install skips)."""

    class Loader:
        def __init__(self, batch):
            self._global_batch_size, self.batches_processed = batch, 0

        global_batch_size = property(lambda self: self._global_batch_size, batch_size_setter())

    return Loader


def olmo_run(sizes, points, units, steps, scheduler=None, t_max=None):
    """``steps`` updates of OLMo-core's trainer loop with the callback: ``(batch, lr)`` per step."""
    import torch

    module, common = batch_callback()
    duration = common.Duration.tokens if units == "tokens" else common.Duration.steps
    callback = module.BatchSizeSchedulerCallback(batch_sizes=list(sizes),
                                                 schedule=[duration(p) for p in points])
    train_module = sys_train_module()()
    train_module.optim = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))], lr=LR)
    train_module.scheduler = scheduler
    trainer = types.SimpleNamespace(data_loader=loader_class()(sizes[0]), global_step=0,
                                    global_train_tokens_seen=0,
                                    epoch=1, train_module=train_module, callbacks={},
                                    record_metric=lambda *a: None,
                                    max_duration=types.SimpleNamespace(unit=units))
    callback.trainer = trainer
    callback.post_attach()
    out = []
    group = train_module.optim.param_groups[0]
    for _ in range(steps):
        callback.pre_load_batch()
        batch = trainer.data_loader.global_batch_size
        trainer.data_loader.batches_processed += 1
        trainer.global_step += 1
        trainer.global_train_tokens_seen += batch
        lr = None
        if scheduler is not None:  # the train module sets the lr from the (scaled) initial lr
            base = group.get("initial_lr", group["lr"])
            now = trainer.global_train_tokens_seen if scheduler.units == "tokens" else trainer.global_step
            lr = float(scheduler.get_lr(base, now, t_max))
        out.append((batch, lr))
    return out


def sys_train_module():
    import sys

    return sys.modules["_olmo_core_3_0_0.train.train_module"].TransformerTrainModule


SCHEDULES = [
    ([32768, 65536, 131072], [0, 200000, 500000], "tokens"),  # the research note's case: 262144, 524288
    ([32768, 65536, 131072], [0, 200000, 210000], "tokens"),  # a later event overrides the waiting one
    ([131072, 32768, 65536, 262144], [0, 200000, 500000, 900000], "tokens"),  # down, then up
    ([8192, 24576, 8192, 16384], [0, 100000, 300000, 400000], "tokens"),  # factor 3, back, 2
    ([32768, 65536, 131072], [0, 5, 9], "steps"),
    ([16384, 65536, 32768], [0, 7, 30], "steps"),
]


def _batch_line(sizes, points, units):
    return (f"batch = olmo_core.batch_size_schedule(batch_sizes={sizes}, schedule={points}, "
            f'units="{units}")')


@pytest.mark.parametrize("sizes, points, units", SCHEDULES)
def test_the_batch_of_every_step_is_olmo_core_s(sizes, points, units):
    olmo()
    prog = schedlang.compile(f"param seq_len: int = {SEQ}\n{_batch_line(sizes, points, units)}\n"
                             "schedule lr = 1e-3\n")
    expected = [batch for batch, _ in olmo_run(sizes, points, units, 60)]
    assert len(set(expected)) > 1
    assert [prog.batch_at(k) * SEQ for k in range(60)] == expected


@pytest.mark.parametrize("sizes, points, units", SCHEDULES)
@pytest.mark.parametrize("cls, kwargs", [("CosWithWarmup", {"warmup": 3}),
                                         ("HalfCosWithWarmup", {"warmup": 2}),
                                         ("LinearWithWarmup", {"warmup": 4, "alpha_f": 0.1})])
def test_the_lr_with_the_callback_s_sqrt_factor_is_olmo_core_s(sizes, points, units, cls, kwargs):
    module = olmo()
    t_max = 40 if units == "steps" else 40 * max(sizes)
    words = {k: v * (1 if units == "steps" else max(sizes)) if k == "warmup" else v
             for k, v in kwargs.items()}
    scheduler = getattr(module, cls)(units=units, t_max=t_max, **words)
    args = ", ".join(f"{k}={v!r}" for k, v in words.items())
    prog = schedlang.compile(
        f"param seq_len: int = {SEQ}\n{_batch_line(sizes, points, units)}\n"
        f'schedule lr = olmo_core.{cls}(lr={LR!r}, units="{units}", t_max={t_max}, {args})'
        f' * olmo_core.batch_size_lr_factor(units="{units}")\n')
    run = olmo_run(sizes, points, units, 45, scheduler, t_max)
    assert prog["lr"].values(range(45)) == pytest.approx([lr for _, lr in run], rel=1e-12, abs=1e-18)


def test_production_sizes_switch_where_olmo_core_does():
    """A 4M -> 16M-token ramp over 10**12 tokens: the closed form against the callback's own loop
    around every switch (the loop runs to the last one, 250k steps)."""
    sizes, points = [4194304, 8388608, 16777216], [0, 300_000_000_000, 700_000_000_011]
    olmo()
    table = olmo_core_batch.switches(sizes, points)
    run = olmo_run(sizes, points, "tokens", table[-1][0] + 3)
    firsts = [0] + [k for k in range(1, len(run)) if run[k][0] != run[k - 1][0]]
    assert firsts == [step for step, _, _ in table]
    assert [run[k][0] for k in firsts] == [batch for _, _, batch in table]


@pytest.mark.parametrize("line, message", [
    ("olmo_core.batch_size_schedule(batch_sizes=[32768, 49152], schedule=[0, 100])", "integer factor"),
    ("olmo_core.batch_size_schedule(batch_sizes=[32768, 65536], schedule=[5, 100])", "must start at 0"),
    ("olmo_core.batch_size_schedule(batch_sizes=[32768, 65536], schedule=[0, 0])", "after previous"),
    ("olmo_core.batch_size_schedule(batch_sizes=[32768, 32768], schedule=[0, 10])", "duplicate"),
    ("olmo_core.batch_size_schedule(batch_sizes=[1000, 2000], schedule=[0, 10])", "4096-token sequences"),
    ('olmo_core.batch_size_schedule(batch_sizes=[32768], schedule=[0], units="epochs")', "not a valid units"),
    # a batch of 0 was a ZeroDivisionError in the factor check (issue 39 item 14)
    ("olmo_core.batch_size_schedule(batch_sizes=[8192, 0], schedule=[0, 10])", "must be positive"),
    ("olmo_core.batch_size_schedule(batch_sizes=[0, 8192], schedule=[0, 10])", "must be positive"),
    ("olmo_core.batch_size_schedule(batch_sizes=[0], schedule=[0])", "must be positive"),
])
def test_olmo_core_s_refusals_are_located(line, message):
    with pytest.raises(SchedlangError, match=message) as info:
        schedlang.compile(f"param seq_len: int = {SEQ}\nbatch = {line}\nschedule lr = 1e-3\n")
    assert info.value.span is not None and info.value.span.line == 2


def test_the_lr_factor_needs_olmo_core_s_batch():
    with pytest.raises(SchedlangError, match="batch_size_schedule") as info:
        schedlang.compile("param seq_len: int = 8\nbatch = 4\n"
                          "schedule lr = 1e-3 * olmo_core.batch_size_lr_factor()\n")
    assert info.value.span.line == 3
