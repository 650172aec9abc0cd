"""The Flax ImageNet example's shape: a linear warmup joined to a cosine decay, the optimizer
made by optax.inject_hyperparams so the lr is read back from its state."""
import optax

BASE_LR = 0.1 * 256 / 256
NUM_EPOCHS = 4
STEPS_PER_EPOCH = 1251


def create_learning_rate_fn(base_learning_rate, steps_per_epoch, warmup_epochs=1):
    warmup_fn = optax.linear_schedule(init_value=0.0, end_value=base_learning_rate,
                                      transition_steps=warmup_epochs * steps_per_epoch)
    cosine_epochs = max(NUM_EPOCHS - warmup_epochs, 1)
    cosine_fn = optax.cosine_decay_schedule(init_value=base_learning_rate,
                                            decay_steps=cosine_epochs * steps_per_epoch)
    return optax.join_schedules(schedules=[warmup_fn, cosine_fn],
                                boundaries=[warmup_epochs * steps_per_epoch])


learning_rate_fn = create_learning_rate_fn(BASE_LR, STEPS_PER_EPOCH)
tx = optax.inject_hyperparams(optax.sgd)(learning_rate=learning_rate_fn, momentum=0.9, nesterov=True)
