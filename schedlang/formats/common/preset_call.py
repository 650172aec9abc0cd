"""What the writers share whose format names *one* scheduler with its keywords (Composer YAML, HF
TrainingArguments, DeepSpeed's ``scheduler`` block, Megatron-LM's flags): each writer, next to
its reader in its format's module, takes a program whose ``lr`` is one call of that library's
presets (``composer.CosineAnnealingWithWarmupScheduler(...)``, ``hf.cosine(...)``), possibly
through ``let`` names, and maps every keyword to a key one to one.  An lr written any other way
(a ``>>`` chain, core calls) is exported by proof: ``by_proof.proven_call`` finds the preset call
the prover proves equal to it, which takes its place (``found``), or refuses at the schedule with
the closest one and its first differing step.  Arguments are
written as numbers with the program's parameters bound (``PresetCall.number``), except Composer
time literals (``100ba``, ``0.1dur``, ``2ep``), which stay as written.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import sympy as sp

from ...core.algebra import bind, t
from ...errors import SchedlangError, warn
from ...library.presets import PRESETS
from ...library.stdlib import Kind
from ...program import Program
from ...semantics.lower import lower
from ...syntax import ir
from ...syntax.parser import parse
from . import by_proof
from .into import offset
from .numbers import FLOAT64_RTOL, decimal_text, float64_of, writable, yaml_float_text


def number_text(value: sp.Expr) -> str:
    """A bound number as YAML or flag text (an integer stays one)."""
    return str(int(value)) if value.is_Integer else yaml_float_text(float(value))


def json_number(value: sp.Expr):
    """A bound number as a JSON value (an integer stays one)."""
    if value.is_Integer:
        return int(value)
    return float(value)


class PresetCall:
    """The ``lr`` schedule's preset call, its keywords and a way to read their bound values."""

    def __init__(self, source, filename: str, params: dict | None, library: str, example: str,
                 others: tuple[str, ...] = (), writes: tuple[str, ...] | None = None,
                 groups: PerGroup | None = None, primary: str = "lr", exact: bool = False):
        """``writes``: the presets the writer writes: an lr that is no call of the library is
        replaced by the call of one of them proven equal to it (``by_proof``).  None: no search,
        the lr must be one call (what ``resume`` reads a recovered call with).  ``groups``: the
        param groups the format gives an lr of their own (``lr__TAG`` schedules, kept in
        ``self.groups``); any other ``KEY__TAG`` is refused naming its group and what the
        format lacks.  ``primary``: the schedule that names the scheduler (``lr``, or one group's).
        A writer (``writes`` given) writes numbers as floats: an argument that has no float's text
        (``1/3``) is replaced by its float64 (``_rounded``); ``exact``: that was done."""
        self.found = None  # the preset call proven equal to the file's lr, where it was not one
        self._setup = {"library": library, "example": example, "others": others, "writes": writes,
                       "groups": groups, "primary": primary}
        self.source, self.params, self.filename = source, params or {}, filename
        module = parse(source, filename)
        self.module = module
        lowered = lower(module)
        self.program = Program(lowered, params or {})
        refuse_group_params(self.program, library)
        self.lowered = lowered
        lets = {s.name: s.value for s in module.statements if isinstance(s, ir.Let)}
        decls = [s for s in module.statements if isinstance(s, ir.ScheduleDecl)]
        self.others = {}  # name -> the node of a schedule the format also carries (``others``)
        self.groups = {}  # tag -> the declaration of ``lr__TAG``, a group the format gives its own lr
        self.written = self.groups  # the same in the file as written (the lr found by proof spliced in)
        for decl in decls:
            if decl.name in others or decl.name != primary:
                self._keep_other(decl, lets, others, groups, library)
        lr = [d for d in decls if d.name == primary]
        node = _unlet(lr[0].value, lets) if lr else None
        written_node = node  # on_samples(...) included: the clock it counts (``clock_of``)
        self.on_samples = on_samples(node) is not None
        if self.on_samples and library == "megatron-args":  # Megatron's class counts samples
            node = _unlet(on_samples(node), lets)
        prefix = library.split("-")[0]
        direct = isinstance(node, ir.Call) and node.func.id.startswith(prefix + ".")
        clock = clock_of(self.program, module, written_node) if writes and lr and not direct else None
        if writes and lr and not direct and (not self.on_samples or clock):  # no call of the library
            if clock is not None and clock[0] not in ON_CLOCKS.get(library, ()):
                refuse_clock(library, clock, lr[0].value.span)
            if clock is not None and clock[1] is None:  # a changing batch
                found = self._on_ramp(prefix, writes, library, clock, lr[0].value.span)
            else:
                found = by_proof.proven_call(self.program[primary], prefix, writes, self.run(),
                                             lr[0].value.span)
                if clock is not None:
                    found = self._on_clock(found, library, clock, lr[0].value.span)
            written = self.groups  # their declarations in the file as written, for the messages
            self.__init__(spliced(source, lr[0].value.span, found), filename, params, library, example,
                          others, writes, groups, primary, exact=True)
            self.written = written
            self.found = found
            self._rounded(lr[0].value.span, library)
            return
        if not direct:
            span = node.span if node is not None else None
            raise SchedlangError(f"{library} export needs the lr to be one {library.split('-')[0]}.* preset "
                                 "call", span, hint=f"e.g. schedule lr = {example}: the format names one "
                                                    "scheduler with its keywords")
        self.node = node
        self.name = node.func.id
        builtin = PRESETS[self.name]
        self.builtin = builtin
        self.given = {a.name: arg for a, arg in zip(builtin.args, node.args)}
        self.given.update({kw.name: kw.value for kw in node.keywords})
        if writes is not None and not exact:
            self._rounded(lr[0].value.span, library)

    def _keep_other(self, decl: ir.ScheduleDecl, lets: dict, others: tuple[str, ...],
                    groups: PerGroup | None, library: str) -> None:
        """Keep a schedule other than the primary one: one the format also carries (``others``)
        or a param group's ``lr__TAG``; refuse any other."""
        if decl.name in others:
            self.others[decl.name] = _unlet(decl.value, lets)
            return
        key, tag = split_tag(decl.name)
        if tag is None:
            raise SchedlangError(f"{library} schedules only the lr, not '{decl.name}'", decl.span,
                                 hint="export the lr schedule alone (--schedule lr)")
        if groups is None or key != "lr" or tag not in groups.tags:
            refuse_group(library, decl, key, tag, groups)
        self.groups[tag] = decl
    def _on_ramp(self, prefix: str, writes: tuple[str, ...], library: str,
                 clock: tuple[str, None, int | None], at) -> str:
        """The call proven equal to a file on the sample or token clock under a changing batch:
        the file placed on a run of one sample a step (``Program.on_clock``) is its lr as a
        function of the samples consumed, which a framework whose scheduler counts samples (or
        tokens) under its batch ramp runs; the call found for it, written on the file's clock
        (``_on_clock``, at one sample a step), is proven equal to the file under its own batch.
        Refused at ``at`` by a framework whose config has one batch (``ON_RAMPS``)."""
        from ...core.clock import Clock  # lazy: program imports formats

        if library not in ON_RAMPS:
            refuse_ramp(library, clock, at)
        unit, _, seq_len = clock
        flat = self.program.on_clock(Clock(((0, 1),), seq_len))
        samples = self.program.run_samples if self.run() is not None else None  # the counts it reads
        found = by_proof.proven_call(flat[self._setup["primary"]], prefix, writes, samples, at, "sample")
        return self._on_clock(found, library, (unit, 1, seq_len), at, per="at one sample a step",
                              hint="write every length of the lr in samples or tokens (on_samples(...), "
                                   "sp, tok): under a changing batch a length in steps is no count of "
                                   "samples, which the scheduler counts")

    def _on_clock(self, call: str, library: str, clock: tuple[str, int, int | None], at,
                  per: str = "on the step clock",
                  hint: str = "write its lengths in steps to export it in steps") -> str:
        """``call`` (found on the step clock) on the file's sample or token clock (``clock_of``),
        as the framework counts it: Megatron's class counts samples (``on_samples(...)``, its
        lengths in samples), Composer's times ``Nsp`` / ``Ntok``, OLMo-core ``units="tokens"``;
        proven equal to the file at every step of the run; refused at ``at`` by a framework whose
        scheduler counts optimizer steps only."""
        from ...program import compile as compile_source  # lazy: program imports formats
        from ...verify import equivalent  # lazy: numpy (verify.float_scan)

        unit, batch, seq_len = clock
        if library == "megatron-args":
            text = f"on_samples({by_proof.on_axis(call, batch)})"
        elif library == "composer-yaml":
            text = by_proof.on_axis(call, batch * (seq_len if unit == "tokens" else 1),
                                    "tok" if unit == "tokens" else "sp")
        else:  # OLMo-core's tokens (``ON_CLOCKS``)
            text = by_proof.on_axis(call, batch * seq_len, units='"tokens"')
        program = compile_source(spliced(self.source, at, text), self.params, self.filename)
        primary = self._setup["primary"]
        verdict = equivalent(self.program[primary], program[primary], stop=self.run())
        if not verdict:
            raise SchedlangError(f"{call} is this lr schedule {per}, but {text} on the {unit} "
                                 f"clock is not proven equal to it ({verdict})", at, hint=hint)
        return text

    def _rounded(self, at, library: str) -> None:
        """Each number argument that a float's text cannot write (``1/3``, the ``1111/1110000`` a
        proof may find) replaced by the float64 the writer writes (``numbers.float64_of``): the
        call with them is proven within ``FLOAT64_RTOL`` of the file at every step (of the run),
        said in a warning at ``at`` (the file's lr), and is what the writer writes and proves its
        text exactly equal to; refused at ``at`` where the rounding moves the lr further."""
        from ...verify import equivalent  # lazy: numpy (verify.float_scan)

        inexact = {}
        for arg in self.builtin.args:
            node = self.given.get(arg.name)
            if node is None or arg.kind not in (Kind.VALUE, Kind.CONST) or arg.name in by_proof.LENGTHS:
                continue  # a length is the writer's to convert (Megatron's warmup of 125/12 iterations)
            try:
                value = self.number(arg.name)
            except SchedlangError:  # a schedule, or a parameter without a value: the writer says so
                continue
            exact = Fraction(int(value.p), int(value.q)) if value.is_Rational else None
            if exact is not None and not writable(exact):
                inexact[arg.name] = (node, exact, float64_of(exact))
        if not inexact:
            return
        text = self.source.decode("utf-8") if isinstance(self.source, bytes) else self.source
        for node, _, rounded in sorted(inexact.values(), key=lambda n: (n[0].span.line, n[0].span.column),
                                       reverse=True):  # the last first: the earlier spans stay put
            text = spliced(text, node.span, decimal_text(rounded))
        primary = self._setup["primary"]
        original = self.program[primary]
        found, written = self.found, self.written
        self.__init__(text, self.filename, self.params, **self._setup, exact=True)
        self.found, self.written = found, written
        words = ", ".join(f"{name}={value} as {decimal_text(rounded)}"
                          for name, (_, value, rounded) in inexact.items())
        verdict = equivalent(original, self.program[primary], rtol=FLOAT64_RTOL, stop=self.run())
        rtol = f"{float(FLOAT64_RTOL):g}"
        if verdict.different:
            raise SchedlangError(f"{library} writes numbers as floats, and the float64 of {words} moves the "
                                 f"lr by more than a relative {rtol} at step {verdict.counterexample.step}",
                                 at, hint="give the schedule numbers with an exact decimal")
        # undecided: the scan found no step further off (a cosine of a rounded length, say), and
        # each written number is within 2**-53 of the file's
        how = "at every step (proven)" if verdict else f"where checked ({verdict.reason})"
        warn(f"{library} writes numbers as floats: {words} (its float64); the export equals the file "
             f"within a relative {rtol} {how}, and its text reads back as exactly that call", at)

    def number(self, name: str) -> sp.Expr:
        node = self.given[name]
        segment = self.lowered.segment(node, "a number")
        if segment.depends_on_step:
            raise SchedlangError(f"'{name}' must be a number to export, not a schedule", node.span)
        value = bind(segment.expr, self.program.substitutions)
        if value.free_symbols:
            missing = sorted(str(s) for s in value.free_symbols)[0]
            raise SchedlangError(f"parameter '{missing}' has no value", node.span,
                                 hint=f"bind it with -D {missing}=... (the export writes numbers)")
        return value

    def value(self, node: ir.Node, name: str) -> sp.Expr:
        """A number argument ``node`` (named ``name`` in messages), its parameters bound."""
        segment = self.lowered.segment(node, "a number")
        value = bind(segment.expr, self.program.substitutions)
        if segment.depends_on_step or value.free_symbols:
            raise SchedlangError(f"'{name}' must be a number to export", node.span,
                                 hint="bind its parameters with -D (the export writes numbers)")
        return value

    def run(self) -> int | None:
        """The run's length in steps (``run = ...``), its parameters bound; None: the file
        declares no run.  A run whose parameters have no value is an error at ``run``."""
        if self.program.run_length is None:
            return None
        return self.program.run  # an unbound parameter is an error at `run` (semantics/run.py)

    def group_values(self, tag: str, changed: dict, shares: str) -> dict[str, sp.Expr]:
        """The keywords ``changed`` names (keyword -> its value read off a ``by_proof.Shape``)
        for the group ``tag``'s lr, which the format writes per group while the rest of the
        scheduler is shared: this call with them is proven equal to ``lr__TAG`` at every step
        (of the run, where the file has one), or the file is refused at that schedule, saying
        what the groups share (``shares``) and the first step where the closest call differs."""
        from ...program import compile as compile_source  # lazy: program imports formats
        from ...verify import equivalent  # lazy: numpy (verify.float_scan)

        decl, at = self.groups[tag], self.written[tag].value.span
        schedule = self.program[decl.name]
        free = sorted(str(s) for s in schedule.expr.free_symbols - {t})
        if free:
            raise SchedlangError(f"parameter '{free[0]}' has no value", at,
                                 hint=f"bind it with -D {free[0]}=... (the export writes numbers)")
        shape = by_proof.shapes_of(schedule, self.run())[0]
        values = {name: sp.nsimplify(role(shape)) for name, role in changed.items()}
        words = {name: self._text(node) for name, node in self.given.items()}
        for name, value in values.items():
            if not value.is_Rational or not writable(Fraction(int(value.p), int(value.q))):
                # the group's schedule is proven as written: its float64 would read back another
                raise SchedlangError(f"'{decl.name}' has no {name} a float's text writes exactly ({value})",
                                     at, hint=f"give '{decl.name}' numbers with an exact decimal")
            words[name] = _literal(value)
        text = f"{self.name}({', '.join(f'{k}={v}' for k, v in words.items())})"
        text = f"on_samples({text})" if self.on_samples else text
        candidate = compile_source(spliced(self.source, decl.value.span, text), self.params, self.filename)
        verdict = equivalent(schedule, candidate[decl.name], stop=self.run())
        if verdict:
            return values
        head = f"'{decl.name}' is not {self.name} with its own {' and '.join(changed)}: {shares}"
        if not verdict.different:
            raise SchedlangError(f"{head}; the closest, {text}, is undecided ({verdict.reason})", at)
        ce = verdict.counterexample
        raise SchedlangError(f"{head}; the closest, {text}, {'first ' if ce.earliest else ''}differs at step "
                             f"{ce.step} ({ce.a!r} here vs {ce.b!r} there)", at,
                             hint=f"give '{decl.name}' the same shape as the lr schedule, at other values")

    def _text(self, node: ir.Node) -> str:
        """``node`` as written in the source (its span's end is exclusive)."""
        source = self.source.decode("utf-8") if isinstance(self.source, bytes) else self.source
        at = node.span
        return source[offset(source, at.line, at.column):offset(source, at.end_line, at.end_column)]

    def param(self, name: str):
        value = self.program.values.get(name)
        if value is None or isinstance(value, sp.Basic):
            return value
        return sp.Rational(value)


