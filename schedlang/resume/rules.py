"""What a restored scheduler really runs, by the rules of the framework that loads it (SPEC §14).

Comparing NEW with the original (section 10) says whether NEW *would* continue the run; it
does not say whether the restored run *will* follow NEW.  Each framework loads a saved
scheduler state by its own rule, and with a changed configuration those rules differ:

* torch's ``LRScheduler.load_state_dict`` is ``self.__dict__.update(state)``: every saved
  attribute (``T_max``, ``total_iters``, ``base_lrs``, ...) replaces the constructor's, so the
  run is the saved schedule whatever NEW says (Lightning loads the state into the scheduler
  ``configure_optimizers`` built: the same rule);
* ``LambdaLR`` saves no function: the constructor's lambda stays, the saved ``base_lrs`` and
  step win.  The HF Trainer rebuilds its ``LambdaLR`` from the new ``TrainingArguments`` and
  then loads the state, so a new ``max_steps``, warmup or scheduler type takes effect and a
  new ``learning_rate`` does not; the first resumed step trains with the lr the checkpoint's
  optimizer holds, NEW's curve starts at the next (measured with the real Trainer,
  ``tests/frameworks/test_framework_resume.py``);
* megatron-core's ``OptimizerParamScheduler.load_state_dict`` passes each saved value through
  ``_check_and_set``: ``--override-opt_param-scheduler`` keeps the flags' values,
  ``--use-checkpoint-opt_param-scheduler`` the saved ones, neither asserts they are equal (the
  run stops at load when one differs); ``init_lr`` and the WSD settings are not saved;
* schedlang's classes restore the clock and keep the constructor's parameters; DeepSpeed's
  schedulers restore ``last_batch_iteration`` only and OLMo-core's keep no state, so NEW runs.

``restored`` returns the rule as data (``Restored``): what runs (``run``), which saved values
win over NEW's (``wins``) and how to make NEW take effect (``fix``); ``resume.check`` builds
the run's schedule from it and proves it equal to NEW or not.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from ..errors import SchedlangError
from ..formats.common.numbers import as_sympy, exact
from .state import State

#: What the restored run is: NEW's schedule, the saved one (recovered from the state), a mix
#: (``source`` or NEW times ``scale``), none (the framework refuses to load: ``refused``), or
#: not known (the rule needs what NEW does not say: ``unknown``).
NEW, SAVED, MIXED, REFUSED, UNKNOWN = "new", "saved", "mixed", "refused", "unknown"

FRAMEWORKS = {"torch": "torch", "checkpoint": "torch", "lightning": "Lightning", "hf": "HF Trainer",
              "deepspeed": "DeepSpeed", "megatron": "Megatron-LM", "olmo-core": "OLMo-core"}

#: megatron-core's ``_check_and_set`` values: state key, its name in Megatron's messages, the
#: flag that sets it, and whether it is a length (the class counts samples).
MEGATRON_VALUES = (
    ("max_lr", "learning rate", "--lr", False),
    ("min_lr", "minimum learning rate", "--min-lr", False),
    ("lr_warmup_steps", "warmup iterations", "--lr-warmup-*", True),
    ("lr_decay_steps", "total number of iterations", "--lr-decay-*", True),
    ("lr_decay_style", "learning rate decay style", "--lr-decay-style", False),
    ("start_wd", "start weight decay", "--start-weight-decay", False),
    ("end_wd", "end weight decay", "--end-weight-decay", False),
    ("wd_incr_steps", "total number of weight decay iterations", "--train-*", True),
)
#: Older checkpoints' names for the same values (``load_state_dict`` reads either).
MEGATRON_OLD_KEYS = {"max_lr": ("start_lr",), "lr_warmup_steps": ("warmup_iter", "warmup_steps"),
                     "lr_decay_steps": ("end_iter", "decay_steps"), "lr_decay_style": ("decay_style",)}


@dataclass(frozen=True)
class Win:
    """A saved value that the restored run uses instead of NEW's: its name (and the flag or
    keyword that sets it), the saved value, NEW's."""

    name: str
    saved: str
    new: str

    def __str__(self) -> str:
        return f"saved {self.name} = {self.saved} (NEW: {self.new})"


