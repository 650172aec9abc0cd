_base_ = ['./_base_/schedules/schedule_1x.py', './_base_/default_runtime.py']

# 2x: 24 epochs with the steps at 16 and 22; half the batch, so half the lr.
max_epochs = 24
train_cfg = dict(max_epochs=max_epochs)
param_scheduler = [
    dict(type='LinearLR', start_factor=0.001, by_epoch=False, begin=0, end=500),
    dict(type='MultiStepLR', begin=0, end=max_epochs, by_epoch=True, milestones=[16, 22], gamma=0.1),
]
optim_wrapper = dict(optimizer=dict(lr=0.01))
