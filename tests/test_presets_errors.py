"""Presets that are refused, and preset arguments that are wrong, give clear errors."""

from __future__ import annotations

import pytest

import schedlang
from schedlang.library.presets import PRESETS, Rejected, namespace


def error_of(source: str, **params) -> schedlang.SchedlangError:
    with pytest.raises(schedlang.SchedlangError) as info:
        schedlang.compile(source, params=params or None)
    return info.value


@pytest.mark.parametrize("name", [n for n, p in PRESETS.items() if isinstance(p, Rejected)])
def test_rejected_presets_say_why_and_what_instead(name):
    err = error_of(f"{name}(lr=0.1)")
    assert "not a closed-form schedule" in err.message and name in err.message
    assert err.hint and len(err.hint) > 40
    assert err.column == 1 and err.line == 1


def test_rejected_names_cover_the_brief():
    rejected = {n for n, p in PRESETS.items() if isinstance(p, Rejected)}
    assert {"torch.ReduceLROnPlateau", "hf.reduce_lr_on_plateau", "hf.greedy"} <= rejected
    assert "metric" in PRESETS["torch.ReduceLROnPlateau"].reason


def test_multiplicative_lr_takes_a_constant_factor_and_refuses_one_that_changes():
    """torch.MultiplicativeLR's running product is closed form for a constant factor (issue 41):
    ``lr * f ** t``; a factor in ``t`` is refused at the argument, saying what to write."""
    lr = schedlang.compile("torch.MultiplicativeLR(lr=0.1, lr_lambda=0.5)")["lr"]
    assert lr.values([0, 1, 3]) == pytest.approx([0.1, 0.05, 0.0125])
    err = error_of("torch.MultiplicativeLR(lr=0.1, lr_lambda=0.9 ** t)")
    assert "running product has no closed form" in err.message and err.column == 42
    assert "torch.LambdaLR" in err.hint


def test_preset_counts():
    counts = {lib: len([p for p in namespace(lib).values() if not isinstance(p, Rejected)])
              for lib in ("cerebras", "torch", "composer", "hf", "sambaflow", "optax")}
    assert counts == {"cerebras": 37, "torch": 16, "composer": 14, "hf": 10, "sambaflow": 3,
                      "optax": 14}


def test_unknown_preset_suggests_the_nearest():
    err = error_of("torch.CosineAnealingLR(lr=0.1, T_max=10)")
    assert "unknown name 'torch.CosineAnealingLR'" in err.message
    assert "torch.CosineAnnealingLR" in err.hint


def test_wrong_keyword_suggests_the_anchor_keyword():
    err = error_of("cerebras.LinearLR(initial_lr=0, end_learning_rate=1, total_iters=10)")
    assert "no argument 'initial_lr'" in err.message


@pytest.mark.parametrize("source, message", [
    ("torch.ChainedScheduler(schedulers=[torch.StepLR(step_size=3), torch.CosineAnnealingLR(T_max=9)])",
     "cannot chain CosineAnnealingLR"),
    ("torch.ChainedScheduler(schedulers=[torch.LambdaLR(lr_lambda=0.9 ** t), torch.StepLR(step_size=3)])",
     "cannot chain LambdaLR"),
    ("torch.SequentialLR(schedulers=[torch.StepLR(lr=0.1, step_size=3), torch.StepLR(lr=0.2, step_size=3)],"
     " milestones=[5])", "different lr values"),
    ("torch.SequentialLR(schedulers=[torch.StepLR(step_size=3), torch.StepLR(step_size=3)], milestones=[])",
     "non-empty list"),
    ("torch.SequentialLR(schedulers=[torch.StepLR(step_size=3), torch.StepLR(step_size=3)], "
     "milestones=[4, 8])", "one milestone fewer"),
    ("torch.LinearLR(start_factor=0, total_iters=10)", "0 < start_factor <= 1"),
    ("torch.OneCycleLR(max_lr=0.1, epochs=3)", "total_steps, or both epochs"),
    ("torch.CosineAnnealingWarmRestarts(T_0=10, T_mult=1.5)", "whole number"),
    ("cerebras.ChainedScheduler(schedulers=[cerebras.StepLR(initial_learning_rate=1, step_size=2, "
     "gamma=0.5), cerebras.ConstantLR(learning_rate=0.1)])", "no initial_val"),
    ("cerebras.SequentialLR(schedulers=[cerebras.StepLR(initial_learning_rate=1, step_size=2, gamma=0.5),"
     " cerebras.ConstantLR(learning_rate=0.1)])", "has no total_iters"),
    ("cerebras.PiecewiseConstantLR(learning_rates=[1, 2, 3, 4], milestones=[10])", "one more value"),
    ("hf.polynomial(lr=1e-3, num_warmup_steps=10, num_training_steps=10)", "ZeroDivisionError"),
    ("hf.polynomial(lr=1e-8, num_training_steps=10)", "must be smaller than lr"),
    ("hf.cosine_with_min_lr(lr=1e-3, num_training_steps=10)", "one of min_lr or min_lr_rate"),
    ("hf.warmup_stable_decay(num_decay_steps=10)", "num_training_steps or num_stable_steps"),
    ("hf.linear(num_warmup_steps=20, num_training_steps=10)", "longer than num_training_steps"),
    ("hf.inverse_sqrt(timescale=0)", "timescale must be positive"),
    ("cerebras.InverseSquareRootDecayLR(warmup_steps=0)", "not finite at step 0"),
    ("optax.piecewise_constant_schedule(1, [[10, 0.5], [10, 0.1]])", "distinct"),
    ("optax.piecewise_constant_schedule(1, [[10, -0.5]])", "non-negative"),
    ("optax.piecewise_constant_schedule(1, [10, 0.5])", "must be a pair"),
    ("optax.warmup_cosine_decay_schedule(0, 1, 100, 100)", "longer than warmup_steps"),
    ("composer.CosineAnnealingScheduler(lr=0.1)", "defaults t_max to 1dur"),
    ("composer.ExponentialScheduler(gamma=0.5)", "steps_per_epoch"),
    ("composer.CosineAnnealingWarmRestartsScheduler(t_0=10ba, t_mult=0.5)", "t_mult must be >= 1"),
    ("param max_duration: int = 1000\nschedule lr = composer.CosineAnnealingWarmRestartsScheduler("
     "t_0=0.003dur, t_mult=1.5)", "t_0 must be a number of steps here"),
    ("composer.LinearScheduler(t_max=1.5ba)", "not a whole number of batches"),
    ("sambaflow.cosine_schedule_with_warmup(learning_rate=1, warmup_steps=10, max_steps=10)",
     "larger than warmup_steps"),
])
def test_bad_preset_arguments(source, message):
    err = error_of(source)
    assert message in str(err)