@dataclass(frozen=True)
class PerGroup:
    """What a format can say per param group: the tags of the groups it gives their own lr
    (``lr__TAG``), and, for a refusal of any other, what it has instead."""

    tags: tuple[str, ...]
    lacks: str


def split_tag(name: str) -> tuple[str, str | None]:
    """``lr__muon`` -> ``("lr", "muon")``; a name without a tag -> ``(name, None)``."""
    key, sep, tag = name.partition("__")
    return (key, tag) if sep and key and tag else (name, None)


def refuse_group(library: str, decl, key: str, tag: str, groups: PerGroup | None):
    """A ``KEY__TAG`` schedule the format cannot write: named, with its group and what the format
    has instead (``groups.lacks``), never the ``--schedule lr`` of an unknown schedule."""
    what = f"'{decl.name}' gives the param groups tagged '{tag}' their own {key}"
    if groups is None:
        raise SchedlangError(f"{what}, and {library} has one {key} schedule for every param group",
                             decl.span, hint="export a file whose schedules drive every group alike "
                                             "(megatron-args writes an lr of the embedding and output "
                                             "layers, deepspeed-json Muon's two lrs)")
    apart = ", ".join(f"schedule lr__{t}" for t in groups.tags)
    raise SchedlangError(f"{what}: {groups.lacks}", decl.span,
                         hint=f"the groups it can schedule apart: {apart}" if apart else
                         "export a file whose schedules drive every group alike")


