"""An mmengine config after a star import: the names it may bind are unknown here."""
from math import *  # noqa: F403

max_epochs = 12
gamma = e / 27.18281828459045  # noqa: F405 - `e` comes from the star import (if it does)
optim_wrapper = dict(optimizer=dict(type="SGD", lr=0.02, momentum=0.9, weight_decay=1e-4))
param_scheduler = [
    dict(type="LinearLR", start_factor=0.001, by_epoch=False, begin=0, end=500),
    dict(type="MultiStepLR", begin=0, end=max_epochs, by_epoch=True, milestones=[8, 11], gamma=gamma),
]
train_cfg = dict(by_epoch=True, max_epochs=max_epochs)
