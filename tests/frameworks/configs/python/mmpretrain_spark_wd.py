# mmpretrain's SparK pre-training schedule (shortened): the weight decay rises by
# CosineAnnealingWeightDecay from 0.04 to eta_min = 0.2 while the lr warms up and anneals.
optim_wrapper = dict(
    optimizer=dict(type='LAMB', lr=2e-4 * 4096 / 512, betas=(0.9, 0.95), weight_decay=0.04))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-4, by_epoch=True, begin=0, end=4, convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', T_max=16, by_epoch=True, begin=4, end=20, convert_to_iter_based=True),
    dict(type='CosineAnnealingWeightDecay', eta_min=0.2, T_max=20, by_epoch=True, begin=0, end=20,
         convert_to_iter_based=True),
]
train_cfg = dict(type='EpochBasedTrainLoop', max_epochs=20)