def _literal(value: sp.Rational) -> str:
    """An exact rational as .sched text: a decimal where it has one, else ``(p / q)``."""
    return decimal_text(Fraction(int(value.p), int(value.q)))


def spliced(source, span, text: str) -> str:
    """``source`` with the expression at ``span`` (its end exclusive, as every span's) replaced by
    ``text``; what follows it (the newline before the next statement) is kept."""
    source = source.decode("utf-8") if isinstance(source, bytes) else source
    start, end = offset(source, span.line, span.column), offset(source, span.end_line, span.end_column)
    # a span may end inside the parentheses that close the expression (`a >> (b / (1 + t))`):
    # the ones it leaves open are its own
    while source.count("(", start, end) > source.count(")", start, end) \
            and source[end:].lstrip(" ")[:1] == ")":
        end = source.index(")", end) + 1
    return source[:start] + text + source[end:]


def _unlet(node, lets: dict):
    while isinstance(node, ir.Name) and node.id in lets:
        node = lets[node.id]
    return node


#: The clocks each writer's framework counts besides the step (``PresetCall._on_clock``).
ON_CLOCKS = {"megatron-args": ("samples", "tokens"), "composer-yaml": ("samples", "tokens"),
             "olmo_core": ("tokens",)}
#: The writers whose framework counts them under a changing batch too (``PresetCall._on_ramp``):
#: Megatron-LM's OptimizerParamScheduler steps by each iteration's batch (--rampup-batch-size,
#: --step-batch-size-schedule).
ON_RAMPS = ("megatron-args",)


