"""The HF course's shape for a Trainer with its own optimizer and scheduler: AdamW from torch and
get_cosine_schedule_with_warmup, handed over as optimizers=(optimizer, scheduler)."""
import torch
from transformers import (
    AutoModelForSequenceClassification,
    Trainer,
    TrainingArguments,
    get_cosine_schedule_with_warmup,
)

NUM_TRAINING_STEPS = 3_000


def main():
    model = AutoModelForSequenceClassification.from_pretrained("bert-base-cased", num_labels=2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-5, weight_decay=0.01)
    scheduler = get_cosine_schedule_with_warmup(optimizer, num_warmup_steps=300,
                                                num_training_steps=NUM_TRAINING_STEPS, num_cycles=0.4)
    args = TrainingArguments(output_dir="out", learning_rate=1e-4, lr_scheduler_type="linear",
                             max_steps=NUM_TRAINING_STEPS)
    trainer = Trainer(model=model, args=args, optimizers=(optimizer, scheduler))
    trainer.train()


if __name__ == "__main__":
    main()
