"""The schedule is built in a function nothing calls."""
import keras


def make_optimizer(total_steps):
    schedule = keras.optimizers.schedules.CosineDecay(1e-3, total_steps)
    return keras.optimizers.Adam(schedule)
