"""The Composer-YAML and HF-arguments corpus: each config, how to bind it, and the real call.

Every row is a config of ours under ``configs/`` plus what the framework itself
would build from it: Composer's scheduler class and ``max_duration`` /
``dataloader_len`` (run by ``anchors.reference.composer_values``, the unmodified
mosaicml 0.32.1 sources), or HF's ``get_scheduler`` arguments as the Trainer
derives them (``TrainingArguments.get_warmup_steps`` and its step count).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

CONFIGS = Path(__file__).parent / "configs"


@dataclass(frozen=True)
class ComposerCase:
    file: str
    cls: str
    kwargs: dict
    lr: float
    max_duration: str | None
    params: dict = field(default_factory=dict)
    dataloader_len: int | None = None
    steps: int = 0                 # compare t = 0 .. steps-1 (past the end included)

    @property
    def path(self) -> Path:
        return CONFIGS / self.file


COMPOSER = [
    ComposerCase("foundry_mpt_125m.yaml", "CosineAnnealingWithWarmupScheduler",
                 {"t_warmup": "100ba", "alpha_f": 0.1}, 6e-4, "4800ba", steps=5000),
    ComposerCase("composer_linear_epochs.yaml", "LinearWithWarmupScheduler",
                 {"t_warmup": "0.125dur", "alpha_f": 0.02}, 2.048, "4ep", {"steps_per_epoch": 37},
                 dataloader_len=37, steps=200),
    ComposerCase("foundry_warmup_longer.yaml", "LinearWithWarmupScheduler",
                 {"t_warmup": "100ba", "alpha_f": 0.1}, 1e-3, "10ba", steps=130),
    ComposerCase("composer_multistep_warmup.yaml", "MultiStepWithWarmupScheduler",
                 {"t_warmup": "50ba", "milestones": ["30ba", "200ba", "300ba"], "gamma": 0.5}, 0.01,
                 "400ba", steps=450),
    ComposerCase("foundry_constant_no_duration.yaml", "ConstantWithWarmupScheduler",
                 {"t_warmup": "20ba", "alpha": 0.5}, 5e-5, "150ba", {"max_duration": 150}, steps=200),
    # llm-foundry's own class (llmfoundry/optim/scheduler.py of llm-foundry 0.21.0)
    ComposerCase("foundry_inv_sqrt_cooldown.yaml", "InverseSquareRootWithWarmupScheduler",
                 {"t_warmup": "50ba", "t_scale": "50ba", "t_cooldown": "120ba", "alpha_f_decay": 0.1,
                  "alpha_f_cooldown": 0.0}, 2e-5, "600ba", steps=700),
]
#: Needs the core's zero-length segments (SPEC section 1).
COMPOSER_ZERO = ComposerCase("foundry_zero_warmup.yaml", "CosineAnnealingWithWarmupScheduler",
                             {"t_warmup": "0ba", "alpha_f": 0.0}, 3e-5, "300ba", steps=350)


@dataclass(frozen=True)
class HFCase:
    file: str
    kind: str
    lr: float
    total: int                     # N, as the Trainer computes it for the params below
    warmup: int                    # get_warmup_steps(N) (v4's warmup_ratio rule where v5 has none)
    kwargs: dict = field(default_factory=dict)
    params: dict = field(default_factory=dict)

    @property
    def path(self) -> Path:
        return CONFIGS / self.file

    @property
    def steps(self) -> int:
        return self.total + 60     # past the end: cosine rises again, linear holds 0


HF = [
    # 1 epoch of 130 updates; v4 warmup_ratio 0.1 -> ceil(13.000000000000002) = 14 in float64
    HFCase("hf_sft_recipe.yaml", "cosine", 2e-5, 130, math.ceil(130 * 0.1), params={"steps_per_epoch": 130}),
    HFCase("hf_args_min_lr.json", "cosine_with_min_lr", 3e-4, 500, math.ceil(500 * 0.03),
           {"min_lr_rate": 0.1}),
    HFCase("hf_args_linear.json", "linear", 5e-5, 200, 10),
    HFCase("hf_wsd.yaml", "warmup_stable_decay", 1e-3, 300, 20,
           {"num_decay_steps": 50, "decay_type": "linear", "min_lr_ratio": 0.05}),
    HFCase("hf_restarts.yaml", "cosine_with_restarts", 3e-4, 240, 15, {"num_cycles": 3}),
    HFCase("hf_warmup_min_lr.json", "cosine_warmup_with_min_lr", 2e-4, 160, 12, {"min_lr": 1e-5}),
    # 2.5 epochs of 41 updates: ceil(102.5) = 103
    HFCase("hf_polynomial_epochs.json", "polynomial", 1e-4, math.ceil(2.5 * 41), 25,
           {"lr_end": 1e-6, "power": 2.0}, {"steps_per_epoch": 41}),
]
