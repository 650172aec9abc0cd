"""Guide: checkpoint and resume a run with its schedlang scheduler.

Run: ``python docs/guides/checkpoint_resume.py``.  One run of ``STEPS`` steps is
compared with a run that saves model, optimizer and scheduler ``state_dict`` at
step ``SAVE_AT``, throws everything away, rebuilds it fresh (as a new process
would), loads the checkpoint and continues.  Exits non-zero unless both runs
use ``prog["lr"](k)`` at every step k and end with the same weights.

The scheduler's state is its step (``last_epoch``) and its parameters: on load the
step is restored and the constructor's parameters are kept (a warning names any
saved value that differs; ``load_state_dict(state, params="saved")`` keeps the
saved ones), so a run resumed with the same file continues it exactly.
"""

import io
import sys

import torch
from guide_check import check, record_lrs

import schedlang

SCHEDULE = """
param peak: float = 0.01 where peak > 0
param total: int = 40 where total > 5

schedule lr = warmup(linear, 5) >> cosine(peak, 0.1 * peak, total - 5)
"""
STEPS = 50  # past the end (40)
SAVE_AT = 17  # mid-decay


def build(prog):
    """Model, optimizer and scheduler from scratch, as a fresh process builds them."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    opt = torch.optim.AdamW(model.parameters(), lr=torch.tensor(0.0, dtype=torch.float64))
    scheduler = prog.scheduler_class("Schedule")(opt)
    return model, opt, scheduler


def train(model, opt, scheduler, steps: range) -> None:
    for k in steps:
        g = torch.Generator().manual_seed(k)  # the batch depends on the step only
        x = torch.randn(16, 4, generator=g)
        loss = torch.nn.functional.mse_loss(model(x), x.sum(dim=1, keepdim=True))
        opt.zero_grad()
        loss.backward()
        opt.step()
        scheduler.step()


def main() -> int:
    prog = schedlang.compile(SCHEDULE)
    lr = prog["lr"]

    # The uninterrupted run.
    model, opt, scheduler = build(prog)
    straight = record_lrs(opt)
    train(model, opt, scheduler, range(STEPS))
    final = [p.detach().clone() for p in model.parameters()]

    # The interrupted run: train to SAVE_AT, save, then start over from nothing.
    model, opt, scheduler = build(prog)
    before = record_lrs(opt)
    train(model, opt, scheduler, range(SAVE_AT))
    buffer = io.BytesIO()  # a file in a real run: torch.save(..., "ckpt.pt")
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(),
                "scheduler": scheduler.state_dict(), "step": SAVE_AT}, buffer)
    del model, opt, scheduler

    buffer.seek(0)
    ckpt = torch.load(buffer, weights_only=True)  # the scheduler state is plain data
    model, opt, scheduler = build(prog)
    model.load_state_dict(ckpt["model"])
    opt.load_state_dict(ckpt["optimizer"])
    scheduler.load_state_dict(ckpt["scheduler"])  # the step; after the optimizer: it sets the lr
    after = record_lrs(opt)
    train(model, opt, scheduler, range(ckpt["step"], STEPS))

    ok = check("uninterrupted", straight, lr)
    ok &= check("before the save", before, lr)
    ok &= check("after the resume", after, lr, start=SAVE_AT)
    ok &= before + after == straight
    same = all(torch.equal(a, b) for a, b in zip(final, model.parameters(), strict=True))
    print(f"final weights {'equal' if same else 'DIFFER'}")
    return 0 if ok and same else 1


if __name__ == "__main__":
    sys.exit(main())
