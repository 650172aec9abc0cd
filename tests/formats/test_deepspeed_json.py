"""DeepSpeed configs (``deepspeed-json``): import, export, the refusals.

Each sample config (``CONFIGS/deepspeed``, and a DeepSpeed dict in a Python file) is imported,
compiled and compared with the real ``deepspeed.runtime.lr_schedules`` at every step past the end
(a torch scheduler named in the block with torch's own); preset and core styles are proven equal;
unsupported input is refused at its line and column.

``schedlang export --format deepspeed-json``: every DeepSpeed preset row exported, the config's
scheduler block run through the real ``deepspeed.runtime.lr_schedules`` class, and its values
compared with the original schedule at every step (the export itself is read back and proven
equal before it is returned).
"""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import pytest
from frameworks.deepspeed_cases import DEEPSPEED, deepspeed_values
from helpers import both_styles

import schedlang
from schedlang.errors import SchedlangError
from schedlang.formats import guess_format, import_file
from schedlang.formats.export import export

CONFIGS = Path(__file__).parents[1] / "frameworks" / "configs"
PYTHON = CONFIGS / "python"


# type, its keyword arguments, the optimizer's lr, steps, and -D values for "auto"
DEEPSPEED_JSON = {
    "warmup_decay_fp16.json": ("WarmupDecayLR", dict(warmup_min_lr=0, warmup_max_lr=3e-4, warmup_num_steps=50,
                                                     total_num_steps=300), 3e-4, 400, {}),
    "hf_auto_cosine.json": ("WarmupCosineLR", dict(total_num_steps=240, warmup_num_steps=24,
                                                   warmup_min_ratio=0.05,
                                                   cos_min_ratio=0.1, warmup_type="linear"), 2e-5, 320,
                            {"learning_rate": 2e-5, "total_num_steps": 240, "warmup_num_steps": 24}),
    "onecycle_adam.json": ("OneCycle", dict(cycle_min_lr=1e-4, cycle_max_lr=1e-3, cycle_first_step_size=80,
                                            cycle_second_step_size=120, decay_step_size=25, decay_lr_rate=0.2,
                                            cycle_min_mom=0.85, cycle_max_mom=0.95, decay_mom_rate=0.001),
                           1e-3, 400, {}),
    "warmup_lr_optimizer_lr.json": ("WarmupLR", dict(warmup_num_steps=40, warmup_type="exponential"), 2e-3,
                                    100, {}),
}


@pytest.mark.parametrize("name", sorted(DEEPSPEED_JSON))
def test_deepspeed_config_matches_deepspeed(name):
    kind, kwargs, lr, steps, params = DEEPSPEED_JSON[name]
    program = both_styles(CONFIGS / "deepspeed" / name, "deepspeed-json", params)
    expected = deepspeed_values(kind, kwargs, steps, lr=lr)
    assert program["lr"].values(range(steps)) == pytest.approx(expected, rel=1e-12, abs=1e-18)
    if kind == "OneCycle":
        momentum = deepspeed_values(kind, kwargs, steps, lr=lr, read="momentum")
        assert program["momentum"].values(range(steps)) == pytest.approx(momentum, rel=1e-12)


def test_deepspeed_torch_fallback_matches_torch():
    import torch

    program = both_styles(CONFIGS / "deepspeed" / "torch_fallback_step.json", "deepspeed-json")
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=30, gamma=0.5)
    expected = []
    for _ in range(100):
        expected.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    assert program["lr"].values(range(100)) == pytest.approx(expected, rel=1e-12)


def test_deepspeed_unknown_key_is_a_type_error_at_its_line():
    with pytest.raises(schedlang.SchedlangError) as info:
        import_file(CONFIGS / "deepspeed" / "bad_cosine_keys.json", "deepspeed-json")
    text = str(info.value)
    assert ":5:41:" in text and "warmup_min_ratio" in text and "^" in text


@pytest.mark.parametrize("config, message", [
    ('{"optimizer": {"type": "Adam"}}', 'no "scheduler" block'),
    ('{"scheduler": {"type": "CosineDecay"}}', "neither a DeepSpeed nor a torch scheduler"),
    ('{"scheduler": {"type": "ReduceLROnPlateau", "params": {}}}', "cannot be imported"),
    ('{"scheduler": {"type": "WarmupLR", "params": {"last_batch_iteration": 99}}}', "resumes a run"),
])
def test_deepspeed_refusals(tmp_path, config, message):
    path = tmp_path / "ds_config.json"
    path.write_text(config)
    with pytest.raises(schedlang.SchedlangError) as info:
        import_file(path, "deepspeed-json")
    assert message in str(info.value)


