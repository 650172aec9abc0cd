"""Composer / llm-foundry YAML and HF TrainingArguments: import, export, the real-config failures.

Each config of ``configs/`` is imported in both styles, the two are proven equal
with ``schedlang.equivalent``, and the values are compared at every step (past the
end included) with the real code: mosaicml 0.32.1's scheduler sources and
transformers' ``get_scheduler`` / ``TrainingArguments.get_warmup_steps``.
"""

from __future__ import annotations

import subprocess
import sys
import types
import warnings

import pytest
from anchors import reference as R
from anchors.preset_cases import max_error

import schedlang
from schedlang.errors import SchedlangWarning
from schedlang.formats import import_file

from .composer_hf_cases import COMPOSER, COMPOSER_ZERO, CONFIGS, HF

TOL = 1e-12


def _both(path, fmt, params):
    preset = schedlang.compile(import_file(path, format=fmt), params=params)["lr"]
    core = schedlang.compile(import_file(path, format=fmt, style="core"), params=params)["lr"]
    return preset, core


def _composer_reference(case):
    try:
        return [case.lr * v for v in R.composer_values(case.cls, case.kwargs, range(case.steps),
                                                       max_duration=case.max_duration,
                                                       dataloader_len=case.dataloader_len)]
    except R.AnchorUnavailable as exc:
        pytest.skip(str(exc))


def _check_composer(case):
    preset, core = _both(case.path, "composer-yaml", case.params)
    assert schedlang.equivalent(preset, core), case.file
    anchor = _composer_reference(case)
    assert max_error(preset.values(range(case.steps)), anchor, 1e-3) <= TOL


@pytest.mark.parametrize("case", COMPOSER, ids=lambda c: c.file)
def test_composer_yaml_matches_composer(case):
    _check_composer(case)


def test_composer_zero_warmup_is_no_warmup():
    _check_composer(COMPOSER_ZERO)


def _hf_warmup(case):
    """The real ``TrainingArguments.get_warmup_steps`` (v5) where the file says warmup_steps."""
    transformers = pytest.importorskip("transformers")
    text = case.path.read_text()
    if "warmup_ratio" in text:  # v4's rule (v5 has no warmup_ratio): ceil(N * ratio)
        return case.warmup
    import json

    import yaml

    fields = json.loads(text) if case.file.endswith(".json") else yaml.safe_load(text)
    args = types.SimpleNamespace(warmup_steps=fields.get("warmup_steps", 0))
    return transformers.TrainingArguments.get_warmup_steps(args, case.total)


@pytest.mark.parametrize("case", HF, ids=lambda c: c.file)
def test_hf_args_match_get_scheduler(case):
    warmup = _hf_warmup(case)
    assert warmup == case.warmup
    text = import_file(case.path, format="hf-args")
    preset = schedlang.compile(text, params=case.params)["lr"]
    core = schedlang.compile(import_file(case.path, format="hf-args", style="core"),
                             params=case.params)["lr"]
    assert schedlang.equivalent(preset, core), case.file
    assert core.values(range(case.steps)) == pytest.approx(preset.values(range(case.steps)), rel=1e-12)
    try:
        anchor = R.hf_values(case.kind, range(case.steps), lr=case.lr, num_warmup_steps=warmup,
                             num_training_steps=case.total, **case.kwargs)
    except R.AnchorUnavailable as exc:
        pytest.skip(str(exc))
    assert max_error(preset.values(range(case.steps)), anchor, 1e-3) <= TOL


# -- the real-config failures of issue 11 ------------------------------------------------


def test_yaml_merge_keys_with_an_overriding_key_are_read_like_pyyaml():
    from schedlang.formats.common.yaml_source import load

    yaml = pytest.importorskip("yaml")
    text = (CONFIGS / "cerebras_merge_keys.yaml").read_text()
    with warnings.catch_warnings():
        warnings.simplefilter("error", SchedlangWarning)  # merging is not a repeated key
        assert load(text).plain() == yaml.safe_load(text)
        program = schedlang.compile(import_file(CONFIGS / "cerebras_merge_keys.yaml"))
    assert program["lr"](100) == pytest.approx(6e-4)


