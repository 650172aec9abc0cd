"""The settings module of train.py (beside it): read by the same reader, never run."""
import keras

__all__ = ["EPOCHS", "PEAK", "keras", "make_schedule"]

PEAK = 1e-3
EPOCHS = 20
_STEPS_PER_EPOCH = 390


def make_schedule(epochs=EPOCHS):
    boundaries = [_STEPS_PER_EPOCH * (epochs // 2)]
    return keras.optimizers.schedules.PiecewiseConstantDecay(
        boundaries=boundaries + [_STEPS_PER_EPOCH * (epochs * 3 // 4)], values=[PEAK, PEAK / 10, PEAK / 100])
