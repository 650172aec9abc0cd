"""Guide: a schedlang schedule driving a Flax NNX model's optimizer.

Run: ``python docs/guides/flax_nnx.py`` (CPU, a few seconds; needs jax, optax and flax).
Flax takes its learning rate from optax: ``nnx.Optimizer(model, tx, wrt=nnx.Param)``
with ``tx = optax.adamw(learning_rate=schedule)``.  The schedule is the file's ``lr``
through ``Schedule.jax``; ``optax.inject_hyperparams`` keeps the value each update used
in the optimizer state, and the script exits non-zero unless that value at update k is
``prog["lr"](k)`` within 1e-12 (x64 on: float64, as docs/jax.md promises) at every
step, through the end of the schedule and past it.
"""

import sys

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import optax  # noqa: E402
from flax import nnx  # noqa: E402
from guide_check import check  # noqa: E402

import schedlang  # noqa: E402

SCHEDULE = """
param peak: float = 0.01 where peak > 0
param warmup: int = 5 where warmup >= 0
param total: int = 100 where total > warmup

schedule lr = warmup(linear, warmup) >> cosine(peak, 0.1 * peak, total - warmup)
"""
TOTAL = 30
STEPS = 40  # past the end: a finished schedule holds its last value
RTOL = 1e-12  # the JAX target's float64 promise (docs/jax.md)


def train(learning_rate) -> list[float]:
    """``STEPS`` jitted NNX updates of a tiny linear model; the lr optax used at each."""
    model = nnx.Linear(4, 1, rngs=nnx.Rngs(0))
    tx = optax.inject_hyperparams(optax.adamw)(learning_rate=learning_rate, weight_decay=0.01)
    optimizer = nnx.Optimizer(model, tx, wrt=nnx.Param)
    x = jax.random.normal(jax.random.PRNGKey(0), (64, 4))
    y = x.sum(axis=1, keepdims=True)

    @nnx.jit
    def train_step(model, optimizer, x, y):
        def loss(model):
            return jnp.mean((model(x) - y) ** 2)

        grads = nnx.grad(loss)(model)
        optimizer.update(model, grads)
        return optimizer.opt_state.hyperparams["learning_rate"]

    return [float(train_step(model, optimizer, x, y)) for _ in range(STEPS)]


def main() -> int:
    prog = schedlang.compile(SCHEDULE, params={"total": TOTAL})
    schedule = prog["lr"]
    ok = check("nnx.Optimizer", train(schedule.jax), schedule, rtol=RTOL)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
