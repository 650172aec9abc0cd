"""Guide: a schedlang scheduler in a plain PyTorch training loop.

Run: ``python docs/guides/plain_loop.py`` (CPU, a few seconds).  It trains a tiny
model twice, once with a float lr and once with a tensor lr, and exits non-zero
unless the lr the optimizer used at every step k equals ``prog["lr"](k)``.
"""

import sys

import torch
from guide_check import check, record_lrs, same_schedule

import schedlang
from schedlang import build as sb

SCHEDULE = """
param peak: float = 0.01 where peak > 0
param warmup: int = 5 where warmup >= 0
param total: int = 100 where total > warmup

schedule lr = warmup(linear, warmup) >> cosine(peak, 0.1 * peak, total - warmup)
schedule weight_decay = constant(0.01)
"""
TOTAL = 30
STEPS = 40  # past the end: a finished schedule holds its last value


def built_program(total: int):
    """The same program written in Python (``schedlang.build``, docs/python.md)."""
    peak = sb.param("peak", float, default=0.01, where="peak > 0")
    warmup = sb.param("warmup", int, default=5, where="warmup >= 0")
    total_ = sb.param("total", int, default=100, where="total > warmup")
    lr = sb.warmup(sb.linear, warmup) >> sb.cosine(peak, 0.1 * peak, total_ - warmup)
    return sb.program(lr=lr, weight_decay=sb.constant(0.01), params={"total": total})


def train(prog, lr) -> list[float]:
    """Train a tiny regression model; return the lr each optimizer step used."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    # Every schedule of the file (lr, weight_decay) is set on every param group;
    # the file's parameters are keyword arguments of the constructor.
    scheduler = prog.scheduler_class("Schedule")(opt, total=TOTAL)
    used = record_lrs(opt)
    x = torch.randn(64, 4)
    y = x.sum(dim=1, keepdim=True)
    for _ in range(STEPS):
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        scheduler.step()  # after optimizer.step(), as in PyTorch: after k calls the lr is f(k)
    assert opt.param_groups[0]["weight_decay"] == 0.01
    return used


def main() -> int:
    prog = schedlang.compile(SCHEDULE, params={"total": TOTAL})
    lr = prog["lr"]
    # A float lr is replaced by the exact float64 value of f(k) at every step.
    ok = check("float lr", train(prog, lr=1e-3), lr)
    # A tensor lr (what torch.compile wants) is filled in place; float64 keeps it exact
    # (a float32 tensor holds f(k) rounded to float32).
    ok &= check("tensor lr", train(prog, lr=torch.tensor(1e-3, dtype=torch.float64)), lr)
    # Written in Python instead of text: the same Program, the same scheduler class.
    built = built_program(TOTAL)
    ok &= same_schedule("plain loop", built["lr"], lr)
    ok &= check("built in Python", train(built, lr=1e-3), built["lr"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
