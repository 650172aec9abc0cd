"""The JAX target as optax uses it: every ``optax.*`` preset against optax's own function,
and compiled modules driving real optax optimizers inside jitted training steps."""

from __future__ import annotations

import functools
import math
import os
import subprocess
import sys

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
optax = pytest.importorskip("optax")

from anchors.preset_cases import OPTAX  # noqa: E402
from jax_cases import x64  # noqa: E402
from torch_cases import ROOT  # noqa: E402

import schedlang  # noqa: E402
from schedlang.cli import main  # noqa: E402
from schedlang.codegen.emit import emit  # noqa: E402
from schedlang.library.presets.optax import PRESETS  # noqa: E402

WARMUP_COSINE = ROOT / "examples" / "warmup_cosine.sched"


def _optax_schedule(case):
    kwargs = dict(case.kwargs)
    if "schedules" in kwargs:
        kwargs["schedules"] = [getattr(optax, n)(**k) for n, k in kwargs["schedules"]]
    return getattr(optax, case.name)(**kwargs)


def _worst(ours, anchor, floor) -> float:
    """The preset tables' error measure: relative, against ``floor * peak`` near zero."""
    ours, anchor = np.asarray(ours, np.float64), np.asarray(anchor, np.float64)
    peak = float(np.max(np.abs(anchor)))
    return float(np.max(np.abs(ours - anchor) / np.maximum(np.abs(anchor), floor * peak)))


def test_every_optax_preset_has_a_case():
    assert {c.name for c in OPTAX} == {p.name.split(".", 1)[1] for p in PRESETS}


@pytest.mark.parametrize("case", OPTAX, ids=[f"{c.name}[{i}]" for i, c in enumerate(OPTAX)])
def test_optax_preset_matches_optax(case):
    """At every step of a run past every boundary and the end, against optax's own function run
    in float64: with x64 at 1e-12; in float32 (JAX's default) at 1e-6, measured against a tenth
    of the peak near zero (float32 cancellation in ``E + (I - E) x`` near ``E``, as for Cerebras).

    optax runs op by op (``vmap``, no ``jit``): under ``jit`` XLA turns ``count / steps`` into
    ``count * (1 / steps)``, so ``optax.polynomial_schedule`` with a fractional power gives NaN
    from ``transition_steps`` on (``(1 - 300 * (1/300)) ** 2.5``, a base of -6e-17).
    """
    lr = schedlang.compile(case.source, params=case.params)["lr"]
    steps = np.arange(case.steps)
    with x64(True):
        anchor = np.asarray(jax.vmap(_optax_schedule(case))(jnp.asarray(steps)), dtype=np.float64)
        ours = lr.jax(steps)
        assert ours.dtype == jnp.float64
        assert _worst(ours, anchor, 1e-3) <= 1e-12
    with x64(False):
        ours = lr.jax(steps)
        assert ours.dtype == jnp.float32
        assert _worst(ours, anchor, 0.1) <= 1e-6


def _load_module(source_path):
    from schedlang.codegen.base import GeneratedModule
    from schedlang.codegen.load import load

    program = schedlang.load(source_path)
    return program, load(GeneratedModule(emit(program, "jax", source_path.name), {}), "jax_module")


def _adamw_lrs(schedule, steps: int):
    """The learning rate ``optax.adamw`` used at each of ``steps`` jitted training steps."""
    key = jax.random.PRNGKey(0)
    params = {"w": jax.random.normal(key, (4, 1)), "b": jnp.zeros((1,))}
    x = jax.random.normal(jax.random.PRNGKey(1), (8, 4))
    y = jnp.ones((8, 1))
    optimizer = optax.inject_hyperparams(optax.adamw)(learning_rate=schedule, weight_decay=0.01)
    state = optimizer.init(params)

    def loss(p):
        return jnp.mean((x @ p["w"] + p["b"] - y) ** 2)

    traces = []

    def train_step(carry, _):
        traces.append(1)
        params, state = carry
        grads = jax.grad(loss)(params)
        updates, state = optimizer.update(grads, state, params)
        return (optax.apply_updates(params, updates), state), state.hyperparams["learning_rate"]

    (params, _), seen = jax.jit(lambda c: jax.lax.scan(train_step, c, None, length=steps))((params, state))
    assert len(traces) == 1  # one trace for the whole run: the step count is traced data
    assert math.isfinite(float(loss(params)))
    return np.asarray(seen, dtype=np.float64).tolist()


