"""`schedlang export --format cerebras-yaml`: ModelZoo blocks, round trips, clear refusals."""

from __future__ import annotations

import pytest
from anchors import reference as R
from helpers import ROOT, run_cli

import schedlang
from schedlang import formats
from schedlang.formats.export import export
from schedlang.library.presets import PRESETS

yaml = pytest.importorskip("yaml")

EXAMPLE = ROOT / "examples" / "cerebras_sequential.yaml"


def back(text: str) -> schedlang.Program:
    return schedlang.compile(formats.from_cerebras_yaml(text, "exported.yaml", style="core"))


EXPORTABLE = [
    "linear(0.01, 0.001, 500) >> cosine(0.001, 1e-4, 500)",
    "warmup(linear, 100) >> cosine(1e-3, 1e-5, 900)",
    "warmup(cosine, 10, start=1e-4) >> constant(1e-3)",
    "warmup(exp, 10, start=1e-3) >> poly(1, 0, 100, power=2)",
    "(linear(1, 0.5, 10) for 20) >> step(0.5, 0.1, 100)",
    "(linear(1, 0, 20) for 10) >> constant(0.5)",
    "constant(0.1) for 5 >> exp(1, 0.5, 10) for 10 >> multistep(0.25, 0.5, [10, 20])",
    "linear(1, 0.5, 10) >> (cosine(0.5, 0.1, 10) >> linear(0.1, 0, 10))",
    'cyclic(0.1, 1, 10, 5, mode="exp_range", gamma=0.99)',
    "piecewise([1, 0.5, 0.1], [10, 20])",
    "3e-4",
    "param peak: float = 3e-4\nparam warmup: int = 100\nparam total: int = 1000\n"
    "let decay = linear(peak, 0.1 * peak, total - warmup)\n"
    "schedule lr = warmup(linear, warmup) >> decay\nschedule weight_decay = cosine(0.1, 0, total)",
]


@pytest.mark.parametrize("source", EXPORTABLE)
def test_export_reads_back_equal(source):
    text = export(source)
    assert text == export(source), "not deterministic"
    original = schedlang.compile(source)
    again = back(text)
    assert set(again.schedules) == set(original.schedules)
    for name in original.schedules:
        verdict = schedlang.equivalent(original[name], again[name])
        assert verdict, (name, verdict, text)


@pytest.mark.parametrize("source", EXPORTABLE)
def test_round_trip_import_export_import_is_the_identity(source):
    first = formats.from_cerebras_yaml(export(source), "x.yaml", style="core")
    exported = export(first, "x.sched")
    second = formats.from_cerebras_yaml(exported, "x.yaml", style="core")
    assert second == first
    assert export(second, "x.sched") == exported


def test_docs_example_round_trip_through_the_cli(tmp_path):
    sched = tmp_path / "lr.sched"
    assert run_cli("import", EXAMPLE.relative_to(ROOT), "--lower", "-o", sched).returncode == 0
    first = run_cli("export", sched)
    assert first.returncode == 0, first.stderr
    exported = tmp_path / "exported.yaml"
    exported.write_text(first.stdout)
    again = run_cli("import", exported, "--lower")
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines()[2:] == sched.read_text().splitlines()[2:]  # same but the origin line
    assert run_cli("export", sched).stdout == first.stdout


def test_exported_yaml_runs_in_cstorch_with_the_same_values():
    source = "warmup(linear, 4) >> cosine(1, 0.1, 6) >> constant(0.1)"
    block = yaml.safe_load(export(source))["schedulers"][0]

    def child(entry):
        (name, kwargs), = entry.items()
        kwargs = dict(kwargs)
        if "schedulers" in kwargs:
            kwargs["schedulers"] = [child(c) for c in kwargs["schedulers"]]
        return name, kwargs

    name, kwargs = child(block)
    try:
        expected = R.cerebras_values(name, kwargs, range(14))
    except R.AnchorUnavailable as exc:
        pytest.skip(f"anchor unavailable: {exc}")
    schedule = schedlang.compile(source)["lr"]
    assert [schedule(s) for s in range(14)] == pytest.approx(expected, rel=2e-6, abs=1e-7)


def test_weight_decay_uses_the_wd_twins():
    text = export("schedule weight_decay = linear(0.1, 0.01, 100)")
    assert yaml.safe_load(text) == {"schedulers": [
        {"LinearWD": {"initial_val": 0.1, "end_val": 0.01, "total_iters": 100}}]}


