"""The shape of transformers' examples/pytorch/language-modeling/run_clm.py: the arguments are
dataclasses parsed from the command line (or a JSON file) by HfArgumentParser."""
import logging
import os
import sys
from dataclasses import dataclass, field

import transformers
from transformers import (
    MODEL_FOR_CAUSAL_LM_MAPPING,
    AutoModelForCausalLM,
    HfArgumentParser,
    Trainer,
    TrainingArguments,
    default_data_collator,
    set_seed,
)
from transformers.utils import check_min_version

check_min_version("4.57.0.dev0")
logger = logging.getLogger(__name__)
MODEL_CONFIG_CLASSES = list(MODEL_FOR_CAUSAL_LM_MAPPING.keys())
MODEL_TYPES = tuple(conf.model_type for conf in MODEL_CONFIG_CLASSES)


@dataclass
class ModelArguments:
    model_name_or_path: str | None = field(default=None, metadata={"help": "The model checkpoint."})
    torch_dtype: str | None = field(default=None, metadata={"choices": ["auto", "bfloat16", "float32"]})

    def __post_init__(self):
        if self.torch_dtype is not None and self.model_name_or_path is None:
            raise ValueError("--torch_dtype needs --model_name_or_path")


@dataclass
class DataTrainingArguments:
    dataset_name: str | None = field(default=None, metadata={"help": "The dataset to use."})
    block_size: int | None = field(default=None)


def main():
    parser = HfArgumentParser((ModelArguments, DataTrainingArguments, TrainingArguments))
    if len(sys.argv) == 2 and sys.argv[1].endswith(".json"):
        model_args, data_args, training_args = parser.parse_json_file(json_file=os.path.abspath(sys.argv[1]))
    else:
        model_args, data_args, training_args = parser.parse_args_into_dataclasses()
    logging.basicConfig(format="%(asctime)s - %(message)s", handlers=[logging.StreamHandler(sys.stdout)])
    if training_args.should_log:
        transformers.utils.logging.set_verbosity_info()
    set_seed(training_args.seed)
    if data_args.block_size is None:
        block_size = 1024
    else:
        if data_args.block_size > 1024:
            raise ValueError(f"block_size {data_args.block_size} is too large")
        block_size = data_args.block_size
    logger.info(f"block size {block_size}")
    model = AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)
    trainer = Trainer(model=model, args=training_args, data_collator=default_data_collator)
    train_result = trainer.train()
    trainer.save_model()
    return train_result


if __name__ == "__main__":
    main()
