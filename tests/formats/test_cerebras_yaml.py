"""Cerebras ModelZoo YAML: `schedlang import` proven equal and checked against cstorch itself;
`schedlang export --format cerebras-yaml`: ModelZoo blocks, round trips, clear refusals; the
real-config failures of issue 11 (repeated keys, a one-child SequentialLR) and per-group
schedules (``param_group_tags``) driving their groups as cstorch does."""

from __future__ import annotations

import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from anchors import reference as R
from anchors.preset_cases import max_error
from helpers import ROOT, run_cli

import schedlang
from schedlang import formats
from schedlang.errors import SchedlangWarning
from schedlang.formats import import_file
from schedlang.formats.export import export
from schedlang.library.presets import PRESETS

yaml = pytest.importorskip("yaml")

CONFIGS = Path(__file__).parents[1] / "frameworks" / "configs"
EXAMPLE = ROOT / "examples" / "cerebras_sequential.yaml"
EXPECTED = "linear(0.01, 0.001, 500) >> cosine(0.001, 1e-4, 500)"
HAVE_CEREBRAS_PRESETS = "cerebras.SequentialLR" in PRESETS and "cerebras.LinearLR" in PRESETS
needs_presets = pytest.mark.skipif(not HAVE_CEREBRAS_PRESETS, reason="cerebras.* presets not merged yet")


def imported(text: str, style: str = "core", **params) -> schedlang.Program:
    return schedlang.compile(formats.from_cerebras_yaml(text, "config.yaml", style), params or None)


def trainer(schedulers_yaml: str) -> str:
    body = "\n".join("      " + line for line in schedulers_yaml.strip("\n").splitlines())
    return f"trainer:\n  init:\n    schedulers:\n{body}\n"


# -- the done-when example -------------------------------------------------------------------


def test_docs_example_imports_equal_to_linear_then_cosine():
    text = EXAMPLE.read_text()
    program = imported(text)
    verdict = schedlang.equivalent(program, EXPECTED)
    assert verdict, verdict
    assert program["lr"].duration == 1000


@needs_presets
def test_docs_example_preset_style_is_equal_too():
    source = formats.from_cerebras_yaml(EXAMPLE.read_text(), "x.yaml")
    assert "cerebras.SequentialLR(" in source and "cerebras.CosineDecayLR(" in source
    assert schedlang.equivalent(schedlang.compile(source), EXPECTED)


def test_docs_example_from_the_cli_and_back(tmp_path):
    out = tmp_path / "imported.sched"
    result = run_cli("import", EXAMPLE.relative_to(ROOT), "--lower", "-o", out)
    assert result.returncode == 0, result.stderr
    check = run_cli("verify", out, "-e", EXPECTED)
    assert check.returncode == 0, check.stdout + check.stderr
    exported = run_cli("export", out, "--format", "cerebras-yaml")
    assert exported.returncode == 0, exported.stderr
    original = yaml.safe_load(EXAMPLE.read_text())["trainer"]["init"]["schedulers"]
    assert yaml.safe_load(exported.stdout)["schedulers"] == original


@needs_presets
def test_docs_example_cli_default_style_compiles():
    result = run_cli("import", EXAMPLE.relative_to(ROOT))
    assert result.returncode == 0, result.stderr
    assert schedlang.equivalent(schedlang.compile(result.stdout), EXPECTED)


def test_import_is_deterministic():
    text = EXAMPLE.read_text()
    assert formats.from_cerebras_yaml(text, "a.yaml") == formats.from_cerebras_yaml(text, "a.yaml")


# -- formats and rules -------------------------------------------------------------------------


def test_names_are_case_insensitive_and_lr_and_wd_share_the_list():
    text = trainer("""
- sequentiallr:
    schedulers:
    - LINEARLR: {initial_learning_rate: 0.0, end_learning_rate: 6.0e-4, total_iters: 100}
    - cosinedecaylr: {initial_learning_rate: 6.0e-4, end_learning_rate: 6.0e-5, total_iters: 900}
- CosineDecayWD: {initial_val: 0.1, end_val: 0.01, total_iters: 1000}
""")
    program = imported(text)
    assert schedlang.equivalent(program["lr"], "warmup(linear, 100) >> cosine(6e-4, 6e-5, 900)")
    assert schedlang.equivalent(program["weight_decay"], "cosine(0.1, 0.01, 1000)")


def test_gpt3_111m_config_shape():
    text = """
trainer:
  init:
    optimizer:
      AdamW: {betas: [0.9, 0.95], eps: 1.0e-08, weight_decay: 0.1, correct_bias: true}
    schedulers:
    - SequentialLR:
        schedulers:
        - LinearLR: {initial_learning_rate: 0.0, end_learning_rate: 0.0006, total_iters: 1525}
        - LinearLR: {initial_learning_rate: 0.0006, end_learning_rate: 6.0e-05, total_iters: 7512}
    loop: {max_steps: 9037}
"""
    assert schedlang.equivalent(imported(text), "warmup(linear, 1525) >> linear(6e-4, 6e-5, 7512)")


def test_top_level_schedulers_block_and_single_dict():
    text = "schedulers:\n  StepLR: {initial_learning_rate: 0.1, step_size: 30, gamma: 0.5}\n"
    assert schedlang.equivalent(imported(text), "step(0.1, 0.5, 30)")


