"""``schedlang compile``: standalone modules for the python, torch, cerebras and jax targets.

A generated module imports only ``math`` and/or ``torch`` (the cerebras one
also tries ``cerebras.pytorch``; the jax one only ``jax``), never schedlang, and is the same bytes for
the same input.  User text reaches it only as identifiers checked and mangled
by ``codegen.base.mangle`` and numbers printed by our printers; the source
file's name appears in the header comment, reduced to safe characters.

Every target is built from a ``ModuleSpec`` alone (``codegen/base.py``); each target's module
is assembled in its own file (``python.py``, ``jax.py``, ``torch.py``, ``cerebras.py``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import SchedlangError
from . import python as python_codegen
from .base import ModuleSpec, SpecSource, mangle
from .classes import Module


def emit(source: ModuleSpec | SpecSource, target: str, source_name: str | None = None,
         class_name: str | None = None, *, relative: bool = False, schedule: str | None = None) -> str:
    """The text of a standalone module for ``target``; see the module docstring."""
    return module(source, target, source_name, class_name, relative=relative, schedule=schedule).text


def module(source: ModuleSpec | SpecSource, target: str, source_name: str | None = None,
           class_name: str | None = None, *, relative: bool = False, schedule: str | None = None,
           bind_all: bool = False) -> Module:
    """``emit``'s module, its template still apart: ``BUILDERS[target]`` makes it from a
    ``ModuleSpec``: ``source`` itself, or the one ``source.module_spec`` builds (named
    ``source_name``, with the measured forms where the target reads them).

    ``bind_all=True`` (with a spec source) folds every bound value into the formulas: the
    module in-process evaluation loads (``runtime/arrays.py``), where constants are exact
    numbers rounded once, as a float32 result's accuracy needs.
    """
    if target not in BUILDERS:
        raise SchedlangError(f"unknown target {target!r}", hint="use " + ", ".join(TARGETS))
    if relative and target != "torch":
        raise SchedlangError("relative=True is for target='torch'; other targets set absolute values")
    row = BUILDERS[target]
    if isinstance(source, ModuleSpec):
        if bind_all:
            raise ValueError("bind_all is the spec source's to apply: pass module_spec(bind_all=True)")
        spec = source
    else:
        spec = source.module_spec(source_name, bind_all, measured=row.measured)
    return row.build(spec, class_name or default_class_name(source_name or spec.source_name),
                     relative=relative, schedule=schedule)


def plain(generate):
    """The builder of a target whose module is its printer's ``generate(spec)`` alone (no class)."""
    def build(spec: ModuleSpec, class_name: str, **_) -> Module:
        return Module(generate(spec).source)
    return build


def _jax_generate(spec: ModuleSpec):
    from . import jax as jax_codegen  # lazy: the array printers load for their targets only

    return jax_codegen.generate(spec)


def _torch_target(spec: ModuleSpec, class_name: str, *, relative: bool, **_) -> Module:
    from . import torch as torch_codegen  # lazy: the array printers load for their targets only

    return torch_codegen.class_module(spec, class_name, relative=relative)


def _cerebras_target(spec: ModuleSpec, class_name: str, *, schedule: str | None, **_) -> Module:
    from . import cerebras as cerebras_codegen  # lazy: the array printers load for their targets only

    return cerebras_codegen.class_module(spec, class_name, schedule)


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


@dataclass(frozen=True)
class Target:
    """One row of the registry: how a target's module is built and what that module imports."""

    #: ``(spec, class_name, *, relative, schedule) -> Module``
    build: Callable[..., Module]
    #: The only modules its generated code may import (``tests/test_torch_emit.py`` checks it).
    imports: frozenset[str]
    #: Whether its module reads the measured forms (``ModuleSpec.measured``): the torch class.
    measured: bool = False

    def __call__(self, spec: ModuleSpec, class_name: str, **options) -> Module:
        return self.build(spec, class_name, **options)


#: The registry of targets: ``--target`` name -> its ``Target``.  The CLI's choices
#: (``TARGETS``), the golden, import and security tests and in-process evaluation
#: (``runtime/arrays.py``) derive from it.  A new target is its printer module (with
#: ``generate(spec) -> GeneratedModule``) and one row here, ``"name":
#: Target(plain(name_codegen.generate), frozenset({...}))`` (docs/design.md, "Adding a target").
BUILDERS = {
    "python": Target(plain(python_codegen.generate), frozenset({"math"})),
    "torch": Target(_torch_target, frozenset({"math", "torch"}), measured=True),
    "cerebras": Target(_cerebras_target, frozenset({"math", "torch", "cerebras.pytorch.optim.lr_scheduler"})),
    "jax": Target(plain(_jax_generate), frozenset({"jax", "jax.numpy"})),
}
TARGETS = tuple(BUILDERS)
