"""Guide: a schedlang scheduler in Hugging Face ``transformers.Trainer``.

Run: ``python docs/guides/hf_trainer.py`` (needs ``transformers`` and ``accelerate``;
CPU, no downloads: the model is a tiny ``torch.nn.Module`` built here).  Pass the
optimizer and the scheduler as ``Trainer(optimizers=(opt, sched))``: the Trainer
calls ``sched.step()`` once per optimizer step (after gradient accumulation), the
PyTorch convention the class follows.  ``max_steps`` counts optimizer steps, as
the schedule's durations do.  Exits non-zero unless the lr the optimizer used at
every step k equals ``prog["lr"](k)``.
"""

import sys
import tempfile

import torch
from guide_check import check, record_lrs, same_schedule
from transformers import Trainer, TrainingArguments

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


class TinyRegressor(torch.nn.Module):
    """What Trainer needs from a model: keyword inputs, a ``loss`` in the output."""

    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(4, 1)

    def forward(self, x, labels=None):
        out = self.net(x)
        return {"loss": torch.nn.functional.mse_loss(out, labels), "logits": out}


def main() -> int:
    prog = built_program()  # or schedlang.compile(SCHEDULE): the same schedule, proven
    if not same_schedule("HF Trainer", prog["lr"], schedlang.compile(SCHEDULE)["lr"]):
        return 1
    torch.manual_seed(0)
    xs = torch.randn(256, 4)
    data = [{"x": x, "labels": x.sum(dim=0, keepdim=True)} for x in xs]
    model = TinyRegressor()
    opt = torch.optim.AdamW(model.parameters(), lr=0.0)
    sched = prog.scheduler_class("Schedule")(opt)
    used = record_lrs(opt)
    with tempfile.TemporaryDirectory() as out:
        args = TrainingArguments(
            output_dir=out, max_steps=STEPS, per_device_train_batch_size=4,
            gradient_accumulation_steps=2,  # still one scheduler step per optimizer step
            use_cpu=True, report_to=[], save_strategy="no", logging_strategy="no",
            disable_tqdm=True, dataloader_num_workers=0, seed=0,
        )
        trainer = Trainer(model=model, args=args, train_dataset=data, optimizers=(opt, sched))
        trainer.train()
    ok = check("HF Trainer", used, prog["lr"])
    ok &= len(used) == STEPS
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