@dataclass(frozen=True)
class Restored:
    """The rule the framework applies on load, and what the restored run is under it."""

    framework: str
    rule: str
    run: str
    flag: str | None = None
    source: str | None = None  # the run's ``.sched`` source (``SAVED``, Megatron's ``MIXED``)
    scale: object = None  # the run is NEW times this (``LambdaLR``'s saved base lr over NEW's)
    first_lr: float | None = None  # the lr of the first resumed step, where it is the checkpoint's
    wins: tuple = ()
    fix: str | None = None
    notes: tuple = field(default=())
    refused: str | None = None  # what the framework raises at load (``REFUSED``)


def framework_of(state: State, schedlang_class: bool) -> str:
    """Who loads the state: the trainer that wrote the checkpoint, and for a schedlang class in
    torch's hands, schedlang's."""
    # a trainer's own state shape names it even in a bare file (``kind`` is then ``torch``)
    name = FRAMEWORKS.get(state.shape if state.shape != "torch" else state.kind, state.kind)
    if schedlang_class:
        return "schedlang class" if name == "torch" else f"{name}, schedlang class"
    return name


def restored(state: State, original, new: dict, step: int) -> Restored:
    """The rule for ``state`` and NEW (``new``: ``text`` and ``format`` of the file where NEW is
    one, ``sched`` its ``.sched`` source, ``values`` its bound parameters, ``params`` the -D
    values)."""
    if state.shape == "torch" and {"params", "_group_values"} <= set(state.scheduler):
        return _schedlang(state, original, new)
    if state.shape == "megatron":
        return _megatron(state, new)
    if state.shape in ("deepspeed", "olmo-core"):
        name = framework_of(state, False)
        rule = ("DeepSpeed's lr_schedules restore last_batch_iteration only: the schedule is built "
                "from NEW's config" if state.shape == "deepspeed" else
                "OLMo-core's schedulers keep no state: the schedule is NEW's, at the restored step")
        return Restored(name, rule, NEW)
    keys = set(state.scheduler)
    if "lr_lambdas" in keys:
        return _lambda(state, original, new, step)
    if original.source is None:
        return Restored(framework_of(state, False),
                        "torch's LRScheduler.load_state_dict replaces the constructor's attributes with "
                        "the saved ones; schedlang cannot rebuild this class from its state, so NEW is "
                        "taken to be what the state holds", UNKNOWN,
                        notes=(f"not checked: {original.why}",))
    return _torch(state, original, new, step)


# -- torch -----------------------------------------------------------------------------------

TORCH_RULE = ("torch's LRScheduler.load_state_dict replaces the constructor's attributes with the "
              "saved ones (self.__dict__.update(state)): the run is the saved schedule, whatever "
              "NEW's constructor says")


def _torch(state: State, original, new: dict, step: int) -> Restored:
    name = framework_of(state, False)
    rule = TORCH_RULE if name == "torch" else (
        f"Lightning builds the scheduler from NEW's configure_optimizers and loads the saved state into "
        f"it: {TORCH_RULE}" if name == "Lightning" else
        f"{name} loads the saved state into the scheduler it builds: {TORCH_RULE}")
    wins = _torch_wins(original, new)
    steps = (f"set each param group's lr and initial_lr to NEW's lr, construct NEW's scheduler and call "
             f"its step() {step} times (its updates then follow NEW from step {step})")
    if name == "Lightning":
        fix = (f"to run NEW: in the LightningModule's on_train_start (Lightning has restored the "
               f"checkpoint by then) {steps}, and put it in self.trainer.lr_scheduler_configs[0]"
               ".scheduler; or return schedlang's class compiled from NEW from configure_optimizers, "
               "whose load_state_dict restores only the clock")
    else:
        fix = (f"to run NEW: instead of scheduler.load_state_dict(state), after the optimizer's state is "
               f"loaded {steps}; or use schedlang's class compiled from NEW, whose load_state_dict "
               "restores only the clock")
    return Restored(name, rule, SAVED, source=original.source, wins=wins, fix=fix)


