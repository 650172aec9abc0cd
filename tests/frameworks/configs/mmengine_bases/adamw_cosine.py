_base_ = './retinanet_2x.py'

# The same 24 epochs with AdamW and a cosine: _delete_ replaces the inherited optimizer.
optim_wrapper = dict(
    _delete_=True,
    type='OptimWrapper',
    optimizer=dict(type='AdamW', lr=0.0001, betas=(0.9, 0.999), weight_decay=0.05))
param_scheduler = [
    dict(type='LinearLR', start_factor=0.01, by_epoch=True, begin=0, end=2, convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=1e-06, begin=2, end=24, by_epoch=True),
]
