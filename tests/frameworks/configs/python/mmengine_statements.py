# An OpenMMLab config written with statements: schedlang must follow them as Python runs them.
LR = 0.1
optim_wrapper = dict(optimizer=dict(type='SGD', lr=LR, momentum=0.9, weight_decay=1e-4))
warmup = dict(type='LinearLR', start_factor=0.5, by_epoch=False, begin=0, end=20)
param_scheduler = [warmup,
                   dict(type='CosineAnnealingLR', by_epoch=False, begin=20, end=200, eta_min=0.0)]
LR = 0.2                                   # rebinding LR does not change the dict built above
param_scheduler[0]['start_factor'] = 0.25  # ... but changing the dict does (warmup is the same dict)
warmup['end'] = 30
param_scheduler[1]['begin'] = 30
param_scheduler.append(dict(type='ConstantLR', factor=0.5, by_epoch=False, begin=200, end=240))
LR *= 10
optim_wrapper['optimizer'].update(lr=LR / 4)
tail = dict(param_scheduler[-1])
tail['factor'] = 0.1                       # a copy: the appended scheduler keeps 0.5
later = param_scheduler[-1].copy()
if LR > 1:
    param_scheduler[1]['eta_min'] = 1e-4
else:
    param_scheduler[1]['eta_min'] = 1e-2
del tail
param_scheduler[1]['eta_min'] *= 2
train_cfg = dict(type='IterBasedTrainLoop', max_iters=240)