def _torch_wins(original, new: dict) -> tuple:
    """The saved keywords that differ from NEW's, where NEW is one call of the same torch
    class (``torch.CosineAnnealingLR(T_max=80, ...)``); else the whole saved scheduler
    (``resume.check`` drops them when the restored run follows NEW)."""
    saved = _saved_keywords(original.source)
    call = _new_call(new, "torch")
    if saved is not None and call is not None and call[0] == saved[0]:
        wins = tuple(Win("base_lrs" if key == "lr" else key, value, call[1][key])
                     for key, value in saved[1].items() if call[1].get(key) not in (None, value))
        if wins:
            return wins
    recovered = original.source.strip().removeprefix("schedule lr = ")
    return (Win("scheduler", recovered, "each saved attribute replaces the constructor's"),)


def _saved_keywords(source: str | None):
    """``(preset name, {keyword: value text})`` of a recovered ``torch.*`` call (one class)."""
    if source is None:
        return None
    try:
        from ..formats.common.preset_call import PresetCall  # lazy: parses

        call = PresetCall(source, "<state>", {}, "torch", "")
    except SchedlangError:
        return None
    return call.name, _keyword_values(call)


def _new_call(new: dict, library: str):
    """NEW's one ``library.*`` preset call, as ``(name, {keyword: value text})``, or None."""
    if new.get("sched") is None:
        return None
    try:
        from ..formats.common.preset_call import PresetCall  # lazy: parses

        call = PresetCall(new["sched"], "<new>", new.get("params") or {}, library, "")
    except SchedlangError:
        return None
    return call.name, _keyword_values(call)


def _keyword_values(call) -> dict:
    """Every number keyword of a preset call (given or its default), as exact text."""
    out = {}
    for arg in call.builtin.args:
        try:
            value = call.number(arg.name) if arg.name in call.given else arg.default
        except SchedlangError:
            continue
        if isinstance(value, (int, float, sp.Number)) and not isinstance(value, bool):
            out[arg.name] = _shown_number(value)
    return out


def _shown_number(value) -> str:
    number = exact(value) if isinstance(value, float) else sp.nsimplify(value)
    return str(int(number)) if number.is_Integer else repr(float(number))


# -- LambdaLR and the HF Trainer ---------------------------------------------------------------


def _lambda(state: State, original, new: dict, step: int) -> Restored:
    """``LambdaLR``: the constructor's lambda, the saved ``base_lrs`` and step; the first resumed
    step trains with the lr the checkpoint's optimizer holds."""
    name = framework_of(state, False)
    base = _saved_base(state)
    hf = name == "HF Trainer"
    rule = ("the HF Trainer rebuilds its LambdaLR from NEW's TrainingArguments (max_steps, warmup, "
            "lr_scheduler_type and its kwargs take effect), then loads the saved state: the saved "
            "base_lrs (the original learning_rate) and step win, and the first resumed step trains "
            "with the lr the checkpoint's optimizer holds" if hf else
            "LambdaLR.load_state_dict keeps the constructor's lr_lambda (a function is not saved) and "
            "restores the saved base_lrs and step; the first resumed step trains with the lr the "
            "checkpoint's optimizer holds")
    new_base = _hf_learning_rate(new) if hf else None
    notes, wins, scale = [], [], None
    if base is None:
        notes.append("the state's base_lrs are not one number: NEW's lr is taken as the run's")
    elif new_base is None:
        notes.append(f"the restored run keeps the saved base lr ({base!r}); NEW is not "
                     + ("HF TrainingArguments" if hf else "a LambdaLR")
                     + ", so its learning rate is taken to be that one (give NEW as the "
                     + ("TrainingArguments" if hf else "run's config") + " to compare it)")
    elif new_base != exact(base):
        scale = exact(base) / new_base
        wins.append(Win("learning_rate (base_lrs)", repr(base), repr(float(new_base))))
    first = original.last_lr if original.last_lr is not None else state.optimizer_lr
    where = ("once the Trainer has loaded the checkpoint (a TrainerCallback's on_train_begin)" if hf
             else "after load_state_dict")
    group = f"each param group's lr to NEW's value at step {step} (new lr, above)"
    if wins:
        fix = (f"to run NEW's learning_rate: {where}, set lr_scheduler.base_lrs to "
               f"[{float(new_base)!r}] for every param group and {group}")
    else:
        fix = f"to train the first resumed step with NEW's lr too: {where}, set {group}"
    return Restored(name, rule, MIXED, scale=scale, first_lr=first, wins=tuple(wins), fix=fix,
                    notes=tuple(notes))


