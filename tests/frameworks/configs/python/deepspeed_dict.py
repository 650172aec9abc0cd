"""A training script that keeps its DeepSpeed config as a Python dict."""
TOTAL = 2000
config = dict(
    train_batch_size=256,
    optimizer=dict(type="AdamW", params=dict(lr=6e-4, betas=[0.9, 0.95])),
    scheduler=dict(type="WarmupDecayLR",
                   params=dict(warmup_min_lr=0, warmup_max_lr=6e-4, warmup_num_steps=100,
                               total_num_steps=TOTAL)),
)
config["scheduler"]["params"]["warmup_num_steps"] = TOTAL // 20
config["scheduler"]["params"]["warmup_max_lr"] *= 0.5


def main(model):
    import deepspeed

    engine, optimizer, _, scheduler = deepspeed.initialize(model=model, config=config)
