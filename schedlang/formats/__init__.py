"""``schedlang import``: other systems' schedule configurations -> ``.sched`` source.

Importers *read data*; none of them evaluates text as code.  Each returns
``.sched`` source (so the result can be reviewed, edited and committed) that
compiles to the same function of the step as the original, which the tests
prove with ``schedlang.equivalent``.

* ``from_cerebras_yaml(text)``: Cerebras ModelZoo Trainer YAML and the legacy
  ``optimizer.learning_rate`` format (``formats/cerebras_yaml.py``).
* ``from_sambaflow(flags)``: SambaFlow's ``--lr_schedule`` command-line flags
  (``formats/sambaflow.py``).
* ``schedlang.from_python(fn)`` is not an importer: it is a second front end (Python
  code traced with a symbolic step, ``schedlang/tracer.py``) and returns a ``Schedule``.

``style="presets"`` (the default) writes the anchor's own preset names
(``cerebras.LinearLR``, ``sambaflow.cosine_schedule_with_warmup``);
``style="core"`` (``--lower`` on the command line) writes plain standard-library
calls (``linear``, ``cosine``, ``>>``).
"""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import SchedlangError
from ..limits import MAX_FILE_BYTES, read_source_text

STYLES = ("presets", "core")


def from_cerebras_yaml(text: str, filename: str = "<string>", style: str = "presets") -> str:
    """``.sched`` source for the schedulers of a Cerebras ModelZoo YAML configuration."""
    from . import cerebras_to_sched
    from . import cerebras_yaml as reader

    _check_style(style)
    return cerebras_to_sched.source(reader.read(text, filename), filename, style)


def from_sambaflow(flags, origin: str = "<flags>", style: str = "presets") -> str:
    """``.sched`` source for SambaFlow flags: a list of arguments, a command line, or a dict."""
    from . import sambaflow as reader

    _check_style(style)
    return reader.source(reader.read(flags, origin), origin, style)


def _reader(module: str, *, takes_options: bool = False):
    """The reader of a format whose module has ``read(text, filename)`` and ``source(config,
    filename, style)`` (every format but the two above, which predate the pattern); with
    ``takes_options`` the module's ``source(text, filename, style, options)`` reads the text
    itself and takes ``import --option KEY=VALUE`` (``formula=`` for torchtitan-toml)."""
    def read(text: str, filename: str = "<string>", style: str = "presets", options=None) -> str:
        from importlib import import_module

        _check_style(style)
        reader = import_module(f".{module}", __name__)
        if takes_options:
            return reader.source(text, filename, style, options)
        return reader.source(reader.read(text, filename), filename, style)

    read.__name__ = f"from_{module}"
    read.__doc__ = f"``.sched`` source for a ``{module}`` configuration (see ``formats/{module}.py``)."
    read.takes_options = takes_options
    return read


from_timm_args = _reader("timm_args")
from_keras_json = _reader("keras_json")
from_megatron_args = _reader("megatron_args")
from_deepspeed_json = _reader("deepspeed_json")
from_composer_yaml = _reader("composer_yaml")
from_hf_args = _reader("hf_args")


from_torchtitan_toml = _reader("torchtitan_toml", takes_options=True)
from_mmengine_config = _reader("mmengine_config", takes_options=True)


#: Every import format (SPEC section 7): its name -> the reader of its text,
#: ``reader(text, filename, style) -> .sched source``.  One line per format; the
#: command line's ``--format`` choices and the docs derive from this table.
READERS = {
    "cerebras-yaml": from_cerebras_yaml,
    "sambaflow": from_sambaflow,
    "timm-args": from_timm_args,
    "keras-json": from_keras_json,
    "megatron-args": from_megatron_args,
    "deepspeed-json": from_deepspeed_json,
    "composer-yaml": from_composer_yaml,
    "hf-args": from_hf_args,
    "torchtitan-toml": from_torchtitan_toml,
    "mmengine-config": from_mmengine_config,
}
FORMATS = tuple(READERS)


