"""Megatron-LM's scheduler flags and a launch read as them (``read``): a command line or shell
script (``shell_words``: read as data, never run) or a YAML file whose keys are the flags
(``--lr-decay-style: WSD``, or ``lr_decay_style: WSD``), each flag with its span.  What the
flags mean is ``megatron_args``."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import SchedlangError, Source, Span
from ..library.presets.megatron import LR_STYLES, WD_STYLES, WSD_STYLES
from .common import shell_words
from .common.yaml_source import load

# flag (underscores) -> kind: "float", "int" (a count), or the choices of a style
FLAGS = {
    "lr": "float", "min_lr": "float", "lr_warmup_init": "float", "lr_warmup_fraction": "float",
    "lr_decay_style": LR_STYLES, "lr_wsd_decay_style": WSD_STYLES,
    "lr_decay_iters": "int", "lr_decay_samples": "int", "lr_wsd_decay_iters": "int",
    "lr_wsd_decay_samples": "int", "lr_warmup_iters": "int", "lr_warmup_samples": "int",
    "train_iters": "int", "train_samples": "int", "global_batch_size": "int",
    "weight_decay": "float", "start_weight_decay": "float", "end_weight_decay": "float",
    "weight_decay_incr_style": WD_STYLES, "rampup_batch_size": "list", "warmup": "removed",
    # the embedding and output layers' own max and min lr (megatron-core's ParamGroupOverride)
    "decoupled_lr": "float", "decoupled_min_lr": "float",
    # the batch-size flags that change how many samples an iteration consumes (Megatron-LM main)
    "step_batch_size_schedule": "text", "decrease_batch_size_if_needed": "switch",
    # tokens per sample: Megatron-LM passes it to the step schedule (thresholds in tokens)
    "seq_length": "int",
    # how a resumed run's scheduler treats the checkpoint's values (``resume.rules``): no schedule
    "override_opt_param_scheduler": "switch", "use_checkpoint_opt_param_scheduler": "switch",
}

#: ``--option megatron=...``: whose meaning the batch flags take.  ``0.17``: megatron-core <= 0.17
#: (``--rampup-batch-size`` ramps; it has no ``--step-batch-size-schedule``); ``main``: Megatron-LM
#: main, megatron-core >= 0.18 (``--rampup-batch-size`` is accepted and ignored: a constant
#: ``--global-batch-size``).  Without the option each flag takes the meaning of the versions that
#: have it: the ramp 0.17's, the step schedule main's.
VERSIONS = ("0.17", "main")
DEFAULTS = {"min_lr": 0, "lr_warmup_init": 0, "lr_warmup_iters": 0, "lr_warmup_samples": 0,
            "lr_decay_style": "linear", "lr_wsd_decay_style": "exponential", "weight_decay": "0.01",
            "weight_decay_incr_style": "constant"}


@dataclass
class Flag:
    text: str
    span: Span | None
    ref: shell_words.Ref | None = None


@dataclass
class Args:
    flags: dict[str, Flag] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    assignments: dict[str, list[str]] = field(default_factory=dict)
    source: Source | None = None
    #: every occurrence of a flag, in order: (key, span of the flag word or YAML key, span of its
    #: value); ``export --into`` removes the schedule's occurrences from the original by these.
    occurrences: list[tuple[str, Span, Span | None]] = field(default_factory=list)


def read(text: str, filename: str) -> Args:
    if filename.lower().endswith((".yaml", ".yml")):
        return _read_yaml(text, filename)
    return _read_shell(text, filename)


def _key(word: str) -> str:
    return word.lstrip("-").replace("-", "_")


def _read_shell(text: str, filename: str) -> Args:
    source, words = shell_words.split(text, filename)
    args = Args(source=source)
    for word in words:
        if word.assign_to and not word.refs and not word.unreadable:
            args.assignments.setdefault(word.assign_to, []).append(word.text)
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if not word.text.startswith("--"):
            continue
        name, has_value, value = word.text[2:].partition("=")
        key = _key(name)
        if key not in FLAGS:
            continue
        if has_value:
            flag = _joined(source, word, name, value)
        else:
            flag, i = _separate(words, i, key, name, word)
        _put(args, key, flag, word.span)
    return args


def _joined(source, word, name: str, value: str) -> Flag:
    """``--flag=value``: the value's span starts after the ``=``."""
    offset = len(name) + 3
    span = Span(source, word.span.line, word.span.column + offset, word.span.line,
                max(word.span.end_column, word.span.column + offset + 1))
    # `--lr=$LR` is `--lr $LR`: a parameter (the word's one reference, after the `=`)
    ref = word.refs[0] if len(word.refs) == 1 and value == f"${word.refs[0].name}" else None
    if word.refs and ref is None:
        raise SchedlangError(f"the value of --{name} mixes variables with text", span,
                             hint="write a number, or exactly one $NAME")
    flag = Flag(value, span, ref)
    if word.unreadable:
        _unreadable(word.unreadable, name)
    return flag