def test_no_schedulers_means_the_optimizer_lr():
    text = "trainer:\n  init:\n    optimizer:\n      SGD: {lr: 0.01, momentum: 0.9}\n"
    assert schedlang.equivalent(imported(text), "constant(0.01)")


def test_key_aliases_as_modelzoo_converts_them():
    text = trainer("""
- SequentialLR:
    schedulers:
    - LinearLR: {learning_rate: 0.0, end_learning_rate: 1.0e-3, steps: 10}
    - PolynomialLR: {base_lr: 1.0e-3, end_learning_rate: 0.0, decay_steps: 90, power: 2.0}
    - PiecewiseConstantLR: {values: [1.0e-4, 1.0e-5], boundaries: [50]}
""")
    expected = "warmup(linear, 10) >> poly(1e-3, 0, 90, power=2) >> piecewise([1e-4, 1e-5], [50])"
    assert schedlang.equivalent(imported(text), expected)


def test_matching_milestones_are_accepted_wrong_ones_point_at_the_key():
    good = trainer("""
- SequentialLR:
    milestones: [10]
    schedulers:
    - LinearLR: {initial_learning_rate: 0.0, end_learning_rate: 1.0, total_iters: 10}
    - ConstantLR: {learning_rate: 1.0}
""")
    assert schedlang.equivalent(imported(good), "warmup(linear, 10) >> constant(1)")
    with pytest.raises(schedlang.SchedlangError) as info:
        formats.from_cerebras_yaml(good.replace("[10]", "[12]"), "cfg.yaml")
    err = info.value
    assert (err.line, err.column) == (5, 23)
    assert "disagree with the total_iters" in err.message
    assert str(err).startswith("cfg.yaml:5:23: error:") and "^^^^" in str(err)


def test_constant_child_holds_for_its_total_iters():
    text = trainer("""
- SequentialLR:
    schedulers:
    - ConstantLR: {learning_rate: 0.5, total_iters: 20}
    - StepLR: {initial_learning_rate: 0.5, step_size: 10, gamma: 0.1}
""")
    assert schedlang.equivalent(imported(text), "constant(0.5) for 20 >> step(0.5, 0.1, 10)")


def test_chained_scheduler_multiplies_normalised_children():
    text = trainer("""
- ChainedScheduler:
    schedulers:
    - StepLR: {initial_learning_rate: 1.0, step_size: 3, gamma: 0.5}
    - ExponentialLR: {initial_learning_rate: 2.0, total_iters: 1, decay_rate: 0.9}
""")
    assert schedlang.equivalent(imported(text), "step(1, 0.5, 3) * 0.9 ** t")


def test_legacy_learning_rate_list_float_and_chained():
    legacy = """
optimizer:
  optimizer_type: AdamW
  learning_rate:
  - {scheduler: Linear, initial_learning_rate: 0.0, end_learning_rate: 1.0e-3, steps: 100}
  - {scheduler: CosineDecay, initial_learning_rate: 1.0e-3, end_learning_rate: 1.0e-5, decay_steps: 900}
"""
    assert schedlang.equivalent(imported(legacy), "warmup(linear, 100) >> cosine(1e-3, 1e-5, 900)")
    assert schedlang.equivalent(imported("optimizer:\n  learning_rate: 3.0e-4\n"), "constant(3e-4)")
    single = "optimizer:\n  learning_rate: {scheduler: Exponential, learning_rate: 1.0, decay_steps: 10, " \
             "decay_rate: 0.5, staircase: true}\n"
    assert schedlang.equivalent(imported(single), "exp(1, 0.5, 10, staircase=true)")
    chained = """
optimizer:
  learning_rate:
  - {scheduler: Step, main_scheduler: chained, initial_learning_rate: 1.0, step_size: 5, gamma: 0.5}
  - {scheduler: Exponential, initial_learning_rate: 1.0, total_iters: 1, decay_rate: 0.9}
"""
    assert schedlang.equivalent(imported(chained), "step(1, 0.5, 5) * 0.9 ** t")


# -- errors point into the YAML ------------------------------------------------------------------


@pytest.mark.parametrize("body, message, line, column", [
    ("- LinerLR: {initial_learning_rate: 1, end_learning_rate: 0, total_iters: 10}",
     "unknown Cerebras scheduler 'LinerLR'", 4, 9),
    ("- LinearLR: {initial_learning_rate: 1, end_learning_rate: 0}", "missing 'total_iters'", 4, 9),
    ("- LinearLR: {initial_learning_rate: 1, end_lr: 0, total_iters: 10}", "no argument 'end_lr'", 4, 46),
    ("- LinearLR: {initial_learning_rate: one, end_learning_rate: 0, total_iters: 10}",
     "must be a number", 4, 43),
    ("- LinearLR: {initial_learning_rate: 1, end_learning_rate: 0, total_iters: 2.5}",
     "positive whole number", 4, 81),
    ("- LambdaLR: {initial_learning_rate: 1}", "LambdaLR cannot be imported", 4, 9),
    ("- StepLR: {initial_learning_rate: 1, step_size: 10, gamma: 0.5, param_group_tags: [x-y]}",
     "param group tag 'x-y' cannot name a schedule", 4, 90),
    ("- SequentialLR:\n          schedulers:\n          - StepLR: {initial_learning_rate: 1, step_size: 10, "
     "gamma: 0.5}\n          - ConstantLR: {learning_rate: 1}", "StepLR has no total_iters", 6, 19),
])
def test_errors_name_the_key_with_a_caret(body, message, line, column):
    with pytest.raises(schedlang.SchedlangError) as info:
        formats.from_cerebras_yaml(trainer(body), "cfg.yaml")
    err = info.value
    assert message in err.message
    assert (err.line, err.column) == (line, column), str(err)
    assert "^" in str(err)