def refuse_clock(library: str, clock: tuple[str, int, int | None], at) -> None:
    """A file on the sample or token clock, for a framework whose scheduler does not count it."""
    counts = "steps or tokens, not samples" if library == "olmo_core" else "optimizer steps only"
    if clock[1] is None:
        raise SchedlangError(f"this lr schedule counts {clock[0]} (under a changing batch), and {library}'s "
                             f"scheduler counts {counts}", at,
                             hint="write its lengths in steps (the steps where the run reaches those counts) "
                                  "to export it in steps, or export it to megatron-args (samples at each "
                                  "iteration's batch: --rampup-batch-size, --step-batch-size-schedule)")
    raise SchedlangError(f"this lr schedule counts {clock[0]} (at the constant batch of {clock[1]}), and "
                         f"{library}'s scheduler counts {counts}", at,
                         hint="write its lengths in steps (the same run at this batch) to export it in "
                              "steps, or export it to megatron-args (samples), composer-yaml (sp, tok) or "
                              "olmo-core-json (tokens)")


#: Why a writer of ``ON_CLOCKS`` that is not in ``ON_RAMPS`` cannot write its clock under a
#: changing batch, and what to write instead.
_NO_RAMP = {
    "composer-yaml": ("Composer's YAML trains one global_train_batch_size for the whole run",
                      "declare a constant `batch = N` to export it to composer-yaml"),
    "olmo_core": ("OLMo-core sets update t's lr from the tokens through it (a batch on, which under a "
                  "changing batch is no fixed shift of the file's count) and its BatchSizeSchedulerCallback "
                  "scales the lr at each batch change",
                  'write the lr as one olmo_core.* call (units="tokens") times '
                  "olmo_core.batch_size_lr_factor(...), as the import writes it"),
}


