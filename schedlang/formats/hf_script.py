"""HF ``TrainingArguments(...)`` called in a training script, followed over ``ast``, never run.

The script is read by the one Python reader (``pyconfig.literal.Module``, a training script:
``main()`` followed, argparse defaults as parameters, ``@dataclass`` options read by attribute).
What it finds is the mapping of fields ``hf_args.imported`` reads from a JSON or YAML file, so
the fields mean the same in all three (one place: ``hf_args``):

* the ``TrainingArguments`` the ``Trainer(...)`` is given (``args=`` or its second positional
  argument), else the one the script builds (``Seq2SeqTrainingArguments`` and TRL's
  ``SFTConfig`` too: their scheduler fields are ``TrainingArguments``', and ``SFTConfig``'s
  ``learning_rate`` defaults to ``2e-5``, TRL 0.2x);
* keyword values, ``**dict`` and values computed from argparse options (``learning_rate=args.lr``
  stays a parameter of the imported file; a field the import decides on, ``max_steps``, warmup,
  the type, is read at its default and freezes its flag, ``common/symbols.py``);
* ``Trainer(..., optimizers=(optimizer, scheduler))``: a scheduler given there replaces the one
  the arguments name, so the script is refused at it; an optimizer given with ``None`` keeps the
  arguments' schedule on that optimizer's own ``lr``, which the script's ``torch.optim`` call
  says (``lr=``).

A script whose arguments come from the command line (``HfArgumentParser(...).parse_args_into_
dataclasses()``, TRL's ``TrlParser.parse_args_and_config()``, the shape of ``run_clm.py`` and
TRL's ``sft.py``) is refused at that call: the values are in the command line or its config
file, which ``--format hf-args`` reads.
"""

from __future__ import annotations

import ast
import re

from ..errors import SchedlangError, Span
from .common.pyconfig.literal import Call, Imported, Item, Module, Unread, ended_before, to_node, unfollowed
from .common.yaml_source import Node

#: The argument classes read, and the defaults of theirs that differ from TrainingArguments'.
ARGUMENTS = {"TrainingArguments": {}, "Seq2SeqTrainingArguments": {}, "SFTConfig": {"learning_rate": 2e-5}}
#: The libraries they come from (``transformers``, ``trl`` and their submodules).
LIBRARIES = ("transformers", "trl")
#: The fields ``hf_args.imported`` reads: any other keyword is never read (an f-string
#: ``output_dir=`` is no matter).
FIELDS = ("lr_scheduler_type", "learning_rate", "warmup_steps", "warmup_ratio", "max_steps",
          "num_train_epochs", "lr_scheduler_kwargs")
#: The one field an import keeps as an expression of the script's parameters.
CARRIED = ("learning_rate",)
#: The calls that read TrainingArguments from the command line or a config file.
PARSERS = ("parse_args_into_dataclasses", "parse_args_and_config", "parse_json_file", "parse_yaml_file",
           "parse_dict")
#: transformers' scheduler functions: the ``lr_scheduler_type`` each builds and its parameters
#: after the optimizer, in order (transformers 5.x; ``last_epoch`` is a resume, not read).
SCHEDULERS = {
    "get_linear_schedule_with_warmup": ("linear", ("num_warmup_steps", "num_training_steps")),
    "get_cosine_schedule_with_warmup": ("cosine", ("num_warmup_steps", "num_training_steps", "num_cycles")),
    "get_cosine_with_hard_restarts_schedule_with_warmup": (
        "cosine_with_restarts", ("num_warmup_steps", "num_training_steps", "num_cycles")),
    "get_polynomial_decay_schedule_with_warmup": (
        "polynomial", ("num_warmup_steps", "num_training_steps", "lr_end", "power")),
    "get_constant_schedule": ("constant", ()),
    "get_constant_schedule_with_warmup": ("constant_with_warmup", ("num_warmup_steps",)),
    "get_inverse_sqrt_schedule": ("inverse_sqrt", ("num_warmup_steps", "timescale")),
}
#: Recognised in a script: the argument classes, the HF argument parsers, the scheduler functions.
_CALLED = [*ARGUMENTS, *SCHEDULERS, "HfArgumentParser", "TrlParser", "get_scheduler"]
CALLS = re.compile(r"\b(" + "|".join(_CALLED) + r")\s*\(")


def _library(path: str) -> bool:
    return path.split(".")[0] in LIBRARIES


def _arguments(path: str) -> bool:
    return _library(path) and path.rsplit(".", 1)[-1] in ARGUMENTS


def _trainer(path: str) -> bool:
    return _library(path) and path.rsplit(".", 1)[-1].endswith("Trainer")