@pytest.mark.parametrize("style", ["presets", "core"])
def test_a_chained_scheduler_starting_at_zero_after_the_first_is_refused_at_its_value(style):
    """cstorch's ChainedScheduler divides by each later scheduler's initial value: a 0 there is
    refused at that value, in both styles (the generated file's own refusal had no YAML place)."""
    body = ("- ChainedScheduler:\n          schedulers:\n          - ConstantLR: {learning_rate: 0.01}\n"
            "          - LinearLR: {initial_learning_rate: 0.0, end_learning_rate: 0.01, total_iters: 200}")
    with pytest.raises(schedlang.SchedlangError) as info:
        formats.from_cerebras_yaml(trainer(body), "cfg.yaml", style)
    assert "LinearLR starts at 0 (initial_learning_rate)" in info.value.message
    assert (info.value.line, info.value.column) == (7, 53), str(info.value)  # at the 0.0
    first = body.replace("initial_learning_rate: 0.0", "initial_learning_rate: 0.5")
    assert schedlang.equivalent(imported(trainer(first), style),
                                "constant(0.01) * linear(0.5, 0.01, 200) / 0.5")


@pytest.mark.parametrize("body, expected", [
    ("- CosineAnnealingLR: {initial_learning_rate: 0.1, T_max: 100}",
     "0.05 + 0.05 * cos(pi * t / 100)"),
    ("- InverseSquareRootDecayLR: {}", "1 / sqrt(max(1, t))"),
    ("- PolynomialLR: {initial_learning_rate: 0.1, end_learning_rate: 0.0, total_iters: 100}",
     "linear(0.1, 0, 100)"),
])
def test_core_style_writes_the_defaults_the_config_leaves_out(body, expected):
    """A default of cstorch's signature (``eta_min`` 0, ``scale`` 1, ``power`` 1) is written in
    the core style too, equal to the preset (the core style once failed on a Python int default)."""
    core = imported(trainer(body), "core")
    assert schedlang.equivalent(core, expected)
    assert schedlang.equivalent(core, imported(trainer(body), "presets"))


def test_unknown_name_suggests_the_nearest():
    with pytest.raises(schedlang.SchedlangError) as info:
        formats.from_cerebras_yaml(trainer("- CosineDecay: {initial_learning_rate: 1}"), "c.yaml")
    assert "CosineDecayLR" in (info.value.hint or "")


@pytest.mark.parametrize("text, message", [
    ("trainer: [", "not valid YAML"),
    ("!!python/object/apply:os.system ['true']\n", "tag .* is not allowed"),
    ("schedulers: !!python/name:os.system\n", "tag .* is not allowed"),
    ("", "empty"),
    ("- 1\n- 2\n", "expected a YAML mapping"),
    ("model: {}\n", "no schedulers found"),
])
def test_bad_files_are_schedlang_errors(text, message):
    with pytest.raises(schedlang.SchedlangError, match=message):
        formats.from_cerebras_yaml(text, "bad.yaml")


