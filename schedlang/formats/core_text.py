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
from ..semantics.lower import lower
from ..syntax.parser import parse
from .common.source_text import GENERATED


def lowered(preset_text: str, params: list[str]) -> str:
    """The core-style form of a preset-style file: each schedule lowered and written back."""
    found = lower(parse(preset_text, GENERATED))
    lines = list(params)
    for name, (segment, _) in found.schedules.items():
        lines.append(f"schedule {name} = {text(segment.held())}")
    return "\n".join(lines) + "\n"


def core_source(preset_source: str, head: list[str], params: list[str]) -> str:
    """``head`` comments, then :func:`lowered` of ``preset_source`` with its ``params`` lines."""
    return "\n".join([*head, lowered(preset_source, params).rstrip("\n")]) + "\n"
