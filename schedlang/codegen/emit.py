"""``schedlang compile``: standalone modules for the python, torch, cerebras and jax targets.

A generated module imports only ``math`` and/or ``torch`` (the cerebras one
also tries ``cerebras.pytorch``; the jax one only ``jax``), never schedlang, and is the same bytes for
the same input.  User text reaches it only as identifiers checked and mangled
by ``codegen.base.mangle`` and numbers printed by our printers; the source
file's name appears in the header comment, reduced to safe characters.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import sympy as sp

from ..errors import SchedlangError
from . import python as python_codegen
from . import templates
from .base import ModuleSpec, header, keyword_params, mangle, safe_comment, schedules_table


@dataclass(frozen=True)
class Module:
    """A generated module in two parts: ``code`` (what the schedules make: header, functions,
    ``SCHEDULES``) and, for the targets with a class, the name of a template in
    ``templates.MODULE_TEMPLATES`` and the fields it is filled with.  The golden tests pin
    the two apart, so a template change touches one golden file, not one per example."""

    code: str
    template: str | None = None
    fields: dict = field(default_factory=dict)

    @property
    def text(self) -> str:
        if self.template is None:
            return self.code
        return self.code + templates.MODULE_TEMPLATES[self.template].format(**self.fields)


def emit(program, target: str, source_name: str, class_name: str | None = None, *,
         relative: bool = False, schedule: str | None = None) -> str:
    """The text of a standalone module for ``target``; see the module docstring."""
    return module(program, target, source_name, class_name, relative=relative, schedule=schedule).text


def module(program, target: str, source_name: str, class_name: str | None = None, *,
           relative: bool = False, schedule: str | None = None, bind_all: bool = False) -> Module:
    """``emit``'s module, its template still apart: ``BUILDERS[target]`` makes it.

    ``bind_all=True`` folds every bound value into the formulas (``Program.module_spec``):
    the module in-process evaluation loads (``runtime/arrays.py``), where constants are
    exact numbers rounded once, as a float32 result's accuracy needs.
    """
    if target not in BUILDERS:
        raise SchedlangError(f"unknown target {target!r}", hint="use " + ", ".join(TARGETS))
    if relative and target != "torch":
        raise SchedlangError("relative=True is for target='torch'; other targets set absolute values")
    spec = program.module_spec(source_name, bind_all=bind_all)
    return BUILDERS[target](program, spec, class_name or default_class_name(source_name),
                            relative=relative, schedule=schedule, bind_all=bind_all)


def plain(generate):
    """The builder of a target whose module is its printer's ``generate(spec)`` alone (no class)."""
    def build(program, spec: ModuleSpec, class_name: str, **_) -> Module:
        return Module(generate(spec).source)
    return build


def _jax_generate(spec: ModuleSpec):
    from . import jax as jax_codegen  # lazy: the array printers load for their targets only

    return jax_codegen.generate(spec)


def _torch_target(program, spec: ModuleSpec, class_name: str, *, relative: bool, bind_all: bool = False,
                  **_) -> Module:
    return torch_module(spec, check_class_name(class_name, spec), relative=relative,
                        measured=program.measured_forms(bind_all))


def _cerebras_target(program, spec: ModuleSpec, class_name: str, *, schedule: str | None, **_) -> Module:
    name = check_class_name(class_name, spec)
    group = next((p for p in spec.params if p.group), None)
    if group is not None:
        raise SchedlangError(f"the Cerebras class sets one value in every param group; group parameter "
                             f"'{group.name}' needs a value per group",
                             program.params[group.name].span,
                             hint="use --target torch: its class reads each group's own entry")
    return cerebras_module(program, spec, name, pick_schedule(program, schedule))


def default_class_name(source_name: str) -> str:
    """``warmup_cosine.sched`` -> ``WarmupCosine``; anything unusable -> ``Scheduler``."""
    stem = re.sub(r"\.[A-Za-z0-9]*$", "", source_name.replace("\\", "/").rsplit("/", 1)[-1])
    words = re.findall(r"[A-Za-z0-9]+", stem)
    name = "".join(w[:1].upper() + w[1:] for w in words)
    if not name:
        return "Scheduler"
    if name[0].isdigit():
        name = "Schedule" + name
    return mangle(name)


