"""Keras 3 (``keras.optimizers.schedules``, keras 3.15.1) conformance rows and the real code.

``ROWS`` become ``preset_cases.Case``s (library ``"keras"``): compared with
what Keras computes, in float32 (its dtype for a Python float), at 1e-6.
``values(..., float64=True)`` runs the same Keras code with 64-bit dtypes
kept (Keras' numpy backend demotes float64 to float32 unless told not to),
which ``test_keras.py`` compares with the presets at 1e-12: the formulas
agree exactly, and every float32 difference is rounding.
"""

from __future__ import annotations

import contextlib


def _sched(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_sched(v) for v in value) + "]"
    return repr(value)


def _row(name, kwargs, steps, note=""):
    args = ", ".join(f"{k}={_sched(v)}" for k, v in kwargs.items())
    return dict(preset=f"keras.{name}", source=f"keras.{name}({args})", library="keras", name=name,
                kwargs=kwargs, steps=steps, note=note)


ROWS = [
    _row("ExponentialDecay", dict(initial_learning_rate=0.1, decay_steps=30, decay_rate=0.5), 300),
    _row("ExponentialDecay", dict(initial_learning_rate=0.1, decay_steps=30, decay_rate=0.5, staircase=True),
         300),
    _row("PiecewiseConstantDecay", dict(boundaries=[50, 120], values=[0.1, 0.05, 0.01]), 250),
    _row("PolynomialDecay", dict(initial_learning_rate=0.1, decay_steps=100, end_learning_rate=0.001,
                                 power=2.0), 250),
    _row("PolynomialDecay", dict(initial_learning_rate=0.1, decay_steps=50), 150),
    _row("PolynomialDecay", dict(initial_learning_rate=0.1, decay_steps=60, power=2.0, cycle=True), 200),
    _row("InverseTimeDecay", dict(initial_learning_rate=0.1, decay_steps=10, decay_rate=0.5), 300),
    _row("InverseTimeDecay", dict(initial_learning_rate=0.1, decay_steps=10, decay_rate=0.5, staircase=True),
         300),
    _row("CosineDecay", dict(initial_learning_rate=0.1, decay_steps=100, alpha=0.1), 250),
    _row("CosineDecay", dict(initial_learning_rate=0.0, decay_steps=100, alpha=0.01, warmup_target=0.1,
                             warmup_steps=20), 300),
    _row("CosineDecayRestarts", dict(initial_learning_rate=0.1, first_decay_steps=20), 160),
    _row("CosineDecayRestarts", dict(initial_learning_rate=0.1, first_decay_steps=20, t_mul=1.0, m_mul=0.8,
                                     alpha=0.05), 120),
    _row("CosineDecayRestarts", dict(initial_learning_rate=0.1, first_decay_steps=10, t_mul=3.0, m_mul=0.5,
                                     alpha=0.05), 200),
]


@contextlib.contextmanager
def _float64():
    """Keras' numpy backend with 64-bit results kept (it demotes them to 32 bits, like JAX)."""
    from frameworks.real import real

    real("keras.optimizers.schedules")  # selects the numpy backend before keras is imported
    import keras
    from keras.src.backend.common import dtypes

    saved, floatx = dict(dtypes.BIT64_TO_BIT32_DTYPE), keras.config.floatx()
    dtypes.BIT64_TO_BIT32_DTYPE.clear()
    keras.config.set_floatx("float64")
    try:
        yield
    finally:
        dtypes.BIT64_TO_BIT32_DTYPE.update(saved)
        keras.config.set_floatx(floatx)


def schedule(name: str, kwargs: dict):
    from frameworks.real import real

    return getattr(real("keras.optimizers.schedules"), name)(**kwargs)


def values(name: str, kwargs: dict, steps, float64: bool = False) -> list[float]:
    """``schedule(iterations)`` at each step, as the optimizer calls it (an int64 count)."""
    import numpy as np

    with _float64() if float64 else contextlib.nullcontext():
        lr = schedule(name, kwargs)
        return [float(lr(np.int64(step))) for step in steps]


def anchor_code(name: str, kwargs: dict, options: dict) -> str:
    args = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    return (f"schedule = keras.optimizers.schedules.{name}({args})\n"
            "# lr at update t: schedule(optimizer.iterations) with iterations == t")
