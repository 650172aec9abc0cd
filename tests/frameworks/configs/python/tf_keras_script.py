import tensorflow as tf

BATCH = 256
EPOCHS = 3
STEPS_PER_EPOCH = 50_000 // BATCH
schedule = tf.keras.optimizers.schedules.CosineDecay(0.1 * BATCH / 256, STEPS_PER_EPOCH * EPOCHS, 0.01,
                                                     warmup_target=0.2, warmup_steps=STEPS_PER_EPOCH)
model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
model.compile(optimizer=tf.keras.optimizers.SGD(learning_rate=schedule, momentum=0.9), loss="mse")
