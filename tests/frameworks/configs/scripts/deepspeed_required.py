"""The learning rate comes from a required flag: not known until the command line gives it."""
import argparse


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, required=True)
    args = parser.parse_args()
    ds_config = {"scheduler": {"type": "WarmupLR", "params": {"warmup_max_lr": args.lr,
                                                                "warmup_num_steps": 100}}}
    return ds_config


if __name__ == "__main__":
    main()