def test_merge_keys_in_composer_and_hf_files():
    from schedlang.formats import from_composer_yaml, from_hf_args

    hf = ("defaults: &defaults {lr_scheduler_type: cosine, learning_rate: 1.0e-3, max_steps: 100}\n"
          "<<: *defaults\nlearning_rate: 2.0e-3\n")
    composer = ("common: &warm {name: cosine_with_warmup, t_warmup: 10ba, alpha_f: 0.5}\n"
                "scheduler:\n  <<: *warm\n  t_warmup: 20ba\nmax_duration: 100ba\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error", SchedlangWarning)
        assert "hf.cosine(lr=0.002, num_training_steps=100)" in from_hf_args(hf)
        assert "t_warmup=20ba, alpha_f=0.5" in from_composer_yaml(composer)


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


def test_composer_warmup_longer_than_the_run_follows_composer_past_the_end():
    # also covered by the corpus row; this pins the preset itself with t_max as a parameter
    source = ("param max_duration: int\n"
              "schedule lr = composer.CosineAnnealingWithWarmupScheduler(t_warmup=100ba, alpha_f=0.1)")
    ours = schedlang.compile(source, params={"max_duration": 10})["lr"]
    try:
        anchor = R.composer_values("CosineAnnealingWithWarmupScheduler",
                                   {"t_warmup": "100ba", "alpha_f": 0.1}, range(150), max_duration="10ba")
    except R.AnchorUnavailable as exc:
        pytest.skip(str(exc))
    assert ours.values(range(150)) == pytest.approx(anchor, rel=1e-12, abs=0)
    assert ours.duration == 100


@pytest.mark.parametrize("scheduler, max_duration, dataloader_len, params, steps", [
    # the warmup pushes the cooldown's start to t_warmup: it lasts t_cooldown, past the run's end
    ({"t_warmup": "40ba", "t_scale": "10ba", "t_cooldown": "50ba", "alpha_f_decay": 0.25,
      "alpha_f_cooldown": 0.25}, "60ba", None, {}, 120),
    # t_cooldown 0ba: the decay's value at t_max is held, alpha_f_cooldown unused
    ({"t_warmup": "0ba", "t_scale": "30ba", "t_cooldown": "0ba", "t_max": "0.5dur",
      "alpha_f_cooldown": 0.0}, "200ba", None, {}, 260),
    # epochs: every time becomes batches of a steps_per_epoch parameter (and dur of an ep run)
    ({"t_warmup": "1ep", "t_scale": "2ep", "t_cooldown": "1ep", "alpha_f_decay": 0.05}, "6ep", 25,
     {"steps_per_epoch": 25}, 200),
])
def test_foundry_inv_sqrt_quirks_follow_llm_foundry(scheduler, max_duration, dataloader_len, params, steps):
    from schedlang.formats import from_composer_yaml

    lines = ["scheduler:", "  name: inv_sqrt_with_warmup", *[f"  {k}: {v}" for k, v in scheduler.items()],
             "optimizer: {lr: 0.5}", f"max_duration: {max_duration}"]
    text = "\n".join(lines) + "\n"
    preset = schedlang.compile(from_composer_yaml(text), params=params)["lr"]
    core = schedlang.compile(from_composer_yaml(text, style="core"), params=params)["lr"]
    assert schedlang.equivalent(preset, core)
    try:
        anchor = [0.5 * v for v in R.composer_values("InverseSquareRootWithWarmupScheduler", scheduler,
                                                     range(steps), max_duration=max_duration,
                                                     dataloader_len=dataloader_len)]
    except R.AnchorUnavailable as exc:
        pytest.skip(str(exc))
    for schedule in (preset, core):
        assert max_error(schedule.values(range(steps)), anchor, 1e-3) <= TOL


def test_hf_presets_take_warmup_ratio_like_the_trainer():
    transformers = pytest.importorskip("transformers")
    for ratio, total in [(0.07, 100), (0.1, 95), (0.03, 1000)]:
        args = types.SimpleNamespace(warmup_steps=ratio)
        warmup = transformers.TrainingArguments.get_warmup_steps(args, total)
        ours = schedlang.compile(f"hf.linear(lr=1e-3, num_training_steps={total}, "
                                 f"warmup_ratio={ratio})")["lr"]
        theirs = schedlang.compile(f"hf.linear(lr=1e-3, num_training_steps={total}, "
                                   f"num_warmup_steps={warmup})")["lr"]
        assert schedlang.equivalent(ours, theirs), (ratio, total)
    with pytest.raises(schedlang.SchedlangError, match="not both"):
        schedlang.compile("hf.cosine(num_warmup_steps=5, num_training_steps=100, warmup_ratio=0.1)")
    with pytest.raises(schedlang.SchedlangError, match=r"in \[0, 1\)"):
        schedlang.compile("hf.cosine(num_training_steps=100, warmup_ratio=1.5)")


