"""Every integration guide in docs/guides/ runs as a user would run it and exits 0.

Each script asserts itself that the lr its optimizer used at every step k equals
``prog["lr"](k)`` and exits non-zero otherwise; this test runs it in a fresh
interpreter (``sys.executable script.py``) with the worktree first on the path.
The HF Trainer and Lightning guides need transformers and accelerate, and lightning
(the dev extra), the Composer guide mosaicml (tools/install_frameworks.sh): each
skips locally without them and fails under CI, as tests/frameworks/real.py does.
"""

import importlib.util
import os
import subprocess
import sys

import pytest
from helpers import ROOT
from installs import DEV, FRAMEWORKS, needs_install

GUIDES = ROOT / "docs" / "guides"
NEEDS = {"hf_trainer.py": ("transformers", "accelerate"), "lightning_module.py": ("lightning",),
         "composer_trainer.py": ("composer",), "optax_loop.py": ("jax", "optax"),
         "flax_nnx.py": ("jax", "optax", "flax")}
SCRIPTS = sorted(p.name for p in GUIDES.glob("*.py") if p.name != "guide_check.py")


def test_every_guide_is_listed_in_the_docs():
    page = (ROOT / "docs" / "guides.md").read_text(encoding="utf-8")
    assert SCRIPTS
    for name in SCRIPTS:
        assert f"guides/{name}" in page, name


@pytest.mark.parametrize("name", SCRIPTS)
def test_guide_runs_and_its_lrs_match(name):
    for module in NEEDS.get(name, ()):
        if importlib.util.find_spec(module) is None:
            needs_install(f"{module} is not installed", f"{DEV}; {FRAMEWORKS}")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    result = subprocess.run([sys.executable, str(GUIDES / name)], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "at every step" in result.stdout or "on every rank" in result.stdout, result.stdout
