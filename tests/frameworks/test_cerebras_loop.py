"""A Cerebras ModelZoo config's ``run``: the optimizer updates ModelZoo's own loop trains.

ModelZoo is not on PyPI.  ``test_modelzoo_loop_trains_the_imported_run`` runs its real
``TrainingLoop`` (``on_fit_start``, which calls cerebras_pytorch's real ``compute_num_steps``) and
``GradientAccumulationCallback`` over the batches the Trainer runs, counting the global step,
from the files ``tools/extract_cerebras_loop.py`` extracts into the folder
``$SCHEDLANG_CEREBRAS_MODELZOO`` names; without it the test is skipped.  Checked here against
ModelZoo f1fd1e091dc67917b91ec213ecd63e48fd144477 (Release_2.10.0) with cerebras_pytorch 2.10.0:
every row of ``TABLE`` agrees.  ``test_imported_run_is_modelzoos_count`` always runs: the same
table, its counts being what that code computed (the rule in ``schedlang/formats/cerebras_loop.py``).
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import math
import os
import sys
import types
from pathlib import Path
from typing import Optional

import pytest

import schedlang
from schedlang.formats import import_file
from schedlang.formats.export import export

# (id, the config's `trainer.init` keys (or a legacy top level), the run schedlang imports:
#  an int, None (not stated: "length" = an epoch is the dataloader's length, "backend" = the
#  updates differ between the CSX and CPU/GPU) or "error" (ModelZoo refuses the loop))
TABLE = [
    ("max_steps", {"loop": {"max_steps": 2400, "eval_frequency": 100}}, 2400),
    ("num_steps", {"loop": {"num_steps": 900}}, 900),
    ("num_steps_first", {"loop": {"num_steps": 900, "max_steps": 2400}}, 900),
    ("max_steps_first", {"loop": {"num_steps": 3000, "max_steps": 2400}}, 2400),
    ("epochs_of_steps", {"loop": {"num_epochs": 3, "steps_per_epoch": 100}}, 300),
    ("epochs_and_max_steps", {"loop": {"num_epochs": 3, "steps_per_epoch": 100, "max_steps": 250}}, 250),
    ("epochs_accumulated_csx", {"loop": {"num_epochs": 2, "steps_per_epoch": 102, "grad_accum_steps": 4},
                                "backend": {"backend_type": "CSX"}}, 50),
    ("accumulated_csx", {"loop": {"num_steps": 900, "grad_accum_steps": 4},
                         "backend": {"backend_type": "CSX"}}, 900),
    ("accumulated_cpu", {"loop": {"num_steps": 900, "grad_accum_steps": 4},
                         "backend": {"backend_type": "CPU"}}, "backend"),
    ("accumulated_unstated", {"loop": {"num_steps": 900, "grad_accum_steps": 4}}, "backend"),
    ("accumulate_one", {"loop": {"num_steps": 900, "grad_accum_steps": 1}}, 900),
    ("epochs", {"loop": {"num_epochs": 3}}, "length"),
    ("epochs_null", {"loop": {"num_epochs": None, "max_steps": 700}}, 700),
    ("epochs_and_num_steps", {"loop": {"num_epochs": 2, "num_steps": 50}}, "error"),
    ("legacy", {"runconfig": {"max_steps": 700}}, 700),
    ("legacy_accumulated", {"runconfig": {"num_steps": 700}, "optimizer": {"grad_accum_steps": 2}},
     "backend"),
]
SCHEDULERS = [{"LinearLR": {"initial_learning_rate": 0.0, "end_learning_rate": 0.001, "total_iters": 1000}}]


def _config(keys: dict) -> dict:
    if "runconfig" in keys:
        return {**keys, "trainer": {"init": {"schedulers": SCHEDULERS}}}
    return {"trainer": {"init": {**keys, "schedulers": SCHEDULERS}}}


def _imported_run(tmp_path, keys: dict):
    import yaml

    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(_config(keys), sort_keys=False))
    return schedlang.compile(import_file(path, format="cerebras-yaml")).run


@pytest.mark.parametrize("keys, run", [row[1:] for row in TABLE], ids=[row[0] for row in TABLE])
def test_imported_run_is_modelzoos_count(tmp_path, keys, run):
    if run == "error":
        with pytest.raises(schedlang.SchedlangError, match="both num_epochs and num_steps"):
            _imported_run(tmp_path, keys)
    else:
        assert _imported_run(tmp_path, keys) == (run if isinstance(run, int) else None)


def test_export_into_an_accumulating_loop_is_refused(tmp_path):
    """Off the CSX the loop's steps are batches, a gradient-accumulating one updates on every Nth:
    no `num_steps` states the run, so the export says so at `grad_accum_steps`."""
    from schedlang.formats.common.into import Original

    text = "trainer:\n  init:\n    loop:\n      num_steps: 900\n      grad_accum_steps: 4\n"
    original = Original(text, str(tmp_path / "run.yaml"))
    with pytest.raises(schedlang.SchedlangError, match="accumulates gradients off the CSX") as info:
        export("run = 800\nschedule lr = linear(0, 0.001, 1000)\n", "lr.sched", format="cerebras-yaml",
               into=original)
    assert (info.value.line, info.value.column) == (5, 25)


# -- ModelZoo's real loop ------------------------------------------------------------------------


@contextlib.contextmanager
def _isolated(prefix: str):
    saved = {n: m for n, m in sys.modules.items() if n == prefix or n.startswith(prefix + ".")}
    for n in saved:
        del sys.modules[n]
    try:
        yield
    finally:
        for n in [n for n in sys.modules if n == prefix or n.startswith(prefix + ".")]:
            del sys.modules[n]
        sys.modules.update(saved)


def _stub(name: str, **attrs) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__path__ = []
    module.__dict__.update(attrs)
    sys.modules[name] = module
    return module


def _load(root: Path, name: str, relative: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, root / relative)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _DataLoader:
    """cstorch's DataLoader as the loop sees it: its length (None: an iterable dataset)."""

    def __init__(self, length):
        self.length = length

    def __len__(self):
        if self.length is None:
            raise TypeError("no length")
        return self.length


