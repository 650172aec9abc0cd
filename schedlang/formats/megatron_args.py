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

A run whose batch changes (``--step-batch-size-schedule``, Megatron-LM main; or
``--rampup-batch-size`` with ``--global-batch-size``, megatron-core <= 0.17) trained by samples
is written **per optimizer step**: ``param seq_len`` from ``--seq-length``, ``batch =
megatron.step_batch_size_schedule(...)`` / ``megatron.rampup_batch_size(...)`` (Megatron's own
table, ``library/presets/megatron_batch.py``) and ``on_samples(megatron.OptimizerParamScheduler(
...))`` with the lengths in samples: update ``k`` is the class at the samples consumed before it,
as Megatron's loop steps it.  ``--option megatron=0.17|main`` names the version whose meaning
the batch flags take (``VERSIONS``): main accepts ``--rampup-batch-size`` and ignores it.

With a constant batch, the output counts **iterations** whenever that is exact: every formula of the
class depends on the counter only through ratios like ``n / W``, so with a
constant global batch size ``G`` (``n = i * G``) the schedule per iteration is
the class with every length divided by ``G``.  The one exception is
``inverse-square-root`` with less than one iteration of warmup (its
``max(W, 1)`` and ``max(n, 1)`` clamps are in samples); that and sample-based runs
without ``--global-batch-size`` are written per *sample* (the class's own counter), and
the header says so.

``$VAR`` values become parameters of the file (a literal ``VAR=...`` in the same
script becomes the default; ``${VAR:-x}`` too); other expansions are refused
with a caret.  Megatron-LM's validation errors are reported at the flag.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass, field, replace
from fractions import Fraction

import sympy as sp

from ..codegen.sched import sched_text
from ..errors import SchedlangError, Span, did_you_mean
from ..semantics.names import LANGUAGE_NAMES
from ..syntax import ir, unparse
from .common import shell_words
from .common.format import SHELL, YAML, Format, reader
from .common.numbers import exact
from .common.source_text import comment_safe, header
from .common.statements import (
    batch_stmt,
    call,
    computed,
    formula,
    module,
    noted,
    number,
    param_stmt,
    run_stmt,
    schedule_stmt,
    string,
)
from .core_text import lowered_schedules
from .megatron_export import DECOUPLED, export
from .megatron_flags import DEFAULTS, FLAGS, VERSIONS, Args, Flag, read

# -- meaning -------------------------------------------------------------------------------


class _Values:
    """Flag values as sympy numbers or parameter symbols; records the parameters it creates."""

    def __init__(self, args: Args, version: str | None = None):
        self.args = args
        self.version = version  # VERSIONS, or None: each batch flag in the versions that have it
        if version is None:
            self.version = "main" if "step_batch_size_schedule" in args.flags else "0.17"
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
        if not name.isidentifier() or keyword.iskeyword(name) or name in LANGUAGE_NAMES:
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




def _refuse(v: _Values, key: str, message: str, hint: str | None = None):
    span = v.span(key)
    raise SchedlangError(message, span or _top(v.args), hint=hint)


def _top(args: Args) -> Span | None:
    if args.source is None or not args.source.text:
        return None
    return Span(args.source, 1, 1, 1, 2)


def _validate(v: _Values) -> str:
    """Megatron-LM's ``validate_args`` rules on these flags; returns the mode, "iters" or "samples"."""
    _validate_given(v)
    iters = v.given("train_iters")
    _validate_batch_sizes(v, iters)
    if iters:
        _validate_iteration_lengths(v)
    else:
        _validate_sample_lengths(v)
    lr, low = v.number("lr"), v.number("min_lr")
    if sp.Gt(low, lr) == sp.true:
        _refuse(v, "min_lr", f"--min-lr ({sched_text(low)}) must be <= --lr ({sched_text(lr)})")
    _validate_weight_decay(v)
    return "iters" if iters else "samples"


def _validate_given(v: _Values) -> None:
    """The flags every launch needs: the peak lr and one run length (and no removed ``--warmup``)."""
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


def _validate_iteration_lengths(v: _Values) -> None:
    """With ``--train-iters`` no length in samples, and one warmup flag."""
    for key, what in (("lr_decay_samples", "learning rate decay"), ("lr_warmup_samples", "learning rate "
                                                                                         "warmup")):
        if _nonzero(v, key):
            _refuse(v, key, f"expected iteration-based {what}: --{key.replace('_', '-')} with "
                            "--train-iters")
    _one_warmup(v, "lr_warmup_iters")


def _validate_sample_lengths(v: _Values) -> None:
    """With ``--train-samples`` no length in iterations, and one warmup flag."""
    for key in ("lr_decay_iters", "lr_warmup_iters"):
        if _nonzero(v, key):
            _refuse(v, key, f"expected sample-based training: --{key.replace('_', '-')} with "
                            "--train-samples")
    _one_warmup(v, "lr_warmup_samples")


def _nonzero(v: _Values, key: str) -> bool:
    """Whether ``--key`` is given and not 0 (Megatron-LM's test for a length that is set)."""
    return v.given(key) and v.number(key) != 0


def _one_warmup(v: _Values, key: str) -> None:
    """``--lr-warmup-fraction`` refused beside a warmup length (``key``) that is set."""
    if v.given("lr_warmup_fraction") and _nonzero(v, key):
        _refuse(v, key, f"can only specify one of lr-warmup-fraction and {key.replace('_', '-')}")


def _validate_weight_decay(v: _Values) -> None:
    """The constant style takes ``--weight-decay`` for both ends; the others need both ends."""
    style = v.choice("weight_decay_incr_style")
    for key in ("start_weight_decay", "end_weight_decay"):
        if style == "constant" and v.given(key):
            _refuse(v, key, f"--{key.replace('_', '-')} needs a non-constant --weight-decay-incr-style",
                    hint="with the constant style Megatron-LM uses --weight-decay for both ends")
        if style != "constant" and not v.given(key):
            _refuse(v, "weight_decay_incr_style", f"--weight-decay-incr-style {style} needs "
                    f"--{key.replace('_', '-')}")


def _validate_batch_sizes(v: _Values, iters: bool) -> None:
    """The batch flags as the chosen Megatron version (``v.version``) takes them.

    ``--step-batch-size-schedule`` (Megatron-LM main, megatron-core >= 0.18): refused together
    with ``--global-batch-size`` (``validate_args``), ``--rampup-batch-size`` and
    ``--decrease-batch-size-if-needed`` (``init_num_microbatches_calculator``), each a
    ``ValueError`` "Cannot specify both ...".  With ``--train-iters`` Megatron-LM main accepts it
    but scales the iteration lengths by the *default* global batch size (micro batch size times
    data-parallel size), which is no batch of the schedule (Megatron-Bridge #2609): refused with
    that reason.  ``--rampup-batch-size`` (megatron-core <= 0.17): refused with ``--train-iters``
    as ``validate_args`` did, and it needs ``--global-batch-size`` (the batch it ramps to);
    main ignores the flag (``v.version == "main"``), which the header says."""
    ramp = v.given("rampup_batch_size")
    if v.given("step_batch_size_schedule"):
        if v.version == "0.17":
            _refuse(v, "step_batch_size_schedule", "--step-batch-size-schedule is Megatron-LM main's "
                    "(megatron-core 0.18 and later); megatron-core 0.17 and earlier have no such flag",
                    hint="import with --option megatron=main (or without the option)")
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
                    "--step-batch-size-schedule with --train-iters: Megatron-LM then scales every "
                    "--lr-*-iters length by the default global batch size (micro batch size times "
                    "data-parallel size), which is no batch of the schedule, so the warmup and decay "
                    "last another number of samples than the iterations say (Megatron-Bridge #2609); "
                    "schedlang does not import that",
                    hint="train by samples (--train-samples, --lr-warmup-samples, --lr-decay-samples): "
                         "the import is then per step and exactly Megatron's")
    elif ramp and v.version == "0.17":
        if iters:
            _refuse(v, "rampup_batch_size", "expected no batch-size rampup for iteration-based training "
                    "(megatron-core 0.17 and earlier refuse --rampup-batch-size with --train-iters)",
                    hint="train by samples: --train-samples, --lr-warmup-samples, --lr-decay-samples "
                         "(megatron-core 0.18 and later ignore the ramp: --option megatron=main)")
        if not v.given("global_batch_size"):
            _refuse(v, "rampup_batch_size", "--rampup-batch-size ramps up to --global-batch-size, which "
                    "is not given", hint="add --global-batch-size (the batch at the end of the ramp)")
        if v.given("decrease_batch_size_if_needed") and \
                v.args.flags["decrease_batch_size_if_needed"].text.lower() not in ("false", "0"):
            _refuse(v, "decrease_batch_size_if_needed", "--decrease-batch-size-if-needed with "
                    "--rampup-batch-size rounds each batch down to a multiple of micro batch size times "
                    "data-parallel size, which the flags do not give",
                    hint="drop it, or give batch sizes the data-parallel layout divides")


