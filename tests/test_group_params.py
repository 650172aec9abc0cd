"""``group`` parameters: a float each optimizer param group may set under the parameter's name.

What they are for (Cerebras ``ScalePerParamLR``, timm's layer-decay ``lr_scale``) is checked
against the real libraries: each param group's value, at every step, equals the library's
for a group with that factor.  The language side: the type reads, checks and binds like a
float; the torch class reads each group's entry (eagerly and compiled); the Cerebras class,
which sets one value in every group, refuses it.
"""

from __future__ import annotations

import math
import types
from pathlib import Path

import pytest
from anchors import reference as R
from anchors.preset_cases import max_error

import schedlang
from schedlang.formats import import_file

CONFIGS = Path(__file__).parent / "frameworks" / "configs"
SOURCE = ("param scale: group = 1 where scale > 0\nparam total: int = 60\n"
          "schedule lr = scale * (warmup(linear, 10) >> cosine(0.1, 0.001, total - 10))\n")
FACTORS = (1.0, 0.5, 0.25)


def _groups(torch, key, factors, lr=1.0):
    """One param group per factor (the first one without the entry: the default applies)."""
    groups = []
    for index, factor in enumerate(factors):
        group = {"params": [torch.nn.Parameter(torch.zeros(1))]}
        if index:
            group[key] = factor
        groups.append(group)
    return torch.optim.SGD(groups, lr=lr)


def _drive(optimizer, scheduler, steps, key="lr"):
    """Each group's value at steps 0 .. steps-1 (``opt.step(); sched.step()``)."""
    seen = []
    for _ in range(steps):
        seen.append([float(group[key]) for group in optimizer.param_groups])
        optimizer.step()
        scheduler.step()
    return seen


def test_a_group_parameter_is_a_float_everywhere_but_in_a_class():
    program = schedlang.compile(SOURCE)
    assert program["lr"](10) == pytest.approx(0.1)
    assert schedlang.compile(SOURCE, params={"scale": 0.5})["lr"](10) == pytest.approx(0.05)
    assert program.params["scale"].type == "group"
    with pytest.raises(schedlang.SchedlangError, match="must satisfy"):
        schedlang.compile(SOURCE, params={"scale": -1})


def test_the_torch_class_reads_each_groups_entry():
    torch = pytest.importorskip("torch")
    program = schedlang.compile(SOURCE)
    optimizer = _groups(torch, "scale", FACTORS)
    scheduler = program.scheduler_class("Scaled")(optimizer)
    for step, values in enumerate(_drive(optimizer, scheduler, 70)):
        expected = [f * program["lr"](step) for f in FACTORS]
        assert values == pytest.approx(expected, rel=1e-15, abs=0), step


def test_the_constructor_value_is_the_default_for_groups_without_an_entry():
    torch = pytest.importorskip("torch")
    optimizer = _groups(torch, "scale", (None, 0.5))
    schedlang.compile(SOURCE).scheduler_class("Scaled")(optimizer, scale=2.0)
    assert [g["lr"] for g in optimizer.param_groups] == pytest.approx([0.0, 0.0])
    optimizer.step()
    scheduler = schedlang.compile(SOURCE).scheduler_class("Scaled")(optimizer, scale=2.0, last_epoch=4)
    one = schedlang.compile(SOURCE)["lr"](5)
    assert [g["lr"] for g in optimizer.param_groups] == pytest.approx([2 * one, 0.5 * one])
    assert scheduler.get_last_lr() == pytest.approx([2 * one, 0.5 * one])


def test_a_groups_entry_is_checked_against_the_where_clause():
    torch = pytest.importorskip("torch")
    optimizer = _groups(torch, "scale", (1.0, -0.5))
    with pytest.raises(schedlang.SchedlangError, match="param group 1: parameter 'scale' must satisfy"):
        schedlang.compile(SOURCE).scheduler_class("Scaled")(optimizer)


def test_the_cerebras_class_refuses_a_group_parameter():
    with pytest.raises(schedlang.SchedlangError, match="one value in every param group") as info:
        schedlang.compile(SOURCE).scheduler_class("C", target="cerebras")
    assert info.value.span.line == 1


def test_tensor_lrs_compiled_take_their_groups_factor_without_recompiling():
    torch = pytest.importorskip("torch")
    program = schedlang.compile(SOURCE)
    groups = [{"params": [torch.nn.Parameter(torch.zeros(1))], "lr": torch.tensor(1.0)},
              {"params": [torch.nn.Parameter(torch.zeros(1))], "lr": torch.tensor(1.0), "scale": 0.5}]
    optimizer = torch.optim.SGD(groups, lr=1.0)
    scheduler = program.scheduler_class("Scaled")(optimizer)
    compiles = []

    def backend(graph_module, example_inputs):
        compiles.append(1)
        return graph_module.forward

    torch._dynamo.reset()
    step = torch.compile(scheduler.step, fullgraph=True, backend=backend)
    for k in range(1, 40):
        step()
        if k == 1:
            first = len(compiles)
        want = program["lr"](k)
        got = [float(g["lr"]) for g in optimizer.param_groups]
        assert got == pytest.approx([want, 0.5 * want], rel=1e-6), k
    assert len(compiles) == first, "recompiled after the first step"
    assert scheduler.last_epoch == 39
    torch._dynamo.reset()