def test_time_defaults_use_the_declared_parameters():
    prog = schedlang.compile("param max_duration: int\nparam steps_per_epoch: int\n"
                             "schedule lr = composer.CosineAnnealingScheduler(lr=1)\n"
                             "schedule wd = composer.ExponentialScheduler(gamma=0.5)",
                             params={"max_duration": 100, "steps_per_epoch": 10})
    assert prog["lr"].duration == 100 and prog["lr"](100) == 0.0
    assert prog["wd"](10) == pytest.approx(0.5)


def test_finite_presets_sequence_with_shift():
    lr = schedlang.compile("torch.LinearLR(lr=1, start_factor=0.5, total_iters=4) >> "
                           "hf.linear(lr=1, num_training_steps=4) >> constant(0.25)")["lr"]
    assert lr.values(range(10)) == pytest.approx([0.5, 0.625, 0.75, 0.875, 1, 0.75, 0.5, 0.25,
                                                  0.25, 0.25])


def test_cerebras_lambda_is_an_expression_in_t():
    lr = schedlang.compile("cerebras.LambdaLR(initial_learning_rate=0.1, lr_lambda=1 / (1 + t))")["lr"]
    assert lr.values([0, 1, 9]) == pytest.approx([0.1, 0.05, 0.01])


def test_presets_document_themselves():
    for name, preset in PRESETS.items():
        if not isinstance(preset, Rejected):
            assert preset.doc, name


def test_every_preset_has_a_conformance_case():
    from anchors.preset_cases import CASES

    covered = {case.preset for case in CASES}
    missing = [n for n, p in PRESETS.items() if not isinstance(p, Rejected) and n not in covered]
    assert not missing


def test_presets_doc_lists_every_preset_with_its_signature():
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "docs" / "presets.md").read_text(encoding="utf-8")
    for name, preset in PRESETS.items():
        shown = f"`{name}`" if isinstance(preset, Rejected) else f"`{preset.signature()}`"
        assert shown in text, name


def test_presets_doc_counts_every_library_once_and_right():
    """docs/presets.md's one "Counts" paragraph names each library once, with its presets and
    its refusals as the registry has them."""
    import re
    from pathlib import Path

    from schedlang.library.presets import LIBRARIES, namespace

    text = (Path(__file__).resolve().parent.parent / "docs" / "presets.md").read_text(encoding="utf-8")
    assert text.count("Counts") == 1 and text.count("The anchors were") == 1
    paragraph = text.split("Counts", 1)[1].split("\n\n", 1)[0]
    paragraph = " ".join(paragraph.split())
    found = {}
    for match in re.finditer(r"(?:^|[,:] )([a-z_]+) (\d+)(?: \(((?:[^()]|\([^()]*\))*)\))?", paragraph):
        library, count, note = match.group(1), int(match.group(2)), match.group(3) or ""
        assert library not in found, f"{library} counted twice"
        rejected = re.search(r"\+(\d+) rejected", note)
        found[library] = (count, int(rejected.group(1)) if rejected else 0)
    expected = {}
    for library in LIBRARIES:
        entries = namespace(library).values()
        refused = sum(isinstance(p, Rejected) for p in entries)
        expected[library] = (len(entries) - refused, refused)
    assert found == expected
