"""A Keras training script: the schedule is a call (nothing here is run by schedlang)."""
import keras
from keras.optimizers.schedules import CosineDecay

BATCH = 256
EPOCHS = 3
STEPS_PER_EPOCH = 50_000 // BATCH
schedule = CosineDecay(0.1 * BATCH / 256, STEPS_PER_EPOCH * EPOCHS, 0.01, warmup_target=0.2,
                       warmup_steps=STEPS_PER_EPOCH)
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
optimizer = keras.optimizers.SGD(learning_rate=schedule, momentum=0.9)
model.compile(optimizer=optimizer, loss="mse")
