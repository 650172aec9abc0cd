"""The short names the preset modules give the argument kinds (``stdlib.Kind``), one letter
each so a preset's signature reads as a row (``arg("lr", V)``, ``arg("step_size", S)``).

Public: the preset modules read them through ``_common``, and the Cerebras model-config reader
(``formats/cerebras_model``) names the kind of each argument it writes by them.
"""

from __future__ import annotations

from ..stdlib import Kind

V, S, C, L, D = Kind.VALUE, Kind.STEPS, Kind.CONST, Kind.VALUES, Kind.DURATION
SCHEDULES, PAIRS, FLAG, OPTION = Kind.SCHEDULES, Kind.PAIRS, Kind.FLAG, Kind.OPTION