def import_file(path: str | Path, format: str | None = None, style: str = "presets",  # noqa: A002
                options: dict | None = None) -> str:
    """Read ``path`` in ``format`` (guessed from the suffix when not given); ``options`` go to
    readers that take them (``formula=`` for torchtitan-toml)."""
    path = Path(path)
    if format is not None and format not in READERS:
        raise SchedlangError(f"unknown import format '{format}'", hint="one of " + ", ".join(FORMATS))
    fmt = format or guess_format(path)  # the name first: an unknown suffix is refused unread
    text = read_source_text(path) if str(path) != "-" else _stdin()
    fmt = format or guess_format(path, text)
    if not options:
        return READERS[fmt](text, str(path), style)
    if not getattr(READERS[fmt], "takes_options", False):
        raise SchedlangError(f"the {fmt} format takes no options")
    return READERS[fmt](text, str(path), style, options=dict(options))


def guess_format(path: Path, text: str | None = None) -> str:
    """The format of ``path``: from its name, and for YAML from its keys when ``text`` is
    given (``trainer: init:`` is ModelZoo's; ``max_duration:`` / ``scheduler:``, at the top or
    under ``trainer:``, an llm-foundry or Composer run; ``sched:`` timm's ``args.yaml``;
    ``lr_scheduler_type:`` HF ``TrainingArguments``; otherwise ModelZoo's legacy layout), and
    for JSON likewise (``"class_name"``: a serialized Keras schedule; ``"scheduler"`` or
    ``"zero_optimization"``: a DeepSpeed config; otherwise HF ``TrainingArguments``)."""
    if path.name == "args.yaml":  # what timm's train.py writes next to its checkpoints
        return "timm-args"
    if text is not None and path.suffix.lower() in (".yaml", ".yml"):
        return _yaml_format(text)
    if text is not None and path.suffix.lower() == ".json":
        keys = set(re.findall(r'"([A-Za-z_][\w-]*)"\s*:', text))
        if "class_name" in keys:
            return "keras-json"
        if keys & {"scheduler", "zero_optimization", "train_batch_size", "train_micro_batch_size_per_gpu"}:
            return "deepspeed-json"
        return "hf-args"
    if path.suffix.lower() == ".json" and "ds" in path.name.lower():
        return "deepspeed-json"
    if path.suffix.lower() == ".json":
        return "hf-args"
    if path.suffix.lower() in (".yaml", ".yml"):
        return "cerebras-yaml"
    if path.suffix.lower() in (".sh", ".txt", ".args", ".flags", ".cmd"):
        return "sambaflow"
    if path.suffix.lower() == ".toml":
        return "torchtitan-toml"
    if path.suffix.lower() == ".py":
        return "mmengine-config"
    raise SchedlangError(f"cannot tell the format of {path} from its name",
                         hint="pass --format " + " or --format ".join(FORMATS))


def _yaml_format(text: str) -> str:
    """A YAML file's format from its top-level keys, read as text (nothing is parsed twice)."""
    from .cerebras_model import CLASS_ALIASES, CLASSES, WD_CLASSES

    keys = set(re.findall(r"^([A-Za-z_][\w-]*)[ \t]*:", text, re.MULTILINE))
    nested = set(re.findall(r"^(?:[ \t]*-[ \t]+|[ \t]+)([A-Za-z_][\w-]*)[ \t]*:", text, re.MULTILINE))
    if "trainer" in keys and "init" in nested:  # ModelZoo's trainer.init.schedulers
        return "cerebras-yaml"
    if nested & (set(CLASSES) | set(WD_CLASSES) | set(CLASS_ALIASES)):  # `- SequentialLR:` (export)
        return "cerebras-yaml"
    if keys & {"max_duration", "scheduler", "schedulers"} or \
            ("trainer" in keys and nested & {"max_duration", "schedulers", "t_warmup"}):
        return "composer-yaml"
    if "sched" in keys and keys & {"lr", "epochs", "warmup_epochs"}:
        return "timm-args"
    if "lr_scheduler_type" in keys:  # TrainingArguments as YAML (alignment-handbook recipes)
        return "hf-args"
    return "cerebras-yaml"  # the legacy ModelZoo layout (optimizer: learning_rate: ...)


def _stdin() -> str:
    import sys

    return sys.stdin.read(MAX_FILE_BYTES + 1)


def _check_style(style: str) -> None:
    if style not in STYLES:
        raise SchedlangError(f"unknown import style '{style}'", hint="one of " + ", ".join(STYLES))