def refuse_ramp(library: str, clock: tuple[str, None, int | None], at) -> None:
    """A file on the sample or token clock under a changing batch, for a framework whose
    scheduler counts that clock at a constant batch only (``_NO_RAMP`` says why)."""
    why, instead = _NO_RAMP[library]
    raise SchedlangError(f"this lr schedule counts {clock[0]} under a changing batch, which {library} "
                         f"export by proof does not write: {why}", at,
                         hint=f"{instead}, or export it to megatron-args (OptimizerParamScheduler counts "
                              "samples at each iteration's batch: --rampup-batch-size, "
                              "--step-batch-size-schedule)")


def clock_of(program: Program, module: ir.Module, node) -> tuple[str, int | None, int | None] | None:
    """``("samples" | "tokens", batch, seq_len)`` where the file declares its ``batch`` and its
    lr counts samples or tokens (``on_samples(...)`` / ``on_tokens(...)``, lengths in ``sp`` /
    ``tok``): the clock a writer whose framework counts them writes it on; ``batch`` None where
    the batch changes.  None on the step clock."""
    decl = next((s for s in module.statements if isinstance(s, ir.BatchDecl)), None)
    if decl is None or node is None:
        return None
    found = set()
    for item in ir.walk(node):
        if isinstance(item, ir.Duration) and item.unit in ("sp", "tok"):
            found.add("tokens" if item.unit == "tok" else "samples")
        elif isinstance(item, ir.Call) and item.func.id in ("on_samples", "on_tokens"):
            found.add(item.func.id[3:])
    if not found:
        return None
    stages = program.clock.stages
    return ("tokens" if "tokens" in found else "samples", stages[0].batch if len(stages) == 1 else None,
            program.clock.seq_len)


def on_samples(node):
    """The schedule inside ``on_samples(...)``, or None."""
    if isinstance(node, ir.Call) and node.func.id == "on_samples" and len(node.args) == 1 \
            and not node.keywords:
        return node.args[0]
    return None


def refuse_group_params(program: Program, library: str) -> None:
    """A ``group`` parameter has a value per optimizer param group, which one scheduler's
    keywords cannot say: binding it to its default would export a different schedule."""
    if program.group_params:
        name, info = next(iter(program.group_params.items()))
        raise SchedlangError(f"group parameter '{name}' has a value per param group, which "
                             f"{library} cannot say", info.span,
                             hint="remove it (or make it a float) to export the schedule shared by "
                                  "every group")
