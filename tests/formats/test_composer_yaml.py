"""Composer / llm-foundry YAML (``composer-yaml``): import, export, the diagnostics.

Each config of ``frameworks/configs/`` is imported in both styles, the two are proven equal with
``schedlang.equivalent``, and the values are compared at every step (past the end included) with
mosaicml 0.32.1's own scheduler sources; the export is read back equal.

``dur`` of an epoch run as Composer converts it (issue 28): ``int(v * dataloader_len * epochs)``
in float64, so ``0.3dur`` of ``10ep`` at 9 batches an epoch is 26 batches, not the 27 that
``3ep`` would be; checked against Composer's own ``_convert_time`` and scheduler at epoch lengths
that are not round.

Times in tokens and samples (issue 27): llm-foundry YAML with ``...tok`` / ``...sp`` times
declares the run's batch and is Composer's scheduler at every step; the export writes the batch
keys back (the Composer helpers are tests/frameworks/test_composer_tokens.py's).
"""

from __future__ import annotations

import pytest
from anchors import reference as R
from anchors.preset_cases import max_error
from frameworks.composer_hf_cases import COMPOSER, COMPOSER_ZERO
from frameworks.test_composer_tokens import CASES, TIMES, _available, _composer, _sched

import schedlang
from schedlang.errors import SchedlangError
from schedlang.formats import from_composer_yaml, import_file
from schedlang.formats.composer_yaml import composer_batches

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


# -- exports ----------------------------------------------------------------------------------


@pytest.mark.parametrize("case", COMPOSER, ids=lambda c: c.file)
def test_composer_export_round_trips(case):
    from schedlang.formats import from_composer_yaml
    from schedlang.formats.export import export

    text = import_file(case.path, format="composer-yaml")
    exported = export(text, "x.sched", format="composer-yaml", params=case.params)  # proven equal inside
    back = schedlang.compile(from_composer_yaml(exported), params=case.params)["lr"]
    assert schedlang.equivalent(schedlang.compile(text, params=case.params)["lr"], back)


# -- dur of an epoch run (issue 28) -----------------------------------------------------------

ISSUE = """\
scheduler:
  name: cosine_with_warmup
  t_warmup: 0.3dur
max_duration: 10ep
optimizer: {lr: 6.0e-4}
"""


def test_the_issue_s_case_is_refused_without_the_epoch_length_not_imported_one_off():
    with pytest.raises(SchedlangError, match=r"floating point") as info:
        from_composer_yaml(ISSUE, "run.yaml")
    assert info.value.span is not None and info.value.span.line == 3
    assert "--option steps_per_epoch=N" in info.value.hint


@pytest.mark.parametrize("style", ["presets", "core"])
def test_the_issue_s_case_with_the_epoch_length_warms_up_26_batches(style):
    text = from_composer_yaml(ISSUE, "run.yaml", style, options={"steps_per_epoch": "9"})
    assert "26ba" in text and "3ep" not in text
    lr = schedlang.compile(text)["lr"]
    assert lr(1) == pytest.approx(6e-4 / 26, rel=1e-12)  # Composer: 2.3077e-05


@pytest.mark.parametrize("fraction", ["0.3", "0.1", "0.7", "0.35"])
@pytest.mark.parametrize("epochs", [10, 3, 7])
def test_composer_batches_is_composer_s_own_conversion(fraction, epochs):
    from fractions import Fraction

    for spe in (1, 9, 18, 31, 37, 41, 1000, 12_345):
        assert composer_batches(Fraction(fraction), epochs, spe) == int(float(fraction) * spe * epochs)


@pytest.mark.parametrize("spe", [9, 18, 37, 41])
@pytest.mark.parametrize("t_warmup, max_duration", [("0.3dur", "10ep"), ("0.1dur", "4ep"), ("0.7dur", "3ep")])
def test_imported_dur_of_an_epoch_run_matches_composer(spe, t_warmup, max_duration):
    text = ("scheduler:\n  name: CosineAnnealingWithWarmupScheduler\n"
            f"  t_warmup: {t_warmup}\n  alpha_f: 0.1\nmax_duration: {max_duration}\n")
    ours = schedlang.compile(from_composer_yaml(text, "c.yaml", options={"steps_per_epoch": spe}))["lr"]
    steps = int(max_duration[:-2]) * spe + 5
    try:
        anchor = R.composer_values("CosineAnnealingWithWarmupScheduler",
                                   {"t_warmup": t_warmup, "alpha_f": 0.1}, range(steps),
                                   max_duration=max_duration, dataloader_len=spe)
    except R.AnchorUnavailable as exc:
        pytest.skip(str(exc))
    assert max_error(ours.values(range(steps)), anchor, 1e-3) <= 1e-12


