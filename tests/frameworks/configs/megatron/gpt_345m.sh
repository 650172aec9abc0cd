#!/bin/bash
# GPT-2 345M pretraining on 8 GPUs (written for schedlang's tests).
GPUS_PER_NODE=8
CHECKPOINT_PATH=/data/checkpoints/gpt2_345m
DATA_PATH=/data/my-gpt2_text_document

DISTRIBUTED_ARGS="--nproc_per_node $GPUS_PER_NODE --nnodes 1 --node_rank 0"

GPT_ARGS="
    --num-layers 24 \
    --hidden-size 1024 \
    --num-attention-heads 16 \
    --seq-length 1024 \
    --max-position-embeddings 1024 \
    --micro-batch-size 4 \
    --global-batch-size 256 \
    --lr 0.00015 \
    --train-iters 500 \
    --lr-decay-iters 320 \
    --lr-decay-style cosine \
    --min-lr 1.0e-5 \
    --weight-decay 1e-2 \
    --lr-warmup-fraction .01 \
    --clip-grad 1.0 \
    --fp16
"

torchrun $DISTRIBUTED_ARGS pretrain_gpt.py \
    $GPT_ARGS \
    --data-path $DATA_PATH \
    --save $CHECKPOINT_PATH \
    --log-interval 100