def check_class_name(name: str, spec: ModuleSpec) -> str:
    """A class name must be a plain identifier that shadows nothing the module uses."""
    try:
        ok = mangle(name) == name
    except ValueError:
        ok = False
    taken = {s.py_name for s in spec.schedules} | {p.py_name for p in spec.params}
    if not ok or name in taken:
        raise SchedlangError(f"--class-name {name!r} cannot name the scheduler class",
                             hint="use a Python identifier that is not a keyword, a builtin, "
                                  "a schedule or parameter of the file, and does not start with '_'")
    return name


def pick_schedule(program, schedule: str | None) -> str:
    """The schedule a Cerebras class drives (``Program.main_schedule``'s rule)."""
    return program.main_schedule(schedule, purpose="a Cerebras LRScheduler sets one schedule").name


def _params(spec: ModuleSpec) -> str:
    return ", ".join(f"{p.py_name!r}: {p.py_name}" for p in spec.params)


def params_check_source(spec: ModuleSpec) -> str:
    """``_PARAM_KINDS`` and ``_where_failures``: what the class checks of every value it is
    given or loads (``_checked_params`` in ``templates.PARAMS_HELPER``), derived from the
    file's declarations.  A clause is printed by the reference printer, over the values as
    given: integer parameters compare exactly, float ones in float arithmetic."""
    kinds = ", ".join(f"{p.py_name!r}: {p.kind!r}" for p in spec.params)
    lines = ["\n\n#: Parameter -> 'int' (a whole number >= 0) or 'float' (finite).",
             f"_PARAM_KINDS = {{{kinds}}}",
             "\n\ndef _where_failures(_values):",
             '    """(parameter, clause, the parameters it names) for each clause the values break."""',
             "    _failed = []"]
    printer = python_codegen.ReferencePrinter()
    py_names = {p.name: p.py_name for p in spec.params}
    for p in spec.params:
        if p.where is None:
            continue
        renamed = p.where.xreplace({s: sp.Symbol(py_names[s.name], **s.assumptions0)
                                    for s in p.where.free_symbols if s.name in py_names})
        names = sorted(s.name for s in renamed.free_symbols)
        lines.append(f"    if {{{', '.join(map(repr, names))}}} <= _values.keys():")
        lines += [f"        {n} = _values[{n!r}]" for n in names]
        lines.append(f"        if not ({printer.doprint(renamed)}):")
        lines.append(f"            _failed.append(({p.py_name!r}, {str(p.where)!r}, {tuple(names)!r}))")
    lines.append("    return _failed")
    return "\n".join(lines)


def _torch_functions(spec: ModuleSpec, printer, in_place: bool = False) -> list[str]:
    """The torch functions, after the stage tables their counts read (written with ``printer``'s,
    the reference twins', each once) and the helpers that read them; ``in_place``: arithmetic
    on temporaries in place (``codegen/torch.py``'s ``in_place_source``: eager torch; the
    Cerebras module keeps every op out of place, as its lazy tensors trace them)."""
    from . import torch as torch_codegen  # lazy: the array printers load for their targets only

    tables: dict = {}
    functions = ["\n\n" + torch_codegen.function_source(s.py_name, s.expr, spec.params, in_place, tables)
                 for s in spec.schedules]
    printer.count_tables.update(tables)
    helpers = python_codegen.helpers_source(printer, gap="\n\n")
    return [helpers + (torch_codegen.count_helpers(tables.values()) if tables else ""), *functions]