@pytest.mark.parametrize("spe", [9, 37])
def test_a_binary_fraction_stays_a_formula_of_the_epoch_length(spe):
    """0.125dur: Composer's float product is exact, so the import keeps ``steps_per_epoch`` a
    parameter, and its value matches Composer at any epoch length."""
    text = ("scheduler:\n  name: CosineAnnealingWithWarmupScheduler\n  t_warmup: 0.125dur\n"
            "max_duration: 4ep\n")
    imported = from_composer_yaml(text, "c.yaml")
    assert "param steps_per_epoch" in imported
    ours = schedlang.compile(imported, params={"steps_per_epoch": spe})["lr"]
    try:
        anchor = R.composer_values("CosineAnnealingWithWarmupScheduler", {"t_warmup": "0.125dur"},
                                   range(4 * spe + 3), max_duration="4ep", dataloader_len=spe)
    except R.AnchorUnavailable as exc:
        pytest.skip(str(exc))
    assert max_error(ours.values(range(4 * spe + 3)), anchor, 1e-3) <= 1e-12


def test_the_option_is_checked():
    with pytest.raises(SchedlangError, match="whole number of batches"):
        from_composer_yaml(ISSUE, "run.yaml", options={"steps_per_epoch": "0"})
    with pytest.raises(SchedlangError, match="no option 'formula'"):
        from_composer_yaml(ISSUE, "run.yaml", options={"formula": "x"})


# -- times in tokens and samples (issue 27) -----------------------------------------------------


def import_text(text, fmt, filename, style="presets", options=None):
    """``schedlang import`` of ``text`` (a composer-yaml file) as the CLI does it."""
    from schedlang.formats import by_name

    assert fmt == "composer-yaml"
    return by_name(fmt).reader(text, filename, style, **({"options": options} if options else {}))


def _yaml(cls, kwargs, unit, extra=""):
    lines = [f"scheduler:\n  name: {cls}"]
    for k, v in kwargs.items():
        if k in TIMES:
            v = [f"{x}{unit}" for x in v] if isinstance(v, list) else f"{v}{unit}"
        lines.append(f"  {k}: {v}")
    return "\n".join(lines) + "\noptimizer:\n  lr: 6.0e-4\n" + extra