def test_adamw_training_loop_uses_the_schedule():
    """``optax.adamw(learning_rate=m.lr)``: the value at optimizer step k is lr(k), for k past the end."""
    program, module = _load_module(WARMUP_COSINE)
    want = program["lr"].values(range(1003))
    with x64(False):
        seen = _adamw_lrs(module.lr, 1003)
        direct = np.asarray(jax.jit(module.lr)(jnp.arange(1003, dtype=jnp.int32)), np.float64)
    assert seen == direct.tolist()  # optax used exactly what the function gives
    assert np.max(np.abs(np.array(seen) - want)) <= 1e-6 * max(want)


def test_sgd_applies_the_schedule():
    """The update optax applies is ``-lr(k) * grad`` with lr(k) from the module (float32)."""
    program, module = _load_module(WARMUP_COSINE)
    optimizer = optax.sgd(learning_rate=module.lr)
    params = jnp.ones((3,))
    grads = jnp.asarray([1.0, -2.0, 0.5])
    state = optimizer.init(params)
    update = jax.jit(optimizer.update)
    with x64(False):
        lrs = np.asarray(jax.jit(module.lr)(jnp.arange(1003, dtype=jnp.int32)))
        for k in range(0, 1003):
            updates, state = update(grads, state)
            # one float32 rounding apart at most: XLA may fuse the schedule into the update
            np.testing.assert_allclose(np.asarray(updates), -lrs[k] * np.asarray(grads), rtol=2.4e-7)


def test_parameters_are_keywords():
    """Files with parameters: keyword arguments with the file's defaults; bind with functools.partial."""
    program = schedlang.load(ROOT / "examples" / "gpt_pretrain.sched")
    _, module = _load_module(ROOT / "examples" / "gpt_pretrain.sched")
    bound = schedlang.load(ROOT / "examples" / "gpt_pretrain.sched", params={"total": 5000, "warmup": 100})
    schedule = functools.partial(module.lr, total=5000, warmup=100)
    steps = [0, 1, 99, 100, 101, 2500, 4999, 5000, 5001, 10**6]
    with x64(True):
        got = np.asarray(jax.jit(schedule)(jnp.asarray(steps))).tolist()
        default = np.asarray(module.lr(jnp.asarray(steps))).tolist()
    assert got == pytest.approx(bound["lr"].values(steps), rel=1e-12, abs=1e-18)
    assert default == pytest.approx(program["lr"].values(steps), rel=1e-12, abs=1e-18)


_BLOCKER = """\
import sys
class _Block:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in {'torch', 'sympy', 'schedlang', 'lark'}:
            raise ImportError(f'blocked: {name}')
sys.meta_path.insert(0, _Block())
"""

_DRIVE = """\
import jax, jax.numpy as jnp, optax
import m

def run():
    params = {'w': jnp.ones((4, 1))}
    x = jnp.arange(32.0).reshape(8, 4) / 32
    optimizer = optax.inject_hyperparams(optax.adamw)(learning_rate=m.lr)

    def train_step(carry, _):
        params, state = carry
        grads = jax.grad(lambda p: jnp.mean((x @ p['w'] - 1.0) ** 2))(params)
        updates, state = optimizer.update(grads, state, params)
        return (optax.apply_updates(params, updates), state), state.hyperparams['learning_rate']

    carry = (params, optimizer.init(params))
    _, lrs = jax.jit(lambda c: jax.lax.scan(train_step, c, None, length=1003))(carry)
    print(lrs.dtype.name, ' '.join(repr(float(v)) for v in lrs))

run()
jax.config.update('jax_enable_x64', True)
run()
assert not [n for n in sys.modules if n.split('.')[0] in {'torch', 'sympy', 'schedlang', 'lark'}]
"""


def test_compiled_module_drives_optax_with_only_jax(tmp_path):
    """Done when: ``schedlang compile examples/warmup_cosine.sched --target jax -o m.py`` runs with
    torch, sympy and schedlang blocked from import, and drives optax.adamw at every step, in
    float32 (JAX's default) and with x64."""
    out = tmp_path / "m.py"
    assert main(["compile", str(WARMUP_COSINE), "--target", "jax", "-o", str(out)]) == 0
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "JAX_PLATFORMS": "cpu"}
    done = subprocess.run([sys.executable, "-c", _BLOCKER + _DRIVE], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    (dtype32, *seen32), (dtype64, *seen64) = (line.split() for line in done.stdout.splitlines())
    want = schedlang.load(WARMUP_COSINE)["lr"].values(range(1003))
    assert (dtype32, dtype64) == ("float32", "float64")
    assert np.max(np.abs(np.array(seen32, dtype=np.float64) - want)) <= 1e-6 * max(want)
    assert [float(v) for v in seen64] == pytest.approx(want, rel=1e-12, abs=1e-18)