def _whole(v: _Values, key: str) -> int:
    """A batch flag's value: a plain whole number (the batch schedule is fixed when the file
    compiles), or a ``$VAR`` with a literal default in the script."""
    flag = v.args.flags[key]
    text = flag.text
    if flag.ref is not None:
        literals = set(v.args.assignments.get(flag.ref.name, []))
        text = flag.ref.default or (literals.pop() if len(literals) == 1 else None)
        if text is None:
            _refuse(v, key, f"--{key.replace('_', '-')} sets the batch schedule, which is fixed when the "
                            "file compiles; its variable has no value in the script",
                    hint=f"write the number, or set {flag.ref.name}=... in the script")
    value = exact(text)
    if value is None or not value.is_Integer or value <= 0:
        _refuse(v, key, f"--{key.replace('_', '-')} must be a positive whole number, not {text!r}")
    return int(value)


def _batch_line(v: _Values) -> tuple[ir.Call | None, int | None, list[str]]:
    """The ``batch = ...`` value of a run whose batch changes (None for a constant batch,
    whose output is per iteration as before), its ``seq_len`` (None when ``--seq-length`` is not
    given), and notes.  The table is built here
    too, so that Megatron's own refusals are reported at the flag."""
    from ..library.presets import megatron_batch  # lazy: only runs that change the batch

    def seq_length():
        return _whole(v, "seq_length") if v.given("seq_length") else None

    notes = []
    if v.given("step_batch_size_schedule"):
        seq_len = seq_length()
        flag = v.args.flags["step_batch_size_schedule"]
        if flag.ref is not None or any(c in flag.text for c in '"\\\n\r'):
            _refuse(v, "step_batch_size_schedule", "--step-batch-size-schedule must be written out",
                    hint='e.g. --step-batch-size-schedule "0:16 2.4B:320"')
        try:
            megatron_batch.step_batch_size_schedule(flag.text, seq_len)
        except ValueError as exc:
            _refuse(v, "step_batch_size_schedule", str(exc))
        if seq_len is None:
            notes.append("no --seq-length: Megatron-LM passes args.seq_length (None here) to the step "
                         "schedule, so its thresholds count samples")
        return call("megatron.step_batch_size_schedule", string(flag.text, flag.span), span=flag.span), \
            seq_len, notes
    if v.given("rampup_batch_size") and v.version == "0.17":
        return _rampup_line(v), seq_length(), notes
    return None, None, notes


