"""Guide: Muon for the 2-D weights, AdamW for the rest, one schedlang scheduler for both.

Run: ``python docs/guides/muon_adamw.py`` (CPU, a few seconds).  One file gives each
optimizer its own lr schedule; one scheduler class drives both on one clock.  It exits
non-zero unless the lr each optimizer used at every step k equals its schedule's value
at k, and shows the mistake of tenstorrent/tt-metal#56027 (the AdamW lr never scheduled)
refused when the scheduler is built.  Without ``torch.optim.Muon`` (torch < 2.9) a second
AdamW stands in.
"""

import sys

import torch
from guide_check import check, record_lrs

import schedlang

SCHEDULE = """
param total: int = 100
schedule lr__muon = warmup(linear, 5) >> cosine(0.02, 0.002, total - 5)
schedule lr__adamw = warmup(linear, 5) >> cosine(3e-3, 3e-4, total - 5)
schedule weight_decay__muon = constant(0)
schedule weight_decay__adamw = constant(0.1)
"""
TOTAL = 30
STEPS = 40  # past the end: a finished schedule holds its last value


def optimizers(model):
    """The 2-D weights of the hidden layer to Muon, everything else to AdamW."""
    matrices = [model[1].weight]
    rest = [p for p in model.parameters() if all(p is not m for m in matrices)]
    muon = (torch.optim.Muon(matrices, lr=0.02) if hasattr(torch.optim, "Muon")
            else torch.optim.AdamW(matrices, lr=0.02))
    return {"muon": muon, "adamw": torch.optim.AdamW(rest, lr=3e-3)}


def main() -> int:
    prog = schedlang.compile(SCHEDULE, params={"total": TOTAL})
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Linear(8, 8), torch.nn.Tanh(),
                                torch.nn.Linear(8, 1))
    opts = optimizers(model)
    # One scheduler for both optimizers: the dict's names tag their param groups, so
    # `lr__muon` drives Muon's and `lr__adamw` AdamW's; one step count for both.
    scheduler = prog.scheduler_class("MuonAdamW")(opts, total=TOTAL)
    used = {name: record_lrs(opt) for name, opt in opts.items()}
    x = torch.randn(64, 4)
    y = x.sum(dim=1, keepdim=True)
    for _ in range(STEPS):
        loss = torch.nn.functional.mse_loss(model(x), y)
        for opt in opts.values():
            opt.zero_grad()
        loss.backward()
        for opt in opts.values():
            opt.step()
        scheduler.step()  # after both optimizers' steps: after k calls each lr is its f(k)
    ok = all([check(f"{name} lr", used[name], prog[f"lr__{name}"]) for name in opts])
    # A file that schedules Muon's lr alone would leave AdamW's as built (tt-metal#56027):
    # the constructor refuses, naming the optimizer and the group.
    muon_only = schedlang.compile("schedule lr__muon = cosine(0.02, 0.002, 30)")
    try:
        muon_only.scheduler_class("MuonOnly")(optimizers(model))
        print("a file that leaves AdamW's lr unscheduled was accepted", file=sys.stderr)
        ok = False
    except schedlang.SchedlangError as exc:
        print("refused:", exc.message)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