# -- diagnostics -----------------------------------------------------------------------------


@pytest.mark.parametrize("text, message, line, column", [
    ("scheduler: {name: cosine_with_warmpu, t_warmup: 10ba}\n", "unknown Composer scheduler", 1, 19),
    ("scheduler:\n  name: cosine_with_warmup\n  t_warmup: 100\n", "bare number", 3, 13),
    ("scheduler:\n  name: cosine_with_warmup\n  t_warmup: 1.5ba\n", "whole number of ba", 3, 13),
    ("scheduler:\n  name: cosine_with_warmup\n  t_warmup: 1000tok\n",
     "'t_max' (its default, 1dur) counts fractions of the run, but 't_warmup' counts tokens", 2, 9),
    ("scheduler:\n  name: cosine_with_warmup\n  t_warmup: 1000iter\n", "in iterations", 3, 13),
    ("scheduler:\n  name: cosine_with_warmup\n  t_warmpu: 10ba\n", "has no argument 't_warmpu'", 3, 3),
    ("scheduler: {name: inv_sqrt_with_warmup, t_warmup: 10ba}\n", "missing 't_scale'", 1, 19),
    ("scheduler: {name: inv_sqrt_with_warmup, t_warmup: 0.1dur, t_scale: 5ba, t_cooldown: 0ba}\n",
     "'t_warmup' cannot be in units of 'dur'", 1, 51),
    ("max_duration: 2ep\nscheduler:\n  name: inv_sqrt_with_warmup\n  t_warmup: 1ep\n  t_scale: 5ba\n"
     "  t_cooldown: 1ep\n", "'t_scale' is in ba but max_duration is in ep", 5, 12),
    ("scheduler: {name: inv_sqrt_with_warmup, t_warmup: 1ba, t_scale: 5ba, t_cooldown: 0ba,\n"
     "            alpha_f_decay: 0.1, alpha_f_cooldown: 0.2}\n", "alpha_f_decay must be >=", 2, 51),
    ("schedulers:\n  - constant: {alpha: 1}\n  - cosine_decay: {}\n", "2 schedulers", 3, 5),
])
def test_composer_diagnostics(text, message, line, column):
    from schedlang.formats import from_composer_yaml

    with pytest.raises(schedlang.SchedlangError) as info:
        from_composer_yaml(text, "c.yaml")
    assert message in info.value.message
    assert (info.value.line, info.value.column) == (line, column), str(info.value)


@pytest.mark.parametrize("text, message, line, column", [
    ('{"lr_scheduler_type": "cosine_with_restart", "max_steps": 10}', "unknown lr_scheduler_type", 1, 23),
    ('{"lr_scheduler_type": "reduce_lr_on_plateau"}', "cannot be imported", 1, 23),
    ('{"lr_scheduler_type": "cosine",\n "lr_scheduler_kwargs": "{\\"num_cycle\\": 2}", "max_steps": 10}',
     "no argument 'num_cycle'", 2, 25),
    ('{"lr_scheduler_type": "cosine",\n "lr_scheduler_kwargs": "{oops", "max_steps": 10}',
     "not valid JSON", 2, 25),
    ('{"learning_rate": "fast"}', "must be a number", 1, 19),
])
def test_hf_diagnostics(text, message, line, column):
    from schedlang.formats import from_hf_args

    with pytest.raises(schedlang.SchedlangError) as info:
        from_hf_args(text, "args.json")
    assert message in info.value.message
    assert (info.value.line, info.value.column) == (line, column), str(info.value)


def test_hf_constant_with_warmup_ignores_kwargs_with_a_warning():
    from schedlang.formats import from_hf_args

    with pytest.warns(SchedlangWarning, match="ignored"):
        text = from_hf_args('{"lr_scheduler_type": "constant_with_warmup", "warmup_steps": 5, '
                            '"max_steps": 50, "lr_scheduler_kwargs": {"num_cycles": 3}}')
    assert "num_cycles" not in text


def test_cli_imports_and_verifies_both_styles(tmp_path):
    path = CONFIGS / "foundry_mpt_125m.yaml"
    for fmt, name in [("composer-yaml", "foundry_mpt_125m.yaml"),
                      ("composer-yaml", "foundry_inv_sqrt_cooldown.yaml"),
                      ("hf-args", "hf_args_linear.json")]:
        path = CONFIGS / name
        a, b = tmp_path / f"{name}-a.sched", tmp_path / f"{name}-b.sched"
        for out, extra in [(a, []), (b, ["--lower"])]:
            run = subprocess.run([sys.executable, "-m", "schedlang", "import", str(path), "--format", fmt,
                                  "-o", str(out), *extra], capture_output=True, text=True)
            assert run.returncode == 0, run.stderr
        run = subprocess.run([sys.executable, "-m", "schedlang", "verify", str(a), str(b)],
                             capture_output=True, text=True)
        assert run.returncode == 0, run.stdout + run.stderr


