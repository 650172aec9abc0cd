"""A training script whose settings and schedule come from config.py beside it (star import)."""
import argparse

from config import *  # noqa: F403


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=EPOCHS)  # noqa: F405
    args = parser.parse_args()
    optimizer = keras.optimizers.SGD(learning_rate=make_schedule(args.epochs), momentum=0.9)  # noqa: F405
    return optimizer


if __name__ == "__main__":
    main()
