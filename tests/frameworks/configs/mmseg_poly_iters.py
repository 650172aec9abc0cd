# A segmentation config trained by iterations: warmup then poly (schedlang's tests).
optimizer = dict(type='AdamW', lr=6e-05, betas=(0.9, 0.999), weight_decay=0.01)
optim_wrapper = dict(type='OptimWrapper', optimizer=optimizer)
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-6, by_epoch=False, begin=0, end=1500),
    dict(type='PolyLR', eta_min=0.0, power=1.0, begin=1500, end=16000, by_epoch=False)
]
train_cfg = dict(type='IterBasedTrainLoop', max_iters=16000, val_interval=2000)
