"""Benchmarks of the JAX target (run on demand: ``python benchmarks/bench_jax.py``).

1. Vectorised evaluation of 1M steps under ``jax.jit``: the generated
   ``jnp.where`` function against a hand-written ``jnp.where`` expression of the
   same warmup + cosine (target: ratio <= 1.2), in JAX's default int32/float32
   and with ``jax_enable_x64``.
2. Per-step cost as an optax schedule: a jitted ``optax.adamw`` update of a small
   parameter vector with ``learning_rate=`` the generated function, against the
   same update with ``optax.warmup_cosine_decay_schedule`` and with a constant lr.

Ratios are measured in the same run, so they compare like with like on any
machine.  Not collected by pytest (the file name does not start with test_).
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import optax

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import schedlang  # noqa: E402
from schedlang.codegen.base import GeneratedModule  # noqa: E402
from schedlang.codegen.emit import emit  # noqa: E402
from schedlang.codegen.load import load  # noqa: E402

WARMUP, DECAY, PEAK, FLOOR = 500, 500, 1e-3, 1e-4
SOURCE = f"warmup(linear, {WARMUP}) >> cosine({PEAK}, {FLOOR}, {DECAY})"


def hand_written(t):
    tf = t.astype(jnp.float32 if t.dtype == jnp.int32 else jnp.float64)
    cosine = FLOOR + (PEAK - FLOOR) * 0.5 * (1 + jnp.cos(math.pi * (tf - WARMUP) / DECAY))
    return jnp.where(t < WARMUP, PEAK * tf / WARMUP, jnp.where(t < WARMUP + DECAY, cosine, FLOOR))


def timed(function, *args, repeats: int = 31) -> float:
    """Median seconds of one call, after a warm-up call (compilation)."""
    jax.block_until_ready(function(*args))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(function(*args))
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def vectorised(module, x64: bool) -> tuple[float, float]:
    jax.config.update("jax_enable_x64", x64)
    steps = jnp.arange(1_000_000, dtype=jnp.int64 if x64 else jnp.int32)
    ours, hand = jax.jit(module.lr), jax.jit(hand_written)
    np.testing.assert_allclose(np.asarray(ours(steps)), np.asarray(hand(steps)),
                               rtol=1e-12 if x64 else 2e-6, atol=1e-18 if x64 else 1e-9)
    ours_t, hand_t = [], []
    for _ in range(3):  # interleaved, so load on the machine hits both alike
        ours_t.append(timed(ours, steps))
        hand_t.append(timed(hand, steps))
    return min(ours_t), min(hand_t)


def adamw_update(schedule):
    """A jitted ``optax.adamw`` update (with its schedule call) of 1000 float32 parameters."""
    optimizer = optax.adamw(learning_rate=schedule)
    params = jnp.zeros(1000)
    grads = jnp.ones(1000)

    @jax.jit
    def update(params, state):
        updates, state = optimizer.update(grads, state, params)
        return optax.apply_updates(params, updates), state

    carry = jax.block_until_ready(update(params, optimizer.init(params)))
    return update, carry


def per_update(schedules: dict, steps: int = 2000, rounds: int = 7) -> dict:
    """Least seconds per update over ``rounds`` runs of ``steps`` updates, the candidates
    interleaved round by round so that load on the machine hits them alike."""
    runs = {name: adamw_update(schedule) for name, schedule in schedules.items()}
    best = dict.fromkeys(schedules, math.inf)
    for _ in range(rounds):
        for name, (update, (params, state)) in runs.items():
            start = time.perf_counter()
            for _ in range(steps):
                params, state = update(params, state)
            jax.block_until_ready(params)
            best[name] = min(best[name], (time.perf_counter() - start) / steps)
    return best


def main() -> None:
    program = schedlang.compile(SOURCE)
    module = load(GeneratedModule(emit(program, "jax", "bench.sched"), {}), "bench_jax")
    print(f"jax {jax.__version__}, optax {optax.__version__}, {jax.devices()[0].platform}")
    print("1M steps, vectorised, under jax.jit")
    for x64 in (False, True):
        ours, hand = vectorised(module, x64)
        label = "int64/float64 (x64)" if x64 else "int32/float32      "
        print(f"  {label} schedlang {ours * 1e3:7.2f} ms   hand-written jnp.where {hand * 1e3:7.2f} ms"
              f"   ratio ours/hand = {ours / hand:.2f}")
    jax.config.update("jax_enable_x64", False)
    optax_schedule = optax.warmup_cosine_decay_schedule(0.0, PEAK, WARMUP, WARMUP + DECAY, FLOOR)
    times = per_update({"ours": module.lr, "optax": optax_schedule, "constant": PEAK})
    ours, theirs, constant = times["ours"], times["optax"], times["constant"]
    print("per jitted optax.adamw update (1000 float32 parameters)")
    print(f"  schedlang module lr        {ours * 1e6:8.2f} us")
    print(f"  optax warmup_cosine_decay  {theirs * 1e6:8.2f} us   ratio ours/optax = {ours / theirs:.2f}")
    print(f"  constant lr                {constant * 1e6:8.2f} us   schedule cost = "
          f"{(ours - constant) * 1e6:.2f} us (optax's: {(theirs - constant) * 1e6:.2f} us)")


if __name__ == "__main__":
    main()
