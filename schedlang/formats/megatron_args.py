"""Megatron-LM arguments -> ``.sched`` source (``schedlang import --format megatron-args``).

Reads the scheduler flags of a Megatron-LM launch: a command line or shell
script (``shell_words``: read as data, never run) or a YAML file whose keys
are the flags (``--lr-decay-style: WSD``, or ``lr_decay_style: WSD``), and
applies what Megatron-LM's ``validate_args`` and ``get_optimizer_param_scheduler``
do with them:

* iteration-based (``--train-iters``): ``D = lr_decay_iters or train_iters``,
  ``W = lr_warmup_fraction * D`` or ``lr_warmup_iters``, WSD window
  ``lr_wsd_decay_iters``, weight-decay horizon ``train_iters``, each times the
  global batch size (the class counts samples);
* sample-based (``--train-samples``): the same with ``*_samples``.

The output counts **iterations** whenever that is exact: every formula of the
class depends on the counter only through ratios like ``n / W``, so with a
constant global batch size ``G`` (``n = i * G``) the schedule per iteration is
the class with every length divided by ``G``.  The one exception is
``inverse-square-root`` with less than one iteration of warmup (its
``max(W, 1)`` and ``max(n, 1)`` clamps are in samples); that, a batch-size
ramp-up, and sample-based runs without ``--global-batch-size`` are written per
*sample* (the class's own counter), and the header says so.

``$VAR`` values become parameters of the file (a literal ``VAR=...`` in the same
script becomes the default; ``${VAR:-x}`` too); other expansions are refused
with a caret.  Megatron-LM's validation errors are reported at the flag.
"""

from __future__ import annotations

import keyword
from dataclasses import dataclass, field

import sympy as sp

from ..errors import SchedlangError, Source, Span, did_you_mean
from ..library import stdlib
from ..library.presets.megatron import LR_STYLES, WD_STYLES, WSD_STYLES
from ..syntax.parser import RESERVED
from . import shell_words
from .core_text import lowered
from .core_text import text as core
from .numbers import exact, sched_text
from .source_text import comment_safe, exact_number, header
from .yaml_source import load

# flag (underscores) -> kind: "float", "int" (a count), or the choices of a style
FLAGS = {
    "lr": "float", "min_lr": "float", "lr_warmup_init": "float", "lr_warmup_fraction": "float",
    "lr_decay_style": LR_STYLES, "lr_wsd_decay_style": WSD_STYLES,
    "lr_decay_iters": "int", "lr_decay_samples": "int", "lr_wsd_decay_iters": "int",
    "lr_wsd_decay_samples": "int", "lr_warmup_iters": "int", "lr_warmup_samples": "int",
    "train_iters": "int", "train_samples": "int", "global_batch_size": "int",
    "weight_decay": "float", "start_weight_decay": "float", "end_weight_decay": "float",
    "weight_decay_incr_style": WD_STYLES, "rampup_batch_size": "list", "warmup": "removed",
    "decoupled_lr": "ignored", "decoupled_min_lr": "ignored",
    # the batch-size flags that change how many samples an iteration consumes (Megatron-LM main)
    "step_batch_size_schedule": "text", "decrease_batch_size_if_needed": "switch",
    "seq_length": "int",
}
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
        else:
            if FLAGS[key] == "switch" or i >= len(words) or words[i].text.startswith("--"):
                if FLAGS[key] in ("removed", "ignored", "switch"):
                    flag = Flag("", word.span)
                else:
                    raise SchedlangError(f"--{name} needs a value", word.span)
            else:
                value_word = words[i]
                i += 1
                if value_word.unreadable:
                    _unreadable(value_word.unreadable, name)
                if value_word.refs and value_word.ref is None:
                    raise SchedlangError(f"the value of --{name} mixes variables with text", value_word.span,
                                         hint="write a number, or exactly one $NAME")
                flag = Flag(value_word.text, value_word.span, value_word.ref)
                # a list (`--rampup-batch-size 16 16 2000`) or a schedule written in double quotes
                # (which do not join words here) runs on to the next flag
                while FLAGS[key] in ("list", "text") and flag.ref is None and i < len(words) \
                        and not words[i].text.startswith("--") and not words[i].refs \
                        and words[i].span.line == value_word.span.line:
                    flag = Flag(f"{flag.text} {words[i].text}", flag.span.to(words[i].span))
                    i += 1
        _put(args, key, flag, word.span)
    return args


