"""The parameters a piece of ``schedlang.build`` carries: one ``ParamDecl`` (the ``param``
statement itself) per name, merged as pieces are composed.  Every piece holds its own
declarations, so a program built from pieces declares exactly what its pieces use; two
different declarations of one name are refused where they meet."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from ..errors import SchedlangError
from ..syntax import ir, unparse
from . import site as sites

#: What a parameter, schedule or ``let`` may be named.
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
#: Declarations keep the order they were made in (``param()`` calls, preset time defaults).
ORDER = itertools.count()


@dataclass(frozen=True)
class ParamDecl:
    """A ``param`` statement made by ``param()``; ``order`` keeps declarations in creation order."""

    stmt: ir.Param
    order: int
    implicit: bool = False  # declared by a preset's time default (``1dur``), not by param()

    @property
    def name(self) -> str:
        return self.stmt.name

    def same(self, other: ParamDecl) -> bool:
        """Two declarations of one name agree when they would print the same statement; an
        implicit one agrees with any (the user's own declaration of that name wins)."""
        return (self is other or self.implicit or other.implicit
                or unparse.statement(self.stmt) == unparse.statement(other.stmt))


def merge(site: sites.Site, *groups: dict[str, ParamDecl]) -> dict[str, ParamDecl]:
    merged: dict[str, ParamDecl] = {}
    for group in groups:
        for name, decl in group.items():
            seen = merged.get(name)
            if seen is None or (seen.implicit and not decl.implicit):
                merged[name] = decl
            elif not seen.same(decl):
                raise SchedlangError(f"two different parameters are named '{name}'", site.span,
                                     hint=f"one is declared at {seen.stmt.span.location}, the other at "
                                          f"{decl.stmt.span.location}; use one param() object")
    return dict(sorted(merged.items(), key=lambda item: item[1].order))