@pytest.fixture(scope="module")
def modelzoo():
    """ModelZoo's TrainingLoop and GradientAccumulationCallback, unmodified, on stubs of the
    cerebras.pytorch names they use (``use_cs``, ``utils.data.DataLoader``) and the real
    ``compute_num_steps`` (its function, taken from its file with ``ast``)."""
    folder = os.environ.get("SCHEDLANG_CEREBRAS_MODELZOO")
    if not folder:
        pytest.skip("SCHEDLANG_CEREBRAS_MODELZOO names no ModelZoo source: run "
                    "tools/extract_cerebras_loop.py MODELZOO --cstorch WHEEL --out DIR, then set it to DIR")
    root = Path(folder)
    utils = root / "cerebras/pytorch/utils/data/utils.py"
    if not (root / "src/cerebras/modelzoo/trainer/callbacks/loop.py").is_file() or not utils.is_file():
        pytest.fail(f"{root} lacks ModelZoo's loop.py or cerebras_pytorch's utils.py: "
                    "make it with tools/extract_cerebras_loop.py")
    import torch

    tree = ast.parse(utils.read_text(encoding="utf-8"))
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "compute_num_steps")
    namespace = {"math": math, "Optional": Optional, "torch": torch}
    exec(compile(ast.Module([node], []), str(utils), "exec"), namespace)  # noqa: S102 - its own source
    backend = types.SimpleNamespace(csx=False)
    with _isolated("cerebras"):
        cstorch = _stub("cerebras.pytorch", use_cs=lambda: backend.csx)
        cstorch.utils = _stub("cerebras.pytorch.utils")
        cstorch.utils.data = _stub("cerebras.pytorch.utils.data", DataLoader=_DataLoader,
                                   compute_num_steps=namespace["compute_num_steps"])
        _stub("cerebras")
        _stub("cerebras.modelzoo")
        _stub("cerebras.modelzoo.trainer")
        _stub("cerebras.modelzoo.trainer.callbacks", CoreCallback=type("CoreCallback", (), {}))
        callbacks = "src/cerebras/modelzoo/trainer/callbacks"
        loop = _load(root, "cerebras.modelzoo.trainer.callbacks.loop", f"{callbacks}/loop.py")
        accum = _load(root, "cerebras.modelzoo.trainer.callbacks.grad_accum", f"{callbacks}/grad_accum.py")
    return loop.TrainingLoop, accum.GradientAccumulationCallback, backend


