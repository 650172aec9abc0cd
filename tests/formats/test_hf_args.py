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
