# mmpretrain's habit: the lr scaled for the batch size, written as arithmetic.
optim_wrapper = dict(
    optimizer=dict(type='AdamW', lr=5e-4 * 1024 / 512, weight_decay=0.05, eps=1e-8, betas=(0.9, 0.999)))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=True, end=5, convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=1e-5 * 3, by_epoch=True, begin=5),
]
train_cfg = dict(by_epoch=True, max_epochs=30, val_interval=1)