def test_parameters_are_bound_with_defines(tmp_path):
    path = tmp_path / "p.sched"
    path.write_text("param total: int\nschedule lr = cosine(1e-3, 0, total)\n")
    missing = run_cli("export", path)
    assert missing.returncode == 2 and "parameter 'total' has no value" in missing.stderr
    bound = run_cli("export", path, "-D", "total=500")
    assert bound.returncode == 0, bound.stderr
    assert yaml.safe_load(bound.stdout)["schedulers"][0]["CosineDecayLR"]["total_iters"] == 500


def test_floats_are_yaml_floats_and_inexact_values_are_marked():
    text = export("cosine(6e-4, 6e-5, 10)")
    assert "6.0e-05" in text and yaml.safe_load(text)["schedulers"][0]["CosineDecayLR"][
        "end_learning_rate"] == 6e-05
    third = export("cosine(1, 1/3, 10)")
    assert "# ~ 1/3" in third


@pytest.mark.parametrize("source, message, column", [
    ("0.5 * cosine(1, 0, 10)", "arithmetic on schedules (`*`) has no Cerebras scheduler", 1),
    ("if t < 10 then 1 else 0.5", "`if ... then ... else` has no Cerebras scheduler", 1),
    ("cosine_restarts(1, 0, 10)", "cosine_restarts(...) cannot be exported", 1),
    ("warmup(linear, 5) >> onecycle(1, 100)", "onecycle(...) cannot be exported", 22),
    ("cosine(1, 0, 100) for 10", "`for` cuts this schedule before its end", 1),
    ("(cosine(1, 0, 100) for 10) >> constant(0)", "runs 100 steps but `for` gives it 10", 2),
    ("step(1, 0.5, 10) for 30 >> constant(0.1)", "StepLR has no total_iters", 1),
    ("torch.StepLR(lr=1, step_size=10)", "torch.StepLR cannot be exported", 1),
    ("def half(v) = v / 2\nschedule lr = half(constant(1))", "user function 'half'", 15),
    ("schedule momentum = constant(0.9)", "only lr and weight_decay", 10),
])
def test_refusals_name_the_construct(source, message, column):
    with pytest.raises(schedlang.SchedlangError) as info:
        export(source, "f.sched")
    assert message in info.value.message, str(info.value)
    assert info.value.column == column, str(info.value)


def test_cli_refusal_exits_2_with_caret():
    result = run_cli("export", "examples/sgdr.sched")
    assert result.returncode == 2
    assert "cosine_restarts(...) cannot be exported" in result.stderr and "^" in result.stderr


@pytest.mark.skipif("cerebras.LinearLR" not in PRESETS, reason="cerebras.* presets not merged yet")
def test_preset_files_export_argument_for_argument():
    imported = formats.from_cerebras_yaml(EXAMPLE.read_text(), "x.yaml")
    text = export(imported, "x.sched")
    original = yaml.safe_load(EXAMPLE.read_text())["trainer"]["init"]["schedulers"]
    assert yaml.safe_load(text)["schedulers"] == original


@pytest.mark.skipif("cerebras.SequentialWD" not in PRESETS, reason="cerebras.* presets not merged yet")
def test_weight_decay_twins_round_trip_in_preset_style():
    text = """schedulers:
- LinearLR: {initial_learning_rate: 0.0, end_learning_rate: 1.0e-3, total_iters: 10}
- SequentialWD:
    schedulers:
    - ConstantWD: {val: 0.1, total_iters: 5}
    - CosineDecayWD: {initial_val: 0.1, end_val: 0.0, total_iters: 10}
"""
    source = formats.from_cerebras_yaml(text, "wd.yaml")
    assert "cerebras.CosineDecayWD(initial_val=0.1, end_val=0, total_iters=10)" in source
    program = schedlang.compile(source)
    assert schedlang.equivalent(program["weight_decay"], "constant(0.1) for 5 >> cosine(0.1, 0, 10)")
    assert yaml.safe_load(export(source, "wd.sched")) == yaml.safe_load(text)