@pytest.mark.parametrize("style", ["presets", "core"])
def test_an_error_the_lowering_raises_lands_on_the_key_it_came_from(style):
    """The preset call the import lowers is built of nodes at the config's values, so the period
    torch's StepLR refuses (the lowering's check, not the reader's) is at its ``step_size``, in
    both styles: even where another block has a key of that name, where a search of the config
    for the generated line's key found two and gave up (an error quoting the generated line)."""
    config = ('{\n  "optimizer": {"type": "AdamW", "params": {"lr": 0.1}},\n'
              '  "scheduler": {"type": "StepLR", "params": {"step_size": 0, "gamma": 0.5}},\n'
              '  "flops_profiler": {"enabled": false, "step_size": 4}\n}\n')
    with pytest.raises(SchedlangError) as info:
        schedlang.formats.from_deepspeed_json(config, "ds_config.json", style=style)
    assert info.value.message == "a period must be positive, not 0"
    assert info.value.span.source.filename == "ds_config.json"
    line = config.splitlines()[2]
    assert (info.value.line, info.value.column) == (3, line.index('"step_size": 0') + 14), str(info.value)


# -- a DeepSpeed dict in a Python file (formats/common/pyconfig/literal.py) ------------------------


def test_deepspeed_dict_in_a_python_file():
    path = PYTHON / "deepspeed_dict.py"
    assert guess_format(path, path.read_text()) == "deepspeed-json"
    program = schedlang.compile(import_file(path))
    scheduler = runpy.run_path(str(path))["config"]["scheduler"]  # Python's own reading of the file
    assert scheduler["params"]["warmup_max_lr"] == 3e-4 and scheduler["params"]["warmup_num_steps"] == 100
    expected = deepspeed_values(scheduler["type"], scheduler["params"], 2100, lr=6e-4)
    assert program["lr"].values(range(2100)) == pytest.approx(expected, rel=1e-12, abs=1e-18)


# -- export of every DeepSpeed preset row -----------------------------------------------------------

LR_ROWS = [c for c in DEEPSPEED if c.options.get("read") != "momentum"]


@pytest.mark.parametrize("case", LR_ROWS, ids=lambda c: c.source[:70])
def test_exported_config_drives_deepspeed_like_the_original(case):
    config = json.loads(export(case.source, "ds.sched", format="deepspeed-json"))
    block = config["scheduler"]
    lr = config.get("optimizer", {}).get("params", {}).get("lr", 1.0)
    theirs = deepspeed_values(block["type"], block["params"], len(case.compared), lr=lr)
    ours = schedlang.compile(case.source)["lr"].values(case.compared)
    assert ours == pytest.approx(theirs, rel=1e-12, abs=1e-15)


def test_what_deepspeed_cannot_say_is_refused():
    with pytest.raises(SchedlangError, match="no deepspeed scheduler equals this lr schedule: the closest"):
        export("warmup(linear, 10) >> cosine(1e-3, 0, 90)", format="deepspeed-json")
    with pytest.raises(SchedlangError, match="derives from its scheduler"):
        export("deepspeed.OneCycle.get_mom(cycle_min_lr=1e-4, cycle_max_lr=1e-3)", format="deepspeed-json")


# -- export --into the config the file came from (issue 36) -------------------------------------------


def _engine_values(config: dict, steps: int, autos: dict | None = None) -> list[float]:
    """What the engine runs for a config: ``lr_schedules.<type>(optimizer, **params)`` on an
    optimizer at ``optimizer.params.lr`` (``"auto"`` filled from ``autos``, as the HF Trainer does)."""
    autos = autos or {}
    block = config["scheduler"]
    params = {k: autos.get(k, v) if v == "auto" else v for k, v in block.get("params", {}).items()}
    lr = config.get("optimizer", {}).get("params", {}).get("lr", 1.0)
    lr = autos.get("learning_rate", 1.0) if lr == "auto" else lr
    return deepspeed_values(block["type"], params, steps, lr=lr)


