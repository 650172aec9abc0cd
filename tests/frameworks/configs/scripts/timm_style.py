"""A timm train.py-style script: the schedule comes from timm's own factory, fed by argparse."""
import argparse

from timm.scheduler import create_scheduler_v2


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=5e-4)
    parser.add_argument("--epochs", type=int, default=300)
    parser.add_argument("--sched", type=str, default="cosine")
    args = parser.parse_args()
    return create_scheduler_v2(None, sched=args.sched, num_epochs=args.epochs, warmup_lr=args.lr / 100)


if __name__ == "__main__":
    main()
