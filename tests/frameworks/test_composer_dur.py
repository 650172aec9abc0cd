"""``dur`` of an epoch run as Composer converts it (issue 28): ``int(v * dataloader_len *
epochs)`` in float64, so ``0.3dur`` of ``10ep`` at 9 batches an epoch is 26 batches, not the
27 that ``3ep`` would be.  Checked against mosaicml 0.32.1's own ``_convert_time`` and
scheduler at epoch lengths that are not round."""

from __future__ import annotations

import pytest
from anchors import reference as R
from anchors.preset_cases import max_error

import schedlang
from schedlang.errors import SchedlangError
from schedlang.formats import from_composer_yaml
from schedlang.formats.composer_yaml import composer_batches

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
