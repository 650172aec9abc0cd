"""Adding a math function is one row of ``core/functions.py`` (plus the regenerations its
docstring names): proven by adding ``tanh``, which the language does not have, to a copy
of the package and following it through every stage.

The copy (``schedlang/``, ``grammar/`` and ``tools/gen_editors.py`` under a temporary root) gets one
row inserted into ``FUNCTIONS`` and nothing else; a fresh interpreter on that copy then
lowers, checks, compiles (Python, torch, JAX), evaluates exactly, proves, scans, traces,
prints back, highlights and documents ``tanh``, and the three generators write it into
their files.  A stage that keeps its own list of functions fails here.  The row exists
only in this test: adding ``tanh`` to the language would be a SPEC change.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from schedlang.core.functions import BY_NAME

ROOT = Path(__file__).resolve().parent.parent

#: The one row: ``mpmath.iv`` has no ``tanh``, so the row gives its enclosure as a formula.
ROW = ('    MathFunction("tanh", sp.tanh, node=sp.tanh, array="tanh", math_names=("tanh",),\n'
       '                 interval=lambda iv, x: 1 - 2 / (iv.exp(2 * x) + 1)),\n')

#: Run by a fresh interpreter on the copy; prints one JSON object of what each stage did.
CHILD = r'''
import json, math, subprocess, sys
from pathlib import Path

import numpy as np
import sympy as sp

import schedlang
from schedlang.cli import main as cli
from schedlang.cli.docgen import main as docgen
from schedlang.cli.lexer import SchedlangLexer
from schedlang.core.exact_eval import compile_expr, to_float, to_interval
from schedlang.codegen.sched import text
from schedlang.semantics import check
from schedlang.verify.float_scan import compile_array
from schedlang.verify.zero import TRIGONOMETRIC

root = Path(sys.argv[1])
steps = [0, 150, 200, 1000]
formula = "0.1 * tanh(t / 100 - 2)"
out = {"package": schedlang.__file__}
lr = schedlang.compile(f"schedule lr = {formula}")["lr"]
out["node"] = type(lr.expr.args[1]).__name__ if lr.expr.is_Mul else type(lr.expr).__name__
out["allowed"] = sp.tanh in check.ALLOWED
out["python"] = [lr(s) for s in steps]
import torch
out["torch"] = lr.torch(torch.tensor(steps), dtype=torch.float64).tolist()
import jax
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
out["jax"] = [float(v) for v in lr.jax(jnp.array(steps), dtype=jnp.float64)]
(root / "lr.sched").write_text(f"schedule lr = {formula}\n")
for target in ("python", "torch", "jax"):
    out["source_" + target] = subprocess.run(
        [sys.executable, "-m", "schedlang", "compile", str(root / "lr.sched"), "--target", target],
        capture_output=True, text=True, cwd=root).stdout
enclosure = compile_expr(lr.expr)
out["exact"] = [to_float(enclosure(s)) for s in steps]
out["exact_width"] = max(float(to_interval(enclosure(s)).delta) for s in steps)
out["same"] = str(schedlang.equivalent(lr, f"{formula} + 0"))
# differs by 1e-30 at one step: no float can see it, only the enclosures
verdict = schedlang.equivalent(lr, f"if t == 150 then {formula} + 1e-30 else {formula}")
out["differs"] = [verdict.different, getattr(verdict.counterexample, "step", None)]
out["scan"] = compile_array(lr.expr)(np.array(steps, dtype=float)).tolist()
out["trigsimp"] = sp.tanh in TRIGONOMETRIC
out["core_text"] = text(lr.expr)
again = schedlang.compile(f"schedule lr = {out['core_text']}")["lr"]
out["reparsed"] = [again(s) for s in steps]
out["traced"] = [schedlang.from_python(lambda s: 0.1 * math.tanh(s / 100 - 2))(s) for s in steps]
out["highlight"] = [str(kind) for kind, value in SchedlangLexer().get_tokens("schedule lr = tanh(t)")
                    if value == "tanh"]
import schedlang.build as sb
out["build"] = sb.tanh(sb.t / 100).to_source()
docgen([str(root)])
out["stdlib_md"] = (root / "docs" / "stdlib.md").read_text()
subprocess.run([sys.executable, "-m", "schedlang.build.stub"], check=True, capture_output=True, cwd=root)
out["stub"] = (root / "schedlang" / "build" / "__init__.pyi").read_text()
subprocess.run([sys.executable, str(root / "tools" / "gen_editors.py")], check=True, capture_output=True)
out["grammar"] = (root / "editors" / "vscode" / "syntaxes" / "schedlang.tmLanguage.json").read_text()
print(json.dumps(out))
'''


@pytest.fixture(scope="module")
def stages(tmp_path_factory):
    root = tmp_path_factory.mktemp("with_tanh")
    shutil.copytree(ROOT / "schedlang", root / "schedlang", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "grammar", root / "grammar")  # the parser reads it from the root
    (root / "tools").mkdir()
    shutil.copy(ROOT / "tools" / "gen_editors.py", root / "tools")
    (root / "docs").mkdir()
    table = root / "schedlang" / "core" / "functions.py"
    source = table.read_text(encoding="utf-8")
    assert source.count("FUNCTIONS = (\n") == 1
    table.write_text(source.replace("FUNCTIONS = (\n", "FUNCTIONS = (\n" + ROW), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(root), "JAX_PLATFORMS": "cpu"}
    done = subprocess.run([sys.executable, "-c", CHILD, str(root)], capture_output=True, text=True,
                          cwd=root, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-4000:]
    return root, json.loads(done.stdout.strip().splitlines()[-1])


def test_the_language_does_not_have_tanh():
    assert "tanh" not in BY_NAME  # the row lives only in the copy below


def test_the_copy_is_the_one_imported(stages):
    root, out = stages
    assert Path(out["package"]).is_relative_to(root)


def test_it_lowers_and_passes_the_check(stages):
    _, out = stages
    assert out["node"] == "tanh" and out["allowed"]


def test_every_target_computes_it(stages):
    _, out = stages
    import math
    want = [0.1 * math.tanh(s / 100 - 2) for s in (0, 150, 200, 1000)]
    for target in ("python", "torch", "jax", "exact", "scan", "reparsed", "traced"):
        assert out[target] == pytest.approx(want, rel=1e-14, abs=1e-17), target
    assert out["exact_width"] < 1e-40  # a proof-grade enclosure, not a float
    assert "math.tanh(" in out["source_python"]
    # torch.tanh, or in place on a temporary (codegen/torch.py in_place_source): the same kernel
    assert "torch.tanh(" in out["source_torch"] or ".tanh_()" in out["source_torch"]
    assert "jnp.tanh(" in out["source_jax"]


def test_the_prover_decides_it(stages):
    _, out = stages
    assert out["same"].startswith("equivalent")
    assert out["differs"] == [True, 150]
    assert out["trigsimp"]


def test_it_is_written_back_highlighted_and_built(stages):
    _, out = stages
    assert "tanh(" in out["core_text"]
    assert out["highlight"] == ["Token.Name.Builtin"]
    assert "tanh(t / 100)" in out["build"]


def test_the_generators_write_it(stages):
    _, out = stages
    math_section = out["stdlib_md"].split("## Math functions and constants\n\n", 1)[1]
    names = math_section.split("`")[1].split()
    assert "tanh" in names and "sin" in names
    assert "def tanh(" in out["stub"]
    assert "|tanh|" in out["grammar"]
