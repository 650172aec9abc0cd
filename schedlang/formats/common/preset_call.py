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

import sympy as sp

from ...core.algebra import bind
from ...errors import SchedlangError
from ...library.presets import PRESETS
from ...program import Program
from ...semantics.lower import lower
from ...syntax import ir
from ...syntax.parser import parse
from . import by_proof
from .into import offset
from .numbers import yaml_float_text


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
                 others: tuple[str, ...] = (), writes: tuple[str, ...] | None = None):
        """``writes``: the presets the writer writes: an lr that is no call of the library is
        replaced by the call of one of them proven equal to it (``by_proof``).  None: no search,
        the lr must be one call (what ``resume`` reads a recovered call with)."""
        self.found = None  # the preset call proven equal to the file's lr, where it was not one
        module = parse(source, filename)
        self.module = module
        lowered = lower(module)
        self.program = Program(lowered, params or {})
        refuse_group_params(self.program, library)
        self.lowered = lowered
        lets = {s.name: s.value for s in module.statements if isinstance(s, ir.Let)}
        decls = [s for s in module.statements if isinstance(s, ir.ScheduleDecl)]
        self.others = {}  # name -> the node of a schedule the format also carries (``others``)
        for decl in decls:
            if decl.name in others:
                self.others[decl.name] = _unlet(decl.value, lets)
                continue
            if decl.name != "lr":
                raise SchedlangError(f"{library} schedules only the lr, not '{decl.name}'", decl.span,
                                     hint="export the lr schedule alone (--schedule lr)")
        lr = [d for d in decls if d.name == "lr"]
        node = _unlet(lr[0].value, lets) if lr else None
        self.on_samples = on_samples(node) is not None
        if self.on_samples and library == "megatron-args":  # Megatron's class counts samples
            node = _unlet(on_samples(node), lets)
        prefix = library.split("-")[0]
        direct = isinstance(node, ir.Call) and node.func.id.startswith(prefix + ".")
        if writes and lr and not direct and not self.on_samples:  # a call of the library: the writer's
            found = by_proof.proven_call(self.program["lr"], prefix, writes, self.run(), lr[0].value.span)
            self.__init__(spliced(source, lr[0].value.span, found), filename, params, library, example,
                          others, writes)
            self.found = found
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

    def param(self, name: str):
        value = self.program.values.get(name)
        if value is None or isinstance(value, sp.Basic):
            return value
        return sp.Rational(value)


def spliced(source, span, text: str) -> str:
    """``source`` with the expression at ``span`` (its last column included) replaced by ``text``."""
    source = source.decode("utf-8") if isinstance(source, bytes) else source
    start = offset(source, span.line, span.column)
    return source[:start] + text + source[offset(source, span.end_line, span.end_column) + 1:]


def _unlet(node, lets: dict):
    while isinstance(node, ir.Name) and node.id in lets:
        node = lets[node.id]
    return node


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
