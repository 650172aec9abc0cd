"""Does a resumed run continue the schedule it was checkpointed in? (SPEC §10, ``docs/resume.md``)

``resume_check(state, new, was=None)`` reads a checkpoint's scheduler state
(``resume.state``: data only, nothing run), recovers the schedule that wrote it
where the state holds it (torch's closed-form schedulers, ``SequentialLR`` and
``ChainedScheduler`` of them: the class is told from its attribute names, the
schedule rebuilt as ``torch.*`` preset source by ``preset_source``, the one
place state values become text), or takes it from ``was``; then compares the
new run's schedule with it from the step the state is at: the lr there, and a
proof (``schedlang.equivalent`` of the two schedules seen from that step) that
every later step agrees, or the first step that differs.

It also says what the restored run will actually do (SPEC §14): ``resume.rules`` gives the rule
of the framework that loads the state and what the run is under it (the saved schedule, NEW,
NEW with saved values in it, or no run: the framework stops at load), and ``_follows`` proves
that run equal to NEW from the step on, or gives the first step where it is not.  The verdict
is ``equivalent`` only when both hold.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import sympy as sp

from ..codegen.sched import sched_text
from ..core.algebra import bind, finish, flatten, shifted
from ..core.clock import UNITS
from ..errors import SchedlangError
from ..formats import by_name, import_file
from ..formats.common.numbers import exact
from ..limits import MAX_LIST_ITEMS, MAX_STEP, read_source_text
from ..program import Schedule, compile_declared
from ..semantics.params import bind_params
from .clock import TokenClock, checked_counts, on_new_clock
from .rules import MIXED, NEW, REFUSED, SAVED, Restored, restored
from .state import State, is_text_file, read_state
from .state import shown_value as _shown

#: How close the lr the state last set must be to the original schedule's value at that step
#: (relative): torch's chainable updates drift from the closed form by rounding only.
STATE_RTOL = 1e-9

#: Keys every torch ``LRScheduler`` state has besides its class's own (some only in newer torch).
COMMON_KEYS = frozenset({"base_lrs", "last_epoch", "_step_count", "_is_initial",
                         "_get_lr_called_within_step", "_last_lr", "verbose"})

STEPS, NUMBER, MILESTONES, DERIVED = "steps", "number", "milestones", "derived"

#: torch class -> its own state keys and what each is; ``DERIVED`` keys follow from the others
#: and the step (the preset does not take them).  A class is recognised when its keys are
#: exactly these: no two classes have the same set.
TORCH_CLASSES = {
    "StepLR": {"step_size": STEPS, "gamma": NUMBER},
    "MultiStepLR": {"milestones": MILESTONES, "gamma": NUMBER},
    "ConstantLR": {"factor": NUMBER, "total_iters": STEPS},
    "LinearLR": {"start_factor": NUMBER, "end_factor": NUMBER, "total_iters": STEPS},
    "ExponentialLR": {"gamma": NUMBER},
    "PolynomialLR": {"total_iters": STEPS, "power": NUMBER},
    "CosineAnnealingLR": {"T_max": STEPS, "eta_min": NUMBER},
    "CosineAnnealingWarmRestarts": {"T_0": STEPS, "T_mult": NUMBER, "eta_min": NUMBER,
                                    "T_i": DERIVED, "T_cur": DERIVED},
}
SEQUENTIAL_KEYS = frozenset({"_milestones", "_schedulers", "last_epoch", "_last_lr"})
CHAINED_KEYS = frozenset({"_schedulers", "_last_lr"})
#: What a schedlang scheduler class's state holds (``codegen/templates.py``).
SCHEDLANG_KEYS = frozenset({"params", "_group_values"})

#: States recognised but not recoverable: the keys that tell them, what they are, and why
#: (``--was`` is the way out for each).
NOT_RECOVERABLE = [
    ({"lr_lambdas"}, "torch LambdaLR",
     "a LambdaLR or MultiplicativeLR state (HF Trainer's schedulers are LambdaLRs): its lr_lambda "
     "is code, which the state does not hold"),
    ({"patience", "best", "num_bad_epochs"}, "torch ReduceLROnPlateau",
     "a ReduceLROnPlateau state: its lr follows a metric, not the step"),
    ({"max_lrs", "total_size", "step_ratio"}, "torch CyclicLR",
     "a CyclicLR state, which schedlang does not rebuild from a state"),
    ({"_schedule_phases", "total_steps"}, "torch OneCycleLR",
     "a OneCycleLR state, which schedlang does not rebuild from a state"),
]


@dataclass(frozen=True)
class Original:
    """What the state says: its step, the lr it last set (None when it does not record one),
    the schedule that wrote it as ``.sched`` source (None when not recoverable, ``why`` says
    why), and a schedlang class's parameter values."""

    step: int
    last_lr: float | None
    source: str | None
    described: str
    why: str | None = None
    params: dict = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class ResumeVerdict:
    """``equivalent`` / ``different`` / ``unknown``, truthy only when proven equivalent.

    ``step``: the step the state is at (the first step the resumed run sets);
    ``last_lr``: the lr the state last set (the original schedule's value there when the
    state does not record it); ``new_lr``: the new schedule's value at ``step``;
    ``counterexample``: the first step ``>= step`` where they differ (``a`` the original,
    ``b`` the new); ``original``: the original schedule's source and where it came from.
    """

    status: str
    step: int
    last_lr: float
    new_lr: float
    counterexample: object = None
    method: str | None = None
    reason: str | None = None
    original_source: str = ""
    original_from: str = "state"
    described: str = ""
    kind: str = "torch"
    extra: dict = dataclasses.field(default_factory=dict)
    notes: tuple = ()
    key: str = ""
    last_lr_from: str | None = None
    samples: int | None = None
    tokens: int | None = None
    state_params: dict = dataclasses.field(default_factory=dict)
    total: int | None = None
    total_from: str | None = None
    #: How the comparison was made when on the sample or token clock (SPEC §12), and the new
    #: run's step <-> token map from the checkpoint on, one line per batch stage.
    clock: str | None = None
    time_map: tuple = ()
    #: On the token clock: the resumed run's batches (``core.clock.Clock``: its steps' counts,
    #: the new batch schedule from the checkpoint's count on).
    run_clock: object = None
    #: The lr the resumed run sets, NEW's schedule as a function of the global step (its
    #: value at ``k >= step``: the lr of update ``k``, on ``run_clock`` where there is one).
    run_lr: object = None
    #: The rule of the framework that loads the state (``resume.rules.Restored``: its name,
    #: the rule, what the restored run is, the saved values that win over NEW's, the fix),
    #: and whether the restored run follows NEW: ``follows`` is ``equivalent`` /
    #: ``different`` / ``unknown``, ``refused`` (the framework stops at load) or None (the
    #: rule could not be applied: ``restored.notes`` says why); ``run_counterexample`` the
    #: first step ``>= step`` where the restored run (``a``) and NEW (``b``) differ.
    restored: Restored | None = None
    follows: str | None = None
    run_counterexample: object = None
    continues: str | None = None  # NEW against the original alone (section 10)
    #: The lr the restored run sets at each global step ``>= step`` (``RestoredLr``), None
    #: where the rule could not be applied or the framework refuses to load.
    restored_lr: object = None

    @property
    def after_end(self) -> bool:
        """Whether the first difference lies after the run's last step (``total - 1``), where
        the run's length is known: a difference nobody trained through, if the run ends."""
        ce = self.counterexample
        return ce is not None and self.total is not None and ce.step >= self.total

    def __bool__(self) -> bool:
        return self.status == "equivalent"

    @property
    def equivalent(self) -> bool:
        return self.status == "equivalent"

    @property
    def different(self) -> bool:
        return self.status == "different"

    @property
    def unknown(self) -> bool:
        return self.status == "unknown"

    def __str__(self) -> str:
        if self.equivalent:
            return (f"continues exactly from step {self.step} (proven: {self.method})")
        if self.follows == "refused":
            return f"the restored run does not start: {self.restored.refused}"
        if self.follows == "different":
            ce = self.run_counterexample
            return (f"the restored run does not follow NEW: first difference at step {ce.step}: "
                    f"restored {ce.a!r}, new {ce.b!r}")
        if self.different:
            ce = self.counterexample
            return (f"does not continue: first difference at step {ce.step}: "
                    f"original {ce.a!r}, new {ce.b!r}")
        return f"unknown: {self.reason or 'the restored run could not be compared with NEW'}"


