"""A Keras script in the shape of the keras.io examples: the schedule and its optimizer made in a
helper whose call is the optimizer= of model.compile(...), its length from the data and epochs."""
import keras
from keras import layers

BATCH_SIZE = 64
EPOCHS = 12
TRAIN_SIZE = 50_000


def build_model(num_classes=10):
    inputs = keras.Input(shape=(32, 32, 3))
    x = layers.Conv2D(32, 3, activation="relu")(inputs)
    x = layers.GlobalAveragePooling2D()(x)
    outputs = layers.Dense(num_classes)(x)
    return keras.Model(inputs, outputs)


def make_optimizer(model, peak=3e-4, warmup_epochs=1):
    steps_per_epoch = TRAIN_SIZE // BATCH_SIZE
    total = steps_per_epoch * EPOCHS
    warmup = steps_per_epoch * warmup_epochs
    schedule = keras.optimizers.schedules.CosineDecay(
        initial_learning_rate=0.0, decay_steps=total - warmup, alpha=0.05,
        warmup_target=peak, warmup_steps=warmup)
    return keras.optimizers.AdamW(learning_rate=schedule, weight_decay=0.05)


def main():
    model = build_model()
    model.compile(optimizer=make_optimizer(model), loss=keras.losses.SparseCategoricalCrossentropy(
        from_logits=True), metrics=["accuracy"])
    model.summary()
    return model


if __name__ == "__main__":
    model = main()
    model.fit(keras.utils.image_dataset_from_directory("data"), epochs=EPOCHS)