@pytest.mark.parametrize("lower", [False, True], ids=["presets", "lower"])
@pytest.mark.parametrize("unit", ["tok", "sp"])
@pytest.mark.parametrize("cls, kwargs", CASES, ids=[c for c, _ in CASES])
def test_imported_yaml_in_tokens_and_samples_is_composer_at_every_step(cls, kwargs, unit, lower):
    """llm-foundry YAML with times in tokens (samples): the import declares the run's batch
    (global_train_batch_size, max_seq_len) and is Composer's scheduler at T_k (S_k) of every step."""
    _available()
    text = _yaml(cls, kwargs, unit, "global_train_batch_size: 3\nvariables:\n  max_seq_len: 7\n")
    imported = import_text(text, "composer-yaml", "run.yaml", style="core" if lower else "presets")
    assert "batch = 3" in imported and ("param seq_len: int = 7" in imported) == (unit == "tok")
    prog = schedlang.compile(imported)
    theirs = _composer(cls, kwargs, unit)
    steps = range(0, 6000 // 3 + 5)
    expected = [6e-4 * theirs(k, 3 * k, 21 * k) for k in steps]
    assert prog["lr"].values(steps) == pytest.approx(expected, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("fraction", ["0.3", "0.7", "0.01"])
def test_imported_dur_of_a_token_run_is_composer_s_float_conversion(fraction):
    _available()
    total = 1_000_000_007
    text = (f"max_duration: {total}tok\nmax_seq_len: 4096\nglobal_train_batch_size: 8\n"
            f"scheduler:\n  name: cosine_with_warmup\n  t_warmup: {fraction}dur\n  alpha_f: 0.1\n")
    imported = import_text(text, "composer-yaml", "run.yaml")
    warmup = int(float(fraction) * total)
    assert f"t_warmup={warmup}tok" in imported and f"t_max={total}tok" in imported
    prog = schedlang.compile(imported)
    theirs = _composer("CosineAnnealingWithWarmupScheduler", {"t_warmup": warmup, "t_max": total,
                                                              "alpha_f": 0.1}, "tok")
    at = [prog.step_at(tokens=warmup) + d for d in (-2, -1, 0, 1, 2)] + [prog.step_at(tokens=total) + 1]
    assert prog["lr"].values(at) == pytest.approx([theirs(k, 8 * k, 8 * 4096 * k) for k in at], rel=1e-12)


HEAD = "scheduler:\n  name: cosine_with_warmup\n"


@pytest.mark.parametrize("text, message", [
    (HEAD + "  t_warmup: 100ba\n  t_max: 1000tok\nglobal_train_batch_size: 4\n"
     "max_seq_len: 8\n", "'t_warmup' counts batches, but 't_max' counts tokens"),
    (HEAD + "  t_warmup: 100tok\nglobal_train_batch_size: 4\nmax_seq_len: 8\n",
     "its default, 1dur"),
    (HEAD + "  t_warmup: 100tok\n  t_max: 1000tok\nmax_seq_len: 8\n",
     "need the run's global_train_batch_size"),
    (HEAD + "  t_warmup: 100tok\n  t_max: 1000tok\nglobal_train_batch_size: 4\n",
     "need the run's max_seq_len"),
    (HEAD + "  t_warmup: 100sp\n  t_max: 1000tok\nglobal_train_batch_size: 4\n"
     "max_seq_len: 8\n", "'t_max' counts tokens, but 't_warmup' counts samples"),
])
def test_yaml_times_of_two_units_or_no_batch_are_refused_with_the_reason(text, message):
    with pytest.raises(SchedlangError, match=message) as info:
        import_text(text, "composer-yaml", "run.yaml")
    assert info.value.span is not None or "need the run's" in message


def test_the_batch_options_give_what_the_file_leaves_out():
    text = "scheduler:\n  name: cosine_with_warmup\n  t_warmup: 100tok\n  t_max: 1000tok\n"
    imported = import_text(text, "composer-yaml", "run.yaml",
                           options={"global_train_batch_size": "4", "max_seq_len": "8"})
    assert "batch = 4" in imported and "param seq_len: int = 8" in imported
    with pytest.raises(SchedlangError, match="batch options are for times in samples or tokens"):
        import_text("scheduler:\n  name: cosine_with_warmup\n  t_warmup: 100ba\n  t_max: 1000ba\n",
                    "composer-yaml", "run.yaml", options={"global_train_batch_size": "4"})


@pytest.mark.parametrize("unit", ["tok", "sp"])
def test_export_of_token_lengths_writes_the_batch_and_reads_back_equal(unit):
    """``export --format composer-yaml`` of a preset given tokens (samples): the times as Composer
    strings and the batch keys the import needs; the export proves the round trip itself, and the
    YAML it writes is Composer's schedule at every step."""
    _available()
    from schedlang.formats import by_name

    cls, kwargs = CASES[0]
    text = _sched(cls, kwargs, unit, "8")
    yaml = by_name("composer-yaml").writer(text, "run.sched", read=by_name("composer-yaml").reader)
    assert "global_train_batch_size: 8" in yaml and ("max_seq_len: 7" in yaml) == (unit == "tok")
    assert f"t_warmup: 700{unit}" in yaml
    back = schedlang.compile(import_text(yaml, "composer-yaml", "run.yaml"))
    theirs = _composer(cls, kwargs, unit)
    steps = range(0, 800)
    assert back["lr"].values(steps) == pytest.approx([theirs(k, 8 * k, 56 * k) for k in steps], rel=1e-12)


def test_a_batch_ramp_has_no_composer_yaml_export():
    from schedlang.formats import by_name

    text = _sched(*CASES[0], "tok", "stages(4, [8], [1000tok])")
    with pytest.raises(SchedlangError, match="Composer has no batch ramp") as info:
        by_name("composer-yaml").writer(text, "run.sched", read=by_name("composer-yaml").reader)
    assert info.value.span.line == 2


# -- export --into the run YAML the file came from (issue 36) -----------------------------------------


def _put_into(original: dict, snippet: dict) -> dict:
    """The export's keys put into the run YAML as its header says: the scheduler block replaced
    wherever it was, the lr set in the original's own optimizer, max_duration where it is."""
    merged = {k: v for k, v in original.items() if k not in ("scheduler", "schedulers")}
    merged["scheduler"] = snippet["scheduler"]
    if "optimizer" in snippet:
        optimizers = merged.get("optimizers") or {"optimizer": merged.setdefault("optimizer", {})}
        next(iter(optimizers.values()))["lr"] = snippet["optimizer"]["lr"]
    if "max_duration" in snippet:
        merged["max_duration"] = snippet["max_duration"]
    return merged


@pytest.mark.parametrize("case", COMPOSER, ids=lambda c: c.file)
def test_composer_export_into_the_original_runs_in_composer_as_the_original(case):
    """import -> export --into the original -> its keys in the original YAML: Composer's own
    scheduler (and llm-foundry's), built from that YAML, gives the original's lr at every step."""
    import yaml

    from schedlang.formats.composer_names import EXPORT_NAMES
    from schedlang.formats.export import export

    options = case.params if case.dataloader_len else None
    text = import_file(case.path, format="composer-yaml", options=options)
    params = {} if case.dataloader_len else case.params
    exported = export(text, "x.sched", format="composer-yaml", params=params, into=case.path)
    assert "# Proved merged into" in exported
    merged = _put_into(yaml.safe_load(case.path.read_text()), yaml.safe_load(exported))
    kwargs = dict(merged["scheduler"])
    names = {v: k for k, v in EXPORT_NAMES.items()}
    cls = names.get(kwargs.pop("name"))
    optimizers = merged.get("optimizers") or {"optimizer": merged["optimizer"]}
    lr = next(iter(optimizers.values()))["lr"]
    try:
        values = R.composer_values(cls, kwargs, range(case.steps), max_duration=merged.get("max_duration"),
                                   dataloader_len=case.dataloader_len)
    except R.AnchorUnavailable as exc:
        pytest.skip(str(exc))
    assert max_error([lr * v for v in values], _composer_reference(case), 1e-3) <= TOL


# -- the import is a tree of statements at the YAML they state (issue 40) ----------------------

_TOKENS = ("max_duration: 1000000tok\nglobal_train_batch_size: 8\nmax_seq_len: 128\n"
           "scheduler:\n  name: cosine_with_warmup\n  t_warmup: 1000tok\n")


def _tree(text: str, options=None):
    from schedlang.formats import composer_yaml
    from schedlang.formats.common.format import importing

    with importing(text, "run.yaml"):
        return composer_yaml.source(text, "run.yaml", "presets", options)


def _stated(tree) -> list[tuple[str, str]]:
    """Each statement's kind and the YAML text its span covers (``<import>``: none of the file)."""
    out = []
    for stmt in tree.statements:
        span = stmt.span
        line = span.source.line(span.line) if span.source.filename == "run.yaml" else ""
        out.append((type(stmt).__name__, line[span.column - 1:span.end_column - 1] or "<import>"))
    return out


def test_the_import_is_a_module_whose_statements_are_at_the_keys_they_state():
    from schedlang.syntax import unparse
    from schedlang.syntax.fmt import format_source

    tree = _tree(_TOKENS)
    assert _stated(tree) == [("Param", "128"), ("BatchDecl", "8"), ("RunDecl", "1000000tok"),
                             ("ScheduleDecl", "cosine_with_warmup")]
    assert from_composer_yaml(_TOKENS, "run.yaml") == format_source(unparse.module(tree))  # this tree


def test_a_batch_given_as_an_option_is_at_no_key_of_the_file():
    tree = _tree(_TOKENS, {"global_train_batch_size": "16"})
    assert _stated(tree)[:2] == [("Param", "128"), ("BatchDecl", "<import>")]


def test_a_declared_parameter_is_at_the_time_that_reads_it():
    """``steps_per_epoch`` at the first epoch time (the warmup's, before the run's), ``max_duration``
    of a default ``t_max=1dur`` at the scheduler's name, ``param max_duration: int = N`` at the key."""
    epochs = _tree("max_duration: 3ep\nscheduler:\n  name: cosine_with_warmup\n  t_warmup: 1ep\n")
    assert _stated(epochs) == [("Param", "1ep"), ("RunDecl", "3ep"), ("ScheduleDecl", "cosine_with_warmup")]
    absent = _tree("scheduler:\n  name: cosine_with_warmup\n  t_warmup: 100ba\n")
    assert _stated(absent) == [("Param", "cosine_with_warmup"), ("ScheduleDecl", "cosine_with_warmup")]
    batches = _tree("max_duration: 800ba\nscheduler:\n  name: cosine_with_warmup\n  t_warmup: 0.1dur\n")
    assert _stated(batches) == [("Param", "800ba"), ("RunDecl", "800ba"),
                                ("ScheduleDecl", "cosine_with_warmup")]
