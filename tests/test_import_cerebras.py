"""`schedlang import` of Cerebras ModelZoo YAML: proven equal, checked against cstorch itself."""

from __future__ import annotations

import pytest
from anchors import reference as R
from helpers import ROOT, run_cli

import schedlang
from schedlang import formats
from schedlang.library.presets import PRESETS

yaml = pytest.importorskip("yaml")

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
