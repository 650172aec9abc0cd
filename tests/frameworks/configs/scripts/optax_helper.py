"""A JAX/Flax training script in the shape of the optax and Flax examples: the schedule and the
optimizer made in a helper from a config, clipping chained before AdamW."""
import argparse

import jax
import jax.numpy as jnp
import optax


def create_learning_rate_fn(config, steps_per_epoch):
    warmup_steps = config.warmup_epochs * steps_per_epoch
    return optax.warmup_cosine_decay_schedule(
        init_value=0.0,
        peak_value=config.learning_rate,
        warmup_steps=warmup_steps,
        decay_steps=config.num_epochs * steps_per_epoch,
        end_value=config.learning_rate * 0.01,
    )


def make_optimizer(config, steps_per_epoch):
    schedule = create_learning_rate_fn(config, steps_per_epoch)
    return optax.chain(optax.clip_by_global_norm(1.0),
                       optax.adamw(learning_rate=schedule, b1=0.9, b2=0.95, weight_decay=0.1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--learning_rate", type=float, default=1e-3)
    parser.add_argument("--num_epochs", type=int, default=10)
    parser.add_argument("--warmup_epochs", type=int, default=1)
    parser.add_argument("--batch_size", type=int, default=128)
    config = parser.parse_args()
    steps_per_epoch = 60_000 // config.batch_size
    tx = make_optimizer(config, steps_per_epoch)
    params = {"w": jnp.zeros((784, 10))}
    opt_state = tx.init(params)
    return tx, opt_state, jax.devices()


if __name__ == "__main__":
    main()
