"""An mmengine config (pure-Python style) after a star import of its bases."""
from mmengine.config import read_base

with read_base():
    from .._base_.default_runtime import *  # noqa: F403

max_epochs = 12
base_lr = 0.02 * 16 / 16
optim_wrapper = dict(optimizer=dict(type="SGD", lr=base_lr, momentum=0.9, weight_decay=1e-4))
param_scheduler = [
    dict(type="LinearLR", start_factor=0.001, by_epoch=False, begin=0, end=500),
    dict(type="MultiStepLR", begin=0, end=max_epochs, by_epoch=True, milestones=[8, 11], gamma=0.1),
]
train_cfg = dict(by_epoch=True, max_epochs=max_epochs)