def test_group_parameters_are_refused_by_exports_that_cannot_say_them():
    from schedlang.formats.export import export

    for fmt in ("composer-yaml", "hf-args", "deepspeed-json", "megatron-args"):
        with pytest.raises(schedlang.SchedlangError, match="group parameter 'scale'"):
            export(SOURCE, "x.sched", format=fmt)


# -- Cerebras ScalePerParamLR / ScalePerParamWD ---------------------------------------------------

_SEQUENCE = ("SequentialLR", {"schedulers": [
    ("LinearLR", {"initial_learning_rate": 0.0, "end_learning_rate": 3e-4, "total_iters": 20}),
    ("CosineDecayLR", {"initial_learning_rate": 3e-4, "end_learning_rate": 3e-5, "total_iters": 80})],
    "milestones": [20]})


def _cerebras(name, kwargs, steps, **group):
    try:
        return R.cerebras_values(name, kwargs, steps, param_group=group)
    except R.AnchorUnavailable as exc:
        pytest.skip(str(exc))


@pytest.mark.parametrize("style", ["presets", "core"])
def test_scale_per_param_imports_and_drives_each_group_as_cstorch(style):
    torch = pytest.importorskip("torch")
    steps = range(120)
    lr = {f: _cerebras("ScalePerParamLR", {"scheduler": _SEQUENCE}, steps, adjust_learning_rate=f)
          for f in FACTORS}
    wd = {f: _cerebras("ScalePerParamWD", {"scheduler": ("LinearWD", {"initial_val": 0.1, "end_val": 0.01,
                                                                       "total_iters": 50})},
                       steps, weight_decay=0.1, adjust_learning_rate=f) for f in FACTORS}
    assert lr[0.5][30] == pytest.approx(lr[1.0][30] / 2)  # the reference does scale
    program = schedlang.compile(import_file(CONFIGS / "cerebras_scale_per_param.yaml", style=style))
    optimizer = _groups(torch, "adjust_learning_rate", FACTORS)
    for group in optimizer.param_groups:
        group["weight_decay"] = 0.1
    scheduler = program.scheduler_class("ScalePerParam")(optimizer)
    for step in steps:
        for factor, group in zip(FACTORS, optimizer.param_groups):
            assert group["lr"] == pytest.approx(lr[factor][step], rel=1e-6, abs=1e-12), (factor, step)
            assert group["weight_decay"] == pytest.approx(wd[factor][step], rel=1e-6), (factor, step)
        optimizer.step()
        scheduler.step()


def test_scale_per_param_styles_are_proven_equal():
    for config in ("cerebras_scale_per_param.yaml", "cerebras_legacy_adjust_lr.yaml"):
        a, b = (schedlang.compile(import_file(CONFIGS / config, style=s)) for s in ("presets", "core"))
        for name in a.schedules:
            for scale in (1, 0.3):
                bound = [p.rebind({"adjust_learning_rate": scale})[name] for p in (a, b)]
                assert schedlang.equivalent(*bound), (config, name, scale)


def test_legacy_adjust_learning_rate_wraps_the_schedule():
    steps = range(110)
    legacy = ("SequentialLR", {"schedulers": [
        ("LinearLR", {"initial_learning_rate": 0.0, "end_learning_rate": 2e-4, "total_iters": 30}),
        ("CosineDecayLR", {"initial_learning_rate": 2e-4, "end_learning_rate": 2e-5, "total_iters": 70})]})
    want = _cerebras("ScalePerParamLR", {"scheduler": legacy}, steps, adjust_learning_rate=0.25)
    program = schedlang.compile(import_file(CONFIGS / "cerebras_legacy_adjust_lr.yaml"),
                                params={"adjust_learning_rate": 0.25})
    assert max_error(program["lr"].values(list(steps)), want, 1e-3) <= 1e-6


@pytest.mark.parametrize("text, message", [
    ("schedulers:\n  - SequentialLR:\n      schedulers:\n        - ScalePerParamLR:\n"
     "            scheduler: {ConstantLR: {learning_rate: 1}}\n", "ScalePerParamLR inside a SequentialLR"),
    ("schedulers:\n  - ScalePerParamLR:\n      scheduler:\n        - ConstantLR: {learning_rate: 1}\n"
     "        - ConstantLR: {learning_rate: 2}\n", "must be one scheduler"),
])
def test_scale_per_param_misuse_is_refused(text, message):
    from schedlang.formats import from_cerebras_yaml

    with pytest.raises(schedlang.SchedlangError, match=message):
        from_cerebras_yaml(text)


# -- timm layer decay (lr_scale) ---------------------------------------------------------------------