def _scheduler(path: str) -> bool:
    return _library(path) and path.rsplit(".", 1)[-1] in (*SCHEDULERS, "get_scheduler")


def _optimizer(path: str) -> bool:
    return path.startswith("torch.optim.") and path.rsplit(".", 1)[-1][:1].isupper() \
        and ".lr_scheduler." not in path


def training_arguments(text: str, filename: str) -> Node:
    """The fields of the ``TrainingArguments`` the script trains with, as a mapping ``Node``
    (keys spanned at the keywords), for ``hf_args.imported``."""
    module = Module(text, filename, lambda p: _arguments(p) or _trainer(p) or _optimizer(p) or _scheduler(p),
                    script=True, lazy_calls=True)
    try:
        root = _chosen(module)
    except SchedlangError:
        _parsed(module)  # arguments the script parses from its command line: refused at that call
        raise
    root.symbols = module.symbols
    return root


def _chosen(module: Module) -> Node:
    built = [(item, node, path) for item, node, path in module.calls if _arguments(path)]
    trainers = [(item, node) for item, node, path in module.calls if _trainer(path)]
    schedulers = [(item, node) for item, node, path in module.calls if _scheduler(path)]
    chosen, lr = None, None
    own = isinstance(_given_scheduler(trainers[0][0]), Call) if trainers else bool(schedulers and not built)
    if own:
        # the Trainer's optimizers=(optimizer, get_cosine_schedule_with_warmup(...)), or a training
        # loop's own scheduler: that call is the schedule
        if len(trainers) > 1 or not trainers and len(schedulers) > 1:
            where = trainers[1][1] if len(trainers) > 1 else schedulers[1][1]
            raise SchedlangError("this file builds more than one HF scheduler or Trainer; one is imported",
                                 module.span(where), hint="keep the one to import in the file")
        made = _given_scheduler(trainers[0][0]) if trainers else schedulers[0][0].value
        return _scheduler_fields(module, made)
    if trainers:
        if len(trainers) > 1:
            raise SchedlangError(f"this file builds {len(trainers)} Trainers (lines "
                                 f"{', '.join(str(n.lineno) for _, n in trainers)}); one is imported",
                                 module.span(trainers[1][1]), hint="keep the one to import in the file")
        trainer = trainers[0][0].value
        lr = _override(module, trainer)
        given = trainer.kwargs.get("args", trainer.args[1] if len(trainer.args) > 1 else None)
        if given is None:
            raise SchedlangError(f"{trainer.name}(...) is given no args=: it trains with "
                                 "TrainingArguments' defaults", trainer.span,
                                 hint="pass args=TrainingArguments(...) (the defaults: linear, "
                                      "learning_rate=5e-05, 3 epochs)")
        chosen = given.value
        if not isinstance(chosen, Call) or not _arguments(chosen.path):
            raise SchedlangError(f"the args= of {trainer.name}(...) is not a TrainingArguments(...) this "
                                 "file builds", given.span,
                                 hint="build it with TrainingArguments(...) in the file")
    else:
        if not built:
            _no_arguments(module)
        if len(built) > 1:
            raise SchedlangError(f"this file builds {len(built)} TrainingArguments (lines "
                                 f"{', '.join(str(n.lineno) for _, n, _ in built)}); one is imported",
                                 module.span(built[1][1]), hint="keep the one to import in the file")
        chosen = built[0][0].value  # an Unread is its error here
    module.check_untainted(Item(chosen, chosen.span))
    return _fields(chosen, lr)


def _fields(call: Call, lr: Item | None) -> Node:
    if call.args:
        raise SchedlangError(f"{call.name} takes its fields as keywords here", call.args[0].span,
                             hint="output_dir is its first field: write output_dir=..., learning_rate=...")
    head = Span(call.span.source, call.span.line, call.span.column, call.span.line, call.span.column + 1)
    defaults = ARGUMENTS[call.name]
    fields, keys = {}, {}
    for name in FIELDS:
        item = call.kwargs.get(name)
        if name == "learning_rate" and lr is not None:
            item = lr  # the optimizer given to the Trainer: its own lr is scheduled
        elif item is None and name in defaults:
            item = Item(defaults[name], head)
        if item is None:
            continue
        if isinstance(item, Unread):
            raise item.error
        if isinstance(item.raw, Imported) and item.raw.path.split(".")[-2:-1] == ["SchedulerType"]:
            item = Item(item.raw.path.rsplit(".", 1)[-1].lower(), item.span)  # SchedulerType.COSINE
        if name not in CARRIED:
            item = Item(item.value, item.span, item.keys, item.frozen)  # read: its flags frozen
        fields[name] = to_node(item, name)
        keys[name] = call.keys.get(name, item.span)
    return Node(fields, call.span, keys)


