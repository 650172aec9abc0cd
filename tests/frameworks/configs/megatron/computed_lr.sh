LR=$(python -c "print(3e-4 * 2)")
torchrun pretrain_gpt.py --train-iters 1000 --lr $LR --lr-decay-style cosine
torchrun pretrain_gpt.py --train-iters 1000 --lr $(echo 3e-4) --lr-decay-style cosine
