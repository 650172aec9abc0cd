# Sample-based T5 pretraining (written for schedlang's tests).
python pretrain_t5.py \
    --global-batch-size 96 \
    --train-samples 28800 \
    --lr-decay-samples 24000 \
    --lr-warmup-samples 1000 \
    --lr 1e-4 --min-lr=1e-5 \
    --lr-decay-style linear \
    --weight-decay 0.05
