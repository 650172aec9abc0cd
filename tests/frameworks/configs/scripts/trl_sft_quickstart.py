"""TRL's SFT quickstart shape: SFTConfig(...) at the top level, its learning_rate left at TRL's
default (2e-5, not TrainingArguments' 5e-5), handed to SFTTrainer."""
from datasets import load_dataset
from trl import SFTConfig, SFTTrainer

dataset = load_dataset("trl-lib/Capybara", split="train")

training_args = SFTConfig(
    output_dir="Qwen2.5-0.5B-SFT",
    lr_scheduler_type="cosine_with_min_lr",
    lr_scheduler_kwargs={"min_lr_rate": 0.1},
    warmup_steps=50,
    max_steps=1000,
    per_device_train_batch_size=4,
    gradient_accumulation_steps=8,
)
trainer = SFTTrainer(model="Qwen/Qwen2.5-0.5B", args=training_args, train_dataset=dataset)
trainer.train()