# -- the state's schedule --------------------------------------------------------------------


def original_of(state: dict, where: str) -> Original:
    """Step, last lr and (where it can) the schedule of one scheduler state dict."""
    keys = set(state)
    if SCHEDLANG_KEYS <= keys:
        return _schedlang_state(state, where)
    step = _step(_first_child(state, where) if keys == CHAINED_KEYS else state, where)
    last_lr = _last_lr(state, where)
    try:
        call = _torch_call(state, where, top=True)
    except _NotRecoverableError as exc:
        return Original(step, last_lr, None, exc.described, why=str(exc))
    return Original(step, last_lr, f"schedule lr = {preset_source(call)}\n", call.described())


class _NotRecoverableError(Exception):
    def __init__(self, message: str, described: str = "a scheduler state"):
        super().__init__(message)
        self.described = described


@dataclass(frozen=True)
class Call:
    """A ``torch.*`` preset call built from a state: ``name`` from ``TORCH_CLASSES`` (never from
    the state), keyword values already checked (``int``, exact ``sp.Rational``, lists of
    ints, or nested ``Call``s)."""

    name: str
    keywords: tuple

    def described(self) -> str:
        children = [v for _, v in self.keywords if isinstance(v, list) and v and isinstance(v[0], Call)]
        inner = ", ".join(c.name for c in children[0]) if children else ""
        return f"torch {self.name}" + (f" of {inner}" if inner else "")


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def preset_source(call: Call) -> str:
    """The one place a state's values become ``.sched`` text: preset names and keywords from
    this module's tables, numbers written exactly (``codegen.sched.sched_text``)."""
    if call.name not in TORCH_CLASSES and call.name not in ("SequentialLR", "ChainedScheduler"):
        raise ValueError(f"not a torch preset: {call.name!r}")

    def value(v) -> str:
        if isinstance(v, Call):
            return preset_source(v)
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        if isinstance(v, bool) or not isinstance(v, (int, sp.Rational)):
            raise ValueError(f"not a checked value: {v!r}")
        return sched_text(sp.Integer(v) if isinstance(v, int) else v)

    parts = []
    for key, v in call.keywords:
        if not _NAME.fullmatch(key):
            raise ValueError(f"not a keyword: {key!r}")
        parts.append(f"{key}={value(v)}")
    return f"torch.{call.name}({', '.join(parts)})"