def _given_scheduler(trainer: Item):
    """The scheduler of a ``Trainer(..., optimizers=(optimizer, scheduler))`` when it is an HF
    scheduler function's call this file makes, else None."""
    if isinstance(trainer, Unread):
        return None
    given = trainer.raw.kwargs.get("optimizers")
    if given is None or isinstance(given, Unread) or not isinstance(given.raw, list) or len(given.raw) != 2:
        return None
    scheduler = given.raw[1]
    if isinstance(scheduler, Unread) or not isinstance(scheduler.raw, Call):
        return None
    if not _scheduler(scheduler.raw.path):
        return None
    return scheduler.raw


def _scheduler_fields(module: Module, call: Call) -> Node:
    """An HF scheduler function's call (``get_scheduler("cosine", optimizer, num_warmup_steps=100,
    num_training_steps=N)``, ``get_cosine_schedule_with_warmup(optimizer, 100, N)``) as the
    TrainingArguments fields that make the Trainer build the same scheduler: the type, the
    optimizer's own ``lr`` (a ``torch.optim`` call of the file), the steps and the kwargs."""
    kind_item, names = _scheduler_signature(call)
    given = _scheduler_arguments(call, names)
    if kind_item is None:
        raise SchedlangError("get_scheduler() is given no name", call.span)
    optimizer = given.get("optimizer")
    if optimizer is None:
        raise SchedlangError(f"{call.name}() is given no optimizer", call.span)
    head = Span(call.span.source, call.span.line, call.span.column, call.span.line, call.span.column + 1)
    fields = {"lr_scheduler_type": kind_item, "learning_rate": _optimizer_lr(optimizer)}
    steps = given.get("num_warmup_steps")
    if steps is not None and not isinstance(steps, Unread) and steps.raw is not None:
        if not isinstance(steps.value, int) or isinstance(steps.value, bool):
            raise SchedlangError("num_warmup_steps must be a whole number of steps", steps.span)
        fields["warmup_steps"] = steps
    total = given.get("num_training_steps")
    fields["max_steps"] = total if total is not None else Item(1, head)  # unused by these types
    kwargs = _scheduler_kwargs(call, given, head)
    if kwargs is not None:
        fields["lr_scheduler_kwargs"] = kwargs
    return _fields_node(module, call, fields)


#: ``get_scheduler``'s parameters, in its order.
_GET_SCHEDULER = ("name", "optimizer", "num_warmup_steps", "num_training_steps", "scheduler_specific_kwargs")


def _scheduler_signature(call: Call) -> tuple[Item | None, tuple[str, ...]]:
    """The scheduler type a call names (``get_scheduler``'s ``name``, or the one a
    ``get_*_schedule_with_warmup`` function is) and the function's parameters, in order."""
    if call.name == "get_scheduler":
        return call.kwargs.get("name", call.args[0] if call.args else None), _GET_SCHEDULER
    return Item(SCHEDULERS[call.name][0], call.span), ("optimizer", *SCHEDULERS[call.name][1])


def _scheduler_arguments(call: Call, names: tuple[str, ...]) -> dict[str, Item]:
    """The call's arguments by parameter name; ``last_epoch`` (a resumed run) and, but for
    ``get_scheduler``'s kwargs, a keyword the function has not are refused."""
    if len(call.args) > len(names):
        raise SchedlangError(f"{call.name}() is given {len(call.args)} positional arguments; schedlang reads "
                             f"{len(names)} ({', '.join(names)})", call.span)
    given = dict(zip(names, call.args))
    for key, value in call.kwargs.items():
        if key == "last_epoch" or key not in names and call.name != "get_scheduler":
            raise SchedlangError(f"{call.name}() is given {key}=, which schedlang does not read",
                                 call.keys[key],
                                 hint="last_epoch resumes a run: import the schedule, then resume_check"
                                 if key == "last_epoch" else f"its arguments: {', '.join(names)}")
        given[key] = value
    return given


def _scheduler_kwargs(call: Call, given: dict[str, Item], head: Span) -> Item | None:
    """``lr_scheduler_kwargs``: ``scheduler_specific_kwargs`` when given, else ``get_scheduler``'s
    extra keywords (None when there are neither)."""
    specific = given.get("scheduler_specific_kwargs")
    if specific is not None and not isinstance(specific, Unread) and specific.raw is not None:
        return specific
    extra = {k: v for k, v in given.items() if k not in _GET_SCHEDULER}
    if not extra:
        return None
    return Item(extra, head, {k: call.keys.get(k, v.span) for k, v in extra.items()})


