"""Cerebras ModelZoo YAML's writer (``.sched`` -> a ``schedulers:`` block); the reader and the
format's declaration are ``cerebras_yaml``, which hands ``export`` to its ``FORMAT``.

**Writing** (``export``): Export reads the *syntax* of the schedule (so ``linear(...) >> cosine(...)``
becomes the SequentialLR a person would write) and the *values* of every
argument from lowering, with the program's parameters bound.  It accepts what
ModelZoo can express exactly:

* the core schedules with a Cerebras twin (``constant linear cosine poly exp
  step multistep piecewise cyclic``), ``warmup(linear|cosine|exp, n)``,
* ``cerebras.*`` presets, argument for argument,
* ``>>`` (SequentialLR, milestones left to ModelZoo's derivation from
  ``total_iters``), ``X for n`` where that is a cut of a linear piece or a hold,
* anything constant in ``t`` (ConstantLR), ``let`` names,
* the schedules named ``lr`` and ``weight_decay`` (the ``*WD`` twins), and
  ``lr__TAG`` / ``weight_decay__TAG`` (``param_group_tags: TAG``),
* ``adjust_learning_rate * (schedule)``, where ``adjust_learning_rate`` is a
  ``group`` parameter with default 1: ``ScalePerParamLR`` (``*WD``), which
  scales each param group by its own ``adjust_learning_rate``.

The file's ``run = N`` is ModelZoo's loop length (``_loop``): the output is then the
``trainer: init:`` block with ``schedulers:`` and ``loop: max_steps: N`` (into an original, the
``num_steps`` / ``max_steps`` keys it has), a run in ``tok``/``sp`` written as the steps it trains.

Anything else is exported **by proof** (``_by_proof``, over ``common/by_proof``): the Cerebras
scheduler the prover proves equal to the schedule, however the file spells it (``0.5 * cosine(1,
0, 10)`` is ``CosineDecayLR(0.5, 0, 10)``, ``if t < 10 then 1 else 0.5`` a
``PiecewiseConstantLR``), or else a ``SequentialLR`` of them cut at the schedule's breakpoints,
each child proven equal to its piece over its ``total_iters``.  A schedule equal to none is
refused at the schedule with the closest scheduler and its first differing step, and why its
syntax has no Cerebras form.  The export is then read back and proven equal to the
original with ``schedlang.equivalent`` before it is returned.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from fractions import Fraction

import sympy as sp

from ..core.algebra import bind, t
from ..errors import SchedlangError
from ..library.presets import PRESETS
from ..library.presets.cerebras import CORE_TWINS
from ..library.stdlib import SCHEDULES, Kind
from ..program import Program, Schedule
from ..semantics.lower import Lowered, lower
from ..semantics.lower_expressions import flatten_seq
from ..semantics.run import RunLength
from ..syntax import ir, unparse
from ..syntax.parser import parse
from . import cerebras_model as cm
from .cerebras_loop import loop_of
from .cerebras_model import Sched
from .common.by_proof import piece_at, proven_call
from .common.into import document, dumped
from .common.numbers import yaml_float_text
from .common.proof import proven
from .common.source_text import comment_safe
from .common.statements import module as statements_module
from .common.statements import run_stmt, schedule_stmt
from .common.yaml_source import load as load_yaml

# -- the writer: .sched -> a ModelZoo schedulers: block --------------------------------------

TARGETS = ("lr", "weight_decay")
#: schedlang builtin -> (Cerebras class, {schedlang argument: Cerebras argument}).
_CORE = {builtin: (cls, mapping) for cls, (builtin, mapping) in CORE_TWINS.items()}
_REFUSED_CORE = {
    "cosine_restarts": "Cerebras 2.10's CosineAnnealingWarmRestarts computes the wrong phase after the "
                       "first period; write the cycles out as a sequence of cosine(...) pieces",
    "inverse_sqrt": "its Cerebras twin needs sqrt(n) as a number, which YAML cannot hold exactly; use "
                    "cerebras.InverseSquareRootDecayLR directly",
    "repeat": "ModelZoo has no repeat; write the repetitions out with >>",
    "cycle": "ModelZoo has no repeat; write the repetitions out with >>",
    "stretch": "ModelZoo has no time scaling; scale the durations of the pieces instead",
    "scale": "ModelZoo has no time scaling; scale the durations of the pieces instead",
    "onecycle": "cstorch's OneCycleLR has no total_iters (so it cannot stand before >>) and extrapolates "
                "past total_steps where schedlang holds; use cerebras.OneCycleLR if you want its exact "
                "behaviour",
}


@dataclass
class _Piece:
    """A translated scheduler and, inside a sequence, how many steps it runs."""

    sched: Sched
    node: ir.Node
    length: sp.Expr | None = None


def export(source: str | bytes, filename: str = "<string>", params: dict | None = None,
           verify: bool = True, schedules: list[str] | None = None, *, read, into=None) -> str:
    """The ModelZoo ``schedulers:`` YAML for a ``.sched`` program (parameters bound), proven
    equal when read back with ``read`` (this format's reader, handed over by ``formats.export``).

    ``schedules`` picks the schedules to export (default: all of them).
    """
    module = parse(source, filename)
    lowered = lower(module)
    program = Program(lowered, params or {})
    translator = _Translator(lowered, program, module)
    scheds = []
    for name in schedules or ():
        program[name]  # an unknown name is an error with a hint
    untagged: dict[str, ir.ScheduleDecl] = {}
    for stmt in module.statements:
        if not isinstance(stmt, ir.ScheduleDecl) or (schedules and stmt.name not in schedules):
            continue
        key, _, tag = stmt.name.partition("__")
        if key not in TARGETS or "__" in tag:
            raise SchedlangError(f"Cerebras schedules only lr and weight_decay (lr__TAG for the groups "
                                 f"tagged TAG), not '{stmt.name}'", stmt.span,
                                 hint="rename it, or pick the others with --schedule lr")
        sched = _translated(translator, program, stmt)
        sched.target, sched.tags = key, (tag,) if tag else ()
        if sched.name == "ScalePerParamLR":  # cstorch requires its scheduler to carry the same tags
            sched.children[0].tags = sched.tags
        if not tag:
            untagged[key] = stmt
        scheds.append(sched)
    for sched in scheds:
        if sched.tags and sched.target in untagged:
            raise SchedlangError(f"'{sched.target}' and '{sched.target}__{sched.tags[0]}' would both drive "
                                 f"the groups tagged {sched.tags[0]} in ModelZoo (an untagged scheduler "
                                 "drives every group)", untagged[sched.target].span,
                                 hint=f"tag the other groups too and name the schedule {sched.target}__TAG")
    text = render(scheds, filename, into, _loop(program, into), _run_note(program.run_length))
    if verify:
        _verify(program, text, filename, schedules, read, into)
    return text


def _run_note(run: RunLength | None) -> str:
    """The loop keys' YAML comment: the file's run, and for a run in ``tok``/``sp`` the file's
    declaration quoted (``run = 5000tok``), since the keys hold the steps it trains, not it."""
    if run is None or run.unit is None:
        return "the file's run"
    return unparse.statement(run_stmt(run.text)) + ": the steps it trains"  # the statement quoted


def _merged(into, text: str) -> str:
    """The original ModelZoo config with its ``trainer.init.schedulers`` (or top-level
    ``schedulers:``) replaced by the written list, and the written loop keys (the run, ``_loop``)
    set in its ``trainer.init.loop`` (or legacy ``runconfig``); a legacy ``optimizer.learning_rate``
    config is refused (the list belongs to the 2.x trainer layout)."""

    import yaml  # lazy: PyYAML (the read-back needs it anyway)

    data = copy.deepcopy(document(into))
    written = yaml.safe_load(text)
    init = written.get("trainer", {}).get("init", {})
    schedulers, loop = init.get("schedulers", written.get("schedulers")), init.get("loop")
    optimizer = data.get("optimizer")
    if isinstance(optimizer, dict) and "learning_rate" in optimizer:
        raise SchedlangError(f"{into.filename} is a legacy ModelZoo config (optimizer.learning_rate), "
                             "which takes no schedulers: list", hint="export --into its trainer.init "
                                                                     "form, or without --into")
    trainer = data.get("trainer")
    if isinstance(trainer, dict) and isinstance(trainer.get("init"), dict):
        trainer["init"]["schedulers"] = schedulers
        if loop is not None:
            if "loop" not in trainer["init"] and isinstance(data.get("runconfig"), dict):
                data["runconfig"].update(loop)
            else:
                if not isinstance(trainer["init"].get("loop"), dict):
                    trainer["init"]["loop"] = {}
                trainer["init"]["loop"].update(loop)
    else:
        data["schedulers"] = schedulers
        if loop is not None:
            data["runconfig"].update(loop)  # `_loop` refused an original with no loop to hold the run
    return dumped(into, data)


def _loop(program: Program, into) -> dict | None:
    """The loop keys that state the file's ``run`` (None without one): ModelZoo's loop counts
    steps, so a run in ``tok``/``sp`` is written as the steps it trains on the file's batch.  Into
    an original, the keys it gives (``num_steps`` and/or ``max_steps``: from global step 0 both
    count the steps trained), ``max_steps`` where it gives neither; a loop in ``num_epochs`` is
    refused (its steps are the dataloader's length, which no key of the config states)."""
    if program.run_length is None:
        return None
    run = program.run
    if into is None:
        return {"max_steps": run}
    root = load_yaml(into.text, into.filename)
    loop = None
    if root.is_mapping:
        trainer = root.value.get("trainer")
        init = trainer.value.get("init") if trainer is not None and trainer.is_mapping else None
        if init is not None and init.is_mapping:
            loop = init.value.get("loop")
        if loop is None:
            loop = root.value.get("runconfig")
        if (loop is None or not loop.is_mapping) and (init is None or not init.is_mapping):
            raise SchedlangError(f"the run is {run} steps, but {into.filename} has no trainer.init (nor "
                                 "runconfig) whose loop could state it", program.run_length.span,
                                 hint="export without --into (it writes trainer.init.loop), add "
                                      "`trainer: {init: {loop: {max_steps: N}}}` to the original, "
                                      "or drop `run = ...`")
    if loop is None or not loop.is_mapping:
        return {"max_steps": run}
    epochs = loop.value.get("num_epochs")
    if epochs is not None and epochs.value is not None:
        raise SchedlangError(f"{into.filename} trains num_epochs, which ModelZoo counts in passes over "
                             f"the dataloader, not in steps, so it cannot state the run of {run} steps",
                             loop.key_spans["num_epochs"],
                             hint=f"replace `num_epochs` by `max_steps: {run}` in the original, or drop "
                                  "`run = ...` to export the schedulers alone")
    found = loop_of(root)
    if found is not None and found.accumulates():
        raise SchedlangError(f"{into.filename} accumulates gradients off the CSX: ModelZoo's loop runs "
                             f"its steps as batches and steps the optimizer on every "
                             f"grad_accum_steps-th, so no step count states the run of {run} updates",
                             found.accum.span, hint="set `grad_accum_steps: 1` (or `backend_type: CSX`) "
                                                    "in the original, or drop `run = ...`")
    keys = [k for k in ("num_steps", "max_steps") if loop.value.get(k) is not None
            and loop.value[k].value is not None]
    return {key: run for key in keys or ["max_steps"]}


def _verify(program: Program, text: str, filename: str, schedules, read, into=None) -> None:
    """Read the export back and prove it equal to the original (skipped without PyYAML)."""
    try:
        import yaml  # noqa: F401 - lazy: yaml (is PyYAML there?)
    except ImportError:  # pragma: no cover - depends on the environment
        return

    # a group's own factor, not only its default: proven again with another value bound
    rebind = {cm.SCALE_PARAM: sp.Rational(3, 7)} if cm.SCALE_PARAM in program.params else None
    merged = text if into is None else _merged(into, text)  # dumped: the `# ~` marks are in `text`
    proven(program, merged, read, into.filename if into is not None else filename, schedules=schedules,
           style="core", rtol=_RTOL if _inexact(text) else 0, rebind=rebind, strict=False,
           into=into.filename if into is not None else None)


_RTOL = sp.Rational(1, 10**12)


def _inexact(text: str) -> bool:
    return "# ~" in text


# -- by proof: the Cerebras scheduler, or SequentialLR of them, proven equal to a schedule ----------

#: The cstorch 2.10 classes whose presets follow the documented intent, not 2.10 itself
#: (``presets.cerebras``, docs/presets.md): a proof against the preset says nothing of the run.
_DEVIATING = ("CosineAnnealingWarmRestarts", "OneCycleLR")
#: The classes written by proof: each LR class whose preset is what 2.10 runs and whose YAML
#: holds a closed form, no composite (a SequentialLR is ``_chain``'s, cut at breakpoints); the
#: plainest first, as the search writes the first of those proven equal (a ramp as LinearLR, not
#: PolynomialLR of power 1).
WRITES = tuple(sorted((f"cerebras.{name}" for name in cm.CLASSES if name not in (
    *cm.UNSUPPORTED, *_DEVIATING, "SequentialLR", "ChainedScheduler", "ScalePerParamLR")),
    key=lambda name: name not in ("cerebras.ConstantLR", "cerebras.LinearLR", "cerebras.CosineDecayLR")))
#: Those that may stand before another child of a SequentialLR: ModelZoo derives its milestones
#: from their ``total_iters``.
SIZED = tuple(n for n in WRITES if any(a[0] == "total_iters" for a in cm.CLASSES[n.split(".", 1)[1]]))


def _translated(translator: _Translator, program: Program, stmt: ir.ScheduleDecl) -> Sched:
    """``stmt``'s scheduler by its syntax (``_Translator``), or where that has no Cerebras form,
    by proof (``_by_proof``)."""
    try:
        return translator.scaled(stmt.value)
    except SchedlangError as refused:
        return _by_proof(program, stmt, refused, bool(translator.group))


def _by_proof(program: Program, stmt: ir.ScheduleDecl, refused: SchedlangError, grouped: bool) -> Sched:
    """The Cerebras scheduler proven equal to ``stmt``'s schedule at every step (of the file's
    run, where it declares one), or a SequentialLR of them (``_chain``); else the refusal at the
    schedule naming the closest scheduler and its first differing step, and why its syntax has no
    Cerebras form (``refused``, the construct's refusal).  A schedule of a file with a group
    parameter is refused as its construct is (ScalePerParamLR wraps a construct); one with a
    parameter left unbound as ``proven_call`` refuses it (naming the parameter to bind), at the
    argument where the construct's refusal is the same."""
    if grouped:
        raise refused
    schedule = program[stmt.name]
    run = program.run if program.run_length is not None else None
    span = stmt.value.span
    try:
        return _sched_of(proven_call(schedule, "cerebras", WRITES, run, span), span)
    except SchedlangError as single:
        if schedule.expr.free_symbols - {t}:  # the construct's own refusal where it says so too:
            raise (refused if refused.message == single.message else single) from None  # at the argument
        chain, why = _chain(schedule, run, span)
        if chain is not None:
            return chain
        hint = f"nor is it a SequentialLR of them ({why}); by its syntax, {refused.message}"
        raise SchedlangError(single.message, span,
                             hint=hint + (f" ({refused.hint})" if refused.hint else "")) from None


def _chain(schedule: Schedule, run: int | None, span) -> tuple[Sched | None, str]:
    """A SequentialLR equal to ``schedule``: cut at its breakpoints (``_cuts``), each piece but
    the last proven equal over its own steps to a scheduler running exactly those
    (``total_iters``, whence ModelZoo derives the milestones), the last at every step after it
    (to the run's end); ``(None, why)`` where a piece is no Cerebras scheduler."""
    cuts = _cuts(schedule, run)
    if not cuts:
        return None, "it has no breakpoint to cut it at"
    children = []
    for (start, branch), (stop, _) in zip([(0, 0), *cuts], [*cuts, (run, None)]):
        last, length = start == cuts[-1][0], None if stop is None else stop - start
        piece = Schedule.from_sympy(piece_at(schedule.expr, branch).subs(t, t + start), length)
        try:
            child = _sched_of(proven_call(piece, "cerebras", WRITES if last else SIZED, length, span), span)
        except SchedlangError:
            child = None
        if child is not None and not last and child.name == "ConstantLR":
            child.args["total_iters"] = length
        if child is None or not (last or child.args.get("total_iters") == length):
            return None, f"no Cerebras scheduler is its piece from step {start}" + (
                "" if stop is None else f" to {stop}")
        children.append(child)
    sequence = Sched("SequentialLR", children=children, span=span)
    sequence.args["milestones"] = cm.milestones_from_total_iters(children)
    return sequence, ""


def _cuts(schedule: Schedule, run: int | None) -> list[tuple[int, int]]:
    """Where a chain's pieces start, with the step whose branch is the piece's formula: each
    breakpoint (a whole step: a scheduler switches at one), or the step before it where the next
    branch already holds there (a one-cycle's phase peaks at torch's ``pct_start * total - 1``,
    the step before its branch ends: the next phase is one step longer than the branch)."""
    cuts = []
    for b in sorted({int(math.ceil(b)) for b in schedule.breakpoints if b > 0}):
        if run is not None and b >= run:
            break
        early = b - 1 > (cuts[-1][0] if cuts else 0) and \
            piece_at(schedule.expr, b).subs(t, b - 1) == schedule.expr.subs(t, b - 1)
        cuts.append((b - 1 if early else b, b))
    return cuts


def _sched_of(call: str, span) -> Sched:
    """The scheduler of a ``cerebras.*`` call (``by_proof``'s text: numbers only), translated as
    a file's own call is, placed at ``span`` (the schedule it was proven equal to)."""
    tree = statements_module(schedule_stmt("lr", call))
    lowered = lower(tree)
    sched = _Translator(lowered, Program(lowered, {}), tree).top(tree.statements[0].value)
    sched.span = span
    return sched


class _Translator:
    def __init__(self, lowered: Lowered, program: Program, module: ir.Module):
        self.lowered = lowered
        self.program = program
        self.lets = {s.name: s.value for s in module.statements if isinstance(s, ir.Let)}
        self.defs = {s.name for s in module.statements if isinstance(s, ir.Def)}
        self.group = {info.symbol: name for name, info in program.group_params.items()}
        for name, info in program.group_params.items():
            if name != cm.SCALE_PARAM or info.default != 1:
                raise SchedlangError(f"group parameter '{name}' has no Cerebras form", info.span,
                                     hint=f"cstorch's ScalePerParamLR reads `param {cm.SCALE_PARAM}: "
                                          "group = 1` (each group's adjust_learning_rate, else 1)")

    def scaled(self, node: ir.Node) -> Sched:
        """``adjust_learning_rate * X`` (the group parameter ScalePerParamLR reads) is
        ``ScalePerParamLR(X)``; anything else is ``top``'s."""
        while isinstance(node, ir.Name) and node.id in self.lets:
            node = self.lets[node.id]
        if isinstance(node, ir.BinOp) and node.op == "*":
            for factor, rest in ((node.left, node.right), (node.right, node.left)):
                if isinstance(factor, ir.Name) and factor.id == cm.SCALE_PARAM and self.group:
                    return Sched("ScalePerParamLR", children=[self.top(rest)], span=node.span)
        return self.top(node)

    # -- values ------------------------------------------------------------------------

    def bound(self, expr: sp.Expr, node: ir.Node) -> sp.Expr:
        group = sorted(self.group[s] for s in expr.free_symbols if s in self.group)
        if group:
            raise SchedlangError(f"group parameter '{group[0]}' has a value per param group here, which "
                                 "a Cerebras scheduler's arguments cannot hold", node.span,
                                 hint=f"Cerebras YAML scales by groups only around the whole schedule: "
                                      f"`{cm.SCALE_PARAM} * (...)` (ScalePerParamLR)")
        value = bind(expr, self.program.substitutions)
        if value.free_symbols:
            missing = sorted(str(s) for s in value.free_symbols)[0]
            raise SchedlangError(f"parameter '{missing}' has no value", node.span,
                                 hint=f"bind it with -D {missing}=... (the export writes numbers)")
        return sp.nsimplify(value) if isinstance(value, sp.Float) else value

    def number(self, node: ir.Node, what: str) -> sp.Expr:
        segment = self.lowered.segment(node, "a number")
        if segment.depends_on_step:
            raise SchedlangError(f"{what} must be a number for Cerebras, not a schedule", node.span)
        return self.bound(segment.expr, node)

    def segment(self, node: ir.Node):
        return self.lowered.segment(node, "a schedule")

    # -- schedules -----------------------------------------------------------------------

    def top(self, node: ir.Node) -> Sched:
        piece = self.piece(node)
        if piece.length is not None:  # `X for n` alone: fine if X has settled by n
            own = cm.own_length(piece.sched)
            if not (piece.sched.name == "ConstantLR" or (own is not None and own <= piece.length)):
                raise SchedlangError("`for` cuts this schedule before its end, and a Cerebras scheduler "
                                     "cannot stop early on its own", node.span,
                                     hint="follow it with `>>` and the next schedule")
        return piece.sched

    def piece(self, node: ir.Node) -> _Piece:
        if isinstance(node, ir.Seq):
            return _Piece(self.sequence(node), node)
        if isinstance(node, ir.For):
            inner = self.piece(node.body)
            length = self.number(node.steps, "the length after `for`")
            return _Piece(inner.sched, node, length)
        if isinstance(node, ir.Name) and node.id in self.lets:
            return self.piece(self.lets[node.id])
        if isinstance(node, ir.Call):
            return _Piece(self.call(node), node)
        segment = self.segment(node)
        if not segment.depends_on_step:
            value = self.bound(segment.expr, node)
            return _Piece(Sched("ConstantLR", {"learning_rate": value}, span=node.span), node)
        raise SchedlangError(f"{_construct(node)} has no Cerebras scheduler", node.span,
                             hint="Cerebras YAML can hold its scheduler classes, >> (SequentialLR) "
                                  "and constants; use `schedlang compile --target cerebras` for any "
                                  "schedule")

    def sequence(self, node: ir.Seq) -> Sched:
        parts = flatten_seq(node)
        children: list[Sched] = []
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            if isinstance(part, ir.Call) and part.func.id == "warmup":
                if last:
                    raise SchedlangError("a warmup must be followed by `>>`", part.span)
                piece = self.warmup(part, parts[i + 1])
            else:
                piece = self.piece(part)
            if piece.sched.name == "SequentialLR":
                nested = piece.sched.children
                if not last:
                    length = self.segment(part).duration if piece.length is None else piece.length
                    total = sum((c.args["total_iters"] for c in nested[:-1]), sp.Integer(0))
                    children.extend(nested[:-1])
                    children.extend(self.fit(nested[-1], self.bound(length, part) - total, part))
                else:
                    children.extend(nested)
                continue
            if last:
                children.append(piece.sched)
                continue
            length = piece.length
            if length is None:
                duration = self.segment(part).duration
                if duration is None:
                    raise SchedlangError("nothing can follow an infinite schedule", part.span)
                length = self.bound(duration, part)
            children.extend(self.fit(piece.sched, length, part))
        sched = Sched("SequentialLR", children=children, span=node.span)
        sched.args["milestones"] = cm.milestones_from_total_iters(children)
        return sched

    def fit(self, sched: Sched, length: sp.Expr, node: ir.Node) -> list[Sched]:
        """``sched`` as SequentialLR children running exactly ``length`` steps (total_iters = length)."""
        if sched.name == "ConstantLR":
            sched.args["total_iters"] = length
            return [sched]
        own = sched.args.get("total_iters") if sched.name in (
            "LinearLR", "CosineDecayLR", "PolynomialLR", "ExponentialLR",
            "InverseExponentialTimeDecayLR") else None
        if own == length:
            return [sched]
        if own is not None and sched.name in ("LinearLR", "CosineDecayLR", "PolynomialLR") and own < length:
            end = sched.args["end_learning_rate"]
            hold = Sched("ConstantLR", {"learning_rate": end, "total_iters": length - own}, span=node.span)
            return [sched, hold]
        if own is not None and sched.name == "LinearLR" and own > length:
            start, end = sched.args["initial_learning_rate"], sched.args["end_learning_rate"]
            cut = Sched("LinearLR", {"initial_learning_rate": start,
                                     "end_learning_rate": start + (end - start) * length / own,
                                     "total_iters": length}, span=node.span)
            return [cut]
        if own is None:
            raise SchedlangError(f"{sched.name} has no total_iters, so ModelZoo cannot place it before "
                                 "another scheduler", node.span,
                                 hint="ModelZoo derives SequentialLR milestones from total_iters; a "
                                      "piece before `>>` must be linear, cosine, poly, exp (for its "
                                      "decay period) or constant")
        raise SchedlangError(f"this {sched.name} runs {own} steps but `for` gives it {length}", node.span,
                             hint="ModelZoo takes a scheduler's length from its total_iters; make them equal")

    def warmup(self, node: ir.Call, following: ir.Node) -> _Piece:
        warm = self.lowered.value(node)
        target = self.bound(self.segment(following).start_value(), following)
        start = self.bound(warm.start, node)
        steps = self.bound(warm.steps, node)
        if warm.shape == "linear":
            sched = Sched("LinearLR", {"initial_learning_rate": start, "end_learning_rate": target,
                                       "total_iters": steps}, span=node.span)
        elif warm.shape == "cosine":
            sched = Sched("CosineDecayLR", {"initial_learning_rate": start, "end_learning_rate": target,
                                            "total_iters": steps}, span=node.span)
        else:
            sched = Sched("ExponentialLR", {"initial_learning_rate": start, "total_iters": steps,
                                            "decay_rate": target / start}, span=node.span)
        return _Piece(sched, node, steps)

    def call(self, node: ir.Call) -> Sched:
        name = node.func.id
        if name in self.defs:
            raise SchedlangError(f"the user function '{name}' cannot be exported", node.func.span,
                                 hint="write it with standard schedules or cerebras.* presets")
        if name in _REFUSED_CORE:
            raise SchedlangError(f"{name}(...) cannot be exported to Cerebras YAML", node.func.span,
                                 hint=_REFUSED_CORE[name])
        if name in _CORE:
            cls, mapping = _CORE[name]
            given = _given(SCHEDULES[name], node)
            sched = Sched(cls, span=node.span)
            for arg_name, arg_node in given.items():
                sched.args[mapping[arg_name]] = self.arg_value(arg_node, SCHEDULES[name], arg_name)
            if cls == "ConstantLR":
                sched.args.pop("total_iters", None)
            return sched
        if name.startswith("cerebras."):
            return self.preset(node, PRESETS.get(name))
        if "." in name:
            raise SchedlangError(f"{name} cannot be exported to Cerebras YAML", node.func.span,
                                 hint="export supports the core schedules and cerebras.* presets")
        raise SchedlangError(f"{name}(...) has no Cerebras scheduler", node.func.span)

    def arg_value(self, node: ir.Node, builtin, arg_name: str):
        kind = next(a.kind for a in builtin.args if a.name == arg_name)
        if kind == Kind.FLAG:
            return self.lowered.argument(builtin, next(a for a in builtin.args if a.name == arg_name), node)
        if kind == Kind.OPTION:
            return node.value if isinstance(node, ir.String) else None
        if kind == Kind.VALUES:
            value = self.lowered.value(node)
            items = node.items if isinstance(node, ir.List) else [node] * len(value.items)
            return [self.bound(self.lowered.constant_of(v, n, arg_name), n)
                    for v, n in zip(value.items, items)]
        return self.number(node, f"argument '{arg_name}'")

    def preset(self, node: ir.Call, builtin) -> Sched:
        cls = node.func.id.split(".", 1)[1]
        found = cm.lookup(cls)
        if builtin is None or found is None or found[0] in cm.UNSUPPORTED:
            raise SchedlangError(f"{node.func.id} cannot be exported to Cerebras YAML", node.func.span,
                                 hint=cm.UNSUPPORTED.get(found[0] if found else "", None))
        name, target = found
        spec = {a[0]: a for a in cm.CLASSES[name]}
        sched = Sched(name, span=node.span)
        for given_name, arg_node in _given(builtin, node).items():
            arg_name = cm.WD_ARGS.get(given_name, given_name) if target == "weight_decay" else given_name
            if arg_name not in spec:
                raise SchedlangError(f"{node.func.id}'s argument '{arg_name}' has no ModelZoo key",
                                     arg_node.span)
            kind = spec[arg_name][1]
            if kind == "schedulers":
                items = arg_node.items if isinstance(arg_node, ir.List) else None
                if items is None:
                    raise SchedlangError("write the schedulers as a list [...] to export them", arg_node.span)
                sched.children = [self.piece(item).sched for item in items]
            elif kind in ("flag", "option", "list"):
                sched.args[arg_name] = self.arg_value(arg_node, builtin, given_name)
            else:
                sched.args[arg_name] = self.number(arg_node, f"argument '{given_name}'")
        if name == "SequentialLR":
            derived = cm.milestones_from_total_iters(sched.children)
            if derived is None or ("milestones" in sched.args and list(sched.args["milestones"]) != derived):
                raise SchedlangError("ModelZoo derives SequentialLR milestones from total_iters; these "
                                     "schedulers and milestones do not agree", node.span)
            sched.args["milestones"] = derived
        return sched


def _given(builtin, node: ir.Call) -> dict:
    given = {a.name: arg for a, arg in zip(builtin.args, node.args)}
    given.update({kw.name: kw.value for kw in node.keywords})
    return given


def _construct(node: ir.Node) -> str:
    if isinstance(node, ir.If):
        return "`if ... then ... else`"
    if isinstance(node, ir.BinOp):
        return f"arithmetic on schedules (`{node.op}`)"
    if isinstance(node, ir.Unary):
        return "a negated schedule"
    if isinstance(node, ir.Name):
        return "`t`" if node.id == "t" else f"'{node.id}'"
    return "this expression"


# -- YAML text ---------------------------------------------------------------------------


def render(scheds: list[Sched], origin: str, into=None, loop: dict | None = None,
           note: str = "the file's run") -> str:
    """The ``schedulers:`` list; with the file's run (``loop``, from ``_loop``) the list and the
    loop keys under ``trainer: init:``, the layout of a ModelZoo 2.x config, ``note`` on each."""
    where = "trainer.init.schedulers" + (" and trainer.init.loop" if loop else "")
    lines = [f"# Exported by `schedlang export` from {comment_safe(str(origin))} (ModelZoo {where})."]
    if into is not None and loop is None:
        lines += [f"# Proved merged into {comment_safe(into.filename)}: this list takes the place of its",
                  "# trainer.init.schedulers (or top-level schedulers:); its other keys are kept."]
    elif into is not None:
        lines += [f"# Proved merged into {comment_safe(into.filename)}: these take the place of its",
                  f"# trainer.init.schedulers and its loop's {' / '.join(loop)}; its other keys are kept."]
    if loop is None:
        lines.append("schedulers:")
        for sched in scheds:
            lines.extend(_render(sched, 0))
        return "\n".join(lines) + "\n"
    lines += ["trainer:", "  init:", "    schedulers:"]
    for sched in scheds:
        lines.extend(_render(sched, 3))
    lines.append("    loop:")
    lines += [f"      {key}: {steps}  # {note} (ModelZoo's loop counts steps)"
              for key, steps in loop.items()]
    return "\n".join(lines) + "\n"


def _render(s: Sched, depth: int) -> list[str]:
    pad = "  " * depth
    wd = s.target == "weight_decay"
    name = cm.LR_TO_WD[s.name] if wd else s.name
    lines = [f"{pad}- {name}:"]
    if s.tags:
        lines.append(f"{pad}    param_group_tags: {s.tags[0] if len(s.tags) == 1 else _scalar(list(s.tags))}")
    for arg_name, kind, _ in cm.CLASSES[s.name]:
        key = cm.LR_TO_WD_ARGS.get(arg_name, arg_name) if wd else arg_name
        if kind == "schedulers":
            lines.append(f"{pad}    {key}:")
            for child in s.children:
                child.target = s.target
                lines.extend(_render(child, depth + 2))
            continue
        if arg_name == "milestones" and s.name == "SequentialLR":
            continue  # ModelZoo derives them from total_iters
        value = s.args.get(arg_name)
        if value is None:
            continue
        lines.append(f"{pad}    {key}: {_scalar(value)}")
    return lines


def _scalar(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "[" + ", ".join(_scalar(v) for v in value) + "]"
    value = sp.nsimplify(value) if isinstance(value, sp.Float) else value
    if value.is_Integer:
        return str(int(value))
    if not value.is_Rational:
        raise SchedlangError(f"the value {value} is not a rational number; YAML cannot hold it exactly")
    text = yaml_float_text(float(value))

    if Fraction(text.replace(".0e", "e")) != Fraction(int(value.p), int(value.q)):
        return f"{text}  # ~ {value}"
    return text
