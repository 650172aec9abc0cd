"""Guide: a schedlang scheduler in PyTorch Lightning.

Run: ``python docs/guides/lightning_module.py`` (needs ``lightning``; CPU, no
downloads: the LightningModule and its data are built here).  Return the scheduler
from ``configure_optimizers`` as ``{"scheduler": sched, "interval": "step"}``: the
Trainer then calls ``sched.step()`` once per optimizer step (``"epoch"``, Lightning's
default, would step it once per epoch), after gradient accumulation.  ``max_steps``
counts optimizer steps, as the schedule's durations do.  The generated class subclasses
``torch.optim.lr_scheduler.LRScheduler``, so Lightning accepts it as it is: no
``lr_scheduler_step`` override.  Exits non-zero unless the lr the optimizer used at
every step k equals ``prog["lr"](k)``.
"""

import sys
import warnings

import lightning as L  # noqa: N812 (the name Lightning's docs use)
import torch
from guide_check import check, record_lrs, same_schedule

import schedlang
from schedlang import build as sb

SCHEDULE = """
param total: int = 24 where total > 4
schedule lr = warmup(linear, 4) >> cosine(0.01, 0.001, total - 4)
"""
STEPS = 30  # optimizer steps, past the end of the schedule (24)


def built_program():
    """The same program written in Python (``schedlang.build``, docs/python.md)."""
    total = sb.param("total", int, default=24, where="total > 4")
    return sb.program(lr=sb.warmup(sb.linear, 4) >> sb.cosine(0.01, 0.001, total - 4))


class TinyRegressor(L.LightningModule):
    def __init__(self, prog):
        super().__init__()
        self.prog = prog
        self.net = torch.nn.Linear(4, 1)
        self.used: list[float] = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.mse_loss(self.net(x), y)

    def configure_optimizers(self):
        opt = torch.optim.AdamW(self.parameters(), lr=0.0)  # the schedule's values are absolute
        sched = self.prog.scheduler_class("Schedule")(opt)
        self.used = record_lrs(opt)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}


def main() -> int:
    prog = built_program()  # or schedlang.compile(SCHEDULE): the same schedule, proven
    if not same_schedule("Lightning", prog["lr"], schedlang.compile(SCHEDULE)["lr"]):
        return 1
    torch.manual_seed(0)
    xs = torch.randn(64, 4)
    data = torch.utils.data.TensorDataset(xs, xs.sum(dim=1, keepdim=True))
    loader = torch.utils.data.DataLoader(data, batch_size=4)  # 16 batches an epoch
    model = TinyRegressor(prog)
    trainer = L.Trainer(max_steps=STEPS, accelerator="cpu", devices=1, logger=False,
                        enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False,
                        accumulate_grad_batches=2)  # still one scheduler step per optimizer step
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*does not have many workers.*")
        trainer.fit(model, loader)
    ok = check("Lightning", model.used, prog["lr"])
    ok &= len(model.used) == STEPS
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
