"""Small shared helpers for the test suite."""

import os
import subprocess
import sys
from pathlib import Path

import schedlang

ROOT = Path(__file__).resolve().parent.parent


def values(source: str, steps, name: str = "lr", **params):
    schedule = schedlang.compile(source, params=params or None)[name]
    return [schedule(s) for s in steps]


def run_cli(*args, input_text=None, cwd=None):
    """Run `python -m schedlang ARGS` the way a user would; returns the CompletedProcess."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "schedlang", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd or ROOT, env=env, input=input_text, timeout=120)
