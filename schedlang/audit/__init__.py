"""Auditing a run against its file (SPEC §15, ``docs/audit.md``): the logs people have read in
bounded memory (``readers``: HF ``trainer_state.json``, TensorBoard, Lightning ``CSVLogger``,
W&B history CSV, MLflow run folders, Megatron's log text, ``step,value`` CSV), each value put
at its update by its logger's convention (``conventions``), compared within the log's
precision (``compare``), and the cause of a deviation fitted to the whole log (``causes``).

SPEC §8 names the function ``schedlang.audit(file, log, ...)``, and ``schedlang.audit`` is also
this package (Python sets a package's name on its parent when it is imported), so the package
is callable: calling it is calling ``check.audit``.
"""

import sys
import types

from .check import AuditReport, audit
from .conventions import CONVENTIONS
from .readers import FORMATS

__all__ = ["CONVENTIONS", "FORMATS", "AuditReport", "audit"]


class _Callable(types.ModuleType):
    def __call__(self, file, log, **options):
        """``schedlang.audit(file, log, schedule=, tag=, group=, params=, convention=, format=)``."""
        return audit(file, log, **options)


sys.modules[__name__].__class__ = _Callable
