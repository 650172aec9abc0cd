"""A lowered schedule (a sympy expression of ``t`` and parameters) written back as core ``.sched`` text.

Importers whose preset has no natural chain of standard-library calls (Megatron's
inclusive warmup with a fractional length, DeepSpeed's log warmups and stairs)
write their ``--lower`` form by lowering the preset-style source and printing
the result: ``if ... then ... else`` for ``Piecewise``, the math functions of
SPEC §2 for the rest.  Numbers are exact (``sched_text``), parameters keep their
names, and every compound operand is parenthesised, so the text reads back as
the same expression (the importer tests prove it with ``schedlang.equivalent``).
"""

from __future__ import annotations

from ..codegen.sched import text
from ..core.algebra import finish
from ..semantics.lower import lower
from ..syntax import ir
from ..syntax.parser import parse
from .common.statements import GENERATED, module, schedule_stmt


def lowered_schedules(preset: ir.Module | str) -> list[ir.ScheduleDecl]:
    """Each schedule of a preset-style file (a tree, or text) lowered and written back as core syntax.
    A tree is lowered as it is, so an error at a node built with the configuration's span is there
    in ``--lower`` as in the preset style (``format.lowered``)."""
    found = lower(parse(preset, GENERATED) if isinstance(preset, str) else preset)
    return [schedule_stmt(name, text(finish(segment.held())))
            for name, (segment, _) in found.schedules.items()]


def core_module(preset: ir.Module, head: list, kept: list) -> ir.Module:
    """``head`` comments and the ``kept`` statements (``statements.module`` items), then each
    schedule of ``preset`` lowered."""
    return module(head, kept, lowered_schedules(preset))