def _torch_call(state, where: str, top: bool) -> Call:
    if not isinstance(state, Mapping):
        raise _NotRecoverableError(f"{where} is a {type(state).__name__}, not a scheduler state dict")
    keys = set(state)
    if keys == SEQUENTIAL_KEYS or keys == CHAINED_KEYS:
        return _composite_call(state, where, top, keys)
    own = keys - COMMON_KEYS
    for name, table in TORCH_CLASSES.items():
        if own == set(table):
            keywords = [(key, _checked(state[key], kind, f"{where}.{key}"))
                        for key, kind in table.items() if kind != DERIVED]
            if top:
                keywords.append(("lr", _lr(state, where)))
            return Call(name, tuple(keywords))
    raise _unrecognised(keys, where)


def _composite_call(state, where: str, top: bool, keys: set) -> Call:
    """A SequentialLR's or ChainedScheduler's call, its children's calls inside: kept apart
    from the one-class case because only here do children recurse and must share one lr."""
    name = "SequentialLR" if keys == SEQUENTIAL_KEYS else "ChainedScheduler"
    children = _children(state, where)
    calls = [_torch_call(c, f"{where}._schedulers[{i}]", top=False) for i, c in enumerate(children)]
    keywords = [("schedulers", calls)]
    if name == "SequentialLR":
        keywords.append(("milestones", _ints(state["_milestones"], f"{where}._milestones")))
    lrs = {_lr(c, f"{where}._schedulers[{i}]") for i, c in enumerate(children)}
    if len(lrs) != 1:
        raise SchedlangError(f"{where}: the children of {name} start from different lrs",
                             hint="in torch they share one optimizer; was the state edited?")
    if top:
        keywords.append(("lr", lrs.pop()))
    return Call(name, tuple(keywords))


def _unrecognised(keys: set, where: str) -> _NotRecoverableError:
    """The error for a state no torch class matches: says what it is where a known marker
    tells (a class schedlang cannot recover), else lists its keys."""
    for marker, described, why in NOT_RECOVERABLE:
        if marker <= keys:
            return _NotRecoverableError(f"{where} is {why}", described)
    return _NotRecoverableError(f"{where} is no torch scheduler schedlang recognises; it has the keys "
                          + ", ".join(sorted(map(str, keys))[:30]))