def _rampup_line(v: _Values) -> ir.Call:
    """``--rampup-batch-size START INCREMENT SAMPLES`` (megatron-core 0.17) as its ``batch = ...``,
    each number at its flag."""
    from ..library.presets import megatron_batch  # lazy: only runs that change the batch

    words = v.args.flags["rampup_batch_size"].text.split()
    values = []
    for word in words:
        found = exact(word)
        if found is None or not found.is_Integer:
            _refuse(v, "rampup_batch_size", f"--rampup-batch-size takes whole numbers, not {word!r}")
        values.append(int(found))
    if len(values) != 3:
        _refuse(v, "rampup_batch_size", "--rampup-batch-size needs three values (start batch size, "
                                        "increment, ramp-up samples)")
    start, increment, samples = values
    batch = _whole(v, "global_batch_size")
    try:
        megatron_batch.rampup_batch_size(start, increment, samples, batch)
    except ValueError as exc:
        _refuse(v, "rampup_batch_size", str(exc))
    ramp = v.span("rampup_batch_size")
    return call("megatron.rampup_batch_size", *(number(n, ramp) for n in (start, increment, samples)),
                span=ramp, global_batch_size=number(batch, v.span("global_batch_size")))


@dataclass
class Plan:
    """The class's arguments in the output's units, and how those units came about."""

    kwargs: dict
    wd: dict
    per_iteration: bool
    notes: list[str]
    params: dict
    batch: ir.Call | None = None  # the `batch = ...` of a run whose batch changes: lengths in samples
    seq_len: int | None = None
    spans: dict = field(default_factory=dict)  # argument -> the flag it is computed from
    #: The class's counter per unit of the output's ``t`` (the class counts samples): the global
    #: batch size when the output is per iteration, 1 when it is per sample; None when unknown.
    class_scale: object = 1
    #: ``run = ...`` (the iterations Megatron-LM trains, ``update_train_iters``) and its comment;
    #: None where the file's t counts samples (no iteration count to state)
    run: tuple[ir.Node, str] | None = None
    #: ``--decoupled-lr``: the class's arguments for the embedding and output layers
    #: (``schedule lr__decoupled``), or None
    decoupled: dict | None = None


