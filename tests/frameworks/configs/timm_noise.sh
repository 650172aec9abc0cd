python train.py /data --model resnet50 --lr 0.5 --sched cosine --epochs 100 --lr-noise 0.42 0.9
