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
