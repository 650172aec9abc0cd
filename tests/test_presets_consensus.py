"""anchors.md §8: one warmup + cosine written in every library's terms.

Cerebras, optax, Composer and SambaFlow agree with ``warmup(linear, 4) >>
cosine(1, 0.1, 6)`` at every step; HF's cosine_with_min_lr and torch's
CosineAnnealingLR rise again after step 10; torch's LinearLR cannot start at 0.
"""

from __future__ import annotations

import pytest

import schedlang

STEPS = range(40)
CORE = schedlang.compile("warmup(linear, 4) >> cosine(1, 0.1, 6)")["lr"].values(STEPS)

SAME = {
    "cerebras": "cerebras.SequentialLR(schedulers=[cerebras.LinearLR(initial_learning_rate=0, "
                "end_learning_rate=1, total_iters=4), cerebras.CosineDecayLR(initial_learning_rate=1, "
                "end_learning_rate=0.1, total_iters=6)])",
    "optax": "optax.warmup_cosine_decay_schedule(0, 1, 4, 10, 0.1)",
    "composer": "composer.CosineAnnealingWithWarmupScheduler(t_warmup=4ba, t_max=10ba, alpha_f=0.1)",
    "sambaflow": "sambaflow.cosine_schedule_with_warmup(learning_rate=1, warmup_steps=4, max_steps=10)",
}


@pytest.mark.parametrize("library", SAME)
def test_libraries_that_hold_agree_with_the_core_schedule(library):
    assert schedlang.compile(SAME[library])["lr"].values(STEPS) == pytest.approx(CORE, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("source", [
    "hf.cosine_with_min_lr(num_warmup_steps=4, num_training_steps=10, min_lr_rate=0.1)",
    "torch.SequentialLR(schedulers=[torch.LinearLR(start_factor=1e-8, total_iters=4), "
    "torch.CosineAnnealingLR(T_max=6, eta_min=0.1)], milestones=[4])",
])
def test_libraries_that_rise_again(source):
    values = schedlang.compile(source)["lr"].values(STEPS)
    assert values[1:11] == pytest.approx(CORE[1:11], rel=1e-7)
    assert values[11] == pytest.approx(0.160289, abs=1e-6) and values[12] == pytest.approx(0.325)
