"""HF ``TrainingArguments`` (JSON or YAML) -> ``.sched`` source.

The Trainer builds its scheduler as
``get_scheduler(lr_scheduler_type, optimizer, num_warmup_steps=args.get_warmup_steps(N),
num_training_steps=N, scheduler_specific_kwargs=args.lr_scheduler_kwargs)``
(transformers 5.23), so the import reads exactly those fields:

* ``lr_scheduler_type`` (default ``linear``) names the ``hf.*`` preset; ``learning_rate``
  (default ``5e-05``) is its ``lr=``;
* ``lr_scheduler_kwargs``, a mapping or a JSON string (``'{"min_lr_rate": 0.1}'``), become
  the preset's keywords (``constant_with_warmup`` and ``constant`` ignore them, as HF does,
  with a warning);
* ``N`` is ``max_steps`` when it is positive, else ``ceil(num_train_epochs *
  steps_per_epoch)`` with a required ``param steps_per_epoch`` (the Trainer's
  ``max(1, ceil(len(train_dataloader) / gradient_accumulation_steps))``);
* warmup: ``warmup_steps >= 1`` is ``int(warmup_steps)`` steps (truncated, v5);
  ``0 < warmup_steps < 1`` is a ratio (v5) and otherwise ``warmup_ratio`` (v4, which
  v5 dropped) is: both become the presets' ``warmup_ratio=``, ``ceil(ratio * N)``.
  With both (v4) ``warmup_steps`` wins and ``warmup_ratio`` is ignored with a warning.

JSON is read by the same safe YAML reader (JSON is YAML), so every error points at
its line and column.  Nothing is executed.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import sympy as sp

from ..codegen.sched import sched_text
from ..errors import SchedlangError, Span, did_you_mean, warn
from ..library.presets import PRESETS, Rejected
from ..library.stdlib import Kind
from ..syntax import ir
from .common.by_proof import every
from .common.format import YAML, Format, reader
from .common.into import document, dumped
from .common.json_source import load as load_json
from .common.keys import yaml_keys
from .common.numbers import exact
from .common.preset_call import PresetCall, json_number
from .common.proof import proven
from .common.source_text import PARAMETERS, declared, expression_node, header
from .common.statements import (
    call,
    formula,
    let_stmt,
    module,
    noted,
    number,
    param_stmt,
    run_stmt,
    schedule_stmt,
    string,
)
from .common.symbols import Symbol, Symbols
from .common.yaml_source import Node
from .common.yaml_source import load as load_yaml
from .core_text import core_module
from .hf_script import recognizes as script_recognizes
from .hf_script import training_arguments

#: TrainingArguments' defaults for the fields the schedule depends on (transformers 5.23).
DEFAULTS = {"lr_scheduler_type": "linear", "learning_rate": sp.Rational(5, 100000),
            "warmup_steps": sp.Integer(0), "warmup_ratio": sp.Integer(0), "max_steps": sp.Integer(-1),
            "num_train_epochs": sp.Integer(3)}
#: Keywords the Trainer fills itself: not allowed in lr_scheduler_kwargs.
_FILLED = ("lr", "num_warmup_steps", "num_training_steps", "warmup_ratio")
#: Types whose kwargs ``get_scheduler`` does not pass on.
_IGNORES_KWARGS = ("constant", "constant_with_warmup")


@dataclass
class Imported:
    kind: str
    lr: sp.Expr | Symbol  # a Symbol: computed from a script's argparse options
    total: sp.Expr | None = None          # max_steps, or None: from epochs
    epochs: sp.Expr | None = None
    warmup_steps: sp.Expr | None = None   # whole steps
    warmup_ratio: sp.Expr | None = None
    kwargs: dict = field(default_factory=dict)
    span: Span | None = None
    #: Where each value was read: a field's value span by its name (``warmup``: the field the warmup
    #: came from), a kwarg's by its key; what is not there is at ``span`` (a default).
    spans: dict = field(default_factory=dict)
    #: The script's parameters its values may be computed from (``symbols.Symbols``); None for data.
    symbols: Symbols | None = None

    def at(self, name: str) -> Span | None:
        return self.spans.get(name, self.span)


def read(text: str, filename: str = "<string>") -> Imported:
    if filename.endswith(".py"):  # TrainingArguments(...) called in a training script, never run
        return imported(training_arguments(text, filename))
    root = load_json(text, filename) if _is_json(text, filename) else load_yaml(text, filename)
    if not root.is_mapping:
        raise SchedlangError("expected TrainingArguments as a mapping (JSON object or YAML)", root.span)
    return imported(root)


def imported(root: Node) -> Imported:
    """The schedule fields of TrainingArguments given as a mapping (a file's, or the keywords of a
    script's ``TrainingArguments(...)`` call): the one reading of those fields."""
    fields = root.value
    kind_node = fields.get("lr_scheduler_type")
    kind = DEFAULTS["lr_scheduler_type"] if kind_node is None else str(kind_node.value)
    kind = kind.removeprefix("SchedulerType.").lower()
    span = kind_node.span if kind_node is not None else root.span
    preset = PRESETS.get(f"hf.{kind}")
    if isinstance(preset, Rejected):
        raise SchedlangError(f"lr_scheduler_type '{kind}' cannot be imported", span, hint=preset.reason)
    if preset is None:
        known = [n.split(".", 1)[1] for n in PRESETS if n.startswith("hf.")]
        raise SchedlangError(f"unknown lr_scheduler_type '{kind}'", span,
                             hint=did_you_mean(kind, known) or "one of " + ", ".join(known))
    found = Imported(kind, _number(fields, "learning_rate", carried=True), span=span, symbols=root.symbols,
                     spans={k: v.span for k, v in fields.items() if k in DEFAULTS})
    max_steps = _number(fields, "max_steps")
    if max_steps > 0:
        found.total = _whole(fields, "max_steps", max_steps)
    else:
        found.epochs = _number(fields, "num_train_epochs")
        if found.epochs <= 0:
            where = fields["num_train_epochs"].span if "num_train_epochs" in fields else root.span
            raise SchedlangError("num_train_epochs must be positive when max_steps is not set", where)
    _warmup(found, fields)
    found.kwargs = _kwargs(fields.get("lr_scheduler_kwargs"), preset, kind, found.spans)
    return found


def _number(fields: dict, name: str, carried: bool = False) -> sp.Expr | Symbol:
    """A field's exact value (its default when not given); with ``carried``, a value a script
    computes from its argparse options stays that expression (``common/symbols.py``)."""
    node = fields.get(name)
    if node is None or node.value is None:
        return DEFAULTS[name]
    if carried and isinstance(node.value, Symbol):
        return node.value
    value = exact(node.value)
    if value is None:
        raise SchedlangError(f"'{name}' must be a number, not {node.value!r}", node.span)
    return value


def _whole(fields: dict, name: str, value: sp.Expr) -> sp.Expr:
    if not value.is_integer:
        raise SchedlangError(f"'{name}' must be a whole number", fields[name].span)
    return value


def _warmup(found: Imported, fields: dict) -> None:
    steps = _number(fields, "warmup_steps")
    ratio = _number(fields, "warmup_ratio")
    if steps < 0 or ratio < 0:
        name = "warmup_steps" if steps < 0 else "warmup_ratio"
        raise SchedlangError(f"'{name}' must be >= 0", fields[name].span)
    if steps > 0 or ratio > 0:
        found.spans["warmup"] = fields["warmup_steps" if steps > 0 else "warmup_ratio"].span
    if steps >= 1:
        found.warmup_steps = sp.Integer(math.floor(steps))  # int(): 10.7 -> 10
        if ratio > 0:
            warn("warmup_ratio is ignored: warmup_steps is set (transformers 4 gave warmup_steps "
                 "priority; 5 has no warmup_ratio)", fields["warmup_ratio"].span)
    elif steps > 0:
        found.warmup_ratio = steps  # v5: a float below 1 is a ratio of the training steps
        if ratio > 0:
            warn("warmup_ratio is ignored: warmup_steps below 1 is already a ratio",
                 fields["warmup_ratio"].span)
    elif ratio > 0:
        if ratio >= 1:
            raise SchedlangError("warmup_ratio must be below 1", fields["warmup_ratio"].span)
        found.warmup_ratio = ratio


def _is_json(text: str, filename: str) -> bool:
    """A ``.json`` file, or text that starts as a JSON object does (``{"``): read by the JSON parser
    (YAML refuses the tabs of a tab-indented JSON file)."""
    return str(filename).lower().endswith(".json") or text.lstrip("\ufeff \t\r\n").startswith('{"')


def _given_kwargs(node: Node) -> tuple[dict, dict]:
    """``lr_scheduler_kwargs`` as given (a mapping, or a JSON string as on the command line) and
    the span of each key."""
    if isinstance(node.value, str):
        try:  # bounded like any JSON file: depth, digits, surrogates
            given = load_json(node.value, "lr_scheduler_kwargs").plain()
        except SchedlangError as exc:
            raise SchedlangError(f"lr_scheduler_kwargs is not valid JSON: {exc.message}", node.span,
                                 hint=exc.hint) from None
        if not isinstance(given, dict):
            raise SchedlangError("lr_scheduler_kwargs must be a JSON object", node.span)
        return given, {k: node.span for k in given}
    if node.is_mapping:
        return {k: v.value for k, v in node.value.items()}, node.key_spans
    raise SchedlangError("lr_scheduler_kwargs must be a mapping or a JSON string", node.span)


def _kwargs(node: Node | None, preset, kind: str, at: dict) -> dict:
    """The preset's keywords ``lr_scheduler_kwargs`` gives (each key's span into ``at``)."""
    if node is None or node.value is None or node.value == {} or node.value == "":
        return {}
    given, spans = _given_kwargs(node)
    if kind in _IGNORES_KWARGS:
        warn(f"lr_scheduler_kwargs is ignored: get_scheduler does not pass it to '{kind}'", node.span)
        return {}
    spec = {a.name: a for a in preset.args if a.name not in _FILLED}
    values = {k: v.span for k, v in node.value.items()} if node.is_mapping else spans  # where each is
    out = {}
    for key, value in given.items():
        if key not in spec:
            raise SchedlangError(f"'{kind}' takes no argument '{key}'", spans[key],
                                 hint=did_you_mean(key, spec) or "its arguments: " + ", ".join(spec)
                                 if spec else f"'{kind}' takes none (HF raises TypeError)")
        arg = spec[key]
        if arg.kind == Kind.OPTION:
            if value not in arg.choices:
                raise SchedlangError(f"'{value}' is not a valid {key}", spans[key],
                                     hint="one of " + ", ".join(arg.choices))
            out[key], at[key] = value, values[key]
            continue
        number = exact(value)
        if number is None:
            raise SchedlangError(f"'{key}' must be a number, not {value!r}", spans[key])
        out[key], at[key] = number, values[key]
    return out


# -- the .sched tree: each value a node at its span in the arguments ----------------------------


def source(found: Imported, origin: str, style: str = "presets") -> ir.Module:
    what = "HF TrainingArguments built in a Python script, followed, never run" if origin.endswith(".py") \
        else "HF TrainingArguments"
    items = [header(origin, what),
             "# Step t = 0 is the first optimizer update (the Trainer steps the scheduler after it)."]
    lr = _lr(found)  # before the declarations: it records the parameters it reads
    params, decls = declared(found.symbols)
    if params:
        items.append(PARAMETERS)
    items.extend(decls)
    if found.total is None:
        items.append(noted(param_stmt("steps_per_epoch", "int", where="steps_per_epoch > 0"),
                           "ceil(len(train_dataloader) / gradient_accumulation_steps)"))
        epochs = found.at("num_train_epochs")
        items.append(noted(let_stmt("num_training_steps", formula(
            "ceil(EPOCHS * steps_per_epoch)", epochs, EPOCHS=number(found.epochs, epochs))),
            f"num_train_epochs: {sched_text(found.epochs)}"))
        total = ir.Name(epochs, "num_training_steps")
    else:
        total = number(found.total, found.at("max_steps"))
    counted = "max_steps" if found.total is not None else "ceil(num_train_epochs * steps_per_epoch)"
    items.append(noted(run_stmt(total), f"the Trainer's optimizer updates: {counted}"))
    if found.warmup_ratio is not None:
        if found.total is not None:
            items.append(f"# warmup: ceil({sched_text(found.warmup_ratio)} * {sched_text(found.total)}) "
                         "steps, as the Trainer computes it (in float64)")
    if style != "presets" and (found.kind not in _CORE_KINDS or decls):
        # No standard-library spelling: the preset's own formula, written by the one core printer.
        preset = module(items, schedule_stmt("lr", _preset(found, total, lr), found.span))
        return core_module(preset, [i for i in items if isinstance(i, str)],
                           [i for i in items if not isinstance(i, str)])
    body = _preset(found, total, lr) if style == "presets" else _core(found, total, lr)
    return module(items, schedule_stmt("lr", body, found.span))


def _lr(found: Imported) -> ir.Node:
    """``learning_rate`` at its field: a number, or the expression of the script's options."""
    at = found.at("learning_rate")
    if isinstance(found.lr, Symbol):
        return expression_node(found.lr, at, "learning_rate")
    return number(found.lr, at)


def _preset(found: Imported, total: ir.Node, lr: ir.Node) -> ir.Call:
    """``hf.KIND(lr=..., ...)``, each keyword at the field (or kwarg) it was read from."""
    given = {"lr": lr}
    if found.kind != "constant":
        if found.warmup_steps is not None:
            given["num_warmup_steps"] = number(found.warmup_steps, found.at("warmup"))
        given["num_training_steps"] = total
        if found.warmup_ratio is not None:
            given["warmup_ratio"] = number(found.warmup_ratio, found.at("warmup"))
    for key, value in found.kwargs.items():
        given[key] = string(value, found.at(key)) if isinstance(value, str) else number(value, found.at(key))
    return call(f"hf.{found.kind}", span=found.span, **given)


_CORE_KINDS = ("constant", "constant_with_warmup", "linear", "cosine", "polynomial", "cosine_with_min_lr",
               "inverse_sqrt")
#: HF's cosine over ``REST`` steps, ``CYCLES`` half-cycles, not clamped: it rises again.
_WAVE = "(1 + cos(2 * pi * CYCLES * t / max(1, REST))) / 2"
#: The decay after the warmup of each core kind, over ``REST`` steps: HF's formula, its values named.
_DECAYS = {"constant_with_warmup": "constant(LR)", "linear": "linear(LR, 0, REST)",
           "cosine": f"LR * {_WAVE}", "polynomial": "poly(LR, END, REST, power=POWER)",
           "cosine_with_min_lr": f"LR * max(0, {_WAVE} * (1 - RATE) + RATE)",
           "inverse_sqrt": "LR / sqrt((t + SCALE) / SCALE)"}


def _core(found: Imported, total: ir.Node, lr: ir.Node) -> ir.Node:
    """Standard-library calls: ``warmup(linear, W) >> <the decay>`` (HF's ``t / max(1, W)``), each
    value a node at the field it came from."""
    kind, kw, where = found.kind, found.kwargs, found.span
    if kind not in _CORE_KINDS:
        raise SchedlangError(f"'{kind}' has no core-style import yet", found.span,
                             hint="import without --lower: the hf.* preset is exact")
    if kind == "constant":
        return formula("constant(LR)", where, LR=lr)
    warm = _warmup_steps(found, total)
    rest = formula("TOTAL - WARM", total.span, TOTAL=total, WARM=warm or number(0, where))  # the steps
    values = {"LR": lr, "REST": rest}
    if kind in ("cosine", "cosine_with_min_lr"):
        values["CYCLES"] = _kwarg(found, "num_cycles", sp.Rational(1, 2))
    if kind == "polynomial":
        values["END"] = _kwarg(found, "lr_end", sp.Rational(1, 10**7))
        values["POWER"] = _kwarg(found, "power", sp.Integer(1))
    if kind == "cosine_with_min_lr":
        values["RATE"] = _kwarg(found, "min_lr_rate", None) if "min_lr_rate" in kw \
            else number(kw["min_lr"] / found.lr, found.at("min_lr"))
    if kind == "inverse_sqrt":
        values["SCALE"] = _kwarg(found, "timescale", None) if kw.get("timescale") is not None \
            else warm or number(10000, where)
    decay = formula(_DECAYS[kind], where, **values)
    return decay if warm is None else ir.Seq(where, formula("warmup(linear, WARM)", where, WARM=warm), decay)


def _warmup_steps(found: Imported, total: ir.Node) -> ir.Node | None:
    """The warmup's length as the Trainer computes it (``ceil(ratio * N)``, at the warmup's field);
    None for none."""
    at = found.at("warmup")
    if found.warmup_ratio is not None:
        if found.total is not None:
            return number(math.ceil(float(found.total) * float(found.warmup_ratio)), at)
        return formula("ceil(RATIO * TOTAL)", at, RATIO=number(found.warmup_ratio, at), TOTAL=total)
    return number(found.warmup_steps, at) if found.warmup_steps is not None else None


def _kwarg(found: Imported, key: str, default) -> ir.Node:
    """An ``lr_scheduler_kwargs`` value at its key (HF's default, at the scheduler type, without)."""
    if key in found.kwargs:
        return number(found.kwargs[key], found.at(key))
    return number(default, found.span)

# -- the writer (``schedlang export --format hf-args``) ------------------------------------------


def export(source, filename="<string>", params=None, verify=True, schedules=None, *, read,
           into=None) -> str:
    """TrainingArguments JSON: ``lr_scheduler_type``, ``learning_rate``, ``warmup_steps``,
    ``max_steps`` and ``lr_scheduler_kwargs`` (v5 spelling: a ratio is ``warmup_steps < 1``).

    ``into`` (the arguments the file came from): the output is that document with these keys
    set and the other schedule keys of ``OWNED`` removed (a ``warmup_ratio`` or ``lr_scheduler_kwargs``
    left there would change the schedule), proven so; without it the keys alone, proven on
    TrainingArguments' defaults for every other field."""
    call = PresetCall(source, filename, params, "hf-args", "hf.cosine(lr=2e-5, num_warmup_steps=100, "
                                                           "num_training_steps=1000)", writes=every("hf"))
    kind = call.name.split(".", 1)[1]
    out: dict = {"lr_scheduler_type": kind}
    out["learning_rate"] = json_number(call.number("lr")) if "lr" in call.given else 1
    kwargs = _arguments(call, out)
    _run(call, out)
    if "max_steps" not in out and kind != "constant":
        if kind in ("constant_with_warmup", "inverse_sqrt") and "warmup_ratio" not in call.given:
            out["max_steps"] = 1  # unused by these types, but the Trainer needs a run length
        else:
            raise SchedlangError("HF needs num_training_steps (max_steps) for this type", call.node.span)
    if kwargs:
        if kind == "constant_with_warmup":
            raise SchedlangError("get_scheduler passes no kwargs to constant_with_warmup", call.node.span)
        out["lr_scheduler_kwargs"] = kwargs
    if into is not None:
        merged = {k: v for k, v in document(into).items() if k not in OWNED}
        merged.update(out)
        text = dumped(into, merged)
    else:
        text = json.dumps(out, indent=2) + "\n"
    if verify:
        proven(call.program, text, read, into.filename if into is not None else filename, params=params,
               schedules=["lr"], into=into.filename if into is not None else None)
    return text


def _run(call: PresetCall, out: dict) -> None:
    """The file's ``run`` as ``max_steps``: the Trainer trains ``max_steps`` updates and passes that
    same number to the scheduler as ``num_training_steps``, so a run of another length than the
    schedule's ``num_training_steps`` cannot be said in TrainingArguments."""
    run = call.run()
    if run is None:
        return
    if "max_steps" in out and out["max_steps"] != run:
        raise SchedlangError(f"the run is {run} steps but num_training_steps is {out['max_steps']}: the HF "
                             "Trainer trains max_steps updates and gives the scheduler that same number",
                             call.program.run_length.span,
                             hint=f"make them equal (num_training_steps={run}), or drop `run = ...` to "
                                  "export the schedule alone")
    out["max_steps"] = run


#: The TrainingArguments fields of the schedule: the export states it in full, so the original's
#: own value of any it does not write is removed (TrainingArguments' default applies).
OWNED = ("lr_scheduler_type", "learning_rate", "warmup_steps", "warmup_ratio", "max_steps",
         "lr_scheduler_kwargs")


def _arguments(call: PresetCall, out: dict) -> dict:
    """The call's keywords as TrainingArguments fields (into ``out``, in the call's order) and, the
    rest, as ``lr_scheduler_kwargs`` (returned)."""
    kwargs = {}
    for name, node in call.given.items():
        if name == "lr":
            continue
        if name == "num_training_steps":
            out["max_steps"] = json_number(call.number(name))
        elif name == "num_warmup_steps":
            steps = call.number(name)
            if steps != 0:
                out["warmup_steps"] = json_number(steps)
        elif name == "warmup_ratio":
            out["warmup_steps"] = json_number(call.number(name))
        elif isinstance(node, ir.String):
            kwargs[name] = node.value
        else:
            kwargs[name] = json_number(call.number(name))
    return kwargs


# -- the declaration (``formats/__init__.py`` lists this module) ----------------------------------


def recognizes(text: str, suffix: str) -> bool:
    """TrainingArguments as YAML (alignment-handbook recipes) name their ``lr_scheduler_type``; a
    JSON file no other format recognizes is TrainingArguments (the JSON fallback); a ``.py``
    script calls ``TrainingArguments(...)`` (or parses them, ``hf_script``)."""
    if suffix == ".py":
        return script_recognizes(text)
    return suffix in YAML and "lr_scheduler_type" in yaml_keys(text)[0]


FORMAT = Format("hf-args", "HF TrainingArguments as JSON or YAML (lr_scheduler_type, warmup_steps), or "
                "TrainingArguments(...) in a .py script", (".json", *YAML, ".py"), recognizes,
                reader("hf-args", read, source), export, fallback=(".json",))
