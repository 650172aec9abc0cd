"""What the JAX tests share: the x64 switch and steps that int32 can hold."""

from __future__ import annotations

import contextlib

INT32_MAX = 2**31 - 1


@contextlib.contextmanager
def x64(enabled: bool):
    """``jax_enable_x64`` set for the block, restored after (jit caches key on it)."""
    import jax

    previous = bool(jax.config.jax_enable_x64)
    jax.config.update("jax_enable_x64", enabled)
    try:
        yield
    finally:
        jax.config.update("jax_enable_x64", previous)


def int32_steps(steps) -> list[int]:
    return [s for s in steps if 0 <= s <= INT32_MAX]


def float32(value: float) -> float:
    """``value`` rounded to float32 (to nearest), as a Python float."""
    import numpy as np

    return float(np.float32(value))
