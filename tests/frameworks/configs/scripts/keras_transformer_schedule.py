"""The Transformer tutorial's schedule (tensorflow.org/text/tutorials/transformer, keras.io's
"English-to-Spanish translation with a sequence-to-sequence Transformer"): a
LearningRateSchedule subclass, lrate = d_model ** -0.5 * min(step ** -0.5, step * warmup ** -1.5)."""
import keras
from keras import ops

D_MODEL = 128


class CustomSchedule(keras.optimizers.schedules.LearningRateSchedule):
    def __init__(self, d_model, warmup_steps=4000):
        super().__init__()
        self.d_model = d_model
        self.d_model = ops.cast(self.d_model, "float32")
        self.warmup_steps = warmup_steps

    def __call__(self, step):
        step = ops.cast(step, dtype="float32")
        arg1 = ops.rsqrt(step)
        arg2 = step * (self.warmup_steps**-1.5)
        return ops.rsqrt(self.d_model) * ops.minimum(arg1, arg2)

    def get_config(self):
        return {"d_model": self.d_model, "warmup_steps": self.warmup_steps}


def main():
    learning_rate = CustomSchedule(D_MODEL)
    optimizer = keras.optimizers.Adam(learning_rate, beta_1=0.9, beta_2=0.98, epsilon=1e-9)
    return optimizer


if __name__ == "__main__":
    main()
