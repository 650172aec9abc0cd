"""``schedlang.formats``: every framework's configuration format, one module each (sqlglot's
dialect layout), with its reader (config -> ``.sched`` source) and, where the format can say
the schedule, its writer (``formats/export.py``).  ``TABLE`` below is the one list of formats.

Every reader goes the same way (``import_file`` and ``_importing``): bounded input
(``limits.read_source``), the format from the name and content (``guess_format``), values
written through ``source_text`` (exact numbers, option strings from the closed choices, the
header with the file name escaped), the generated text compiled, and any error in it moved to
the configuration's own line and column (``source_text.located``).

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

import contextlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path

from ..errors import LINE_BREAK, SchedlangError, Source, Span
from ..limits import STDIN, check_size, input_name, read_source_text

STYLES = ("presets", "core")


def from_cerebras_yaml(text: str, filename: str = "<string>", style: str = "presets") -> str:
    """``.sched`` source for the schedulers of a Cerebras ModelZoo YAML configuration."""
    from . import cerebras_to_sched  # lazy: a format loads on use
    from . import cerebras_yaml as reader  # lazy: a format loads on use

    _check_style(style)
    with _importing(text, filename):
        return _checked(cerebras_to_sched.source(reader.read(text, filename), filename, style), filename)


def from_sambaflow(flags, origin: str = "<flags>", style: str = "presets") -> str:
    """``.sched`` source for SambaFlow flags: a list of arguments, a command line, or a dict."""
    from . import sambaflow as reader  # lazy: a format loads on use

    _check_style(style)
    with _importing(flags if isinstance(flags, str) else "", origin):
        return _checked(reader.source(reader.read(flags, origin), origin, style), origin)


@contextlib.contextmanager
def _importing(text: str, filename: str):
    """The shared path of every reader: the text within the size limit (text given to the API as
    well as files), and every value written remembered with its span, so that an error in the
    generated text, raised here or by ``_checked``, points at the configuration (``--lower`` too)."""
    from .source_text import located, recording  # lazy: readers only (check loads no format)

    check_size(text, filename)
    with recording(text, filename):
        try:
            yield
        except SchedlangError as exc:
            raise located(exc, filename) from None


def _checked(generated: str, filename: str) -> str:
    """What every import returns: generated text that compiles (``source_text.checked``)."""
    from .source_text import checked  # lazy: readers only (check loads no format)

    return checked(generated, filename)


def _reader(module: str, *, takes_options: bool = False):
    """The reader of a format whose module has ``read(text, filename)`` and ``source(config,
    filename, style)`` (every format but the two above, which predate the pattern); with
    ``takes_options`` the module's ``source(text, filename, style, options)`` reads the text
    itself and takes ``import --option KEY=VALUE`` (``formula=`` for torchtitan-toml,
    ``megatron=0.17|main`` for megatron-args)."""
    def read(text: str, filename: str = "<string>", style: str = "presets", options=None) -> str:
        _check_style(style)
        reader = import_module(f".{module}", __name__)
        with _importing(text, filename):
            if takes_options:
                return _checked(reader.source(text, filename, style, options), filename)
            return _checked(reader.source(reader.read(text, filename), filename, style), filename)

    read.__name__ = f"from_{module}"
    read.__doc__ = f"``.sched`` source for a ``{module}`` configuration (see ``formats/{module}.py``)."
    read.takes_options = takes_options
    return read


from_timm_args = _reader("timm_args")
from_keras_json = _reader("keras_json")
from_deepspeed_json = _reader("deepspeed_json")
from_composer_yaml = _reader("composer_yaml", takes_options=True)
from_hf_args = _reader("hf_args")


from_torchtitan_toml = _reader("torchtitan_toml", takes_options=True)
from_mmengine_config = _reader("mmengine_config", takes_options=True)
from_megatron_args = _reader("megatron_args", takes_options=True)


# -- the one table of formats ------------------------------------------------------------


@dataclass(frozen=True)
class Format:
    """One configuration format: what the command line, ``import --help``, the guesser and
    docs/import_export.md all read (nothing about a format is written anywhere else)."""

    name: str
    what: str  # the framework's own words for the file
    suffixes: tuple[str, ...]  # the file names it comes in ("" for none: --flags, args.yaml by name)
    looks_like: Callable[[str], bool]  # is this text (of a file with one of the suffixes) this format?
    reader: Callable
    writer: str | None = None  # the function in formats.export that writes it, if the format can

    @property
    def shell(self) -> bool:
        """A command line or shell script (one command per file)."""
        return ".sh" in self.suffixes


_SHELL = (".sh", ".bash", ".txt", ".args", ".flags", ".cmd")
_YAML = (".yaml", ".yml")
_KEYS = re.compile(r'"([A-Za-z_][\w-]*)"\s*:')
#: A command line's flags that say which framework's launcher it is.
_MEGATRON = re.compile(r"\bpretrain_\w+\.py\b|--(?:lr-decay-style|lr-warmup-(?:iters|fraction|samples|init)"
                       r"|lr-decay-(?:iters|samples)|lr-wsd-decay-(?:style|iters|samples)|train-iters"
                       r"|train-samples|min-lr|global-batch-size|weight-decay-incr-style)\b")
_TIMM = re.compile(r"(?:^|[\s/])(?:train\.py|distributed_train\.sh)\b"
                   r"|--(?:sched|sched-on-updates|warmup-epochs"
                   r"|cooldown-epochs|decay-epochs|lr-base|lr-cycle-\w+|warmup-lr|decay-rate|lr-k-decay)\b",
                   re.MULTILINE)
_SAMBAFLOW = re.compile(r"--(?:lr_schedule|learning_rate|warmup_steps|max_steps|decay_steps|end_lr)\b")
_MEGATRON_YAML = re.compile(r"^[ \t]*['\"]?--?(?:lr-decay-style|lr|train-iters|lr-warmup-\w+|min-lr)"
                            r"['\"]?[ \t]*:",
                            re.MULTILINE)


def _yaml_is(name: str) -> Callable[[str], bool]:
    return lambda text: _yaml_format(text) == name


def _json_is(name: str) -> Callable[[str], bool]:
    return lambda text: _json_format(text) == name


def _py_is(name: str) -> Callable[[str], bool]:
    return lambda text: _python_format(text) == name


#: Every format (SPEC section 7), in the order ``--help`` and the docs list them.
TABLE: tuple[Format, ...] = (
    Format("cerebras-yaml",
           "Cerebras ModelZoo YAML (trainer.init.schedulers, or the legacy optimizer.learning_rate)",
           _YAML, _yaml_is("cerebras-yaml"), from_cerebras_yaml, "export_cerebras_yaml"),
    Format("composer-yaml", "Composer / llm-foundry YAML (scheduler:, t_warmup, max_duration)",
           _YAML, _yaml_is("composer-yaml"), from_composer_yaml, "export_composer_yaml"),
    Format("hf-args", "HF TrainingArguments as JSON or YAML (lr_scheduler_type, warmup_steps)",
           (".json", *_YAML), lambda text: _json_format(text) == "hf-args" or _yaml_format(text) == "hf-args",
           from_hf_args, "export_hf_args"),
    Format("deepspeed-json", "DeepSpeed config JSON (\"scheduler\" block), or that dict in a .py file",
           (".json", ".py"), _json_is("deepspeed-json"), from_deepspeed_json, "export_deepspeed_json"),
    Format("megatron-args",
           "Megatron-LM arguments: a pretrain_*.py command line or script, or YAML of --flag: keys",
           (*_SHELL, *_YAML), lambda text: bool(_MEGATRON.search(text) or _MEGATRON_YAML.search(text)),
           from_megatron_args, "export_megatron_args"),
    Format("timm-args", "timm train.py: its command line, or the args.yaml it writes",
           (*_SHELL, *_YAML), lambda text: bool(_TIMM.search(text)) or _yaml_format(text) == "timm-args",
           from_timm_args),
    Format("sambaflow", "SambaFlow --lr_schedule flags (a command line or script, or --flags)",
           _SHELL, lambda text: bool(_SAMBAFLOW.search(text)), from_sambaflow),
    Format("keras-json", "a serialized Keras LearningRateSchedule (keras.optimizers.schedules.serialize), "
           "or a .py script that builds one", (".json", ".py"), _json_is("keras-json"), from_keras_json),
    Format("torchtitan-toml", "torchtitan job TOML ([lr_scheduler])",
           (".toml",), lambda text: True, from_torchtitan_toml),
    Format("mmengine-config", "OpenMMLab / mmengine config (param_scheduler = [...])",
           (".py",), _py_is("mmengine-config"), from_mmengine_config),
)
BY_NAME = {f.name: f for f in TABLE}
#: name -> ``reader(text, filename, style) -> .sched source``; ``--format`` choices derive from it.
READERS = {f.name: f.reader for f in TABLE}
FORMATS = tuple(READERS)


def help_text() -> str:
    """The formats for ``schedlang import --help``: one line each, from ``TABLE``."""
    width = max(len(f.name) for f in TABLE)
    lines = ["formats (--format):"]
    for f in TABLE:
        names = ", ".join(f.suffixes)
        lines.append(f"  {f.name:<{width}}  {f.what} [{names}]" + ("; export too" if f.writer else ""))
    return "\n".join(lines)


def markdown_table() -> str:
    """The formats for docs/import_export.md, from ``TABLE`` (tests/test_formats.py keeps the docs
    current: run ``python -m schedlang.formats`` and paste, or let the test say what differs)."""
    rows = ["| format | what | file names | export |", "|---|---|---|---|"]
    for f in TABLE:
        rows.append(f"| `{f.name}` | {f.what} | {', '.join(f'`{s}`' for s in f.suffixes)} | "
                    f"{'yes' if f.writer else 'no'} |")
    return "\n".join(rows)


def import_file(path: str | Path, format: str | None = None, style: str = "presets",  # noqa: A002
                options: dict | None = None) -> str:
    """Read ``path`` (``-``: standard input) in ``format`` (guessed from the name and the content
    when not given); ``options`` go to readers that take them (``formula=`` for torchtitan-toml).

    The input is read once, bounded (``limits.read_source``: a file over the limit is refused,
    never cut); a command-line format refuses a file holding several commands."""
    path = Path(path) if str(path) != STDIN else path
    if format is not None and format not in READERS:
        raise SchedlangError(f"unknown import format '{format}'", hint="one of " + ", ".join(FORMATS))
    if format is None:
        guess_format(Path(str(path)))  # the name first: an unknown suffix is refused unread
    text = read_source_text(path)
    name = input_name(path)
    fmt = format or guess_format(Path(str(path)), text)
    if not options:
        result = READERS[fmt](text, name, style)
    elif not getattr(READERS[fmt], "takes_options", False):
        raise SchedlangError(f"the {fmt} format takes no options")
    else:
        result = READERS[fmt](text, name, style, options=dict(options))
    if BY_NAME[fmt].shell and not str(path).lower().endswith(_YAML):
        # after the reader, so that its own error at a flag comes first
        one_command(text, name, fmt)
    return result


def guess_format(path: Path, text: str | None = None) -> str:
    """The format of ``path``: the formats whose suffixes fit its name, and of those, when ``text``
    is given, the one whose content fits (``Format.looks_like``).  ``args.yaml`` is timm's (the
    name its train.py writes).  A name no format takes, or content that fits none or several of
    the formats its name allows, is an error whose hint names the formats that fit."""
    if path.name == "args.yaml":
        return "timm-args"
    if str(path) == STDIN:
        raise SchedlangError("standard input has no name to tell its format by",
                             hint="pass --format " + " or --format ".join(FORMATS))
    suffix = path.suffix.lower()
    fitting = [f for f in TABLE if suffix in f.suffixes]
    if not fitting:
        raise SchedlangError(f"cannot tell the format of {input_name(path)} from its name",
                             hint="pass --format " + " or --format ".join(FORMATS))
    if text is None:
        return fitting[0].name
    if suffix in _YAML:  # one YAML guesser: the Megatron flags first, then by the keys
        return "megatron-args" if _MEGATRON_YAML.search(text) else _yaml_format(text)
    if suffix == ".json":
        return _json_format(text)
    if suffix == ".py":
        return _python_format(text)
    found = [f for f in fitting if f.looks_like(text)]
    if len(found) == 1:
        return found[0].name
    if len(fitting) == 1:  # the one format of this suffix: its reader says what is wrong
        return fitting[0].name
    names = " or ".join(f"--format {f.name}" for f in (found or fitting))
    if found:
        raise SchedlangError(f"{input_name(path)} could be any of " + ", ".join(f.name for f in found),
                             hint=f"pass {names}")
    raise SchedlangError(f"{input_name(path)} looks like none of the formats of a {suffix} file "
                         f"({', '.join(f.name for f in fitting)})", hint=f"pass {names}")


def _python_format(text: str) -> str:
    """A ``.py`` file's format from its words, read as text: OpenMMLab's ``param_scheduler``
    first, then a Keras schedule class called from ``keras`` / ``tf.keras``, then a DeepSpeed
    dict (a ``"scheduler"`` key); otherwise an OpenMMLab config (its error says what is missing)."""
    from .keras_json import CLASSES  # lazy: a format loads on use

    if re.search(r"^param_scheduler\b", text, re.MULTILINE):
        return "mmengine-config"
    if re.search(r"\bkeras\b", text) and re.search(r"\b(" + "|".join(CLASSES) + r")\s*\(", text):
        return "keras-json"
    if re.search(r"""["']scheduler["']\s*:|\bscheduler\s*=\s*(dict|\{)""", text):
        return "deepspeed-json"
    return "mmengine-config"


def _json_format(text: str) -> str:
    """A JSON file's format from its keys: ``"class_name"``: a serialized Keras schedule;
    ``"scheduler"`` or ``"zero_optimization"``: a DeepSpeed config; otherwise HF ``TrainingArguments``."""
    keys = set(_KEYS.findall(text))
    if "class_name" in keys:
        return "keras-json"
    if keys & {"scheduler", "zero_optimization", "train_batch_size", "train_micro_batch_size_per_gpu"}:
        return "deepspeed-json"
    return "hf-args"


#: A line that launches a training program (a command, not a variable holding flags).
_LAUNCH = re.compile(r"(?:^|[\s;&|(])(?:\S*\.py|\S*\.sh|torchrun|python3?|deepspeed|accelerate|srun|mpirun)"
                     r"(?=\s|$)")


#: The flags that make a launch line a schedule of each command-line format (SambaFlow's compile
#: step, or `train.py --help`, is not one).
_SCHEDULE_FLAGS = {
    "megatron-args": re.compile(r"--(?:lr|min-lr|lr-decay-style|train-iters|train-samples|lr-warmup-\w+)\b"),
    "timm-args": re.compile(r"--(?:sched|lr|epochs|warmup-epochs|decay-epochs)\b"),
    "sambaflow": re.compile(r"--lr_schedule\b"),
}


def one_command(text: str, filename: str, fmt: str) -> None:
    """Refuse a command-line file that launches training several times with schedule flags (a
    docs page with three commands), naming the lines: merging them would import a schedule that
    none of them runs."""
    fmt_flags = _SCHEDULE_FLAGS[fmt]
    commands, line, logical, first = [], 1, [], None
    for raw in LINE_BREAK.split(text):
        first = first or line
        logical.append(raw)
        line += 1
        if raw.rstrip().endswith("\\"):
            continue
        command = " ".join(logical).split("#")[0] if not logical[0].lstrip().startswith("#") else ""
        if _LAUNCH.search(command) and fmt_flags.search(command.replace("=", " ")):
            commands.append(first)
        logical, first = [], None
    if len(commands) > 1:
        source = Source(text, filename)
        raise SchedlangError(f"{filename} holds {len(commands)} commands with schedule flags (lines "
                             f"{', '.join(map(str, commands))}); which one runs?",
                             Span(source, commands[1], 1, commands[1], 2),
                             hint="import one command: put it in a file of its own")


def _yaml_format(text: str) -> str:
    """A YAML file's format from its top-level keys, read as text (nothing is parsed twice)."""
    from .cerebras_model import CLASS_ALIASES, CLASSES, WD_CLASSES  # lazy: a format loads on use

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


def _check_style(style: str) -> None:
    if style not in STYLES:
        raise SchedlangError(f"unknown import style '{style}'", hint="one of " + ", ".join(STYLES))
