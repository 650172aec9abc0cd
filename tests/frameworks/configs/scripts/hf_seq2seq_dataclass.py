"""Seq2SeqTrainingArguments built in a helper from a dataclass config, the type as the
SchedulerType enum, its kwargs a dict; the run length from epochs (a parameter of the file)."""
from dataclasses import dataclass

from transformers import SchedulerType, Seq2SeqTrainingArguments


@dataclass
class Config:
    lr: float = 3e-4
    epochs: int = 2
    warmup: int = 100


def build(cfg):
    return Seq2SeqTrainingArguments(output_dir="o", learning_rate=cfg.lr, num_train_epochs=cfg.epochs,
                                    warmup_steps=cfg.warmup,
                                    lr_scheduler_type=SchedulerType.COSINE_WITH_RESTARTS,
                                    lr_scheduler_kwargs={"num_cycles": 2})


args = build(Config(epochs=4))
