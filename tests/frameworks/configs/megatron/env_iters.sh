# Lengths left to the caller's environment (written for schedlang's tests).
torchrun pretrain_gpt.py --train-iters ${TRAIN_ITERS} --lr-warmup-iters ${WARMUP:-20} \
    --lr 6e-4 --min-lr 6e-5 --lr-decay-style cosine --global-batch-size 512
