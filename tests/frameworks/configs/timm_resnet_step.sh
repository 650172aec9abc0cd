#!/bin/bash
# ResNet-50, 90 epochs, step decay every 30 epochs on 8 GPUs
./distributed_train.sh 8 --data-dir /datasets/imagenet --model resnet50 \
    -b 128 --lr 0.4 --opt sgd --momentum 0.9 --weight-decay 1e-4 \
    --sched step --epochs 90 --decay-epochs 30 --decay-rate 0.1 \
    --warmup-epochs 3 --warmup-lr 0.01 --amp --channels-last
