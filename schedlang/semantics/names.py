"""The names generated text never gives a ``param`` or ``let`` of its own: the words of the
language, ``t``, the schedules and statements a program declares by convention (``lr``,
``batch``, ``run``), the standard library's schedules, math functions and constants, the calls
of the run's clock (``on_samples``, ``on_tokens``, ``stages``: ``library/clock_calls``) and the
presets' namespaces.  (Lowering refuses a ``param``, ``let``, ``def`` or ``schedule`` named
after a call of the clock.)  ``to_source()``, the Megatron-LM importer's parameters and a script's
argparse parameters all pick names outside this set, so a generated name never shadows or
collides with one the reader already knows.
"""

from __future__ import annotations

from ..library import stdlib
from ..library.clock_calls import CLOCK_CALLS
from ..library.presets import PRESETS
from ..syntax.parser import RESERVED, STATEMENT_WORDS

LANGUAGE_NAMES = frozenset({*RESERVED, *STATEMENT_WORDS, "t", "lr", *stdlib.SCHEDULES, *stdlib.MATH,
                            *stdlib.CONSTANTS, *(name.split(".")[0] for name in (*PRESETS, *CLOCK_CALLS))})
