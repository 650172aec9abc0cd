"""The shape of TRL's trl/scripts/sft.py: ScriptArguments, SFTConfig and ModelConfig from TrlParser
(the command line and its --config YAML)."""
import argparse

from datasets import load_dataset
from trl import ModelConfig, ScriptArguments, SFTConfig, SFTTrainer, TrlParser, get_peft_config


def main(script_args, training_args, model_args):
    dataset = load_dataset(script_args.dataset_name, name=script_args.dataset_config)
    trainer = SFTTrainer(model=model_args.model_name_or_path, args=training_args,
                         train_dataset=dataset[script_args.dataset_train_split],
                         peft_config=get_peft_config(model_args))
    trainer.train()
    trainer.save_model(training_args.output_dir)


def make_parser(subparsers: argparse._SubParsersAction = None):
    dataclass_types = (ScriptArguments, SFTConfig, ModelConfig)
    if subparsers is not None:
        return subparsers.add_parser("sft", help="Run the SFT training script",
                                     dataclass_types=dataclass_types)
    return TrlParser(dataclass_types)


if __name__ == "__main__":
    parser = make_parser()
    script_args, training_args, model_args = parser.parse_args_and_config()
    main(script_args, training_args, model_args)