def _children(state, where: str) -> list:
    children = state["_schedulers"]
    if not isinstance(children, list) or not children or len(children) > MAX_LIST_ITEMS:
        raise SchedlangError(f"{where}._schedulers is not a list of scheduler states")
    return children


def _first_child(state, where: str):
    children = _children(state, where)
    if not isinstance(children[0], Mapping):
        raise SchedlangError(f"{where}._schedulers[0] is not a scheduler state dict")
    return children[0]


def _checked(value, kind: str, where: str):
    if kind == STEPS:
        return _whole(value, where)
    if kind == NUMBER:
        return _exact(value, where)
    return _milestones(value, where)


def _whole(value, where: str) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_STEP:
        raise SchedlangError(f"{where} is {_shown(value)}, not a whole number of steps")
    return value


def _exact(value, where: str) -> sp.Rational:
    value = _plain_number(value)
    number = exact(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if number is None:
        raise SchedlangError(f"{where} is {_shown(value)}, not a finite number")
    return number


def _plain_number(value):
    """A one-element floating tensor (an optimizer given ``lr=torch.tensor(...)``) as the float
    it holds, in its own precision; anything else unchanged."""
    if type(value).__name__ == "Tensor" and getattr(value, "is_floating_point", None):
        try:
            if value.numel() == 1 and value.is_floating_point():
                return float(value.item())
        except (RuntimeError, TypeError, ValueError):
            return value
    return value


def _ints(value, where: str) -> list[int]:
    if not isinstance(value, (list, tuple)) or len(value) > MAX_LIST_ITEMS:
        raise SchedlangError(f"{where} is {_shown(value)}, not a list of steps")
    return [_whole(v, f"{where}[{i}]") for i, v in enumerate(value)]


def _milestones(value, where: str) -> list[int]:
    """``MultiStepLR.milestones``: a ``Counter`` (a milestone given twice decays twice)."""
    if isinstance(value, Mapping):
        if len(value) > MAX_LIST_ITEMS:
            raise SchedlangError(f"{where} has more than {MAX_LIST_ITEMS} milestones")
        out = []
        for step, count in sorted(((_whole(k, where), _whole(c, where)) for k, c in value.items())):
            if count > MAX_LIST_ITEMS:
                raise SchedlangError(f"{where}: milestone {step} is counted {count} times")
            out += [step] * count
        return out
    return sorted(_ints(value, where))


def _lr(state, where: str) -> sp.Rational:
    lrs = state.get("base_lrs") if isinstance(state, Mapping) else None
    if not isinstance(lrs, list) or not lrs:
        raise SchedlangError(f"{where} has no base_lrs")
    values = {_exact(v, f"{where}.base_lrs[{i}]") for i, v in enumerate(lrs[:MAX_LIST_ITEMS])}
    if len(values) != 1:
        raise SchedlangError(f"{where}: the optimizer's param groups start from different lrs "
                             f"({', '.join(map(str, lrs[:4]))})",
                             hint="schedlang resume checks one lr schedule; give every group the "
                                  "same lr or check a state with one param group")
    return values.pop()


def _step(state, where: str) -> int:
    if not isinstance(state, Mapping) or "last_epoch" not in state:
        raise SchedlangError(f"{where} has no last_epoch: it is not a scheduler state",
                             hint="save it with torch.save(scheduler.state_dict(), path)")
    return _whole(state["last_epoch"], f"{where}.last_epoch")


def _last_lr(state, where: str) -> float | None:
    lrs = state.get("_last_lr")
    if lrs is None:
        return None
    if not isinstance(lrs, list) or not lrs:
        raise SchedlangError(f"{where}._last_lr is not a list of lrs")
    values = {float(_exact(v, f"{where}._last_lr[{i}]")) for i, v in enumerate(lrs[:MAX_LIST_ITEMS])}
    if len(values) != 1:
        raise SchedlangError(f"{where}: the param groups' last lrs differ ({', '.join(map(repr, lrs[:4]))})",
                             hint="schedlang resume checks one lr schedule")
    return values.pop()


def _schedlang_state(state, where: str) -> Original:
    params = state["params"]
    if not isinstance(params, Mapping):
        raise SchedlangError(f"{where}.params is not a dict of parameter values")
    checked = {}
    for name, value in params.items():
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise SchedlangError(f"{where}.params has a name that is not an identifier: {_shown(name)}")
        checked[name] = _exact(value, f"{where}.params[{name!r}]")
    groups = state["_group_values"]
    if not isinstance(groups, list) or any(g for g in groups):
        raise SchedlangError(f"{where}: param groups with their own parameter values",
                             hint="schedlang resume checks one lr schedule")
    return Original(_step(state, where), None, None, "a schedlang scheduler class",
                    why=f"{where} is a schedlang scheduler class's state: it holds the parameter "
                        "values, not the schedule", params=checked)


# -- the check -------------------------------------------------------------------------------


def resume_check(state_path, new, was=None, params=None) -> ResumeVerdict:
    """Whether the schedule ``new`` continues the run checkpointed in ``state_path`` exactly.

    ``new`` / ``was``: a path to a ``.sched`` file or any config ``schedlang import`` reads,
    a ``Schedule``, a ``Program`` or ``.sched`` source text; ``was`` is the run's original
    schedule, needed when the state does not hold it.  ``params`` binds both files'
    parameters (a schedlang class's state binds its own over them in ``was``).
    """
    from ..verify import equivalent  # lazy: numpy (verify.float_scan)

    params = dict(params or {})
    state = _read_state(state_path, new)
    where = f"'{state.path}': " + (state.key or "state")
    original = state_original(state, where)
    if was is None and original.source is None:
        raise SchedlangError(f"cannot recover the original schedule: {original.why}",
                             hint="pass --was OLD (was= in Python): the .sched file or config the run "
                                  "was started with")
    if was is not None:
        old, original_from = _schedule(was, {**params, **original.params}, "was"), "was"
    else:
        old, original_from = _schedule(original.source, {}, "<recovered from the state>"), "state"
    saved_only = sorted(set(original.params) - old.declared)
    if saved_only:
        raise SchedlangError(f"{where} holds a value for '{saved_only[0]}', which the --was schedule "
                             "does not declare: it is not the schedule of the class that wrote the state",
                             hint="pass the .sched file the scheduler class was compiled from")
    fresh = _schedule(new, params, "new")
    rule = restored(state, original, _new_info(new, params, fresh), original.step)
    unknown = sorted(set(params) - old.declared - fresh.declared)
    if unknown:
        raise SchedlangError(f"neither schedule has a parameter '{unknown[0]}'",
                             hint="-D binds the parameters the new (and --was) schedule declares")
    step = original.step
    _check_counts(state, step, old)
    clock = on_new_clock(old.program, fresh.program, step, state.samples, state.tokens, where)
    if clock is not None:  # the lr as a function of tokens, both on the resumed run's clock
        old = dataclasses.replace(old, expr=clock.program[old.name].expr)
        fresh = dataclasses.replace(fresh, expr=clock.new[fresh.name].expr)
    tail_old = _from_step(old, step, "the original schedule")
    tail_new = _from_step(fresh, step, "the new schedule")
    old_lr = float(tail_old(0))
    last_lr, last_lr_from = _recorded_lr(state, original)
    if last_lr is not None and not math.isclose(old_lr, last_lr, rel_tol=STATE_RTOL, abs_tol=1e-300):
        raise SchedlangError(
            f"{where} is at step {step} and last set the lr to {last_lr!r} ({last_lr_from}), but the "
            f"original schedule gives {old_lr!r} there: it is not the schedule that wrote this state",
            hint="pass the .sched file or config the run was started with as --was"
                 if was is not None else "the state was changed after it was saved, or the "
                 "scheduler was stepped outside its schedule")
    new_lr = float(tail_new(0))
    verdict = equivalent(tail_old, tail_new)
    ce = verdict.counterexample
    if ce is not None:
        ce = dataclasses.replace(ce, step=ce.step + step)
    reuse = verdict if rule.run == SAVED and original_from == "state" else None

    def place(run: _Resolved):  # a run built from source, on the resumed run's clock as NEW is
        placed = on_new_clock(run.program, fresh.program, step, state.samples, state.tokens, where)
        return placed.program[run.name].expr

    follows, run_ce, restored_lr = _follows(rule, fresh, tail_new, step, params, reuse, ce,
                                            None if clock is None else place)
    if follows == "equivalent" and rule.wins:  # nothing saved wins over a run that follows NEW
        rule = dataclasses.replace(rule, wins=(), fix=None)
    total, total_from = _total(state, old)
    source = str(was) if was is not None and isinstance(was, (str, Path)) else original.source or ""
    status = _overall(follows, verdict.status)
    return ResumeVerdict(status, step, old_lr if last_lr is None else last_lr, new_lr, ce,
                         verdict.method, verdict.reason, source, original_from, original.described,
                         state.kind, dict(state.extra), (*_notes(state, step), *rule.notes), state.key,
                         last_lr_from, state.samples, state.tokens, dict(original.params), total,
                         total_from, *_clock_fields(clock),
                         Schedule.from_sympy(finish(fresh.expr)), rule, follows, run_ce, verdict.status,
                         restored_lr)


def _overall(follows: str | None, continues: str) -> str:
    """SPEC §14: equivalent only when the restored run follows NEW (or the rule could not be
    applied, which the notes say) and NEW continues the original; different when either is."""
    if follows in ("different", REFUSED) or continues == "different":
        return "different"
    if follows == "unknown" or continues == "unknown":
        return "unknown"
    return "equivalent"


def _follows(rule: Restored, fresh: _Resolved, tail_new, step: int, params: dict, reuse,
             continues_ce, place=None) -> tuple[str | None, object, RestoredLr | None]:
    """Whether the restored run (``rule``) sets NEW's lr at every step from ``step`` on, the
    first step where it does not (``a`` the restored run, ``b`` NEW), and its lr; ``place``
    puts a run built from source on the resumed run's clock, as NEW is (None: the step clock)."""
    from ..verify import equivalent  # lazy: numpy (verify.float_scan)
    from ..verify.verdict import Counterexample  # lazy: verify loads numpy (float_scan)

    if rule.run not in (NEW, SAVED, MIXED):
        return (REFUSED if rule.run == REFUSED else None), None, None
    if rule.source is not None:
        run = _schedule(rule.source, params if rule.run == MIXED else {}, "<the restored run>")
        if place is not None and run.program is not None and run.program.batch_schedule is not None:
            run = dataclasses.replace(run, expr=place(run))
    elif rule.scale is not None:
        run = dataclasses.replace(fresh, expr=fresh.expr * rule.scale)
    else:
        run = fresh
    lr = RestoredLr(step, rule.first_lr, Schedule.from_sympy(finish(run.expr)))
    start = 0
    if rule.first_lr is not None:  # the first resumed step trains with the checkpoint's lr
        ours = float(tail_new(0))
        if not math.isclose(rule.first_lr, ours, rel_tol=STATE_RTOL, abs_tol=1e-300):
            return "different", Counterexample(step, rule.first_lr, ours), lr
        start = 1
    if run is fresh:
        return "equivalent", None, lr
    if reuse is not None and start == 0:
        return reuse.status, continues_ce, lr
    verdict = equivalent(_from_step(run, step + start, "the restored run"),
                         _from_step(fresh, step + start, "the new schedule"))
    ce = verdict.counterexample
    if ce is not None:
        ce = dataclasses.replace(ce, step=ce.step + step + start)
    return verdict.status, ce, lr


@dataclass(frozen=True)
class RestoredLr:
    """The lr the restored run sets at global step ``k >= step``: ``first`` at ``step`` where
    the framework trains the first resumed step with the checkpoint's lr, else ``schedule``."""

    step: int
    first: float | None
    schedule: Schedule

    def __call__(self, k: int) -> float:
        return self.first if self.first is not None and k == self.step else float(self.schedule(k))


def _new_info(new, params: dict, fresh: _Resolved) -> dict:
    """What ``resume.rules`` reads of NEW: the file's text and format (a config's rules need
    its flags), its ``.sched`` source, its bound parameters and the -D values."""
    info = {"params": dict(params), "values": dict(fresh.program.values) if fresh.program else {},
            "text": None, "format": None, "name": str(new), "sched": None}
    if isinstance(new, (str, Path)) and (isinstance(new, Path) or _looks_like_path(new)):
        path = Path(new)
        if path.suffix == ".sched":
            info["sched"] = read_source_text(path)
        else:
            from ..formats import guess_format  # lazy: formats load on use

            text = read_source_text(path)
            info.update(text=text, format=guess_format(path, text), sched=import_file(path))
    elif isinstance(new, str):
        info["sched"] = new
    return info


def _read_state(state_path, new) -> State:
    """``read_state``, saying the order where a text file stands where the checkpoint goes:
    ``schedlang resume new.sched ckpt.pt`` is the order a new user tries first."""
    try:
        return read_state(state_path)
    except SchedlangError:
        if not is_text_file(state_path):
            raise
    swapped = (isinstance(new, (str, Path)) and _looks_like_path(str(new)) and Path(new).exists()
               and not is_text_file(new))
    typed = f"schedlang resume {new} {state_path}" if swapped else "schedlang resume STATE NEW"
    raise SchedlangError(f"'{state_path}' is a text file (a schedule or a config), not a checkpoint: "
                         "the arguments are STATE first, then NEW",
                         hint=f"{typed} (STATE: the checkpoint, the file torch.save wrote or its "
                              "folder; NEW: the resumed run's .sched file or config)") from None


def _clock_fields(clock: TokenClock | None) -> tuple:
    """``ResumeVerdict.clock``, ``time_map`` and ``run_clock``."""
    if clock is None:
        return None, (), None
    said = (f"compared on the {UNITS[clock.unit]} clock: both placed on the resumed run, the new "
            f"batch schedule from the checkpoint's count on ({clock.count:,} {UNITS[clock.unit]} "
            f"before the checkpoint's step, from {clock.counted_by})")
    return said, clock.lines, clock.clock


def _check_counts(state: State, step: int, old: _Resolved) -> None:
    """``resume.clock.checked_counts`` on the checkpoint's counts, with the original's tokens
    per sample where it declares them; against the lower of the scheduler's and the trainer's
    step (the counts were kept beside the trainer's)."""
    clock = old.program.batch_schedule if old.program is not None else None
    seq_len = clock.seq_len if clock is not None else None
    at = step if state.step is None else min(step, state.step)
    checked_counts(state.samples, state.tokens, at, seq_len,
                   (state.samples_key or "samples", state.tokens_key or "tokens"), f"'{state.path}'")


def state_original(state: State, where: str) -> Original:
    """``original_of`` for each shape of state: torch's (and schedlang's classes) hold their
    step and often their schedule; DeepSpeed's, Megatron's and OLMo-core's hold a count only."""
    sched = state.scheduler
    if state.shape == "deepspeed":
        step = _whole_from(sched.get("last_batch_iteration"), 1, f"{where}.last_batch_iteration")
        source, why = _deepspeed_config_source(state, where)
        return Original(step, None, source, "a DeepSpeed scheduler", why=why)
    if state.shape == "megatron":
        own = _whole(sched.get("num_steps"), f"{where}.num_steps")
        step = state.step if state.step is not None else own
        return Original(step, None, None, "a Megatron OptimizerParamScheduler",
                        why=f"{where} is a Megatron opt_param_scheduler state: it counts samples "
                            f"(num_steps = {own}) and does not hold init_lr or the WSD settings")
    if state.shape == "olmo-core":
        return Original(_whole(sched.get("global_step"), f"{where}.global_step"), None, None,
                        "an OLMo-core trainer state",
                        why=f"{where} is OLMo-core's trainer state: its schedulers keep no state")
    return original_of(sched, where)


def _whole_from(value, offset: int, where: str) -> int:
    """``value + offset`` as a step (DeepSpeed's ``last_batch_iteration`` is the step - 1)."""
    if isinstance(value, int) and not isinstance(value, bool) and value + offset >= 0:
        return _whole(value + offset, where)
    raise SchedlangError(f"{where} is {_shown(value)}, not a whole number of steps")


def _deepspeed_config_source(state: State, where: str) -> tuple[str | None, str | None]:
    """The schedule of the ``scheduler`` block of the DeepSpeed config saved in the checkpoint
    (``ds_config``), read by ``schedlang import --format deepspeed-json``: checked values,
    never code."""
    config = state.config
    if not isinstance(config, dict) or not isinstance(config.get("scheduler"), dict):
        return None, (f"{where} is a DeepSpeed scheduler state: it holds last_batch_iteration only, "
                      "and the checkpoint's ds_config has no scheduler block")
    try:
        text = json.dumps(config, allow_nan=False, default=str)
        return by_name("deepspeed-json").reader(text, f"{where.rstrip(': ')} ds_config", "presets"), None
    except (SchedlangError, ValueError, TypeError) as exc:
        return None, f"{where}: the checkpoint's ds_config cannot be read as a schedule ({exc})"


def _recorded_lr(state: State, original: Original) -> tuple[float | None, str | None]:
    """The lr the checkpoint says was last set, and where it says so: the scheduler's own
    ``_last_lr``, else the optimizer's first param group; None where it records neither."""
    if original.last_lr is not None:
        return original.last_lr, "the state's _last_lr"
    if state.optimizer_lr is not None:
        return state.optimizer_lr, f"the optimizer's lr at {state.optimizer_lr_key}"
    return None, None


def _total(state: State, old: _Resolved) -> tuple[int | None, str | None]:
    """The run's length in steps where known: the trainer's ``max_steps``, else the original
    schedule's duration."""
    if isinstance(state.extra.get("max_steps"), int) and state.extra["max_steps"] > 0:
        return state.extra["max_steps"], "max_steps"
    if isinstance(old.duration, int) and old.duration > 0:
        return old.duration, "the original schedule's length"
    return None, None


def _notes(state: State, step: int) -> list[str]:
    """Warnings that explain a jump without deciding the verdict: the checkpoint's own step
    count differs from the scheduler's."""
    # Lightning may step per epoch, Megatron and OLMo-core take their step from the trainer
    counted = state.step if state.kind in ("hf", "checkpoint", "deepspeed") else None
    if counted is None or counted == step:
        return []
    key = next((k for k in ("global_step", "step", "iteration", "global_steps")
                if state.extra.get(k) == counted), "step")
    owner = "the Trainer's" if state.kind == "hf" else "the checkpoint's"
    return [f"the scheduler has stepped {step} times but {owner} {key} is {counted}: it was "
            "stepped outside the training loop, or twice per step"]


@dataclass(frozen=True)
class _Resolved:
    """One side: its formula with every given parameter bound, and the parameters it declares."""

    expr: sp.Expr
    declared: frozenset
    duration: int | None = None
    program: object = None  # the Program it came from, when it came from one
    name: str = "lr"


def _from_step(side: _Resolved, step: int, what: str):
    """The schedule seen from ``step`` (its value at ``t`` is the side's at ``t + step``), as a
    ``Schedule`` for the prover; every parameter must be bound."""
    free = sorted(str(s) for s in side.expr.free_symbols if str(s) != "t")
    if free:
        raise SchedlangError(f"{what} has the unbound parameter '{free[0]}'",
                             hint=f"bind it with -D {free[0]}=VALUE (params= in Python)")
    return Schedule.from_sympy(finish(shifted(side.expr, -step)))


def _schedule(x, params: dict, role: str) -> _Resolved:
    """``x`` (a file: ``.sched``, else imported; source; a ``Schedule`` or ``Program``) with
    those of ``params`` it declares bound, over the values it was compiled with."""
    from ..verify import pick_schedule  # lazy: numpy (verify.float_scan)

    # its length is known where it is compiled with ``params`` (a file, source), or needs none
    compiled = isinstance(x, (str, Path)) or not params
    if isinstance(x, (str, Path)) and (isinstance(x, Path) or _looks_like_path(x)):
        path = Path(x)
        if path.suffix == ".sched":
            text = read_source_text(path)
        else:
            if not path.is_file():
                raise SchedlangError(f"cannot read {path}: no such file")
            text = import_file(path)
        x = compile_declared(text, params, str(path))
    schedule = pick_schedule(x, params, f"<{role}>")
    program = schedule.program
    duration = schedule.duration if compiled and isinstance(schedule.duration, int) else None
    if program is None:
        return _Resolved(schedule.expr, frozenset(), duration)
    infos = program.params
    values = bind_params(infos, {n: v for n, v in params.items() if n in infos}, program.values)
    expr = flatten(bind(schedule.symbolic_expr, {infos[n].symbol: v for n, v in values.items()}))
    if program.values != values:  # the bound program, for the token clock's placement
        program = program.rebind(values)
    return _Resolved(expr, frozenset(infos), duration, program, schedule.name)


#: Suffixes that make a string a path (``.sched`` and what ``schedlang import`` reads), not source.
PATH_SUFFIXES = (".sched", ".yaml", ".yml", ".json", ".toml", ".py", ".sh", ".txt", ".args", ".flags",
                 ".cmd")


def _looks_like_path(text: str) -> bool:
    return "\n" not in text and (Path(text).suffix.lower() in PATH_SUFFIXES or Path(text).is_file())
