#!/bin/bash
# A small LLaMA-style run with a warmup-stable-decay schedule (bash arrays, as newer
# Megatron-LM examples write them).  Written for schedlang's tests.
TRAIN_ITERS=400
GBS=128

MODEL_ARGS=(
    --num-layers 16
    --hidden-size 2048
    --swiglu
)

TRAINING_ARGS=(
    --micro-batch-size 2
    --global-batch-size $GBS
    --train-iters $TRAIN_ITERS
    --lr 3.0e-4
    --min-lr 3.0e-5
    --lr-decay-style WSD
    --lr-wsd-decay-style minus_sqrt
    --lr-wsd-decay-iters 80
    --lr-warmup-iters 40
    --lr-warmup-init 1e-6
    --weight-decay-incr-style linear
    --start-weight-decay 0.01
    --end-weight-decay 0.1
    --clip-grad 1.0
)

torchrun --nproc_per_node 8 pretrain_gpt.py "${MODEL_ARGS[@]}" "${TRAINING_ARGS[@]}"
