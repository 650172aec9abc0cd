"""What the targets with a scheduler class (torch, cerebras) share: ``Module`` (a module's own
code, the template it is filled into and its fields), the class name's check, and the
fields every class template reads (the parameter checks, the constructor's parameters)."""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from ..errors import SchedlangError
from . import python as python_codegen
from . import templates
from .base import ModuleSpec, mangle, safe_comment


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


def class_params(spec: ModuleSpec) -> str:
    """The ``params`` field: the constructor's parameters by name, ``'warm': warm, ...``."""
    return ", ".join(f"{p.py_name!r}: {p.py_name}" for p in spec.params)


def source_phrase(spec: ModuleSpec) -> str:
    """The ``source`` field: the file's name as the class docstring may quote it."""
    return safe_comment(spec.source_name).replace('"', "?")


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
