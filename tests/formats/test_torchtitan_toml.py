"""torchtitan job configs (``torchtitan-toml``): import, the ``formula`` option, the errors.

Each sample config is imported, compiled and compared with torchtitan's own scheduler built from
the same TOML (the current formula and the historical ones, tests/frameworks/torchtitan_history.py),
and the preset-style import is proven equal to the core-style one; errors point into the file.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import tomllib
from anchors.preset_cases import max_error
from frameworks import torchtitan_history as history
from frameworks.torchtitan_cases import lambda_values, titan_values

import schedlang
from schedlang.formats import import_file

CONFIGS = Path(__file__).parents[1] / "frameworks" / "configs"
ROOT = Path(__file__).resolve().parents[2]


def _reference(path: Path, formula: str, steps) -> list[float]:
    data = tomllib.loads(path.read_text())
    lr = data.get("optimizer", {}).get("lr", 8e-4)
    total = data.get("training", {}).get("steps", 10_000)
    sched = dict(data.get("lr_scheduler", {}))
    if formula == "2024":
        return lambda_values(history.build_3d6f73c4(total, data["training"].get("warmup_steps", 200)), lr,
                             steps)
    if formula == "2025-03":
        build = history.build_24041973(total, sched.get("warmup_steps", 200), sched.get("decay_ratio"),
                                       sched.get("decay_type", "linear"), sched.get("lr_min", 0.0))
        return lambda_values(build, lr, steps)
    if "lr_min" in sched:
        sched["min_lr_factor"] = sched.pop("lr_min")
    return titan_values(sched, total, lr, steps)


SAMPLES = [("torchtitan_llama_8b.toml", None, "current"), ("torchtitan_wsd.toml", None, "current"),
           ("torchtitan_wsd.toml", "2025-03", "2025-03"), ("torchtitan_2024.toml", None, "2024"),
           ("torchtitan_defaults.toml", None, "current")]


@pytest.mark.parametrize(("name", "option", "formula"), SAMPLES)
def test_import_matches_torchtitan(name, option, formula):
    path = CONFIGS / name
    options = {"formula": option} if option else None
    presets = import_file(path, "torchtitan-toml", options=options)
    core = import_file(path, "torchtitan-toml", style="core", options=options)
    total = tomllib.loads(path.read_text())["training"]["steps"]
    steps = range(2 * total + 10)
    ours = schedlang.compile(presets)["lr"].values(steps)
    anchor = _reference(path, formula, steps)
    assert max_error(ours, anchor, 1e-3) <= 1e-12
    assert schedlang.equivalent(schedlang.compile(presets)["lr"], schedlang.compile(core)["lr"])


def test_cli_import_with_option(tmp_path):
    out = tmp_path / "wsd.sched"
    run = subprocess.run([sys.executable, "-m", "schedlang", "import", str(CONFIGS / "torchtitan_wsd.toml"),
                          "--option", "formula=2025-03", "-o", str(out)], capture_output=True, text=True,
                         cwd=ROOT)
    assert run.returncode == 0, run.stderr
    assert "torchtitan.lr_scheduler_v2025_03(" in out.read_text()
    verify = subprocess.run([sys.executable, "-m", "schedlang", "verify", str(out), "-e",
                             "(0.0008 * (t + 1) / 51 for 50) >> constant(0.0008, 430) >> "
                             "0.0008 * (1 - sqrt((t + 1) / 121))"], capture_output=True, text=True, cwd=ROOT)
    assert verify.returncode == 0, verify.stdout + verify.stderr


BAD = [
    ("[lr_scheduler]\nwarmup_steps = 10\ndecay_typ = 'cosine'\n", None, "3:1", "decay_type"),
    ("[lr_scheduler]\ndecay_type = 'cosin'\n", None, "2:14", "cosine"),
    ("[training]\nsteps = -3\n", None, "2:9", "whole number"),
    ("[training]\nwarmup_steps = 10\nsteps = 100\n[lr_scheduler]\ndecay_ratio = 0.1\n", "2024", "4:2",
     "no [lr_scheduler]"),
    ("[training]\nwarmup_steps = 10\n", "current", "2:1", "formula=2024"),
    ("[lr_scheduler]\nmin_lr_factor = 0.1\n", "2025-03", "2:1", "formula=current"),
    ("[lr_scheduler\nx = 1\n", None, "1:", "not valid TOML"),
]


@pytest.mark.parametrize(("text", "formula", "where", "words"), BAD)
def test_import_errors_point_into_the_file(tmp_path, text, formula, where, words):
    path = tmp_path / "job.toml"
    path.write_text(text)
    with pytest.raises(schedlang.SchedlangError) as info:
        import_file(path, options={"formula": formula} if formula else None)
    message = str(info.value)
    assert f"job.toml:{where}" in message and "^" in message
    assert words in message


@pytest.mark.parametrize("style", ["presets", "core"])
@pytest.mark.parametrize(("text", "where"), [
    ("[training]\nsteps = 100\n[lr_scheduler]\ntotal_steps = 1" + "0" * 30 + "\ndecay_ratio = 0.5\n",
     (4, 15)),
    ("[training]\nsteps = 1" + "0" * 30 + "\n[lr_scheduler]\nwarmup_steps = 10\ndecay_ratio = 0.1\n", (2, 9)),
])
def test_an_error_the_lowering_raises_lands_on_the_key_it_came_from(tmp_path, style, text, where):
    """The schedule the import lowers is a tree whose numbers carry the spans of the keys they are
    computed from, so a stable phase too long for the lowering (core style's ``constant(lr, N)``,
    ``N`` from the steps and ``decay_ratio``) is refused at ``total_steps`` or ``[training] steps``,
    not with a quote of the generated line."""
    path = tmp_path / "job.toml"
    path.write_text(text)
    with pytest.raises(schedlang.SchedlangError) as info:
        import_file(path, style=style)
    assert "a duration must be at most" in info.value.message
    assert info.value.span.source.filename == str(path)
    assert (info.value.line, info.value.column) == where, str(info.value)
