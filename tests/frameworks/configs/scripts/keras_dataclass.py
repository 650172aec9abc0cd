"""A Keras training script configured by a dataclass with literal defaults (one overridden where
it is built), the schedule made in main() from its fields."""
from dataclasses import dataclass, field

import keras


@dataclass(frozen=True)
class TrainConfig:
    """Hyper-parameters of the run."""

    peak_lr: float = 1e-3
    steps_per_epoch: int = 120
    epochs: int = 10
    warmup_fraction: float = 0.05
    decay_rate: float = 0.5
    tags: list = field(default_factory=list)

    def total_steps(self) -> int:
        return self.steps_per_epoch * self.epochs


def make_schedule(cfg: TrainConfig):
    boundaries = [cfg.steps_per_epoch * 4, cfg.steps_per_epoch * 8]
    values = [cfg.peak_lr, cfg.peak_lr * cfg.decay_rate, cfg.peak_lr * cfg.decay_rate ** 2]
    return keras.optimizers.schedules.PiecewiseConstantDecay(boundaries, values)


def main():
    cfg = TrainConfig(epochs=12)
    schedule = make_schedule(cfg)
    return keras.optimizers.SGD(learning_rate=schedule, momentum=0.9)


if __name__ == "__main__":
    main()