def test_timm_layer_decay_drives_each_groups_lr_scale_as_timm():
    torch = pytest.importorskip("torch")
    from frameworks.real import real

    from schedlang.formats.timm_args import TRAIN_DEFAULTS

    scheduler_module = real("timm.scheduler")
    scales = [0.65 ** depth for depth in (2, 1, 0)]
    arguments = dict(lr=0.0005, min_lr=1e-6, epochs=30, warmup_epochs=3, warmup_lr=1e-6, layer_decay=0.65)

    def optimizer():
        return torch.optim.AdamW([{"params": [torch.nn.Parameter(torch.zeros(1))], "lr_scale": s}
                                  for s in scales], lr=arguments["lr"])

    cfg = types.SimpleNamespace(**{**TRAIN_DEFAULTS, **arguments})
    for style in ("presets", "core"):
        theirs_opt = optimizer()
        theirs, _ = scheduler_module.create_scheduler_v2(theirs_opt, **scheduler_module.scheduler_kwargs(cfg),
                                                         updates_per_epoch=0)
        program = schedlang.compile(import_file(CONFIGS / "timm_beit_layer_decay_args.yaml", style=style))
        ours_opt = optimizer()
        ours = program.scheduler_class("LayerDecay")(ours_opt)
        for epoch in range(40):
            if epoch:
                theirs.step(epoch)
                ours.step()
            for a, b in zip(ours_opt.param_groups, theirs_opt.param_groups):
                assert math.isclose(a["lr"], b["lr"], rel_tol=1e-12, abs_tol=1e-18), (style, epoch)


def test_from_the_command_line(tmp_path):
    """``schedlang compile --target torch`` writes a module whose class reads each group's
    entry; ``--target cerebras`` exits 2 with the caret at the parameter."""
    torch = pytest.importorskip("torch")
    import importlib.util

    from helpers import run_cli

    source = tmp_path / "scaled.sched"
    source.write_text(SOURCE)
    out = tmp_path / "scaled_module.py"
    result = run_cli("compile", source, "--target", "torch", "-o", out, "--class-name", "Scaled")
    assert result.returncode == 0, result.stderr
    spec = importlib.util.spec_from_file_location("scaled_module", out)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    optimizer = _groups(torch, "scale", FACTORS)
    scheduler = module.Scaled(optimizer)
    program = schedlang.compile(SOURCE)
    for step, values in enumerate(_drive(optimizer, scheduler, 20)):
        assert values == pytest.approx([f * program["lr"](step) for f in FACTORS], rel=1e-15), step
    refused = run_cli("compile", source, "--target", "cerebras")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "scaled.sched:1:7: error: the Cerebras class sets one value" in refused.stderr
    assert "^^^^^" in refused.stderr


def test_tagged_scale_per_param_drives_its_groups_as_cstorch():
    """cstorch requires ScalePerParamLR's scheduler to repeat its param_group_tags."""
    torch = pytest.importorskip("torch")
    from schedlang.formats import from_cerebras_yaml

    inner = ("CosineDecayLR", {"initial_learning_rate": 1e-3, "end_learning_rate": 1e-4, "total_iters": 40,
                               "param_group_tags": "body"})
    want = _cerebras("ScalePerParamLR", {"scheduler": inner, "param_group_tags": "body"}, range(60),
                     adjust_learning_rate=0.5, tags={"body"})
    text = ("schedulers:\n  - ScalePerParamLR:\n      param_group_tags: body\n      scheduler:\n"
            "        CosineDecayLR: {initial_learning_rate: 1.0e-3, end_learning_rate: 1.0e-4,"
            " total_iters: 40, param_group_tags: body}\n")
    program = schedlang.compile(from_cerebras_yaml(text))
    assert list(program.schedules) == ["lr__body"]
    optimizer = torch.optim.SGD([{"params": [torch.nn.Parameter(torch.zeros(1))], "tags": "body",
                                  "adjust_learning_rate": 0.5},
                                 {"params": [torch.nn.Parameter(torch.zeros(1))], "lr": 0.25}], lr=1.0)
    with pytest.raises(schedlang.SchedlangError, match="no schedule drives 'lr' in optimizer param group 1"):
        program.scheduler_class("Tagged")(optimizer)  # every group is driven, or says it is not
    optimizer.param_groups[1]["unscheduled"] = True
    scheduler = program.scheduler_class("Tagged")(optimizer)
    for step, values in enumerate(_drive(optimizer, scheduler, 60)):
        assert values[0] == pytest.approx(want[step], rel=1e-6), step
        assert values[1] == 0.25  # untagged: not driven


def test_check_says_what_a_group_parameter_does(tmp_path):
    from helpers import run_cli

    path = tmp_path / "g.sched"
    path.write_text(SOURCE)
    result = run_cli("check", path)
    assert result.returncode == 0, result.stderr
    said = "param scale: group = 1 (a scheduler class takes each param group's 'scale' entry)"
    assert said in result.stdout


def test_a_composer_scheduler_refuses_a_group_parameter():
    from schedlang.runtime.composer import ComposerScheduler

    with pytest.raises(schedlang.SchedlangError, match="one multiplier of its initial lr"):
        ComposerScheduler(schedlang.compile(SOURCE)["lr"])
