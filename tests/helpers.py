"""Small shared helpers for the test suite."""

import os
import subprocess
import sys
from pathlib import Path

import schedlang
from schedlang.formats import import_file

ROOT = Path(__file__).resolve().parent.parent
#: Every ``.sched`` in the repository (examples, docs, the test corpora), for the highlighters' tests.
SCHED_FILES = sorted(p for p in ROOT.rglob("*.sched")
                     if not any(part.startswith(".") for part in p.relative_to(ROOT).parts))


def expected_error_at(path: Path) -> tuple[int, int] | None:
    """Where a file of the diagnostics corpus is expected to fail (``file:line:col`` of its ``.txt``)."""
    expected = path.with_suffix(".txt")
    if path.parent.name != "diagnostics" or not expected.exists():
        return None
    location = expected.read_text(encoding="utf-8").split(": error:", 1)[0]
    line, col = location.rsplit(":", 2)[-2:]
    return int(line), int(col)


def values(source: str, steps, name: str = "lr", **params):
    schedule = schedlang.compile(source, params=params or None)[name]
    return [schedule(s) for s in steps]


def run_cli(*args, input_text=None, cwd=None):
    """Run `python -m schedlang ARGS` the way a user would; returns the CompletedProcess."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "schedlang", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd or ROOT, env=env, input=input_text, timeout=120)


def both_styles(path, fmt: str, params: dict | None = None):
    """A configuration imported in both styles, each schedule proven equal across them; the
    presets-style program."""
    presets = schedlang.compile(import_file(path, fmt), params=params)
    core = schedlang.compile(import_file(path, fmt, style="core"), params=params)
    for name in presets.schedules:
        assert schedlang.equivalent(presets[name], core[name]), name
    return presets


class Counting:
    """A ``torch.compile`` backend that counts compilations, then hands the graph to the real
    backend it names (``aot_eager``, ``inductor``): what the compiled-path tests count
    recompiles with.  torch is imported when one is made, so importing helpers stays light."""

    def __init__(self, backend: str):
        import torch._dynamo  # lazy: only the compiled-path tests make one

        self.backend = torch._dynamo.lookup_backend(backend)
        self.compiles = 0

    def __call__(self, graph_module, example_inputs):
        self.compiles += 1
        return self.backend(graph_module, example_inputs)
