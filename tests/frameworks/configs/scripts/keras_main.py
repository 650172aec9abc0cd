"""A Keras training script as users write it: argparse flags, the schedule built in main()."""
import argparse

import keras
from keras.optimizers.schedules import CosineDecay


def parse_args():
    parser = argparse.ArgumentParser(description="train a small model")
    parser.add_argument("--lr", type=float, default=3e-4, help="peak learning rate")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--epochs", type=int, default="3")
    parser.add_argument("--warmup-epochs", type=float, default=0.5)
    parser.add_argument("--optimizer", choices=["sgd", "adamw"], default="adamw")
    parser.add_argument("--mixed-precision", action="store_true")
    return parser.parse_args()


def build_model():
    return keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])


def main():
    args = parse_args()
    steps_per_epoch = 50_000 // args.batch_size
    total = steps_per_epoch * args.epochs
    warmup = int(steps_per_epoch * args.warmup_epochs)
    schedule = CosineDecay(0.0, total - warmup, alpha=0.01, warmup_target=args.lr, warmup_steps=warmup)
    if args.optimizer == "adamw":
        optimizer = keras.optimizers.AdamW(learning_rate=schedule, weight_decay=0.05)
    else:
        optimizer = keras.optimizers.SGD(learning_rate=schedule, momentum=0.9)
    model = build_model()
    model.compile(optimizer=optimizer, loss="mse")
    return model


if __name__ == "__main__":
    main()