@pytest.mark.parametrize("name, autos", [
    ("warmup_lr_optimizer_lr.json", {}), ("warmup_decay_fp16.json", {}), ("onecycle_adam.json", {}),
    ("hf_auto_cosine.json", {"total_num_steps": 400, "warmup_num_steps": 40, "learning_rate": 2e-4}),
])
def test_export_into_the_original_config_drives_deepspeed_as_the_original(name, autos):
    """import -> export --into the original: the output is the original with its scheduler block
    replaced and its own optimizer's lr set (type, betas, weight decay kept); DeepSpeed's real
    lr_schedules class gives the original's lr at every step."""
    path = CONFIGS / "deepspeed" / name
    original = json.loads(path.read_text())
    merged = json.loads(export(import_file(path), "ds.sched", format="deepspeed-json", params=autos,
                               into=path))
    assert {k: v for k, v in merged.items() if k not in ("scheduler", "optimizer")} == \
        {k: v for k, v in original.items() if k not in ("scheduler", "optimizer")}
    assert merged["optimizer"]["type"] == original["optimizer"]["type"]
    assert {k: v for k, v in merged["optimizer"]["params"].items() if k != "lr"} == \
        {k: v for k, v in original["optimizer"]["params"].items() if k != "lr"}
    assert _engine_values(merged, 500) == pytest.approx(_engine_values(original, 500, autos), rel=1e-12,
                                                        abs=1e-15)


def test_export_into_a_config_of_another_scheduler_type_replaces_the_block_whole():
    """The original's WarmupLR params (warmup_type) would be a TypeError under WarmupDecayLR."""
    path = CONFIGS / "deepspeed" / "warmup_lr_optimizer_lr.json"
    source = ("schedule lr = deepspeed.WarmupDecayLR(total_num_steps=300, warmup_num_steps=30, "
              "warmup_max_lr=1e-3)\n")
    merged = json.loads(export(source, "ds.sched", format="deepspeed-json", into=path))
    assert merged["scheduler"] == {"type": "WarmupDecayLR", "params": {"total_num_steps": 300,
                                                                       "warmup_num_steps": 30,
                                                                       "warmup_max_lr": 0.001}}
    assert merged["optimizer"] == json.loads(path.read_text())["optimizer"]  # lr= not given: untouched
    assert _engine_values(merged, 320) == pytest.approx(schedlang.compile(source)["lr"].values(range(320)),
                                                        rel=1e-12, abs=1e-15)


def test_export_into_a_config_without_an_optimizer_is_refused_at_the_lr(tmp_path):
    path = tmp_path / "ds_config.json"
    path.write_text('{"train_batch_size": 8, "scheduler": {"type": "WarmupLR", "params": {}}}\n')
    with pytest.raises(SchedlangError) as info:
        export("schedule lr = deepspeed.WarmupCosineLR(total_num_steps=100, lr=1e-3)\n", "ds.sched",
               format="deepspeed-json", into=path)
    assert "ds.sched:1:64:" in str(info.value) and "no optimizer block" in str(info.value)


@pytest.mark.parametrize("kind, kwargs", [
    ("WarmupLR", dict(warmup_max_lr=1e-3, warmup_num_steps=40)),
    ("WarmupDecayLR", dict(warmup_max_lr=1e-3, warmup_num_steps=40, total_num_steps=120)),
    ("WarmupCosineLR", dict(warmup_num_steps=40, total_num_steps=120, cos_min_ratio=0.1)),
])
def test_an_unknown_warmup_type_warns_and_runs_log_as_deepspeed(tmp_path, kind, kwargs):
    """DeepSpeed's constructors warn on a warmup_type that is neither 'log' nor 'linear' and use
    'log' (lr_schedules.py); the import does the same, warns at the key, and notes it in the file."""
    path = tmp_path / "ds.json"
    path.write_text(json.dumps({"scheduler": {"type": kind, "params": {**kwargs, "warmup_type": "cosine"}}}))
    with pytest.warns(schedlang.SchedlangWarning, match="warmup_type 'cosine' is neither") as caught:
        text = import_file(path, "deepspeed-json")
    assert caught[0].message.span.line == 1 and 'warmup_type="log"' in text and "# note:" in text
    expected = deepspeed_values(kind, {**kwargs, "warmup_type": "cosine"}, 150, lr=1e-3)
    program = schedlang.compile(text, params={"optimizer_lr": 1e-3} if "optimizer_lr" in text else None)
    assert program["lr"].values(range(150)) == pytest.approx(expected, rel=1e-12, abs=1e-18)
