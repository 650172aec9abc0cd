"""An HF ``run_*_no_trainer.py``-style script with DeepSpeed: argparse defaults, the config
returned by a helper, star imports of the project's own constants."""
import argparse
import math

from accelerate import Accelerator
from my_project.constants import *  # noqa: F403


def parse_args():
    parser = argparse.ArgumentParser(description="Finetune a transformers model on a causal LM task")
    group = parser.add_argument_group("optimization")
    group.add_argument("--learning_rate", type=float, default=5e-5, help="Initial learning rate.")
    group.add_argument("--num_train_epochs", type=int, default=3)
    group.add_argument("--max_train_steps", type=int, default=None)
    group.add_argument("--num_warmup_steps", type=int, default=0)
    parser.add_argument("--per_device_train_batch_size", type=int, default=8)
    parser.add_argument("--output_dir", type=str, default=None, required=False)
    args = parser.parse_args()
    if args.max_train_steps is None:
        args.max_train_steps = 1000 * args.num_train_epochs
    args.num_warmup_steps = max(args.num_warmup_steps, args.max_train_steps // 10)
    return args


def deepspeed_config(args):
    return dict(
        train_micro_batch_size_per_gpu=args.per_device_train_batch_size,
        scheduler=dict(type="WarmupDecayLR",
                       params=dict(warmup_min_lr=0, warmup_max_lr=args.learning_rate,
                                   warmup_num_steps=args.num_warmup_steps,
                                   total_num_steps=args.max_train_steps)),
    )


def main():
    args = parse_args()
    accelerator = Accelerator()
    config = deepspeed_config(args)
    accelerator.print(f"{math.ceil(args.max_train_steps / 10)} steps between logs")
    return config


if __name__ == "__main__":
    main()