def _unreadable(span: Span, name: str):
    raise SchedlangError(f"cannot read the value of --{name}: the shell would compute it", span,
                         hint="schedlang reads scripts as data and never runs them; write the number, "
                              "or a plain $NAME that becomes a parameter")


def _put(args: Args, key: str, flag: Flag, at: Span | None) -> None:
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


# -- meaning -------------------------------------------------------------------------------


class _Values:
    """Flag values as sympy numbers or parameter symbols; records the parameters it creates."""

    def __init__(self, args: Args):
        self.args = args
        self.params: dict[str, tuple[str, str | None]] = {}  # name -> (type, default text)

    def given(self, key: str) -> bool:
        return key in self.args.flags

    def span(self, key: str) -> Span | None:
        flag = self.args.flags.get(key)
        return flag.span if flag else None

    def number(self, key: str):
        """The value of ``--key`` (or its default), or None when neither."""
        flag = self.args.flags.get(key)
        if flag is None:
            default = DEFAULTS.get(key)
            return None if default is None else exact(default)
        kind = FLAGS[key]
        if flag.ref is not None:
            return self.parameter(flag.ref, kind, 0 if key.startswith("lr_warmup") else None)
        value = exact(flag.text)
        if value is None or (kind == "int" and not value.is_Integer):
            want = "a whole number" if kind == "int" else "a number"
            raise SchedlangError(f"--{key.replace('_', '-')} must be {want}, not {flag.text!r}", flag.span)
        return value

    def parameter(self, ref: shell_words.Ref, kind: str, minimum=None):
        name = ref.name.lower()
        if not name.isidentifier() or keyword.iskeyword(name) or name in _RESERVED:
            name += "_"
        default = ref.default
        if default is None:
            literals = set(self.args.assignments.get(ref.name, []))
            default = literals.pop() if len(literals) == 1 else None
        if default is not None and exact(default) is None:
            default = None
        type_ = "int" if kind == "int" else "float"
        if default is not None and type_ == "int" and not exact(default).is_Integer:
            type_ = "float"
        self.params.setdefault(name, (type_, default, minimum))
        return sp.Symbol(name, positive=minimum is None, nonnegative=True, integer=type_ == "int")

    def choice(self, key: str) -> str:
        flag = self.args.flags.get(key)
        if flag is None:
            return DEFAULTS[key]
        choices = FLAGS[key]
        text = flag.text
        if flag.ref is not None:
            literals = set(self.args.assignments.get(flag.ref.name, []))
            text = flag.ref.default or (literals.pop() if len(literals) == 1 else None)
            if text is None:
                raise SchedlangError(f"--{key.replace('_', '-')} decides the shape of the schedule and "
                                     "cannot be left to a variable", flag.span,
                                     hint="write one of " + ", ".join(choices))
        if text not in choices:
            raise SchedlangError(f"'{text}' is not a valid --{key.replace('_', '-')}", flag.span,
                                 hint=did_you_mean(text, choices) or "one of " + ", ".join(choices))
        return text


#: Names a parameter cannot take: the words of the language, ``t``, the constants and math
#: functions (``core.functions.FUNCTIONS``) and the schedule ``lr`` itself.
_RESERVED = {*RESERVED, "t", "lr", *stdlib.CONSTANTS, *stdlib.MATH}


def _refuse(v: _Values, key: str, message: str, hint: str | None = None):
    span = v.span(key)
    raise SchedlangError(message, span or _top(v.args), hint=hint)


def _top(args: Args) -> Span | None:
    if args.source is None or not args.source.text:
        return None
    return Span(args.source, 1, 1, 1, 2)