def test_schedule_option_picks_what_to_export():
    result = run_cli("export", "examples/step_decay.sched", "--schedule", "lr")
    assert result.returncode == 0, result.stderr
    (block,) = yaml.safe_load(result.stdout)["schedulers"]
    assert [next(iter(c)) for c in block["SequentialLR"]["schedulers"]] == ["LinearLR", "MultiStepLR"]
    refused = run_cli("export", "examples/step_decay.sched")
    assert refused.returncode == 2 and "--schedule lr" in refused.stderr
    unknown = run_cli("export", "examples/step_decay.sched", "--schedule", "lrr")
    assert unknown.returncode == 2 and "no schedule named 'lrr'" in unknown.stderr


def _random_pieces(draw_ints, values):
    """A random exportable sequence from small building blocks (deterministic per seed)."""
    import random

    rng = random.Random(draw_ints)
    pieces = []
    for _ in range(rng.randint(1, 4)):
        v0, v1 = rng.choice(values), rng.choice(values)
        n = rng.randint(1, 40)
        kind = rng.choice(["linear", "cosine", "poly", "constant", "exp", "warmup", "hold", "cut"])
        if kind == "poly":
            pieces.append(f"poly({v0}, {v1}, {n}, power={rng.choice([1, 2, 3])})")
        elif kind == "constant":
            pieces.append(f"constant({v0}) for {n}")
        elif kind == "exp":
            pieces.append(f"exp({v0}, 0.5, {n}) for {n}")
        elif kind == "warmup":
            pieces.append(f"warmup(linear, {n}) >> linear({v0}, {v1}, {n})")
        elif kind == "hold":
            pieces.append(f"(cosine({v0}, {v1}, {n}) for {n + rng.randint(1, 9)})")
        elif kind == "cut":
            pieces.append(f"(linear({v0}, {v1}, {n + rng.randint(1, 9)}) for {n})")
        else:
            pieces.append(f"{kind}({v0}, {v1}, {n})")
    tail = rng.choice([f"step({rng.choice(values)}, 0.5, 7)", "multistep(1, 0.1, [5, 9])",
                       f"constant({rng.choice(values)})", "piecewise([1, 0.5], [3])"])
    return " >> ".join([*pieces, tail])


@pytest.mark.parametrize("seed", range(12))
def test_random_sequences_export_and_round_trip(seed):
    source = _random_pieces(seed, ["1", "0.5", "1e-3", "2.5e-4", "0"])
    text = export(source)
    first = formats.from_cerebras_yaml(text, "r.yaml", style="core")
    rtol = 1e-12 if "# ~" in text else 0  # a cut linear piece can end on a value with no short decimal
    verdict = schedlang.equivalent(schedlang.compile(source), schedlang.compile(first), rtol=rtol)
    assert verdict, (source, text, verdict)
    assert formats.from_cerebras_yaml(export(first, "r.sched"), "r.yaml", style="core") == first


def test_per_group_schedules_export_as_tagged_schedulers_and_round_trip():
    """``lr__TAG`` is a scheduler with ``param_group_tags: TAG``; a group parameter
    ``adjust_learning_rate`` around the whole schedule is ``ScalePerParamLR``, its scheduler
    carrying the same tags (cstorch requires it).  Import -> export -> import is the identity."""
    config = (ROOT / "tests" / "frameworks" / "configs" / "cerebras_param_group_tags.yaml").read_text()
    first = formats.from_cerebras_yaml(config, "tags.yaml", style="core")
    exported = export(first, "tags.sched")
    assert "param_group_tags: decay" in exported and "param_group_tags: embedding" in exported
    second = formats.from_cerebras_yaml(exported, "x.yaml", style="core")
    program, again = schedlang.compile(first), schedlang.compile(second)
    assert set(again.schedules) == set(program.schedules)
    for name in program.schedules:
        assert schedlang.equivalent(program[name], again[name]), name
    scaled = ("param adjust_learning_rate: group = 1\n"
              "schedule lr__decay = adjust_learning_rate * (warmup(linear, 20) >> cosine(3e-4, 3e-5, 80))\n")
    exported = export(scaled, "scaled.sched")
    assert exported.count("param_group_tags: decay") == 2  # ScalePerParamLR and its scheduler
    back = schedlang.compile(formats.from_cerebras_yaml(exported, "x.yaml"))
    assert list(back.schedules) == ["lr__decay"] and back.params["adjust_learning_rate"].type == "group"


def test_an_untagged_schedule_beside_a_tagged_one_is_refused():
    with pytest.raises(schedlang.SchedlangError, match="would both drive the groups tagged b") as info:
        export("schedule lr = constant(1)\nschedule lr__b = constant(2)\n", "f.sched")
    assert info.value.line == 1