# -- exports ----------------------------------------------------------------------------------


@pytest.mark.parametrize("case", COMPOSER, ids=lambda c: c.file)
def test_composer_export_round_trips(case):
    from schedlang.formats import from_composer_yaml
    from schedlang.formats.export import export

    text = import_file(case.path, format="composer-yaml")
    exported = export(text, "x.sched", format="composer-yaml", params=case.params)  # proven equal inside
    back = schedlang.compile(from_composer_yaml(exported), params=case.params)["lr"]
    assert schedlang.equivalent(schedlang.compile(text, params=case.params)["lr"], back)


@pytest.mark.parametrize("case", HF, ids=lambda c: c.file)
def test_hf_export_round_trips(case):
    from schedlang.formats.export import export

    text = import_file(case.path, format="hf-args")
    exported = export(text, "x.sched", format="hf-args", params=case.params)
    fields = __import__("json").loads(exported)
    assert fields["lr_scheduler_type"] == case.kind and fields["max_steps"] == case.total


@pytest.mark.parametrize("fmt, source, message", [
    ("hf-args", "warmup(linear, 10) >> cosine(1e-3, 0, 90)", "one hf.* preset call"),
    ("hf-args", "schedule lr = hf.linear(lr=1e-3, num_training_steps=100)\n"
                "schedule momentum = constant(0.9)", "only the lr"),
    ("composer-yaml", "torch.StepLR(lr=0.1, step_size=10)", "one composer.* preset call"),
    ("composer-yaml", "param n: int\nschedule lr = composer.LinearScheduler(t_max=n)",
     "whole number of batches"),
])
def test_exports_refuse_with_the_reason(fmt, source, message):
    from schedlang.formats.export import export

    with pytest.raises(schedlang.SchedlangError, match=message):
        export(source, "x.sched", format=fmt)


# -- per-group schedules (Cerebras param_group_tags) ----------------------------------------------


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
                  {"params": [params[2]], "tags": "embedding"}, {"params": [params[3]], "lr": 0.123}]
        optimizer = torch.optim.AdamW(groups, lr=3e-4, weight_decay=0.05)
        scheduler = program.scheduler_class("Tagged")(optimizer)
        for step in range(120):
            for group, tag in zip(optimizer.param_groups, ["decay", "no_decay", "embedding"]):
                assert group["lr"] == pytest.approx(want[tag][step], rel=1e-6, abs=1e-12), (style, tag, step)
                assert group["weight_decay"] == wd[tag]
            untagged = optimizer.param_groups[3]
            assert (untagged["lr"], untagged["weight_decay"]) == (0.123, 0.05)  # no schedule drives it
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


#: Each YAML config of the corpus and the format its file name does not say.
YAML_FORMATS = {"cerebras": "cerebras-yaml", "composer": "composer-yaml", "foundry": "composer-yaml",
                "hf": "hf-args", "timm": "timm-args"}


@pytest.mark.parametrize("path", sorted(CONFIGS.glob("*.yaml")), ids=lambda p: p.name)
def test_yaml_format_is_guessed_from_the_top_level_keys(path):
    from schedlang.formats import guess_format

    expected = YAML_FORMATS[path.name.split("_", 1)[0]]
    assert guess_format(path, path.read_text(encoding="utf-8")) == expected
    assert import_file(path) == import_file(path, format=expected)


@pytest.mark.parametrize("path", sorted([*CONFIGS.glob("*.json"), *CONFIGS.glob("deepspeed/*.json")]),
                         ids=lambda p: p.name)
def test_json_format_is_guessed_from_the_keys(path):
    """A serialized Keras schedule has ``class_name``; a DeepSpeed config ``scheduler`` (or its
    other top-level sections); anything else is HF ``TrainingArguments``."""
    from schedlang.formats import guess_format

    expected = "deepspeed-json" if path.parent.name == "deepspeed" else \
        {"hf": "hf-args", "keras": "keras-json"}[path.name.split("_", 1)[0]]
    assert guess_format(path, path.read_text(encoding="utf-8")) == expected