def _validate(v: _Values) -> str:
    """Megatron-LM's ``validate_args`` rules on these flags; returns the mode, "iters" or "samples"."""
    if v.given("warmup"):
        _refuse(v, "warmup", "--warmup was removed from Megatron-LM",
                hint="use --lr-warmup-fraction, --lr-warmup-iters or --lr-warmup-samples")
    if not v.given("lr"):
        raise SchedlangError("no --lr found: Megatron-LM needs the peak learning rate", _top(v.args))
    iters, samples = v.given("train_iters"), v.given("train_samples")
    if iters and samples:
        _refuse(v, "train_samples", "expected iteration-based training: --train-iters and --train-samples "
                                    "are both given")
    if not (iters or samples):
        raise SchedlangError("neither --train-iters nor --train-samples is given", _top(v.args),
                             hint="Megatron-LM needs one of them (the decay length defaults to it)")
    _validate_batch_sizes(v, iters)
    if iters:
        for key, what in (("lr_decay_samples", "learning rate decay"), ("lr_warmup_samples", "learning rate "
                                                                                             "warmup")):
            if v.given(key) and v.number(key) != 0:
                _refuse(v, key, f"expected iteration-based {what}: --{key.replace('_', '-')} with "
                                "--train-iters")
        if v.given("rampup_batch_size"):
            _refuse(v, "rampup_batch_size", "expected no batch-size rampup for iteration-based training")
        if v.given("lr_warmup_fraction") and v.given("lr_warmup_iters") and v.number("lr_warmup_iters") != 0:
            _refuse(v, "lr_warmup_iters", "can only specify one of lr-warmup-fraction and lr-warmup-iters")
    else:
        for key in ("lr_decay_iters", "lr_warmup_iters"):
            if v.given(key) and v.number(key) != 0:
                _refuse(v, key, f"expected sample-based training: --{key.replace('_', '-')} with "
                                "--train-samples")
        if v.given("lr_warmup_fraction") and v.given("lr_warmup_samples") \
                and v.number("lr_warmup_samples") != 0:
            _refuse(v, "lr_warmup_samples",
                    "can only specify one of lr-warmup-fraction and lr-warmup-samples")
    lr, low = v.number("lr"), v.number("min_lr")
    if sp.Gt(low, lr) == sp.true:
        _refuse(v, "min_lr", f"--min-lr ({sched_text(low)}) must be <= --lr ({sched_text(lr)})")
    if v.choice("weight_decay_incr_style") == "constant":
        for key in ("start_weight_decay", "end_weight_decay"):
            if v.given(key):
                _refuse(v, key, f"--{key.replace('_', '-')} needs a non-constant --weight-decay-incr-style",
                        hint="with the constant style Megatron-LM uses --weight-decay for both ends")
    else:
        for key in ("start_weight_decay", "end_weight_decay"):
            if not v.given(key):
                _refuse(v, "weight_decay_incr_style", f"--weight-decay-incr-style "
                        f"{v.choice('weight_decay_incr_style')} needs --{key.replace('_', '-')}")
    return "iters" if iters else "samples"


def _validate_batch_sizes(v: _Values, iters: bool) -> None:
    """``--step-batch-size-schedule`` as Megatron-LM (main, after megatron-core 0.16) takes it:
    it refuses the flag together with ``--global-batch-size`` (``validate_args``),
    ``--rampup-batch-size`` and ``--decrease-batch-size-if-needed``
    (``init_num_microbatches_calculator``), each a ``ValueError`` "Cannot specify both ...".
    What it accepts changes the samples an iteration consumes: with ``--train-samples`` the
    schedule per sample is exact (the class counts samples) and is written so; with
    ``--train-iters`` the samples consumed by iteration ``i`` follow the batch-size table, which
    this import does not express, so it is refused with that reason."""
    if not v.given("step_batch_size_schedule"):
        return
    for other in ("global_batch_size", "rampup_batch_size", "decrease_batch_size_if_needed"):
        switched_off = FLAGS[other] == "switch" and v.args.flags.get(other, Flag("", None)).text.lower() \
            in ("false", "0")  # `decrease_batch_size_if_needed: false` in YAML
        if v.given(other) and not switched_off:
            flag = other.replace("_", "-")
            _refuse(v, other, f"Cannot specify both --step-batch-size-schedule and --{flag} (Megatron-LM "
                              "raises ValueError)",
                    hint="the step schedule gives every batch size; drop one of the two")
    if iters:
        _refuse(v, "step_batch_size_schedule",
                "--step-batch-size-schedule with --train-iters: Megatron's OptimizerParamScheduler counts "
                "samples and the batch size changes with the samples consumed, so the schedule per "
                "iteration follows the batch-size table; schedlang does not express that map",
                hint="train by samples (--train-samples, --lr-warmup-samples, --lr-decay-samples): the "
                     "schedule is then per sample, exactly Megatron's")


