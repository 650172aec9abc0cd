# An image-classification config with a converted warmup and an epoch cosine (schedlang's tests).
optim_wrapper = dict(
    optimizer=dict(type='AdamW', lr=0.004, weight_decay=0.05, eps=1e-8, betas=(0.9, 0.999)),
    clip_grad=dict(max_norm=5.0),
)

param_scheduler = [
    dict(
        type='LinearLR',
        start_factor=1e-3,
        by_epoch=True,
        end=20,
        convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=1e-5, by_epoch=True, begin=20)
]

train_cfg = dict(by_epoch=True, max_epochs=100, val_interval=1)
