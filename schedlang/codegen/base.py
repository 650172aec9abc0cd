"""What every code generator shares: the module spec, identifier mangling, the header.

``ModuleSpec`` is all a generator is given: built once per program by ``program.py``
(``module_spec``), frozen, and read by every target's printer and class; codegen never
sees the compiled file itself.

Nothing from the user's file reaches generated code except identifiers that
match ``[A-Za-z_][A-Za-z0-9_]*`` (mangled away from Python keywords,
builtins and our own names) and numbers printed from sympy.  The source
file's name appears only in a comment, reduced to safe characters.
"""

from __future__ import annotations

import builtins
import keyword
import re
from dataclasses import dataclass
from typing import Protocol

import sympy as sp
from sympy.core.cache import cacheit
from sympy.printing.precedence import PRECEDENCE, precedence

from ..errors import SchedlangError, Span, did_you_mean

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# Names generated modules use for themselves (scheduler constructors take
# ``self, optimizer, *, <params>, last_epoch``).
RESERVED = {"math", "torch", "jax", "jnp", "t", "SCHEDULES", "PARAMS", "SOURCE", "self", "optimizer",
            "last_epoch"}


@cacheit
def rounded(value: sp.Expr) -> float:
    """The float nearest a number (``pi / 616``, ``log(10)``), from 40 significant digits.

    Cached (sympy's cache): each printer rounds the same constants of every piece, and an
    ``evalf`` costs about a millisecond."""
    return float(sp.N(value, 40))


def mangle(name: str) -> str:
    """A safe Python identifier for a user's name: ``lambda`` -> ``lambda_``, ``min`` -> ``min_``."""
    if not _IDENTIFIER.match(name):
        raise ValueError(f"not an identifier: {name!r}")
    while keyword.iskeyword(name) or keyword.issoftkeyword(name) or hasattr(builtins, name) \
            or name in RESERVED or name.startswith("_"):
        name = name + "_" if not name.startswith("_") else "u" + name
    return name


def unique_names(names) -> dict[str, str]:
    """An injective ``name -> identifier`` map for everything one generated module defines.

    ``mangle`` alone is not one-to-one (``lambda`` and ``lambda_`` both give ``lambda_``).
    Names that are already safe keep themselves; each mangled name then takes the first
    of ``x_``, ``x__``, ... that nothing else in the module uses.  Deterministic: the same
    names in the same order give the same identifiers.
    """
    names = list(dict.fromkeys(names))
    out = {n: n for n in names if mangle(n) == n}
    taken = set(out.values())
    for name in names:
        if name in out:
            continue
        candidate = mangle(name)
        while candidate in taken:
            candidate = mangle(candidate + "_")
        out[name] = candidate
        taken.add(candidate)
    return {n: out[n] for n in names}


def is_atomic(code: str) -> bool:
    """Whether ``code`` is one operand whatever surrounds it: a name, a non-negative number,
    a call ``f(...)`` or a fully parenthesized expression."""
    if _ATOM.fullmatch(code):
        return True
    head = _CALLEE.match(code)
    start = head.end() if head else 0
    if code[start:start + 1] != "(":
        return False
    depth = 0
    for index in range(start, len(code)):
        depth += {"(": 1, ")": -1}.get(code[index], 0)
        if depth == 0:
            return index == len(code) - 1
    return False


_ATOM = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*|[0-9][0-9_.]*(e[+-]?[0-9]+)?")
_CALLEE = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")


class AtomicPrinting:
    """Printer mixin: a node sympy ranks as an operand is printed as one.

    sympy's printers parenthesize a child by *sympy's* precedence of the child
    (``Piecewise``, ``Min``, a function or a symbol never get parentheses).  Our
    printers print some of those as operator expressions (a ``Piecewise`` with one
    reachable branch is just that branch's formula, ``a if c else b`` in Python),
    so the rule is kept here for every node at once: code for a node of function
    or atom precedence is wrapped unless it already is a single operand.
    """

    def _print(self, expr, **kwargs):
        code = super()._print(expr, **kwargs)
        if isinstance(expr, sp.Basic) and precedence(expr) >= PRECEDENCE["Func"] \
                and isinstance(code, str) and not is_atomic(code):
            return f"({code})"
        return code


def number_value(value: sp.Expr) -> int | float:
    """A bound number as Python has it: ints stay ints, everything else a float."""
    return int(value) if value.is_Integer else float(value)


def number_literal(value: sp.Expr) -> str:
    """The Python literal of ``number_value``."""
    return repr(number_value(value))


