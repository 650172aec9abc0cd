"""Composer and HF presets beyond the conformance rows: a Composer warmup longer than the run,
past its end, against mosaicml 0.32.1's scheduler sources, and ``warmup_ratio`` as
transformers' ``TrainingArguments.get_warmup_steps`` reads it.

The imports and exports of their files (``composer-yaml``, ``hf-args``) are tested in
tests/formats/test_composer_yaml.py and tests/formats/test_hf_args.py.
"""

from __future__ import annotations

import types

import pytest
from anchors import reference as R

import schedlang


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
