torchrun pretrain_gpt.py --train-iters 1000 --lr 3e-4 \
    --lr-warmup-fraction 0.01 --lr-warmup-iters 100