@dataclass
class Plan:
    """The class's arguments in the output's units, and how those units came about."""

    kwargs: dict
    wd: dict
    per_iteration: bool
    notes: list[str]
    params: dict
    spans: dict = field(default_factory=dict)  # argument -> the flag it is computed from
    #: With a batch-size ramp: the ``.sched`` lines declaring the run's batch (SPEC §12).
    batch: list[str] = field(default_factory=list)


def _batch_lines(v: _Values) -> list[str]:
    """``batch = megatron...`` (and ``param seq_len``) for a sample-based run whose batch changes:
    the schedule is then written per optimizer step, ``on_samples(...)`` reading the samples
    consumed before each step, which is Megatron's counter (SPEC §12, docs/tokens.md)."""
    from ..library.presets import megatron_batch  # lazy: only runs with a batch ramp

    lines = []
    seq = v.number("seq_length") if v.given("seq_length") else None
    if seq is not None and not seq.is_Integer:
        _refuse(v, "seq_length", "--seq-length must be a whole number")
    if v.given("step_batch_size_schedule"):
        text = v.args.flags["step_batch_size_schedule"].text
        if any(c in text for c in '"\\\n') or v.args.flags["step_batch_size_schedule"].ref is not None:
            _refuse(v, "step_batch_size_schedule", "--step-batch-size-schedule must be written out "
                    "as THRESHOLD:BATCH entries", hint='e.g. --step-batch-size-schedule "0:16 2.4B:320"')
        try:
            megatron_batch.step_batch_size_schedule(text, None if seq is None else int(seq))
        except ValueError as exc:
            _refuse(v, "step_batch_size_schedule", str(exc))
        if seq is not None:
            lines.append(f"param seq_len: int = {int(seq)}")
        lines.append(f'batch = megatron.step_batch_size_schedule("{text}")')
        return lines
    ramp = v.args.flags["rampup_batch_size"].text.split()
    gbs = v.number("global_batch_size") if v.given("global_batch_size") else None
    if len(ramp) != 3 or not all(exact(x) is not None and exact(x).is_Integer for x in ramp) \
            or gbs is None or not gbs.is_Integer:
        _refuse(v, "rampup_batch_size", "--rampup-batch-size takes START INCREMENT SAMPLES, whole "
                "numbers, with a whole --global-batch-size")
    start, increment, samples = (int(exact(x)) for x in ramp)
    try:
        megatron_batch.rampup_batch_size(start, increment, samples, int(gbs))
    except ValueError as exc:
        _refuse(v, "rampup_batch_size", str(exc))
    if seq is not None:
        lines.append(f"param seq_len: int = {int(seq)}")
    lines.append(f"batch = megatron.rampup_batch_size({start}, {increment}, {samples}, "
                 f"global_batch_size={int(gbs)})")
    return lines


