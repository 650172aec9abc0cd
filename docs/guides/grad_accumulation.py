"""Guide: gradient accumulation: step the scheduler once per optimizer step.

Run: ``python docs/guides/grad_accumulation.py``.  With ``ACCUM`` micro-batches per
optimizer step, the schedule's step is the optimizer step, not the micro-batch:
``scheduler.step()`` goes beside ``optimizer.step()``, inside the ``if``.  Exits
non-zero unless the lr used at optimizer step k equals ``prog["lr"](k)``.
"""

import sys

import torch
from guide_check import check, record_lrs

import schedlang

# Durations count optimizer steps: 24 optimizer steps = 96 micro-batches.
SCHEDULE = "warmup(linear, 4) >> cosine(0.01, 0.001, 20)"
ACCUM = 4
MICRO_BATCHES = 4 * 30  # 30 optimizer steps, past the end of the 24-step schedule


def main() -> int:
    prog = schedlang.compile(SCHEDULE)
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.0)
    scheduler = prog.scheduler_class("Schedule")(opt)
    used = record_lrs(opt)
    data = torch.randn(MICRO_BATCHES, 8, 4)
    for i, x in enumerate(data):
        loss = model(x).pow(2).mean() / ACCUM  # the mean over the accumulated micro-batches
        loss.backward()
        if (i + 1) % ACCUM == 0:
            opt.step()
            opt.zero_grad()
            scheduler.step()  # once per optimizer step, never per micro-batch
    ok = check("gradient accumulation", used, prog["lr"])
    ok &= len(used) == MICRO_BATCHES // ACCUM
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