def _saved_base(state: State) -> float | None:
    lrs = state.scheduler.get("base_lrs")
    if not isinstance(lrs, list) or not lrs:
        return None
    values = {float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None for v in lrs}
    return values.pop() if len(values) == 1 and None not in values else None


def _hf_learning_rate(new: dict):
    """NEW's ``learning_rate`` where NEW is HF TrainingArguments (else None)."""
    if new.get("format") != "hf-args" or new.get("text") is None:
        return None
    from ..formats import hf_args  # lazy: formats load on use

    value = hf_args.read(new["text"], new["name"]).lr
    return value if isinstance(value, sp.Number) else None


# -- schedlang's classes -----------------------------------------------------------------------


def _schedlang(state: State, original, new: dict) -> Restored:
    """Issue K's rule: the clock restored, the constructor's parameters kept."""
    name = framework_of(state, True)
    values = new.get("values") or {}
    wins, notes = [], []
    for key, saved in sorted(original.params.items()):
        theirs = values.get(key)
        if isinstance(theirs, (int, float, sp.Number)) and float(theirs) != float(saved):
            notes.append(f"the state holds {key}={_shown_number(saved)}, NEW's constructor "
                         f"{_shown_number(theirs)}: NEW's is used (load_state_dict warns; "
                         "load_state_dict(state, params=\"saved\") keeps the saved one)")
    rule = ("schedlang's load_state_dict restores the clock (step, samples, tokens), keeps the "
            "constructor's parameters and sets the param groups at the restored step: the run is "
            "NEW's")
    return Restored(name, rule, NEW, wins=tuple(wins), notes=tuple(notes))


# -- Megatron --------------------------------------------------------------------------------------


def _megatron(state: State, new: dict) -> Restored:
    name = framework_of(state, False)
    if new.get("format") != "megatron-args":
        return Restored(name, "megatron-core's OptimizerParamScheduler.load_state_dict keeps, overrides "
                        "or checks the saved values by the resumed launch's --override-opt_param-scheduler "
                        "/ --use-checkpoint-opt_param-scheduler; NEW is not a Megatron-LM launch, so NEW "
                        "is taken to be what the launch runs", UNKNOWN,
                        notes=("not checked: give the resumed launch's command line (or its YAML) as NEW "
                               "to apply Megatron's rule for its flags",))
    from ..formats import megatron_args  # lazy: formats load on use

    args = megatron_args.read(new["text"], new["name"])
    flag = megatron_args.scheduler_flag(args)
    plan = megatron_args.plan(args)
    ours = _megatron_values(plan, new.get("params") or {})
    fraction = exact(args.flags["lr_warmup_fraction"].text) if "lr_warmup_fraction" in args.flags else None
    if fraction is not None and "lr_decay_steps" in ours:  # Megatron-LM: fraction * decay, in floats
        ours["lr_warmup_steps"] = float(fraction) * float(ours["lr_decay_steps"])
    saved = {key: _saved_value(state.scheduler, key) for key, *_ in MEGATRON_VALUES}
    differ = [(key, what, flags + (", in samples" if length else "")) for key, what, flags, length
              in MEGATRON_VALUES
              if key in ours and saved[key] is not None and not _equal(ours[key], saved[key])]
    wins = tuple(Win(f"{key} ({flags})", _text(saved[key]), _text(ours[key])) for key, _, flags in differ)
    if flag == "override":
        rule = ("--override-opt_param-scheduler: megatron-core's _check_and_set keeps the launch's "
                "values (NEW's) over the checkpoint's (it also overrides per-param-group lr bounds, "
                "Megatron-LM #7173)")
        return Restored(name, rule, NEW, flag=flag)
    if flag == "use-checkpoint":
        rule = ("--use-checkpoint-opt_param-scheduler: megatron-core's _check_and_set takes the "
                "checkpoint's max_lr, min_lr, warmup, decay length and style (and weight-decay values) "
                "over the launch's; init_lr and the WSD settings are not saved and stay NEW's")
        if not differ:
            return Restored(name, rule, NEW, flag=flag)
        source = _megatron_run(args, plan, saved, new, state)
        fix = ("to run NEW: launch with --override-opt_param-scheduler instead of "
               "--use-checkpoint-opt_param-scheduler")
        return Restored(name, rule, MIXED, flag=flag, source=source, wins=wins, fix=fix)
    rule = ("neither flag: megatron-core's _check_and_set asserts that each saved value equals the "
            "launch's")
    if not differ:
        return Restored(name, rule, NEW, flag=flag)
    key, what, _ = differ[0]
    refused = (f"AssertionError: OptimizerParamScheduler: class input value {_text(ours[key])} and "
               f"checkpointvalue {_text(saved[key])} for {what} do not match")
    fix = ("to run NEW: launch with --override-opt_param-scheduler; to keep the saved values: "
           "--use-checkpoint-opt_param-scheduler")
    return Restored(name, rule, REFUSED, flag=flag, wins=wins, fix=fix, refused=refused)


