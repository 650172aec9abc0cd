"""A conformance case whose anchor is a training framework's real code.

``anchors/preset_cases.Case`` runs the seed libraries through
``anchors/reference.py``; a ``FrameworkCase`` has the same fields and methods
(the conformance test and the cookbook use either) plus its own
``anchor(steps) -> values`` (which imports the framework through
``frameworks.real``: a missing framework skips locally and fails under CI), the
framework call as the cookbook shows it, and its own tolerance where the
framework's arithmetic needs one (the case's note says why).  It does not
import ``preset_cases`` (which lists these cases), so either can be imported
first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class FrameworkCase:
    preset: str                 # the preset exercised, e.g. "torchtitan.lr_scheduler"
    source: str                 # the schedlang program
    library: str                # the framework (its cookbook section)
    name: str                   # the framework's class / builder
    kwargs: dict = field(default_factory=dict)
    steps: int = 400            # compare t = 0 .. steps-1
    options: dict = field(default_factory=dict)
    params: dict = field(default_factory=dict)    # schedlang parameters
    upto: int | None = None
    note: str = ""
    anchor: Callable | None = None   # anchor(range of steps) -> list of float
    code: str = ""                   # the framework call, for the cookbook
    rtol: float = 1e-12              # float64 frameworks; a wider one says why in `note`
    float32: bool = False

    @property
    def tolerance(self) -> float:
        return self.rtol

    @property
    def floor(self) -> float:
        return 1e-3

    @property
    def compared(self) -> range:
        return range(self.steps if self.upto is None else min(self.steps, self.upto))

    def reference(self) -> list[float]:
        return list(self.anchor(self.compared))

    def ours(self) -> list[float]:
        import schedlang

        return schedlang.compile(self.source, params=self.params)["lr"].values(self.compared)

    def anchor_code(self) -> str:
        return self.code
