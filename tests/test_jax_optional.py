"""JAX stays optional: nothing but ``Schedule.jax`` imports it, and writing a JAX module does not."""

from __future__ import annotations

import subprocess
import sys

from torch_cases import ROOT


def test_check_and_compile_import_neither_torch_nor_jax(tmp_path):
    out = tmp_path / "m.py"
    code = ("import sys; from schedlang.cli import main\n"
            "assert main(['check', 'examples/gpt_pretrain.sched']) == 0\n"
            f"assert main(['compile', 'examples/sgdr.sched', '--target', 'jax', '-o', {str(out)!r}]) == 0\n"
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'jax', 'jaxlib', 'optax'))\n"
            "assert not bad, bad\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert "import jax.numpy as jnp" in out.read_text()


def test_verify_runs_without_numpy():
    """schedlang depends on lark and sympy only (the playground's Pyodide has no numpy): the
    prover's float64 first stage is skipped without numpy, and the exact scan still finds the
    earliest difference."""
    code = ("import builtins\n"
            "real = builtins.__import__\n"
            "def guard(name, globals=None, locals=None, fromlist=(), level=0):\n"
            "    if level == 0 and name.split('.')[0] == 'numpy':\n"
            "        raise ImportError('numpy is not installed')\n"
            "    return real(name, globals, locals, fromlist, level)\n"
            "builtins.__import__ = guard\n"
            "import sys, schedlang\n"
            "v = schedlang.equivalent('step(1, 0.5, 30000)', 'if t < 30000 then 1 else 0.5')\n"
            "assert v.different and v.counterexample.step == 60000, v\n"
            "assert schedlang.equivalent('repeat(linear(1, 0, 7), 3)',\n"
            "                            'linear(1, 0, 7) >> linear(1, 0, 7) >> linear(1, 0, 7)')\n"
            "assert 'numpy' not in sys.modules\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
