"""Guide: a schedlang schedule as optax's learning rate, in a jitted JAX training loop.

Run: ``python docs/guides/optax_loop.py`` (CPU, a few seconds; needs jax and optax).
It trains a tiny linear model with ``optax.adamw`` whose learning rate is the
file's ``lr`` — once through ``Schedule.jax`` in process, once through the module
``schedlang compile --target jax`` writes — and exits non-zero unless the lr
optax used at every step k is ``prog["lr"](k)``: x64 is on, so the values are
float64, equal to the Python reference within 1e-12 (XLA's float64 operations
round differently: 0.009999999999999998 for 0.010000000000000002 at the warmup's
end); in float32 (JAX's default) they agree to about 1e-7 of the peak
(docs/jax.md).
"""

import importlib.util
import sys
import tempfile
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import optax  # noqa: E402
from guide_check import check, same_schedule  # noqa: E402

import schedlang  # noqa: E402
from schedlang import build as sb  # noqa: E402
from schedlang.codegen.emit import emit  # noqa: E402

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
    """``STEPS`` jitted adamw updates in one ``lax.scan``; the lr optax used at each."""
    # inject_hyperparams keeps the value it computed for the update in the state.
    optimizer = optax.inject_hyperparams(optax.adamw)(learning_rate=learning_rate, weight_decay=0.01)
    params = {"w": jnp.zeros((4, 1)), "b": jnp.zeros((1,))}
    x = jax.random.normal(jax.random.PRNGKey(0), (64, 4))
    y = x.sum(axis=1, keepdims=True)

    def loss(p):
        return jnp.mean((x @ p["w"] + p["b"] - y) ** 2)

    def train_step(carry, _):
        params, state = carry
        grads = jax.grad(loss)(params)
        updates, state = optimizer.update(grads, state, params)
        return (optax.apply_updates(params, updates), state), state.hyperparams["learning_rate"]

    carry = (params, optimizer.init(params))
    (params, _), used = jax.jit(lambda c: jax.lax.scan(train_step, c, None, length=STEPS))(carry)
    return [float(v) for v in used]


def compiled_module(prog):
    """The module ``schedlang compile --target jax`` writes, imported from a temporary file."""
    folder = Path(tempfile.mkdtemp())
    (folder / "sched_lr.py").write_text(emit(prog, "jax", "optax_loop"), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("sched_lr", folder / "sched_lr.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> int:
    prog = schedlang.compile(SCHEDULE, params={"total": TOTAL})
    schedule = prog["lr"]
    # In process: Schedule.jax is jittable, the step optax passes is a traced int.
    ok = check("Schedule.jax", train(schedule.jax), schedule, rtol=RTOL)
    # Standalone: the compiled module needs only jax; the parameters are its keywords.
    module = compiled_module(prog)
    ok &= check("compiled module", train(lambda count: module.lr(count, total=TOTAL)), schedule, rtol=RTOL)
    # From Python, in optax's own words: the optax.* preset is optax's schedule, proven equal
    # to the file's, and its .jax is the optax schedule function.
    built = sb.optax.warmup_cosine_decay_schedule(init_value=0.0, peak_value=0.01, warmup_steps=5,
                                                  decay_steps=TOTAL, end_value=0.001)
    ok &= same_schedule("optax", built, schedule)
    ok &= check("built in Python", train(built.jax), built, rtol=RTOL)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