def plan(args: Args) -> Plan:
    v = _Values(args)
    mode = _validate(v)
    style = v.choice("lr_decay_style")
    unit = "iters" if mode == "iters" else "samples"
    decay = v.number(f"lr_decay_{unit}") if v.given(f"lr_decay_{unit}") else v.number(f"train_{unit}")
    if v.given("lr_warmup_fraction"):
        warmup = v.number("lr_warmup_fraction") * decay
    else:
        warmup = v.number(f"lr_warmup_{unit}")
    wsd = v.number(f"lr_wsd_decay_{unit}") if v.given(f"lr_wsd_decay_{unit}") else None
    if style == "WSD" and wsd is None:
        _refuse(v, "lr_decay_style", f"--lr-decay-style WSD needs --lr-wsd-decay-{unit}",
                hint="Megatron's OptimizerParamScheduler asserts wsd_decay_steps is set")
    incr = v.number(f"train_{unit}")
    batch = v.number("global_batch_size") if v.given("global_batch_size") else None
    notes = list(args.notes)
    # per iteration: lengths in iterations, exact unless inverse-square-root clamps differ
    if mode == "iters":
        exact_per_iteration = style != "inverse-square-root" or sp.Ge(warmup, 1) == sp.true \
            or (batch is not None and batch == 1)
        scale = 1 if exact_per_iteration else _batch(v, batch)
    else:
        can = batch is not None and not v.given("rampup_batch_size")
        exact_per_iteration = can and (style != "inverse-square-root" or sp.Ge(warmup / batch, 1) == sp.true)
        scale = 1 / batch if exact_per_iteration else 1
        if v.given("rampup_batch_size"):
            notes.append("--rampup-batch-size has the meaning of megatron-core 0.17 and earlier: "
                         "megatron-core 0.18 and later (Megatron-LM main) accept it and ignore it "
                         "(the batch stays --global-batch-size)")
    if mode == "iters" and not exact_per_iteration:
        notes.append("inverse-square-root with less than one iteration of warmup clamps max(W, 1) and "
                     "max(n, 1) in samples, so the schedule is per sample")
    lengths = {k: (None if x is None else sp.nsimplify(x * scale)) for k, x in
               (("lr_warmup_steps", warmup), ("lr_decay_steps", decay), ("wsd_decay_steps", wsd),
                ("wd_incr_steps", incr))}
    if sp.Ge(lengths["lr_warmup_steps"], lengths["lr_decay_steps"]) == sp.true:
        key = "lr_warmup_fraction" if v.given("lr_warmup_fraction") else f"lr_warmup_{unit}"
        _refuse(v, key, "the warmup is not shorter than the decay (Megatron asserts lr_warmup_steps < "
                        "lr_decay_steps)")
    kwargs = {"init_lr": v.number("lr_warmup_init"), "max_lr": v.number("lr"), "min_lr": v.number("min_lr"),
              "lr_warmup_steps": lengths["lr_warmup_steps"], "lr_decay_steps": lengths["lr_decay_steps"],
              "lr_decay_style": style}
    if style == "WSD":
        kwargs["wsd_decay_steps"] = lengths["wsd_decay_steps"]
        kwargs["lr_wsd_decay_style"] = v.choice("lr_wsd_decay_style")
    wd_style = v.choice("weight_decay_incr_style")
    if wd_style == "constant":
        start = end = v.number("weight_decay")
    else:
        start, end = v.number("start_weight_decay"), v.number("end_weight_decay")
    wd = {"start_wd": start, "end_wd": end, "wd_incr_steps": lengths["wd_incr_steps"],
          "wd_incr_style": wd_style}
    for key in ("decoupled_lr", "decoupled_min_lr"):
        if v.given(key):
            notes.append(f"--{key.replace('_', '-')} gives the embedding and output layers their own lr: "
                         "not imported (this file is the schedule of the other param groups)")
    used = {s.name for value in (*kwargs.values(), *wd.values()) if isinstance(value, sp.Basic)
            for s in value.free_symbols}
    params = {name: decl for name, decl in v.params.items() if name in used}
    batch_lines = []
    if not exact_per_iteration and any(v.given(k) for k in ("rampup_batch_size", "step_batch_size_schedule")):
        batch_lines = _batch_lines(v)
    return Plan(kwargs, wd, exact_per_iteration, notes, params, _origins(v, unit, wd_style), batch_lines)