def plan(args: Args, version: str | None = None) -> Plan:
    v = _Values(args, version)
    mode = _validate(v)
    batch_line, seq_len, batch_notes = _batch_line(v) if mode == "samples" else (None, None, [])
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
    notes = list(args.notes) + batch_notes
    if v.given("rampup_batch_size") and v.version == "main":
        notes.append("--rampup-batch-size is ignored: Megatron-LM main (megatron-core 0.18 and later) "
                     "accepts it and trains at the constant --global-batch-size")
    # per iteration: lengths in iterations, exact unless inverse-square-root clamps differ
    exact_per_iteration, scale = _per_iteration(v, mode, style, warmup, batch, batch_line)
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
    wd = _weight_decay(v, lengths["wd_incr_steps"])
    decoupled = _decoupled(v, kwargs)
    used = {s.name for value in (*kwargs.values(), *wd.values(), *(decoupled or {}).values())
            if isinstance(value, sp.Basic) for s in value.free_symbols}
    params = {name: decl for name, decl in v.params.items() if name in used}
    if batch_line is not None:  # the lengths place the schedule on the batch clock: fixed values
        _refuse_unset(v, params)
    class_scale = batch if exact_per_iteration else 1  # None: per iteration, no --global-batch-size
    return Plan(kwargs, wd, exact_per_iteration, notes, params, batch_line, seq_len,
                _origins(v, unit, wd["wd_incr_style"]), class_scale,
                _run(v, mode, exact_per_iteration, batch, batch_line), decoupled)


def _decoupled(v: _Values, kwargs: dict) -> dict | None:
    """The class's arguments for the embedding and output layers under ``--decoupled-lr``:
    megatron-core's ``get_standard_config_overrides`` gives their param group a
    ``ParamGroupOverride`` of ``max_lr`` (and ``min_lr`` with ``--decoupled-min-lr``); the
    warmup's start, the lengths and the style are the class's, shared by every group."""
    if not v.given("decoupled_lr"):
        if v.given("decoupled_min_lr"):
            _refuse(v, "decoupled_min_lr", "--decoupled-min-lr without --decoupled-lr changes nothing: "
                                           "megatron-core reads it only with --decoupled-lr",
                    hint="add --decoupled-lr, or drop --decoupled-min-lr")
        return None
    group = {**kwargs, "max_lr": v.number("decoupled_lr")}
    if v.given("decoupled_min_lr"):
        group["min_lr"] = v.number("decoupled_min_lr")
    return group


def switched_on(args: Args, key: str) -> bool:
    """Whether a switch is given and not turned off (``key: false`` in YAML)."""
    flag = args.flags.get(key)
    return flag is not None and flag.text.lower() not in ("false", "0")


def scheduler_flag(args: Args) -> str:
    """How the launch's ``OptimizerParamScheduler.load_state_dict`` treats the checkpoint's
    values: ``override`` (``--override-opt_param-scheduler``: the flags' values),
    ``use-checkpoint`` (``--use-checkpoint-opt_param-scheduler``: the saved ones) or ``neither``
    (``_check_and_set`` asserts each saved value equals the flags')."""
    override = switched_on(args, "override_opt_param_scheduler")
    use = switched_on(args, "use_checkpoint_opt_param_scheduler")
    if override and use:
        flag = args.flags["override_opt_param_scheduler"]
        raise SchedlangError("both --override-opt_param-scheduler and --use-checkpoint-opt_param-scheduler "
                             "are set (megatron-core asserts 'both override and use-checkpoint are set.')",
                             flag.span, hint="keep one: override runs the flags' values, use-checkpoint "
                                             "the checkpoint's")
    return "override" if override else "use-checkpoint" if use else "neither"