def test_cli_bad_yaml_exits_2_with_caret(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(trainer("- LinerLR: {initial_learning_rate: 1}"))
    result = run_cli("import", path)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and "^" in result.stderr
    assert f"{path}:4:9: error: unknown Cerebras scheduler" in result.stderr


# -- against cstorch 2.10 itself ------------------------------------------------------------------


def _yaml_block(name, kwargs, indent=0):
    pad = " " * indent
    lines = [f"{pad}- {name}:"]
    for key, value in kwargs.items():
        if key == "schedulers":
            lines.append(f"{pad}    schedulers:")
            for child in value:
                lines.extend(_yaml_block(*child, indent=indent + 4))
        else:
            lines.append(f"{pad}    {key}: {yaml.safe_dump(value, default_flow_style=True).strip()}"
                         .replace("\n...", ""))
    return lines


CSTORCH_CASES = [
    ("SequentialLR", {"schedulers": [("LinearLR", {"initial_learning_rate": 0.0, "end_learning_rate": 0.01,
                                                   "total_iters": 5}),
                                     ("CosineDecayLR", {"initial_learning_rate": 0.01,
                                                        "end_learning_rate": 0.001, "total_iters": 6})]}),
    ("PolynomialLR", {"initial_learning_rate": 1.0, "end_learning_rate": 0.1, "total_iters": 8,
                      "power": 2.0}),
    ("ExponentialLR", {"initial_learning_rate": 1.0, "total_iters": 3, "decay_rate": 0.5, "staircase": True}),
    ("InverseExponentialTimeDecayLR", {"initial_learning_rate": 1.0, "step_exponent": 1.0, "total_iters": 4,
                                       "decay_rate": 0.5}),
    ("InverseSquareRootDecayLR", {"initial_learning_rate": 1.0, "scale": 2.0, "warmup_steps": 4.0}),
    ("StepLR", {"initial_learning_rate": 1.0, "step_size": 3, "gamma": 0.5}),
    ("MultiStepLR", {"initial_learning_rate": 1.0, "gamma": 0.5, "milestones": [2, 5, 9]}),
    ("PiecewiseConstantLR", {"learning_rates": [1.0, 0.5, 0.25], "milestones": [3, 7]}),
    ("CosineAnnealingLR", {"initial_learning_rate": 1.0, "T_max": 5, "eta_min": 0.1}),
    ("MultiplicativeLR", {"initial_learning_rate": 1.0, "coefficient": 0.9}),
    ("CyclicLR", {"base_lr": 0.1, "max_lr": 1.0, "step_size_up": 3, "step_size_down": 2,
                  "mode": "triangular2"}),
    ("ChainedScheduler", {"schedulers": [("StepLR", {"initial_learning_rate": 1.0, "step_size": 3,
                                                     "gamma": 0.5}),
                                         ("ExponentialLR", {"initial_learning_rate": 2.0, "total_iters": 1,
                                                            "decay_rate": 0.9})]}),
    ("CosineAnnealingWarmRestarts", {"initial_learning_rate": 1.0, "T_0": 4, "eta_min": 0.0}),
]


@pytest.mark.parametrize("name, kwargs", CSTORCH_CASES, ids=[c[0] for c in CSTORCH_CASES])
def test_imported_values_match_cstorch(name, kwargs):
    steps = range(16)
    if name == "CosineAnnealingWarmRestarts":
        steps = range(4)  # cstorch 2.10 is wrong after the first period (anchors.md §1.2)
    try:
        expected = R.cerebras_values(name, kwargs, steps)
    except R.AnchorUnavailable as exc:
        pytest.skip(f"anchor unavailable: {exc}")
    text = "schedulers:\n" + "\n".join(_yaml_block(name, kwargs, 0)) + "\n"
    for style in ("core", "presets") if HAVE_CEREBRAS_PRESETS else ("core",):
        schedule = imported(text, style)["lr"]
        got = [schedule(s) for s in steps]
        assert got == pytest.approx(expected, rel=2e-6, abs=1e-7), style


@needs_presets
@pytest.mark.parametrize("name, kwargs", CSTORCH_CASES, ids=[c[0] for c in CSTORCH_CASES])
def test_both_styles_are_equivalent(name, kwargs):
    text = "schedulers:\n" + "\n".join(_yaml_block(name, kwargs, 0)) + "\n"
    verdict = schedlang.equivalent(imported(text, "core"), imported(text, "presets"))
    assert verdict, verdict


def test_check_and_plain_import_load_neither_yaml_nor_torch():
    import subprocess
    import sys

    code = ("import sys; from schedlang.cli import main; rc = main(['check', 'examples/gpt_pretrain.sched']);"
            "bad = sorted(m for m in sys.modules"
            " if m in ('yaml', 'torch')"
            " or (m.startswith('schedlang.formats.') and m != 'schedlang.formats.export'));"
            "assert not bad, bad; raise SystemExit(rc)")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_importing_a_yaml_never_imports_torch():
    import subprocess
    import sys

    code = ("import sys; from schedlang.cli import main; "
            "rc = main(['import', 'examples/cerebras_sequential.yaml', '--lower']);"
            "assert 'torch' not in sys.modules; raise SystemExit(rc)")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


# -- export ----------------------------------------------------------------------------------------


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


def _cstorch(block: dict, steps) -> list[float]:
    """cstorch 2.10's own values at ``steps`` of an exported ``schedulers:`` entry (the anchor
    cache's wheel sources, ``R.cerebras_values``); skipped where the anchor is unavailable."""

    def child(entry):
        (name, kwargs), = entry.items()
        kwargs = dict(kwargs)
        if "schedulers" in kwargs:
            kwargs["schedulers"] = [child(c) for c in kwargs["schedulers"]]
        return name, kwargs

    try:
        return R.cerebras_values(*child(block), steps)
    except R.AnchorUnavailable as exc:
        pytest.skip(f"anchor unavailable: {exc}")


def test_exported_yaml_runs_in_cstorch_with_the_same_values():
    source = "warmup(linear, 4) >> cosine(1, 0.1, 6) >> constant(0.1)"
    expected = _cstorch(yaml.safe_load(export(source))["schedulers"][0], range(14))
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


#: Files with no Cerebras form by their syntax (arithmetic, `if`, a core schedule cut by `for`, a
#: user function, another library's preset, a one-cycle), each equal to a Cerebras scheduler or a
#: SequentialLR of them cut at its breakpoints: exported by proof (issue 41 item 3), what the
#: export writes.
BY_PROOF = [
    ("0.5 * cosine(1, 0, 10)", ["CosineDecayLR", "initial_learning_rate: 0.5", "total_iters: 10"]),
    ("if t < 10 then 1 else 0.5", ["PiecewiseConstantLR", "learning_rates: [1, 0.5]", "milestones: [10]"]),
    ("step(1, 0.5, 10) for 30 >> constant(0.1)",
     ["PiecewiseConstantLR", "learning_rates: [1, 0.5, 0.25, 0.1]", "milestones: [10, 20, 30]"]),
    ("torch.StepLR(lr=1, step_size=10)", ["StepLR", "step_size: 10", "gamma: 0.1"]),
    ("def half(v) = v / 2\nschedule lr = half(constant(1))", ["ConstantLR", "learning_rate: 0.5"]),
    ("1e-3 * 0.99 ** t", ["ExponentialLR", "decay_rate: 0.99", "total_iters: 1"]),
    # a core formula: a SequentialLR cut at its breakpoint
    ("5e-4 * (if t < 100 then t / 100 else 1)",
     ["SequentialLR", "LinearLR", "end_learning_rate: 0.0005", "total_iters: 100", "ConstantLR"]),
    # torch's one-cycle peaks at pct_start * total - 1: its phases are cut there, each a CosineDecayLR
    ("warmup(linear, 5) >> onecycle(1, 100)",
     ["SequentialLR", "LinearLR", "total_iters: 29", "total_iters: 70", "end_learning_rate: 4.0e-06"]),
    ("schedule weight_decay = 0.5 * cosine(0.1, 0, 10)", ["CosineDecayWD", "initial_val: 0.05"]),
    ("run = 100\nschedule lr = 0.5 * cosine(1, 0, 100)", ["CosineDecayLR", "max_steps: 100"]),
]


@pytest.mark.parametrize("source, says", BY_PROOF, ids=[s for s, _ in BY_PROOF])
def test_a_file_equal_to_a_cerebras_scheduler_is_exported_by_proof(source, says):
    """Read back by the cerebras importer and proven equal (the writer proves it too), and run by
    cstorch 2.10 itself at every step, past the schedule's last breakpoint."""
    text = export(source, "f.sched")
    for fragment in says:
        assert fragment in text, text
    original, again = schedlang.compile(source), back(text)
    assert set(again.schedules) == set(original.schedules)
    for name in original.schedules:
        verdict = schedlang.equivalent(original[name], again[name])
        assert verdict, (name, verdict, text)
    data = yaml.safe_load(text)
    block = (data["trainer"]["init"] if "trainer" in data else data)["schedulers"][0]
    steps = range(130)
    schedule = original[next(iter(original.schedules))]
    assert [schedule(s) for s in steps] == pytest.approx(_cstorch(block, steps), rel=2e-6, abs=1e-7)


#: Files equal to no Cerebras scheduler nor SequentialLR of them: refused at the schedule with the
#: closest and its first differing step, and why the syntax has no Cerebras form (the hint).
NO_CEREBRAS = [
    ("cosine_restarts(1, 0, 10)", "cosine_restarts(...) cannot be exported", 1),
    ("cosine(1, 0, 100) for 10", "`for` cuts this schedule before its end", 1),
    ("(cosine(1, 0, 100) for 10) >> constant(0)", "runs 100 steps but `for` gives it 10", 2),
]


@pytest.mark.parametrize("source, why, column", NO_CEREBRAS, ids=[s for s, _, _ in NO_CEREBRAS])
def test_a_file_equal_to_none_is_refused_with_the_closest_and_its_first_differing_step(source, why, column):
    with pytest.raises(schedlang.SchedlangError) as info:
        export(source, "f.sched")
    found = re.search(r"no cerebras scheduler equals this lr schedule: the closest, (cerebras\.\w+\(.*\)), "
                      r"first differs at step (\d+) \((\S+) here vs (\S+) there\)", info.value.message)
    assert found, info.value.message
    assert (info.value.line, info.value.column) == (1, column), str(info.value)  # at the schedule
    assert why in info.value.hint and "nor is it a SequentialLR" in info.value.hint, info.value.hint
    at = int(found.group(2))
    assert float(found.group(3)) == pytest.approx(schedlang.compile(source)["lr"](at), rel=1e-12)
    assert float(found.group(4)) == pytest.approx(schedlang.compile(found.group(1))["lr"](at), rel=1e-12)


def test_the_docs_refusal_is_what_export_says(tmp_path):
    """docs/import_export.md, the cerebras-yaml "Export", quotes a refusal: it is the command's own."""
    docs = (ROOT / "docs" / "import_export.md").read_text(encoding="utf-8").splitlines()
    quoted = next(i for i, line in enumerate(docs) if line.startswith("f.sched:1:1: error: no cerebras"))
    (tmp_path / "f.sched").write_text("cosine_restarts(1, 0, 10)\n")
    run = subprocess.run([sys.executable, "-m", "schedlang", "export", "f.sched"], capture_output=True,
                         text=True, cwd=tmp_path)
    said = run.stderr.splitlines()
    assert run.returncode == 2 and said[0] == docs[quoted] and said[-1] == docs[quoted + 1]


@pytest.mark.parametrize("source, message, column", [
    ("schedule momentum = constant(0.9)", "only lr and weight_decay", 10),
    # a parameter without a value is refused at it, not searched
    ("param k: float\nschedule lr = k * cosine(1, 0, 10)", "parameter 'k' has no value", 15),
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


# -- the real-config failures of issue 11 ------------------------------------------------


def test_repeated_key_warns_with_its_line_and_the_later_value_wins():
    path = CONFIGS / "cerebras_legacy_repeats.yaml"
    with pytest.warns(SchedlangWarning) as caught:
        text = import_file(path)
    messages = [str(w.message) for w in caught]
    assert any("cerebras_legacy_repeats.yaml:13:7: warning: 'steps' is given twice" in m and "line 12" in m
               for m in messages), messages
    assert any(":18:7: warning: CosineDecay has no argument 'alpha'" in m for m in messages), messages
    lr = schedlang.compile(text)["lr"]
    assert lr.duration == 1000 and lr(200) == pytest.approx(2e-4)


def test_repeated_key_warnings_reach_the_command_line_on_stderr(tmp_path):
    out = subprocess.run([sys.executable, "-m", "schedlang", "import",
                          str(CONFIGS / "cerebras_legacy_repeats.yaml")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "13:7: warning: 'steps' is given twice" in out.stderr
    assert "  13 |       steps: 200" in out.stderr and "^^^^^" in out.stderr
    assert "warning" not in out.stdout and "schedule lr" in out.stdout


def test_warnings_can_be_made_errors_by_api_users():
    with warnings.catch_warnings():
        warnings.simplefilter("error", SchedlangWarning)
        with pytest.raises(SchedlangWarning, match="given twice"):
            import_file(CONFIGS / "cerebras_legacy_repeats.yaml")


def test_trainer_format_still_refuses_unknown_keys():
    from schedlang.formats import from_cerebras_yaml

    with pytest.raises(schedlang.SchedlangError, match="has no argument 'alpha'"):
        from_cerebras_yaml("schedulers:\n  - CosineDecayLR: {initial_learning_rate: 1, end_learning_rate: 0, "
                           "total_iters: 10, alpha: 0.1}\n")


def test_sequential_lr_with_one_child_imports():
    try:
        anchor = R.cerebras_values("SequentialLR", {"schedulers": [
            ("CosineDecayLR", {"initial_learning_rate": 1e-4, "end_learning_rate": 1e-5,
                               "total_iters": 500})],
            "milestones": []}, range(600))
    except R.AnchorUnavailable as exc:
        pytest.skip(str(exc))
    path = CONFIGS / "cerebras_single_child.yaml"
    preset = schedlang.compile(import_file(path))["lr"]
    core = schedlang.compile(import_file(path, style="core"))["lr"]
    assert schedlang.equivalent(preset, core)
    assert max_error(preset.values(range(600)), anchor, 0.1) <= 1e-6


# -- per-group schedules (param_group_tags) ------------------------------------------------------


def test_param_group_tags_import_and_drive_their_groups():
    torch = pytest.importorskip("torch")
    seq = ("SequentialLR", {"schedulers": [
        ("LinearLR", {"initial_learning_rate": 0.0, "end_learning_rate": 3e-4, "total_iters": 20}),
        ("CosineDecayLR", {"initial_learning_rate": 3e-4, "end_learning_rate": 3e-5, "total_iters": 80})],
        "milestones": [20]})
    try:
        want = {"decay": R.cerebras_values(*seq, range(120)), "embedding": [1e-5] * 120}
    except R.AnchorUnavailable as exc:
        pytest.skip(str(exc))
    want["no_decay"] = want["decay"]
    wd = {"decay": 0.1, "no_decay": 0.0, "embedding": 0.0}
    for style in ("presets", "core"):
        program = schedlang.compile(import_file(CONFIGS / "cerebras_param_group_tags.yaml", style=style))
        assert set(program.schedules) == {"lr__decay", "lr__no_decay", "lr__embedding", "weight_decay__decay",
                                          "weight_decay__no_decay", "weight_decay__embedding"}
        params = [torch.nn.Parameter(torch.zeros(1)) for _ in range(4)]
        groups = [{"params": [params[0]], "tags": {"decay"}}, {"params": [params[1]], "tags": ["no_decay"]},
                  {"params": [params[2]], "tags": "embedding"},
                  {"params": [params[3]], "lr": 0.123, "unscheduled": True}]
        optimizer = torch.optim.AdamW(groups, lr=3e-4, weight_decay=0.05)
        scheduler = program.scheduler_class("Tagged")(optimizer)
        for step in range(120):
            for group, tag in zip(optimizer.param_groups, ["decay", "no_decay", "embedding"]):
                assert group["lr"] == pytest.approx(want[tag][step], rel=1e-6, abs=1e-12), (style, tag, step)
                assert group["weight_decay"] == wd[tag]
            untagged = optimizer.param_groups[3]
            assert (untagged["lr"], untagged["weight_decay"]) == (0.123, 0.05)  # "unscheduled": kept
            optimizer.step()
            scheduler.step()


def test_param_group_tags_that_pick_two_schedules_are_refused():
    torch = pytest.importorskip("torch")
    program = schedlang.compile("schedule lr__a = constant(1)\nschedule lr__b = constant(2)")
    optimizer = torch.optim.SGD([{"params": [torch.nn.Parameter(torch.zeros(1))], "tags": ["a", "b"]}], lr=1)
    with pytest.raises(schedlang.SchedlangError, match="pick two schedules"):
        program.scheduler_class("S")(optimizer)


def test_param_group_tags_on_a_child_are_refused():
    from schedlang.formats import from_cerebras_yaml

    with pytest.raises(schedlang.SchedlangError, match="outer scheduler"):
        from_cerebras_yaml("schedulers:\n  - SequentialLR:\n      schedulers:\n        - ConstantLR: "
                           "{learning_rate: 1, param_group_tags: x}\n")


# -- export --into the ModelZoo config the file came from (issue 36) ----------------------------------


def _cstorch_entry(entry):
    (name, kwargs), = entry.items()
    kwargs = dict(kwargs)
    if "schedulers" in kwargs:
        kwargs["schedulers"] = [_cstorch_entry(c) for c in kwargs["schedulers"]]
    return name, kwargs


@pytest.mark.parametrize("path", [ROOT / "examples" / "cerebras_sequential.yaml",
                                  CONFIGS / "cerebras_single_child.yaml",
                                  CONFIGS / "cerebras_merge_keys.yaml"], ids=lambda p: p.name)
def test_export_into_the_original_config_runs_in_cstorch_as_the_original(path):
    """import -> export --into the original -> the list in its trainer.init.schedulers: cstorch
    2.10's schedulers give the original's lr at every step (past the end too)."""
    exported = export(import_file(path), "x.sched", into=path)
    assert "# Proved merged into" in exported
    original = yaml.safe_load(path.read_text())
    merged = yaml.safe_load(path.read_text())
    written = yaml.safe_load(exported)
    init = written.get("trainer", {}).get("init", {})
    merged["trainer"]["init"]["schedulers"] = init.get("schedulers", written.get("schedulers"))
    assert init.get("loop", {}).items() <= original["trainer"]["init"].get("loop", {}).items()
    steps = range(1100)
    try:
        expected = R.cerebras_values(*_cstorch_entry(original["trainer"]["init"]["schedulers"][0]), steps)
        values = R.cerebras_values(*_cstorch_entry(merged["trainer"]["init"]["schedulers"][0]), steps)
    except R.AnchorUnavailable as exc:
        pytest.skip(f"anchor unavailable: {exc}")
    assert values == pytest.approx(expected, rel=1e-12, abs=1e-18)


def test_export_into_a_legacy_config_is_refused_with_the_reason():
    path = CONFIGS / "cerebras_legacy_repeats.yaml"
    with pytest.raises(schedlang.SchedlangError, match="legacy ModelZoo config"):
        export("schedule lr = linear(1e-3, 1e-4, 100)\n", "x.sched", into=path)


# -- the run's length: `run = N` is ModelZoo's loop (SPEC §14, issue 37) ---------------------------------

RUN_SOURCE = "run = 900\nschedule lr = warmup(linear, 100) >> cosine(1e-3, 1e-5, 900)\n"
RUN_SCHEDULERS = """\
- SequentialLR:
    schedulers:
    - LinearLR: {initial_learning_rate: 0.0, end_learning_rate: 0.001, total_iters: 100}
    - CosineDecayLR: {initial_learning_rate: 0.001, end_learning_rate: 1.0e-05, total_iters: 900}
"""


def test_export_writes_the_run_as_trainer_init_loop_max_steps():
    """Without --into the output is the trainer.init block a ModelZoo 2.x config has: the list and
    the loop's max_steps; read back, the run and the schedule are the file's, and cstorch 2.10's
    schedulers from the written block give the file's values."""
    text = export(RUN_SOURCE, "lr.sched", format="cerebras-yaml")
    assert text == """\
# Exported by `schedlang export` from lr.sched (ModelZoo trainer.init.schedulers and trainer.init.loop).
trainer:
  init:
    schedulers:
      - SequentialLR:
          schedulers:
          - LinearLR:
              initial_learning_rate: 0
              end_learning_rate: 0.001
              total_iters: 100
          - CosineDecayLR:
              initial_learning_rate: 0.001
              end_learning_rate: 1.0e-05
              total_iters: 900
    loop:
      max_steps: 900  # the file's run (ModelZoo's loop counts steps)
"""
    again, original = back(text), schedlang.compile(RUN_SOURCE)
    assert again.run == original.run == 900
    assert schedlang.equivalent(original["lr"], again["lr"])
    block = yaml.safe_load(text)["trainer"]["init"]["schedulers"][0]
    try:
        expected = R.cerebras_values(*_cstorch_entry(block), range(1001))
    except R.AnchorUnavailable as exc:
        pytest.skip(f"anchor unavailable: {exc}")
    assert original["lr"].values(range(1001)) == pytest.approx(expected, rel=2e-6, abs=1e-9)


def test_export_without_a_run_is_the_schedulers_list_alone():
    text = export("schedule lr = cosine(1e-3, 1e-5, 900)\n", "lr.sched", format="cerebras-yaml")
    assert text.splitlines()[1] == "schedulers:" and "loop" not in text and back(text).run is None


def test_a_run_in_tokens_is_written_as_the_steps_it_trains():
    """ModelZoo's loop counts steps: `run = 5e12tok` on 1024 x 4096-token batches trains the
    1192093 steps whose consumed-before count is below it (SPEC §12), and that is what is written."""
    source = ("param seq_len: int = 4096\nbatch = stages(1024, [], [])\nrun = 5e12tok\n"
              "schedule lr = warmup(linear, 2000) >> constant(3e-4)\n")
    text = export(source, "o.sched", format="cerebras-yaml")
    assert ("      max_steps: 1192093  # run = 5000000000000tok: the steps it trains (ModelZoo's loop counts "
            "steps)\n") in text
    assert back(text).run == schedlang.compile(source).run == 1192093


def _trainer_with(loop: str) -> str:
    body = "".join(f"      {line}\n" for line in RUN_SCHEDULERS.splitlines())
    return f"trainer:\n  init:\n    optimizer:\n      AdamW: {{lr: 1.0e-3}}\n    schedulers:\n{body}{loop}"


#: the original's loop, the loop keys the merged config has (the run is 900 steps).
INTO_LOOPS = [
    ("    loop:\n      max_steps: 2400\n      eval_frequency: 100\n",
     {"max_steps": 900, "eval_frequency": 100}),
    ("    loop:\n      num_steps: 300\n      max_steps: 2400\n", {"num_steps": 900, "max_steps": 900}),
    ("    loop:\n      num_steps: 300\n", {"num_steps": 900}),
    ("    loop:\n      num_epochs: null\n      num_steps: 300\n", {"num_epochs": None, "num_steps": 900}),
    ("    loop:\n      eval_steps: 10\n", {"eval_steps": 10, "max_steps": 900}),
    ("", {"max_steps": 900}),
]


@pytest.mark.parametrize("loop, expected", INTO_LOOPS,
                         ids=["max_steps", "both", "num_steps", "null_epochs", "neither", "no_loop"])
def test_export_into_sets_the_originals_loop_keys_and_reads_back_the_run(tmp_path, loop, expected):
    from schedlang.formats.cerebras_export import _merged
    from schedlang.formats.common.into import original

    path = tmp_path / "config.yaml"
    path.write_text(_trainer_with(loop))
    text = export(RUN_SOURCE, "lr.sched", format="cerebras-yaml", into=path)
    written = yaml.safe_load(text)["trainer"]["init"]["loop"]
    assert written == {k: v for k, v in expected.items() if k in ("num_steps", "max_steps")}
    merged = tmp_path / "merged.yaml"
    merged.write_text(_merged(original(path), text))
    data = yaml.safe_load(merged.read_text())
    assert data["trainer"]["init"]["loop"] == expected
    assert data["trainer"]["init"]["optimizer"] == {"AdamW": {"lr": 1.0e-3}}
    again = schedlang.compile(import_file(merged, "cerebras-yaml", style="core"))
    assert again.run == 900
    assert schedlang.equivalent(schedlang.compile(RUN_SOURCE)["lr"], again["lr"])


def test_export_into_a_runconfig_sets_its_max_steps(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("schedulers:\n" + RUN_SCHEDULERS + "runconfig:\n  max_steps: 50\n  log_steps: 5\n")
    from schedlang.formats.cerebras_export import _merged
    from schedlang.formats.common.into import original

    merged = yaml.safe_load(_merged(original(path), export(RUN_SOURCE, "lr.sched", format="cerebras-yaml",
                                                            into=path)))
    assert merged["runconfig"] == {"max_steps": 900, "log_steps": 5} and "trainer" not in merged


#: the original, the message, the line and column it points at (in the original, or at `run`), the hint.
INTO_REFUSED = [
    (_trainer_with("    loop:\n      num_epochs: 3\n"), "trains num_epochs", 11, 7,
     "replace `num_epochs` by"),
    ("schedulers:\n" + RUN_SCHEDULERS, "has no trainer.init", 1, 1, "export without --into"),
    ("schedulers:\n" + RUN_SCHEDULERS + "runconfig: null\n", "has no trainer.init", 1, 1, "export without"),
]


@pytest.mark.parametrize("text, message, line, column, hint", INTO_REFUSED,
                         ids=["num_epochs", "no_trainer", "null_runconfig"])
def test_export_into_refuses_a_loop_that_cannot_state_the_run(tmp_path, text, message, line, column, hint):
    path = tmp_path / "config.yaml"
    path.write_text(text)
    with pytest.raises(schedlang.SchedlangError, match=message) as info:
        export(RUN_SOURCE, "lr.sched", format="cerebras-yaml", into=path)
    assert (info.value.line, info.value.column) == (line, column) and hint in info.value.hint


def test_cli_export_into_an_epochs_loop_exits_2_with_a_caret(tmp_path):
    path, sched = tmp_path / "config.yaml", tmp_path / "lr.sched"
    path.write_text(_trainer_with("    loop:\n      num_epochs: 3\n"))
    sched.write_text(RUN_SOURCE)
    result = run_cli("export", sched, "--format", "cerebras-yaml", "--into", path)
    assert result.returncode == 2 and "trains num_epochs" in result.stderr and "^" in result.stderr
    assert "Traceback" not in result.stderr


def test_the_proof_sees_the_run(monkeypatch):
    """The read-back proof compares the run: a writer that wrote another loop length is caught."""
    from schedlang.formats import cerebras_export

    monkeypatch.setattr(cerebras_export, "_loop", lambda program, into: {"max_steps": 800})
    with pytest.raises(schedlang.SchedlangError, match="the run is 900 steps, but the written configuration "
                                                       "trains 800"):
        export(RUN_SOURCE, "lr.sched", format="cerebras-yaml")