def _origins(v: _Values, unit: str, wd_style: str) -> dict:
    """Each argument's flag in the command line, so that an error in a value computed from
    several (``--lr-warmup-fraction -0.1`` times the decay) is reported at the flag that made it
    wrong rather than as the generated line."""
    warmup = "lr_warmup_fraction" if v.given("lr_warmup_fraction") else f"lr_warmup_{unit}"
    flags = {"init_lr": "lr_warmup_init", "max_lr": "lr", "min_lr": "min_lr", "lr_warmup_steps": warmup,
             "lr_decay_steps": f"lr_decay_{unit}" if v.given(f"lr_decay_{unit}") else f"train_{unit}",
             "wsd_decay_steps": f"lr_wsd_decay_{unit}", "wd_incr_steps": f"train_{unit}",
             "start_wd": "weight_decay" if wd_style == "constant" else "start_weight_decay",
             "end_wd": "weight_decay" if wd_style == "constant" else "end_weight_decay"}
    return {key: v.span(flag) for key, flag in flags.items() if v.span(flag) is not None}


def _batch(v: _Values, batch):
    if batch is None:
        v.params.setdefault("global_batch_size", ("int", None, None))
        return sp.Symbol("global_batch_size", positive=True, integer=True)
    return batch


# -- output --------------------------------------------------------------------------------


def source(args: Args, origin: str, style: str = "presets") -> str:
    p = plan(args)
    head = [header(origin, "Megatron-LM arguments")]
    if p.per_iteration:
        head += ["# t counts training iterations.  Megatron's OptimizerParamScheduler counts samples",
                 "# (it steps by the global batch size each iteration); with a constant batch size the",
                 "# schedule per iteration is exactly this one, every length divided by the batch size."]
    elif p.batch:
        head += ["# t counts optimizer steps.  The batch changes with the samples consumed (`batch`),",
                 "# and on_samples(...) reads the samples consumed before each step, the counter of",
                 "# Megatron's OptimizerParamScheduler, so each step gets exactly Megatron's lr."]
    else:
        head += ["# t counts samples, as Megatron's OptimizerParamScheduler does: iteration i runs at",
                 "# t = i * global batch size."]
    head += ["# Weight decay: Megatron multiplies it by each param group's wd_mult (0 for biases and norms)."]
    head += [f"# note: {comment_safe(n)}" for n in p.notes]
    params = [_param_line(name, *decl) for name, decl in sorted(p.params.items())]
    lr_call = f"megatron.OptimizerParamScheduler({_kwargs(p.kwargs, core, p.spans)})"
    wd_call = f"megatron.OptimizerParamScheduler.get_wd({_kwargs(p.wd, core, p.spans)})"
    if p.batch:
        lr_call, wd_call = f"on_samples({lr_call})", f"on_samples({wd_call})"
    lines = [*params, *p.batch, f"schedule lr = {lr_call}", f"schedule weight_decay = {wd_call}"]
    preset_text = "\n".join(lines) + "\n"
    if style == "presets":
        return "\n".join(head) + "\n" + preset_text
    return "\n".join(head) + "\n" + lowered(preset_text, params)


def _param_line(name: str, type_: str, default: str | None, minimum) -> str:
    shown = "" if default is None else f" = {sched_text(exact(default))}"
    return f"param {name}: {type_}{shown} where {name} {'>= 0' if minimum == 0 else '> 0'}"


def _kwargs(kwargs: dict, core, spans=None) -> str:
    """``key=value, ...``; a number is written through ``exact_number`` with its flag's span, so an
    error in it moves to that flag."""
    parts = []
    for key, value in kwargs.items():
        if isinstance(value, str):
            parts.append(f'{key}="{value}"')
        elif isinstance(value, sp.Basic) and value.is_Number and (spans or {}).get(key) is not None:
            parts.append(f"{key}={exact_number(value, spans[key])}")
        else:
            parts.append(f"{key}={core(value)}")
    return ", ".join(parts)
