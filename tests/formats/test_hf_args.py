"""HF ``TrainingArguments`` (``hf-args``): import, export, the diagnostics.

Each config of ``frameworks/configs/`` is imported in both styles, the two are proven equal with
``schedlang.equivalent``, and the values are compared at every step (past the end included) with
transformers' ``get_scheduler`` / ``TrainingArguments.get_warmup_steps``.
"""

from __future__ import annotations

import types

import pytest
from anchors import reference as R
from anchors.preset_cases import max_error
from frameworks.composer_hf_cases import HF

import schedlang
from schedlang.errors import SchedlangWarning
from schedlang.formats import import_file

TOL = 1e-12
CONFIGS_HF = __import__("pathlib").Path(__file__).parents[1] / "frameworks" / "configs"


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


# -- diagnostics -----------------------------------------------------------------------------


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


_TIMESCALE_0 = ('{"lr_scheduler_type": "inverse_sqrt", "learning_rate": 0.1, "max_steps": 100,\n'
                ' "lr_scheduler_kwargs": {"timescale": 0}}')


@pytest.mark.parametrize("text, style, message, line, column", [
    # core style's ``lr / sqrt((t + timescale) / timescale)``: the division by zero, at the timescale
    # (a search of the generated line found no key and no literal there: an error quoting that line)
    (_TIMESCALE_0, "core", "division by zero", 2, 39),
    (_TIMESCALE_0, "presets", "timescale must be positive", 2, 39),
    ("lr_scheduler_type: polynomial\nlearning_rate: 0.1\nmax_steps: 100\nlr_scheduler_kwargs:\n"
     "  lr_end: 0.5\n", "presets", "lr_end (1/2) must be smaller than lr", 5, 11),
    ('{"lr_scheduler_type": "linear", "learning_rate": 0.1,\n "max_steps": 1' + "0" * 30 + "}", "core",
     "a duration must be at most", 2, 15),
])
def test_an_error_the_lowering_raises_lands_on_the_field_it_came_from(text, style, message, line, column):
    """The tree the import lowers is built of nodes at the fields (and kwargs) they were read from,
    core style's formulas too, so what the lowering refuses (not the reader) is at that field."""
    from schedlang.formats import from_hf_args

    with pytest.raises(schedlang.SchedlangError) as info:
        from_hf_args(text, "args.yaml" if text[0] != "{" else "args.json", style)
    assert message in info.value.message, info.value.message
    assert info.value.span.source.filename.startswith("args.")
    assert (info.value.line, info.value.column) == (line, column), str(info.value)


def test_hf_constant_with_warmup_ignores_kwargs_with_a_warning():
    from schedlang.formats import from_hf_args

    with pytest.warns(SchedlangWarning, match="ignored"):
        text = from_hf_args('{"lr_scheduler_type": "constant_with_warmup", "warmup_steps": 5, '
                            '"max_steps": 50, "lr_scheduler_kwargs": {"num_cycles": 3}}')
    assert "num_cycles" not in text


# -- exports ----------------------------------------------------------------------------------


@pytest.mark.parametrize("case", HF, ids=lambda c: c.file)
def test_hf_export_round_trips(case):
    from schedlang.formats.export import export

    text = import_file(case.path, format="hf-args")
    exported = export(text, "x.sched", format="hf-args", params=case.params)
    fields = __import__("json").loads(exported)
    assert fields["lr_scheduler_type"] == case.kind and fields["max_steps"] == case.total


# -- export --into the arguments the file came from (issue 36) ----------------------------------------


def _get_scheduler_values(kind: str, lr: float, warmup: int, total: int, kwargs: dict, steps: int) -> list:
    """The lr of each step from transformers' own ``get_scheduler``, as the Trainer builds it."""
    transformers = pytest.importorskip("transformers")
    import torch

    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=lr)
    scheduler = transformers.get_scheduler(kind, optimizer, num_warmup_steps=warmup, num_training_steps=total,
                                           scheduler_specific_kwargs=kwargs or None)
    values = []
    for _ in range(steps):
        values.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    return values


def _trainer_values(fields: dict, steps: int) -> list:
    """What a v5 Trainer runs for these arguments: ``max_steps`` (the export always writes it),
    the real ``TrainingArguments.get_warmup_steps``, ``lr_scheduler_kwargs`` (a mapping or JSON)."""
    import json

    transformers = pytest.importorskip("transformers")
    assert "warmup_ratio" not in fields  # v4's: the merge removes it
    total = fields["max_steps"]
    warmup = transformers.TrainingArguments.get_warmup_steps(
        types.SimpleNamespace(warmup_steps=fields.get("warmup_steps", 0)), total)
    kwargs = fields.get("lr_scheduler_kwargs") or {}
    kwargs = json.loads(kwargs) if isinstance(kwargs, str) else kwargs
    return _get_scheduler_values(fields.get("lr_scheduler_type", "linear"), fields.get("learning_rate", 5e-5),
                                 warmup, total, kwargs, steps)


def _load(text: str, name: str) -> dict:
    import json

    import yaml

    return yaml.safe_load(text) if name.endswith(".yaml") else json.loads(text)


@pytest.mark.parametrize("case", HF, ids=lambda c: c.file)
def test_hf_export_into_the_original_trains_as_the_original(case):
    """import -> export --into the original: the output is the original with its schedule keys
    replaced (v4's warmup_ratio removed), and transformers' get_scheduler, built as the Trainer
    builds it from that document, gives the original's lr at every step."""
    from schedlang.formats.export import export

    text = import_file(case.path, format="hf-args")
    merged = _load(export(text, "x.sched", format="hf-args", params=case.params, into=case.path), case.file)
    original = _load(case.path.read_text(), case.file)
    assert {k: v for k, v in merged.items() if k not in ("lr_scheduler_type", "learning_rate", "warmup_steps",
                                                         "max_steps", "lr_scheduler_kwargs")} == \
        {k: v for k, v in original.items() if k not in ("lr_scheduler_type", "learning_rate", "warmup_steps",
                                                        "warmup_ratio", "max_steps", "lr_scheduler_kwargs")}
    expected = _get_scheduler_values(case.kind, case.lr, case.warmup, case.total, case.kwargs, case.steps)
    assert _trainer_values(merged, case.steps) == pytest.approx(expected, rel=TOL, abs=1e-18)


def test_hf_export_into_a_recipe_with_a_warmup_ratio_removes_it():
    """A file without warmup written into a recipe with ``warmup_ratio: 0.1``: left there, the ratio
    would warm up 10% of the run; the merge removes it, and the proof reads the merged recipe."""
    from schedlang.formats.export import export

    path = CONFIGS_HF / "hf_sft_recipe.yaml"
    merged = _load(export("schedule lr = hf.cosine(lr=2e-05, num_training_steps=130)\n", "x.sched",
                          format="hf-args", into=path), path.name)
    assert "warmup_ratio" not in merged and "warmup_steps" not in merged
    assert _trainer_values(merged, 140)[0] == 2e-5