def _run(v: _Values, mode: str, per_iteration: bool, batch, batch_line) -> tuple[ir.Node, str] | None:
    """``run = ...``: the iterations Megatron-LM trains (``training.update_train_iters``, then
    ``while iteration < args.train_iters``).  ``--train-iters`` is that number; ``--train-samples``
    with a constant batch trains ``train_samples // global_batch_size``; with
    ``--step-batch-size-schedule`` (main) the iterations while the samples consumed are below
    ``--train-samples``, which is ``run = N sp`` on the file's batch schedule; with
    ``--rampup-batch-size`` (megatron-core <= 0.17) the ramp's iterations while the samples consumed
    are at most the ramp's samples, then ``(train_samples - consumed) // global_batch_size``."""
    at = v.span(f"train_{mode}")
    if batch_line is not None:
        samples = _whole(v, "train_samples")
        if v.given("step_batch_size_schedule"):
            return ir.Duration(at, Fraction(samples), "sp", f"{samples}sp"), (
                "update_train_iters: the iterations while consumed samples < --train-samples")
        return number(_ramp_iterations(v, samples), at), (
            "update_train_iters (megatron-core <= 0.17): the ramp's iterations, then (train_samples - "
            "consumed) // global_batch_size")
    if not per_iteration:
        return None  # t counts samples: the header says so, and the run is in iterations
    if mode == "iters":
        return computed(v.number("train_iters"), at), "--train-iters"
    run = sp.floor(v.number("train_samples") / batch)
    return computed(run, at), "update_train_iters: train_samples // global_batch_size"


