# Epoch schedules for the lr and SGD momentum, in new-style config syntax (schedlang's tests).
from mmengine.optim import CosineAnnealingLR, CosineAnnealingMomentum, LinearLR

base_lr = 0.05
optim_wrapper = dict(optimizer=dict(type='SGD', lr=base_lr, momentum=0.95, nesterov=True))
param_scheduler = [
    dict(type=LinearLR, start_factor=0.1, begin=0, end=5),
    dict(type=CosineAnnealingLR, T_max=205, eta_min_ratio=0.01, begin=5, end=210),
    dict(type=CosineAnnealingMomentum, eta_min=0.85, begin=0, end=210),
]
train_cfg = dict(by_epoch=True, max_epochs=210)
