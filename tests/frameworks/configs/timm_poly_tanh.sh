python train.py /data --model efficientnet_b0 --lr 0.048 --sched poly --decay-rate 2 --lr-k-decay 0.5 \
    --epochs 50 --warmup-epochs 3 --min-lr 1e-5  # poly: --decay-rate is the power
