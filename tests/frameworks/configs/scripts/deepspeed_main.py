"""A DeepSpeed training script: the config dict is built in main() from argparse flags."""
import argparse

import deepspeed
import torch


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=-1)
    parser.add_argument("--lr", type=float, default=6e-4)
    parser.add_argument("--min-lr", type=float, default=6e-5)
    parser.add_argument("--train-iters", type=int, default=2000)
    parser.add_argument("--warmup", type=float, default=0.05, help="fraction of train-iters")
    parser = deepspeed.add_config_arguments(parser)
    return parser.parse_args()


def main():
    args = get_args()
    model = torch.nn.Linear(4, 2)
    ds_config = {
        "train_batch_size": 256,
        "optimizer": {"type": "AdamW", "params": {"lr": args.lr, "betas": [0.9, 0.95]}},
        "scheduler": {
            "type": "WarmupCosineLR",
            "params": {
                "total_num_steps": args.train_iters,
                "warmup_num_steps": int(args.train_iters * args.warmup),
                "cos_min_ratio": args.min_lr / args.lr,
            },
        },
    }
    engine, optimizer, _, scheduler = deepspeed.initialize(model=model, model_parameters=model.parameters(),
                                                           config=ds_config)
    for step in range(args.train_iters):
        engine.step()


if __name__ == "__main__":
    main()
