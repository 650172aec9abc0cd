"""HF ``TrainingArguments(...)`` called in a training script, followed over ``ast``, never run.

The script is read by the one Python reader (``python_literal.Module``, a training script:
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
from .common.yaml_source import Node
from .python_literal import Call, Item, Module, Unread, _unfollowed, ended_before, to_node

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
#: Recognised in a script: the argument classes, the Trainers, the HF argument parsers.
CALLS = re.compile(r"\b(" + "|".join(ARGUMENTS) + r"|HfArgumentParser|TrlParser)\s*\(")


def _library(path: str) -> bool:
    return path.split(".")[0] in LIBRARIES


def _arguments(path: str) -> bool:
    return _library(path) and path.rsplit(".", 1)[-1] in ARGUMENTS


def _trainer(path: str) -> bool:
    return _library(path) and path.rsplit(".", 1)[-1].endswith("Trainer")


def _optimizer(path: str) -> bool:
    return path.startswith("torch.optim.") and path.rsplit(".", 1)[-1][:1].isupper() \
        and ".lr_scheduler." not in path


def training_arguments(text: str, filename: str) -> Node:
    """The fields of the ``TrainingArguments`` the script trains with, as a mapping ``Node``
    (keys spanned at the keywords), for ``hf_args.imported``."""
    module = Module(text, filename, lambda p: _arguments(p) or _trainer(p) or _optimizer(p), script=True,
                    lazy_calls=True)
    try:
        return _chosen(module)
    except SchedlangError:
        _parsed(module)  # arguments the script parses from its command line: refused at that call
        raise


def _chosen(module: Module) -> Node:
    built = [(item, node, path) for item, node, path in module.calls if _arguments(path)]
    trainers = [(item, node) for item, node, path in module.calls if _trainer(path)]
    chosen, lr = None, None
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
        if name not in CARRIED:
            item = Item(item.value, item.span, item.keys, item.frozen)  # read: its flags frozen
        fields[name] = to_node(item, name)
        keys[name] = call.keys.get(name, item.span)
    return Node(fields, call.span, keys)


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
                             "scheduler)), which replaces the one TrainingArguments names; schedlang does "
                             "not follow it", given.span,
                             hint="pass optimizers=(optimizer, None) and set lr_scheduler_type in "
                                  "TrainingArguments, or import that scheduler's own configuration")
    if not isinstance(optimizer, Unread) and optimizer.value is None:
        return None
    made = optimizer.value  # an Unread is its error here
    if not isinstance(made, Call) or not _optimizer(made.path):
        raise SchedlangError("the optimizer given to the Trainer is not a torch.optim optimizer this file "
                             "builds, so its lr is not known here", optimizer.span,
                             hint="build it with torch.optim.AdamW(params, lr=...) in the file")
    lr = made.kwargs.get("lr", made.args[1] if len(made.args) > 1 else None)
    if lr is None:
        raise SchedlangError(f"{made.name}(...) is given no lr=: the Trainer schedules the optimizer's own "
                             "lr, and schedlang does not read torch's defaults", made.span,
                             hint=f"write {made.name}(params, lr=...)")
    return lr


def _no_arguments(module: Module) -> None:
    """Why no TrainingArguments is found: the script ends first, or it builds them where the file
    is not followed."""
    ended_before(module, "TrainingArguments")
    _unfollowed(module, [n for n in ast.walk(module.tree) if isinstance(n, ast.Call) and (
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
