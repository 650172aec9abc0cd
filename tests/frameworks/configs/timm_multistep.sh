python train.py /data/cifar --model resnet18 --lr 0.1 --sched multistep \
    --decay-milestones 30 60 80 --decay-rate 0.2 --epochs 100 --warmup-epochs 1 --warmup-lr 0.001