def _ramp_iterations(v: _Values, samples: int) -> int:
    """megatron-core <= 0.17's ``update_train_iters`` under ``--rampup-batch-size``: step while the
    consumed samples are at most the ramp's samples, then whole batches of ``--global-batch-size``
    of what is left (the partial last batch thrown away), over the ramp's own table."""
    from ..library.presets import megatron_batch  # lazy: only runs that change the batch

    start, increment, ramp = (int(exact(w)) for w in v.args.flags["rampup_batch_size"].text.split())
    batch = _whole(v, "global_batch_size")
    table = megatron_batch.rampup_batch_size(start, increment, ramp, batch)
    consumed = iterations = 0
    for i, (theta, size) in enumerate(table):
        limit = min(table[i + 1][0] if i + 1 < len(table) else ramp + 1, ramp + 1)
        if consumed < theta or consumed >= limit:
            continue
        steps = -((consumed - limit) // size)  # ceil((limit - consumed) / size)
        consumed += steps * size
        iterations += steps
    return iterations + (samples - consumed) // batch


def _per_iteration(v: _Values, mode: str, style: str, warmup, batch, batch_line) -> tuple[bool, object]:
    """Whether the schedule is exact per iteration, and the factor from the flags' lengths to the
    output's: in iterations exact unless inverse-square-root's clamps differ; in samples, per
    iteration when the batch is constant and known."""
    if mode == "iters":
        exact_per_iteration = style != "inverse-square-root" or sp.Ge(warmup, 1) == sp.true \
            or (batch is not None and batch == 1)
        return exact_per_iteration, 1 if exact_per_iteration else _batch(v, batch)
    can = batch is not None and batch_line is None
    exact_per_iteration = can and (style != "inverse-square-root" or sp.Ge(warmup / batch, 1) == sp.true)
    return exact_per_iteration, 1 / batch if exact_per_iteration else 1


def _weight_decay(v: _Values, incr_steps) -> dict:
    """``get_wd``'s arguments: one ``--weight-decay``, or the two ends of an increment style."""
    wd_style = v.choice("weight_decay_incr_style")
    if wd_style == "constant":
        start = end = v.number("weight_decay")
    else:
        start, end = v.number("start_weight_decay"), v.number("end_weight_decay")
    return {"start_wd": start, "end_wd": end, "wd_incr_steps": incr_steps, "wd_incr_style": wd_style}


def _refuse_unset(v: _Values, params: dict) -> None:
    """On the batch clock the lengths are fixed when the file compiles: a ``$NAME`` the script
    never sets cannot become a required parameter there."""
    for key, flag in v.args.flags.items():
        name = flag.ref.name.lower() if flag.ref is not None else None
        if name in params and params[name][1] is None:
            _refuse(v, key, f"with a changing batch the lengths are fixed when the file compiles, and "
                            f"${flag.ref.name} has no value in the script",
                    hint=f"write the number, or set {flag.ref.name}=... in the script (it becomes "
                         "the parameter's default)")


def _origins(v: _Values, unit: str, wd_style: str) -> dict:
    """Each argument's flag in the command line, so that an error in a value computed from
    several (``--lr-warmup-fraction -0.1`` times the decay) is reported at the flag that made it
    wrong rather than as the generated line."""
    warmup = "lr_warmup_fraction" if v.given("lr_warmup_fraction") else f"lr_warmup_{unit}"
    flags = {"init_lr": "lr_warmup_init", "max_lr": "lr", "min_lr": "min_lr", "lr_warmup_steps": warmup,
             "lr_decay_steps": f"lr_decay_{unit}" if v.given(f"lr_decay_{unit}") else f"train_{unit}",
             "wsd_decay_steps": f"lr_wsd_decay_{unit}", "wd_incr_steps": f"train_{unit}",
             "start_wd": "weight_decay" if wd_style == "constant" else "start_weight_decay",
             "end_wd": "weight_decay" if wd_style == "constant" else "end_weight_decay",
             "lr_decay_style": "lr_decay_style", "lr_wsd_decay_style": "lr_wsd_decay_style",
             "wd_incr_style": "weight_decay_incr_style"}
    return {key: v.span(flag) for key, flag in flags.items() if v.span(flag) is not None}


def _batch(v: _Values, batch):
    if batch is None:
        v.params.setdefault("global_batch_size", ("int", None, None))
        return sp.Symbol("global_batch_size", positive=True, integer=True)
    return batch


# -- output --------------------------------------------------------------------------------


def source(text: str, origin: str = "<string>", style: str = "presets", options=None) -> ir.Module:
    """``.sched`` source for Megatron-LM arguments; ``options``: ``{"megatron": "0.17" | "main"}``
    (``VERSIONS``), whose meaning the batch flags take."""
    options = dict(options or {})
    version = options.pop("megatron", None)
    if options:
        raise SchedlangError(f"megatron-args has no option '{next(iter(options))}'",
                             hint="its option is megatron=" + "|".join(VERSIONS))
    if version is not None and version not in VERSIONS:
        raise SchedlangError(f"unknown Megatron version '{version}' (--option megatron=...)",
                             hint="megatron=0.17 (megatron-core 0.17 and earlier: --rampup-batch-size ramps) "
                                  "or megatron=main (megatron-core 0.18 and later: it is ignored)")
    args = read(text, origin)
    return render(args, plan(args, version), origin, style)


def render(args: Args, p: Plan, origin: str, style: str = "presets") -> ir.Module:
    """The ``.sched`` file of a plan (``rendered``: ``resume.rules``'s, with a checkpoint's values): the
    header, the batch clock, the parameters, ``run = ...`` (after the parameters it may name,
    before the schedules), then the schedules, lowered in the core style; under a changing batch
    each is put on the sample clock (the class counts samples)."""
    params = [_param(args, name, *decl) for name, decl in sorted(p.params.items())]
    schedules = _schedules(args, p)
    if style != "presets":
        schedules = _lowered(schedules, params)
    if p.batch is not None:
        schedules = [_on_samples(s, lowered=style != "presets") for s in schedules]
    return module(_head(args, p, origin), _clock(args, p), params, _run_item(args, p), schedules)


def rendered(args: Args, p: Plan, origin: str) -> str:
    """``render``'s file as text (``resume.rules`` compiles the restored run from it)."""
    return unparse.module(render(args, p, origin))


def _head(args: Args, p: Plan, origin: str) -> list[str]:
    """The file's comment lines: where it came from, what its t counts, the notes."""
    head = [header(origin, "Megatron-LM arguments")]
    if p.batch is not None:
        head += _batch_header(args, p)
    elif p.per_iteration:
        head += ["# t counts training iterations.  Megatron's OptimizerParamScheduler counts samples",
                 "# (it steps by the global batch size each iteration); with a constant batch size the",
                 "# schedule per iteration is exactly this one, every length divided by the batch size."]
    else:
        head += ["# t counts samples, as Megatron's OptimizerParamScheduler does: iteration i runs at",
                 "# t = i * global batch size."]
    head += ["# Weight decay: Megatron multiplies it by each param group's wd_mult (0 for biases and norms)."]
    if p.decoupled is not None:
        head += [f"# lr__{DECOUPLED}: the embedding and output layers (--decoupled-lr): their param",
                 "# group's own max_lr and min_lr (megatron-core's ParamGroupOverride), the rest shared."]
    return head + [f"# note: {comment_safe(n)}" for n in p.notes]


def _clock(args: Args, p: Plan) -> list[ir.Node]:
    """``param seq_len`` (tokens per sample) and ``batch = ...`` of a run whose batch changes."""
    clock = []
    if p.seq_len is not None:
        at = _at(args, "seq_length")
        clock.append(param_stmt("seq_len", "int", number(p.seq_len, at), span=at))
    if p.batch is not None:
        clock.append(batch_stmt(p.batch, _at(args, "step_batch_size_schedule", "rampup_batch_size")))
    return clock


def _run_item(args: Args, p: Plan) -> list:
    """``run = ...`` with the comment saying how Megatron-LM counts it, or nothing."""
    if p.run is None:
        return []
    value, why = p.run
    return [noted(run_stmt(value, _at(args, "train_iters", "train_samples")), why)]


def _schedules(args: Args, p: Plan) -> list[ir.ScheduleDecl]:
    """``schedule lr`` (and ``lr__decoupled``: Megatron's get_lr reads max_lr and min_lr from each
    group) and ``schedule weight_decay``, as the preset calls of the plan's arguments."""
    at = _at(args, "lr")
    lr_call = call("megatron.OptimizerParamScheduler", span=at, **_kwargs(p.kwargs, p.spans, at))
    schedules = [schedule_stmt("lr", lr_call, at)]
    if p.decoupled is not None:
        own = (("max_lr", "decoupled_lr"), ("min_lr", "decoupled_min_lr"))
        spans = {**p.spans, **{arg: args.flags[flag].span for arg, flag in own if flag in args.flags}}
        at = _at(args, "decoupled_lr")
        schedules.append(schedule_stmt(f"lr__{DECOUPLED}", call("megatron.OptimizerParamScheduler", span=at,
                                                                **_kwargs(p.decoupled, spans, at)), at))
    at = _at(args, "weight_decay_incr_style", "weight_decay")
    wd_call = call("megatron.OptimizerParamScheduler.get_wd", span=at,
                   **_kwargs(p.wd, p.spans, at or _at(args, "lr")))
    schedules.append(schedule_stmt("weight_decay", wd_call, at))
    return schedules


def _lowered(schedules: list[ir.ScheduleDecl], params: list[ir.Param]) -> list[ir.ScheduleDecl]:
    """The core style: each schedule lowered (under its parameters), at its preset's span."""
    spans = {s.name: s.span for s in schedules}
    return [replace(s, span=spans[s.name]) for s in lowered_schedules(module(params, schedules))]


def _on_samples(stmt: ir.ScheduleDecl, lowered: bool) -> ir.ScheduleDecl:
    """A schedule put on the sample clock: its value wrapped in ``on_samples(...)``; a lowered
    constant (no ``t`` in it) stays as it is."""
    if lowered and not any(isinstance(n, ir.Name) and n.id == "t" for n in ir.walk(stmt.value)):
        return stmt
    at = stmt.value.span
    return replace(stmt, value=ir.Call(at, ir.Name(at, "on_samples"), (stmt.value,), ()))


def _at(args: Args, *keys: str) -> Span | None:
    """The span of the first of ``keys`` the flags give (what a statement is read from)."""
    return next((args.flags[key].span for key in keys if key in args.flags), None)


def _batch_header(args: Args, p: Plan) -> list[str]:
    head = ["# t counts optimizer steps (iterations).  Megatron's OptimizerParamScheduler counts samples:",
            "# each iteration steps it by that iteration's batch, which changes with the samples consumed",
            "# (`batch = ...`, Megatron's own table).  So the schedule is on_samples(...): update k uses the",
            "# class at the samples consumed before it, with every length in samples as Megatron passes it."]
    if "step_batch_size_schedule" in args.flags:
        head += ["# --step-batch-size-schedule: Megatron-LM main (megatron-core 0.18 and later); its",
                 "# thresholds are tokens // --seq-length when --seq-length is given (floor, as Megatron),",
                 "# else samples."]
    else:
        head += ["# --rampup-batch-size: megatron-core 0.17 and earlier (its float division included).",
                 "# megatron-core 0.18 and later (Megatron-LM main) accept the flag and IGNORE it (a",
                 "# constant --global-batch-size): import with --option megatron=main for that run."]
    return head


def _param(args: Args, name: str, type_: str, default: str | None, minimum) -> ir.Param:
    """``param NAME: TYPE [= DEFAULT] where NAME > 0`` (``>= 0`` for a warmup), at the flag whose
    ``$VAR`` it is."""
    refs = [key for key, flag in args.flags.items() if flag.ref is not None
            and name in (flag.ref.name.lower(), flag.ref.name.lower() + "_")]
    at = _at(args, *refs)
    shown = None if default is None else number(exact(default), at)
    where = formula("NAME >= 0" if minimum == 0 else "NAME > 0", at, NAME=computed(sp.Symbol(name), at))
    return param_stmt(name, type_, shown, where, at)


def _kwargs(kwargs: dict, spans: dict, at: Span | None) -> dict[str, ir.Node]:
    """The class's keywords as nodes, each at the flag its value is read or computed from
    (``spans``; ``at``, the statement's flag, for a default): an error the lowering raises at a
    value lands on its flag by construction."""
    return {key: string(value, spans.get(key, at)) if isinstance(value, str)
            else computed(value, spans.get(key, at)) for key, value in kwargs.items()}


# -- the writer's view of a command (``export --into``) ----------------------------------------------


def understood(text: str, filename: str) -> tuple[Args, Plan, int | None]:
    """A command's flags, their plan and its constant ``--global-batch-size`` (None if not a
    plain number): what the writer (``megatron_export``) needs to write for that run."""
    args = read(text, filename)
    p = plan(args)
    batch = _Values(args).number("global_batch_size") if "global_batch_size" in args.flags else None
    return args, p, int(batch) if batch is not None and batch.is_Integer else None


def _writer(source, filename="<string>", params=None, verify=True, schedules=None, *, read, into=None) -> str:
    """``megatron_export.export``, handed ``understood`` (the writer imports no reader)."""
    return export(source, filename, params, verify, schedules, read=read, into=into, understand=understood)


# -- the declaration (``formats/__init__.py`` lists this module) ----------------------------------


#: The launcher or flags that say a command line is Megatron-LM's.
_LAUNCH = re.compile(r"\bpretrain_\w+\.py\b|--(?:lr-decay-style|lr-warmup-(?:iters|fraction|samples|init)"
                     r"|lr-decay-(?:iters|samples)|lr-wsd-decay-(?:style|iters|samples)|train-iters"
                     r"|train-samples|min-lr|global-batch-size|weight-decay-incr-style)\b")
#: A YAML of ``--flag:`` keys.
_YAML_FLAGS = re.compile(r"^[ \t]*['\"]?--?(?:lr-decay-style|lr|train-iters|lr-warmup-\w+|min-lr)"
                         r"['\"]?[ \t]*:", re.MULTILINE)


def recognizes(text: str, suffix: str) -> bool:
    """Megatron's flags as YAML keys, or on a command line its launcher or flags."""
    if suffix in YAML:
        return bool(_YAML_FLAGS.search(text))
    return bool(_LAUNCH.search(text) or _YAML_FLAGS.search(text))


FORMAT = Format("megatron-args",
                "Megatron-LM arguments: a pretrain_*.py command line or script, or YAML of --flag: keys",
                (*SHELL, *YAML), recognizes, reader("megatron-args", None, source, takes_options=True),
                _writer,
                schedule_flags=re.compile(r"--(?:lr|min-lr|lr-decay-style|train-iters|train-samples"
                                          r"|lr-warmup-\w+)\b"))