def _fields_node(module: Module, call: Call, fields: dict[str, Item]) -> Node:
    """The fields as the ``Node`` ``hf_args`` reads, each followed (an ``Unread`` is its error)
    and untainted, its flags frozen unless ``CARRIED``."""
    nodes, keys = {}, {}
    for key, item in fields.items():
        if isinstance(item, Unread):
            raise item.error
        module.check_untainted(item)  # a dict a statement not followed may have changed
        if key not in CARRIED:
            item = Item(item.value, item.span, item.keys, item.frozen)
        nodes[key], keys[key] = to_node(item, key), call.keys.get(key, item.span)
    return Node(nodes, call.span, keys)


def _optimizer_lr(optimizer: Item) -> Item:
    """The ``lr=`` of the ``torch.optim`` optimizer the file builds (the scheduler multiplies it)."""
    made = optimizer.value  # an Unread is its error here
    if not isinstance(made, Call) or not _optimizer(made.path):
        raise SchedlangError("this optimizer is not a torch.optim optimizer this file builds, so its lr is "
                             "not known here", optimizer.span,
                             hint="build it with torch.optim.AdamW(params, lr=...) in the file")
    lr = made.kwargs.get("lr", made.args[1] if len(made.args) > 1 else None)
    if lr is None:
        raise SchedlangError(f"{made.name}(...) is given no lr=: the scheduler multiplies the optimizer's "
                             "own lr, and schedlang does not read torch's defaults", made.span,
                             hint=f"write {made.name}(params, lr=...)")
    return lr


def _override(module: Module, trainer: Call) -> Item | None:
    """``optimizers=(optimizer, scheduler)``: a scheduler given replaces the arguments' (refused);
    an optimizer alone is scheduled by the arguments from its own ``lr`` (returned)."""
    given = trainer.kwargs.get("optimizers")
    if given is None:
        return None
    if isinstance(given, Unread):
        raise given.error
    pair = given.value
    if not isinstance(pair, list) or len(pair) != 2:
        raise SchedlangError("optimizers= is a pair (optimizer, scheduler)", given.span)
    optimizer, scheduler = pair
    if isinstance(scheduler, Unread) or scheduler.value is not None:
        raise SchedlangError(f"{trainer.name}(...) is given its own scheduler here (optimizers=(optimizer, "
                             "scheduler)), which replaces the one TrainingArguments names, and it is not one "
                             "of transformers' scheduler functions this file calls", given.span,
                             hint="build it with transformers.get_scheduler(...) or "
                                  "get_*_schedule_with_warmup(...), or pass optimizers=(optimizer, None) and "
                                  "set lr_scheduler_type")
    if not isinstance(optimizer, Unread) and optimizer.value is None:
        return None
    return _optimizer_lr(optimizer)


def _no_arguments(module: Module) -> None:
    """Why no TrainingArguments is found: the script ends first, or it builds them where the file
    is not followed."""
    ended_before(module, "TrainingArguments")
    unfollowed(module, [n for n in ast.walk(module.tree) if isinstance(n, ast.Call) and (
        getattr(n.func, "attr", None) or getattr(n.func, "id", None)) in ARGUMENTS], "TrainingArguments")
    raise SchedlangError("no TrainingArguments(...) is built in this file", Span(module.source, 1, 1, 1, 2),
                         hint="training_args = TrainingArguments(output_dir=..., learning_rate=..., "
                              "lr_scheduler_type=...)")


def _parsed(module: Module) -> None:
    """A script whose TrainingArguments are parsed from its command line or a config file
    (``HfArgumentParser``, ``TrlParser``: ``run_clm.py``, TRL's ``sft.py``): refused at the first
    such call, which says where the values are."""
    calls = [n for n in ast.walk(module.tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
             and n.func.attr in PARSERS]
    if calls:
        node = min(calls, key=lambda n: (n.lineno, n.col_offset))
        raise SchedlangError(f"the TrainingArguments come from {node.func.attr}(): their values are in the "
                             "command line or config file this script is run with, not in the script",
                             module.span(node),
                             hint="import that config (its JSON or YAML: --format hf-args), or write "
                                  "TrainingArguments(...) with its values in the script")


def recognizes(text: str) -> bool:
    """A script that calls TrainingArguments (or Seq2SeqTrainingArguments, SFTConfig) or parses
    them with HfArgumentParser / TrlParser."""
    return bool(CALLS.search(text))