def _trained(modelzoo, keys: dict, csx: bool, length) -> int:
    """The global step (the optimizer updates) after ModelZoo's fit: the loop's ``total_steps``
    batches (the Trainer's DataExecutor runs that many), each through the callbacks' batch hooks."""
    training_loop, accumulation, backend = modelzoo
    backend.csx = csx
    kwargs = dict(keys.get("loop") or keys.get("runconfig"))
    if "optimizer" in keys:  # the legacy key, as ModelZoo's converter maps it
        kwargs["grad_accum_steps"] = keys["optimizer"]["grad_accum_steps"]
    loop = training_loop(**kwargs)
    trainer = types.SimpleNamespace(global_step=0, loop=loop, schedule=None, should_run_optimizer_step=True,
                                    backend=types.SimpleNamespace(is_e2e_execution=True, is_csx=csx),
                                    autorestart=types.SimpleNamespace(enabled=False),
                                    logger=types.SimpleNamespace(info=lambda *args: None))
    loop.setup(trainer)
    loop.on_fit_start(trainer, _DataLoader(length), None, loop)
    callback = accumulation()
    callback.setup(trainer)
    for batch in range(loop.total_steps):
        callback.on_train_batch_start(trainer, None, None, batch)
        trainer.should_run_optimizer_step = callback.should_run_optimizer_step
        loop.on_train_batch_end(trainer, None, {}, None, batch)
    return trainer.global_step


@pytest.mark.parametrize("keys, run", [row[1:] for row in TABLE], ids=[row[0] for row in TABLE])
def test_modelzoo_loop_trains_the_imported_run(tmp_path, modelzoo, keys, run):
    """schedlang's run is the updates ModelZoo trains, whatever the dataloader's length and (without
    `backend_type: CSX`) the backend; where it states none, those change ModelZoo's count."""
    if run == "error":
        with pytest.raises(ValueError, match="Only one of `num_epochs` or `num_steps`"):
            _trained(modelzoo, keys, False, 1000)
        return
    csx = keys.get("backend", {}).get("backend_type") == "CSX"
    counts = {(on_csx, length): _trained(modelzoo, keys, on_csx, length)
              for on_csx in ({True} if csx else {True, False}) for length in (1000, 1200)}
    if run == "length":
        assert counts[csx, 1000] != counts[csx, 1200]
    elif run == "backend":
        assert counts[True, 1000] != counts[False, 1000]
    else:
        assert set(counts.values()) == {run}
    assert _imported_run(tmp_path, keys) == (run if isinstance(run, int) else None)


def test_the_extract_tool_copies_the_files_from_a_bare_checkout(tmp_path):
    """tools/extract_cerebras_loop.py: ModelZoo's files at a commit of a bare git directory and
    cerebras_pytorch's from a wheel, unmodified, with their commit and SHA-256 in MANIFEST.json."""
    import hashlib
    import json
    import subprocess
    import zipfile

    root = Path(__file__).resolve().parents[2]
    tool = _load(root, "_extract_cerebras_loop", "tools/extract_cerebras_loop.py")
    tree = tmp_path / "modelzoo"
    for name in tool.MODELZOO_FILES:
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_text(f"# {name}\n")
    git = ["git", "-C", str(tree), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "m"], check=True)
    sha = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout
    sha = sha.strip()
    wheel = tmp_path / "cerebras_pytorch-0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(tool.CSTORCH_FILE, "def compute_num_steps(): pass\n")
    out = tmp_path / "out"
    assert tool.main([str(tree / ".git"), "--cstorch", str(wheel), "--out", str(out)]) == 0
    manifest = json.loads((out / "MANIFEST.json").read_text())
    assert manifest["modelzoo_commit"] == sha
    names = [*tool.MODELZOO_FILES, tool.CSTORCH_FILE]
    assert manifest["files"] == {n: hashlib.sha256((out / n).read_bytes()).hexdigest() for n in names}
    assert (out / tool.MODELZOO_FILES[0]).read_text() == f"# {tool.MODELZOO_FILES[0]}\n"