def _separate(words, i: int, key: str, name: str, word) -> tuple[Flag, int]:
    """``--flag value`` (words from ``i``): a switch, a removed flag, three words of a list, or one
    value (a text's entries joined); the flag and the index after it."""
    if FLAGS[key] == "switch" or i >= len(words) or words[i].text.startswith("--"):
        if FLAGS[key] in ("removed", "ignored", "switch"):
            flag = Flag("", word.span)
        else:
            raise SchedlangError(f"--{name} needs a value", word.span)
    elif FLAGS[key] == "list":
        flag, i = _three_words(words, i, name)
    else:
        value_word = words[i]
        i += 1
        if value_word.unreadable:
            _unreadable(value_word.unreadable, name)
        if value_word.refs and value_word.ref is None:
            raise SchedlangError(f"the value of --{name} mixes variables with text", value_word.span,
                                 hint="write a number, or exactly one $NAME")
        flag = Flag(value_word.text, value_word.span, value_word.ref)
        if FLAGS[key] == "text":  # "0:16 1M:32": double quotes do not join words (shell_words)
            flag, i = _entries(flag, words, i)
    return flag, i


def _entries(flag: Flag, words, i: int) -> tuple[Flag, int]:
    """``--step-batch-size-schedule "0:16 1M:32"``: the value and the words after it that are
    entries of the schedule (``THR:BS``), as one text."""
    last = flag.span
    parts = [flag.text]
    while flag.ref is None and i < len(words) and ":" in words[i].text \
            and not words[i].text.startswith("-") and not words[i].refs and not words[i].unreadable \
            and words[i].span.line == last.line:
        parts.append(words[i].text)
        last = words[i].span
        i += 1
    if len(parts) == 1:
        return flag, i
    first = flag.span
    return Flag(" ".join(parts), Span(first.source, first.line, first.column, last.line, last.end_column)), i


def _three_words(words, i: int, name: str) -> tuple[Flag, int]:
    """``--rampup-batch-size START INCR SAMPLES`` (argparse ``nargs=3``): three plain numbers."""
    taken = []
    while len(taken) < 3 and i < len(words) and not words[i].text.startswith("--"):
        word = words[i]
        if word.unreadable:
            _unreadable(word.unreadable, name)
        if word.refs:
            raise SchedlangError(f"--{name} takes three numbers; a variable here is not read", word.span,
                                 hint="write the start batch size, the increment and the ramp-up samples")
        taken.append(word)
        i += 1
    if len(taken) < 3:
        at = taken[-1].span if taken else None
        raise SchedlangError(f"--{name} needs three values (start batch size, increment, ramp-up samples), "
                             f"got {len(taken)}", at, hint="Megatron's argparse takes nargs=3")
    first, last = taken[0].span, taken[-1].span
    span = Span(first.source, first.line, first.column, last.line, last.end_column) \
        if first.line == last.line else first
    return Flag(" ".join(w.text for w in taken), span), i


def _unreadable(span: Span, name: str):
    raise SchedlangError(f"cannot read the value of --{name}: the shell would compute it", span,
                         hint="schedlang reads scripts as data and never runs them; write the number, "
                              "or a plain $NAME that becomes a parameter")


def _put(args: Args, key: str, flag: Flag, at: Span | None) -> None:
    if at is not None:
        args.occurrences.append((key, at, flag.span))
    if key in args.flags:
        first = args.flags[key].span
        where = f" (first at {first.location})" if first is not None else ""
        args.notes.append(f"--{key.replace('_', '-')} is given twice{where}; Megatron-LM's argparse keeps "
                          f"the last, {at.location if at else 'here'}")
    args.flags[key] = flag


def _read_yaml(text: str, filename: str) -> Args:
    root = load(text, filename)
    args = Args(source=root.span.source)

    def walk(node):
        if node.is_mapping:
            for key, value in node.value.items():
                name = _key(key)
                if name in FLAGS and FLAGS[name] == "list" and value.is_list:  # rampup_batch_size: [16, 8, N]
                    _put(args, name, Flag(" ".join(str(item.value) for item in value.value), value.span),
                         node.key_spans[key])
                elif name in FLAGS and not value.is_mapping and not value.is_list:
                    shown = value.value
                    text_ = "true" if shown is True else "" if shown is None else str(shown)
                    _put(args, name, Flag(text_, value.span), node.key_spans[key])
                else:
                    walk(value)
        elif node.is_list:
            for item in node.value:
                walk(item)

    walk(root)
    for flag in args.flags.values():
        if "$" in flag.text:
            raise SchedlangError("variables in YAML values are not read", flag.span,
                                 hint="write the number (or use a shell script, whose $NAME values become "
                                      "parameters)")
    return args