def _saved_value(sched: dict, key: str):
    for name in (key, *MEGATRON_OLD_KEYS.get(key, ())):
        if name in sched:
            value = sched[name]
            return value if isinstance(value, (str, int, float)) and not isinstance(value, bool) else None
    return None


def _megatron_values(plan, params: dict) -> dict:
    """NEW's values as megatron-core's class holds them (lengths in samples), where known."""
    values = {}
    scale = plan.class_scale
    for key, _, _, length in MEGATRON_VALUES:
        raw = plan.kwargs.get(key, plan.wd.get(key))
        if raw is None:
            continue
        if isinstance(raw, str):
            values[key] = raw
            continue
        value = as_sympy(raw)  # a number or a formula, never text (str is kept above)
        value = value.subs({s: params[s.name] for s in value.free_symbols if s.name in params})
        if length:
            if scale is None:
                continue
            value = value * scale
        if value.free_symbols:
            continue
        values[key] = value
    return values


def _equal(ours, saved) -> bool:
    """megatron-core's ``cls_value == sd_value`` on the values the launch would pass."""
    if isinstance(ours, str) or isinstance(saved, str):
        return ours == saved
    return float(ours) == float(saved)


def _text(value) -> str:
    if isinstance(value, str):
        return repr(value)
    number = exact(value) if isinstance(value, float) else sp.nsimplify(value)
    return str(int(number)) if number.is_Integer else repr(float(number))


def _megatron_run(args, plan, saved: dict, new: dict, state: State) -> str:
    """NEW's launch with the checkpoint's values in place of its flags' (the class's lengths in
    samples, back in the output's units), as ``.sched`` text."""
    from ..formats import megatron_args  # lazy: formats load on use

    kwargs, wd = dict(plan.kwargs), dict(plan.wd)
    for key, _, _, length in MEGATRON_VALUES:
        target = kwargs if key in kwargs else wd if key in wd else None
        if target is None or saved[key] is None:
            continue
        value = saved[key] if isinstance(saved[key], str) else exact(saved[key])
        if length:
            value = value / plan.class_scale
        target[key] = value
    if kwargs.get("lr_decay_style") == "WSD" and "wsd_decay_steps" not in kwargs:
        raise SchedlangError(f"'{state.path}': the checkpoint's lr_decay_style is WSD but the launch "
                             "gives no --lr-wsd-decay-iters/-samples, which the class needs (it is not "
                             "saved)", hint="add the WSD flags to the launch, or run with "
                                            "--override-opt_param-scheduler")
    run = megatron_args.Plan(kwargs, wd, plan.per_iteration, [], plan.params, plan.batch, plan.seq_len,
                             {}, plan.class_scale)
    return megatron_args.rendered(args, run, f"{new['name']} with the checkpoint's values")
