"""torchtitan's older ``lr_lambda`` builders, copied verbatim from its repository.

The TOML keys of ``[lr_scheduler]`` kept their names while the formula changed
(see docs/presets.md), and no installable release carries the oldest one, so
the reference for the historical presets is the code of the commits below
(BSD-3-Clause, Meta Platforms, Inc.).  The only edits: the builders take the
config values as arguments instead of a ``JobConfig``, the ``logger.warning`` calls are left out, and they return the lambda
instead of wrapping it in ``LRSchedulersContainer`` (a ``LambdaLR`` per
optimizer, which ``titan_lambda_values`` drives the same way).
"""

# ruff: noqa
import functools
import math


def build_3d6f73c4(training_steps, training_warmup_steps):
    """torchtitan/components/optimizer.py at 3d6f73c4be22855467cc1e91280b86a4571a2e5e (2025-03-10)."""
    warmup_steps = int(training_warmup_steps)
    decay_steps = float(max(1, training_steps - warmup_steps))

    def linear_warmup_linear_decay(
        warmup_steps: int, decay_steps: int, current_step: int
    ) -> float:
        """Computes linear warmup followed by linear decay.

        Per LambdaLR requirement, this is accomplished by returning
        a multiplicative factor to adjust the learning rate to
        create the desired schedule.
        """
        if current_step < warmup_steps:
            # linear warmup
            # 0-indexed step, hence + 1 adjustments
            current_step += 1
            curr_adjustment = float(current_step / (warmup_steps + 1))

        else:
            # linear decay
            normalized_step = decay_steps - (current_step - warmup_steps)
            curr_adjustment = 1 - (decay_steps - normalized_step) / decay_steps

        return curr_adjustment

    return functools.partial(linear_warmup_linear_decay, warmup_steps, decay_steps)


def build_24041973(training_steps, warmup_steps_cfg, decay_ratio, decay_type, lr_min):
    """torchtitan/components/lr_scheduler.py at 2404197326669db64bc80f515d7bc9f69863f466 (2025-03-27)."""
    warmup_steps = int(warmup_steps_cfg)
    if decay_ratio is not None:
        decay_steps = round(training_steps * decay_ratio)
        if warmup_steps + decay_steps > training_steps:
            decay_steps = training_steps - warmup_steps
    else:
        decay_steps = training_steps - warmup_steps
    stable_steps = training_steps - warmup_steps - decay_steps
    lr_decay_type = decay_type

    def linear_warmup_stable_decay(
        current_step: int,
        warmup_steps: int,
        stable_steps: int,
        decay_steps: int,
        lr_decay_type: str,
        lr_min: float,
    ):
        warmup_stable_steps = warmup_steps + stable_steps
        if current_step < warmup_steps:
            # linear warmup
            # 0-indexed step, hence + 1 adjustments
            current_step += 1
            curr_adjustment = float(current_step / (warmup_steps + 1))
        elif current_step < warmup_stable_steps:
            curr_adjustment = 1.0
        else:
            # 0-indexed step, hence + 1 adjustments
            current_step += 1
            progress = float(current_step - warmup_stable_steps) / (decay_steps + 1)

            if lr_decay_type == "linear":
                curr_adjustment = 1 - progress
            elif lr_decay_type == "sqrt":
                curr_adjustment = 1 - math.sqrt(progress)
            elif lr_decay_type == "cosine":
                curr_adjustment = 0.5 * (1.0 + math.cos(math.pi * progress))
            curr_adjustment = lr_min + (1 - lr_min) * curr_adjustment
        return curr_adjustment

    return functools.partial(
        linear_warmup_stable_decay,
        warmup_steps=warmup_steps,
        stable_steps=stable_steps,
        decay_steps=decay_steps,
        lr_decay_type=lr_decay_type,
        lr_min=lr_min,
    )
