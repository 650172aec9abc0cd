import keras

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
model.compile(optimizer=keras.optimizers.Adam(
    learning_rate=keras.optimizers.schedules.ExponentialDecay(1e-3, decay_steps=1000, decay_rate=0.5 ** 0.5,
                                                               staircase=True)), loss="mse")
