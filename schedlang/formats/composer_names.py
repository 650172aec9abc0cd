"""The names Composer and llm-foundry give their schedulers in YAML (``registry.schedulers``,
Composer's hparams names): read by ``composer_yaml``, written by ``composer_export``."""

from __future__ import annotations

#: Registry names (llm-foundry's ``registry.schedulers``, Composer's hparams names) -> class.
NAMES = {
    "cosine_with_warmup": "CosineAnnealingWithWarmupScheduler",
    "linear_decay_with_warmup": "LinearWithWarmupScheduler",
    "constant_with_warmup": "ConstantWithWarmupScheduler",
    "constant": "ConstantScheduler",
    "step": "StepScheduler",
    "multistep": "MultiStepScheduler",
    "exponential": "ExponentialScheduler",
    "linear_decay": "LinearScheduler",
    "cosine_decay": "CosineAnnealingScheduler",
    "cosine_warmrestart": "CosineAnnealingWarmRestartsScheduler",
    "polynomial": "PolynomialScheduler",
    "multistep_with_warmup": "MultiStepWithWarmupScheduler",
    "cosine_decay_with_warmup": "CosineAnnealingWithWarmupScheduler",
    "polynomial_with_warmup": "PolynomialWithWarmupScheduler",
    "inv_sqrt_with_warmup": "InverseSquareRootWithWarmupScheduler",  # llm-foundry's own
}
#: The name ``schedlang export --format composer-yaml`` writes for a class (foundry's first).
EXPORT_NAMES: dict[str, str] = {}
for _name, _cls in NAMES.items():
    EXPORT_NAMES.setdefault(_cls, _name)
