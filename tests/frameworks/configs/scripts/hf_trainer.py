"""An HF Trainer script as the course and the model cards write it: TrainingArguments built in
main() from argparse options and a **dict of schedule settings, handed to the Trainer."""
import argparse

from datasets import load_dataset
from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, TrainingArguments

SCHEDULE = {"lr_scheduler_type": "cosine", "warmup_steps": 0.03}  # below 1: a ratio (transformers 5)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_name", default="gpt2")
    parser.add_argument("--lr", type=float, default=2e-5)
    parser.add_argument("--max_steps", type=int, default=1200)
    args = parser.parse_args()
    tokenizer = AutoTokenizer.from_pretrained(args.model_name)
    model = AutoModelForCausalLM.from_pretrained(args.model_name)
    dataset = load_dataset("wikitext", "wikitext-2-raw-v1")
    training_args = TrainingArguments(
        output_dir=f"out/{args.model_name}",
        learning_rate=args.lr,
        max_steps=args.max_steps,
        per_device_train_batch_size=8,
        logging_steps=10,
        report_to="none",
        **SCHEDULE,
    )
    trainer = Trainer(model=model, args=training_args, train_dataset=dataset["train"],
                      processing_class=tokenizer)
    trainer.train()
    return trainer


if __name__ == "__main__":
    main()