def torch_module(spec: ModuleSpec, class_name: str, relative: bool = False,
                 measured: tuple[dict, tuple] = ({}, ())) -> Module:
    """Torch functions, plain-Python twins (for float param groups), the measured forms
    (``Program.measured_forms``: what the class evaluates once it is given measured counts,
    eagerly, in Python) and the scheduler class."""
    printer = python_codegen.ReferencePrinter()
    references = ["\n\n" + python_codegen.function_source(f"_reference_{s.py_name}", s.expr,
                                                          spec.params, printer)
                  for s in spec.schedules]
    forms, ends = measured
    counted = [s for s in spec.schedules if s.name in forms]
    references += ["\n\n" + python_codegen.function_source(f"_measured_{s.py_name}", forms[s.name],
                                                           spec.params, printer, "t, _samples, _tokens")
                   for s in counted]
    parts = [header(spec, "torch"), "import math\n\nimport torch\n"]
    functions = _torch_functions(spec, printer, in_place=True)
    parts += functions[:1] + references + functions[1:]
    parts.append(params_check_source(spec))
    parts.append(schedules_table(spec))
    keys = ", ".join(f"``{s.name}``" for s in spec.schedules)
    return Module("".join(parts), "torch", dict(
        class_name=class_name, keys=keys, source=_source_phrase(spec),
        mode="multiples of each group's initial value (relative)" if relative else "absolute",
        table=", ".join(f"{s.name!r}: ({s.py_name}, _reference_{s.py_name})" for s in spec.schedules),
        relative=bool(relative), signature=keyword_params(spec.params), params=_params(spec),
        group_params=repr({p.py_name: p.name for p in spec.params if p.group}),
        entries=repr(templates.ENTRIES), stages=repr(spec.stages), seq_len=repr(spec.seq_len),
        measured="{" + ", ".join(f"{s.name!r}: _measured_{s.py_name}" for s in counted) + "}",
        count_ends=repr(ends), batches=repr(spec.batches),
        count_tables="(" + "".join(f"{name}, " for name in printer.count_tables.values()) + ")"))


def cerebras_module(program, spec: ModuleSpec, class_name: str, key: str) -> Module:
    """Torch functions and a Cerebras-shaped class (stand-in base when cstorch is absent)."""
    chosen = next(s for s in spec.schedules if s.name == key)
    parts = [header(spec, "cerebras"), "import math\n\nimport torch\n"]
    parts += _torch_functions(spec, python_codegen.ReferencePrinter())
    parts.append(params_check_source(spec))
    return Module("".join(parts), "cerebras", dict(
        class_name=class_name, key=key, source=_source_phrase(spec), mode="absolute",
        signature=keyword_params(spec.params), params=_params(spec), function=chosen.py_name,
        total_iters=total_iters_code(program, key, spec)))


def total_iters_code(program, key: str, spec: ModuleSpec) -> str:
    """Python code (in the constructor's parameters) for the schedule's duration, or ``None``."""
    duration = program[key].segment.duration
    if duration is None:
        return "None"
    renamed = duration.xreplace({p.symbol: type(p.symbol)(p.py_name, **p.symbol.assumptions0)
                                 for p in spec.params if p.py_name != p.symbol.name})
    code = python_codegen.ReferencePrinter().doprint(renamed)
    return code if duration.is_Integer else f"round({code})"


def _source_phrase(spec: ModuleSpec) -> str:
    return safe_comment(spec.source_name).replace('"', "?")


@dataclass(frozen=True)
class Target:
    """One row of the registry: how a target's module is built and what that module imports."""

    #: ``(program, spec, class_name, *, relative, schedule) -> Module``
    build: Callable[..., Module]
    #: The only modules its generated code may import (``tests/test_torch_emit.py`` checks it).
    imports: frozenset[str]

    def __call__(self, program, spec: ModuleSpec, class_name: str, **options) -> Module:
        return self.build(program, spec, class_name, **options)


#: The registry of targets: ``--target`` name -> its ``Target``.  The CLI's choices
#: (``TARGETS``), the golden, import and security tests and in-process evaluation
#: (``runtime/arrays.py``) derive from it.  A new target is its printer module (with
#: ``generate(spec) -> GeneratedModule``) and one row here, ``"name":
#: Target(plain(name_codegen.generate), frozenset({...}))`` (docs/design.md, "Adding a target").
BUILDERS = {
    "python": Target(plain(python_codegen.generate), frozenset({"math"})),
    "torch": Target(_torch_target, frozenset({"math", "torch"})),
    "cerebras": Target(_cerebras_target, frozenset({"math", "torch", "cerebras.pytorch.optim.lr_scheduler"})),
    "jax": Target(plain(_jax_generate), frozenset({"jax", "jax.numpy"})),
}
TARGETS = tuple(BUILDERS)