@dataclass(frozen=True)
class ParamSpec:
    name: str
    py_name: str
    symbol: sp.Symbol
    default_literal: str | None  # None: a required keyword argument
    #: A ``group`` parameter: scheduler classes take each param group's own entry of ``name``.
    group: bool = False
    #: ``"int"`` (a whole number >= 0) or ``"float"`` (finite), as the class checks a value.
    kind: str = "float"
    #: The ``where`` clause (sympy, in the parameters' plain symbols), or None.
    where: object = None
    #: Where the file declares it (an error about the parameter points there); None: no file.
    span: Span | None = None


@dataclass(frozen=True)
class ScheduleSpec:
    name: str
    py_name: str
    expr: sp.Expr
    #: Its length in steps as the file writes it (sympy, in the parameters), None: forever.
    duration: sp.Expr | None = None
    #: Its measured form (in the step and ``semantics.clock.COUNTS``), where it has one and
    #: the spec was built with ``measured=True``: what a class given measured counts evaluates.
    measured: sp.Expr | None = None


@dataclass(frozen=True)
class ModuleSpec:
    """Everything a generator needs, already checked: schedules (their formulas, lengths and
    measured forms), parameters (their identifiers, defaults, kinds, clauses and spans),
    provenance and the run's clock tables.  Built once per program and options by
    ``program.py``'s ``module_spec``; the only thing codegen reads of a compiled file."""

    schedules: tuple[ScheduleSpec, ...]
    params: tuple[ParamSpec, ...]
    source_name: str
    #: The run's batch stages ``((first step, samples before it, batch), ...)`` and tokens per
    #: sample, for the scheduler classes' sample and token counters (SPEC §12); empty without.
    stages: tuple[tuple[int, int, int], ...] = ()
    seq_len: int | None = None
    #: The batch table ``((samples threshold, batch), ...)``: the batch as a function of the
    #: samples consumed, which a class given measured counts advances by (SPEC §12).
    batches: tuple[tuple[int, int], ...] = ()
    #: Whether the measured forms were computed (``ScheduleSpec.measured``, ``count_ends``):
    #: the torch class evaluates them, the other targets do not read them.
    measured: bool = False
    #: ``((unit, count), ...)``: where the schedules' parts on the sample or token clock end,
    #: in whole counts, sorted (with ``measured``).
    count_ends: tuple[tuple[str, int], ...] = ()


class SpecSource(Protocol):
    """What ``emit.emit`` and ``emit.module`` take instead of a ``ModuleSpec``: an object that
    builds one (the compiled file of ``program.py``).  Nothing else of it is read."""

    def module_spec(self, source_name: str | None = None, bind_all: bool = False, *,
                    measured: bool = False) -> ModuleSpec: ...


def no_schedule(name: str, names) -> SchedlangError:
    """The error for a schedule the file does not define."""
    names = list(names)
    return SchedlangError(f"no schedule named '{name}'",
                          hint=did_you_mean(name, names) or "the file defines " + ", ".join(names))


def main_schedule_name(names, name: str | None = None, purpose: str = "") -> str:
    """The schedule meant when one is needed: ``name``, else ``lr``, else the only one (the
    one rule: the API's ``main_schedule`` and the Cerebras class read it).  ``purpose`` says
    why one is needed, for the error when there are several and none is named ``lr``."""
    names = list(names)
    if name is not None:
        if name not in names:
            raise no_schedule(name, names)
        return name
    if "lr" in names:
        return "lr"
    if len(names) == 1:
        return names[0]
    raise SchedlangError(f"{purpose or 'one schedule is needed'}; the file has " + ", ".join(names)
                         + " and none is named 'lr'", hint="name one, e.g. prog['" + names[0] + "']")


@dataclass(frozen=True)
class GeneratedModule:
    source: str
    names: dict[str, str]  # schedule name -> generated function name


def safe_comment(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.,:/ +=@<>()-]", "?", text)[:200]


def header(spec: ModuleSpec, target: str) -> str:
    return (f"# Generated by schedlang (target: {target}) from {safe_comment(spec.source_name)}.\n"
            "# Do not edit: change the .sched file and compile again.\n")


def keyword_params(params) -> str:
    """The parameters of a generated function, keyword-only: ``, warm, peak=0.001`` (a
    required one has no default); every target's signatures and the scheduler classes use it."""
    return "".join(f", {p.py_name}" if p.default_literal is None else f", {p.py_name}={p.default_literal}"
                   for p in params)


def schedules_table(spec: ModuleSpec) -> str:
    """The ``SCHEDULES`` line every generated module ends its functions with."""
    table = ", ".join(f"{s.name!r}: {s.py_name}" for s in spec.schedules)
    return f"\n\nSCHEDULES = {{{table}}}\n"


def assemble(spec: ModuleSpec, target: str, parts: list[str]) -> GeneratedModule:
    """A module of ``target``: the header, ``parts`` (imports, helpers, functions) and ``SCHEDULES``."""
    return GeneratedModule(header(spec, target) + "".join(parts) + schedules_table(spec),
                           {s.name: s.py_name for s in spec.schedules})
