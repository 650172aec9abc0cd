"""A DeepSpeed script whose settings are a SimpleNamespace (a notebook turned script), one of
them changed after it is built; the config dict returned by a helper."""
from types import SimpleNamespace

import deepspeed
import torch

HP = SimpleNamespace(lr=2e-4, warmup_steps=150, total_steps=3000, min_ratio=0.1)


def ds_config(hp):
    return {
        "train_batch_size": 64,
        "optimizer": {"type": "Adam", "params": {"lr": hp.lr}},
        "scheduler": {"type": "WarmupCosineLR",
                      "params": {"total_num_steps": hp.total_steps, "warmup_num_steps": hp.warmup_steps,
                                 "cos_min_ratio": hp.min_ratio, "warmup_type": "linear"}},
    }


def main():
    HP.total_steps = HP.total_steps + 500
    model = torch.nn.Linear(4, 2)
    deepspeed.initialize(model=model, model_parameters=model.parameters(), config=ds_config(HP))


if __name__ == "__main__":
    main()
