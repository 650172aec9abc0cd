"""The plain-Python reference of a program, live: loading it and probing it for overflow.

``Schedule.__call__`` evaluates the very module ``schedlang compile --target python`` writes
(``load_reference``), so the in-process reference and the standalone file agree to the last
bit.  The check of a bound schedule asks one more thing only evaluation answers: from which
step float64 overflows (``first_overflow_step``).  Both live here, in the stage that runs
generated code, so lowering and the symbolic check (``semantics/``) never load or run any.
"""

from __future__ import annotations

import math
import types

from ..codegen import python as python_codegen
from ..codegen.base import ModuleSpec
from ..codegen.load import load


def load_reference(spec: ModuleSpec) -> types.ModuleType:
    """The Python target's module for ``spec``, loaded once per text (``codegen.load``).

    ``Program`` passes a spec with every parameter a required keyword, so the text depends on
    the file alone and every rebind of it reuses one module.
    """
    return load(python_codegen.generate(spec), "schedlang_reference")


def first_overflow_step(function, breakpoints, last_step: int) -> int | None:
    """The first step at which a bound schedule's float64 value overflows, if any.

    The symbolic check (``semantics.check.first_nonfinite_step``) finds divisions by zero
    and roots of negatives; a value
    that merely grows (``exp(1, 2, 10)`` is ``2 ** (t / 10)``, past float64's 1.8e308
    from step 10240 on) is found here by evaluating ``function`` (the plain-Python
    reference) at step 0, at every breakpoint and its neighbours, and at every power
    of two up to ``last_step``; between the last finite probe and the first overflowing
    one, halving finds the first overflowing step (schedules grow monotonically there:
    exponentials and powers of the step).
    """
    probes = {0, last_step, *(2**k for k in range(last_step.bit_length()))}
    for b in breakpoints:
        probes.update(int(b) + d for d in (-1, 0, 1) if 0 <= int(b) + d <= last_step)
    finite_before = None
    for step in sorted(probes):
        if _overflows(function, step):
            low, high = finite_before, step
            while low is not None and high - low > 1:
                middle = (low + high) // 2
                low, high = (low, middle) if _overflows(function, middle) else (middle, high)
            return high
        finite_before = step
    return None


def _overflows(function, step: int) -> bool:
    """Whether float64 has no value at ``step``.  The symbolic check has already passed, so a
    ``ValueError`` here is a part that overflowed into a function with no value at infinity
    (``cos(exp(0.5, 1.5, 1000))``: ``math.cos(inf)``, NaN in torch), not a negative root."""
    try:
        return not math.isfinite(float(function(step)))
    except (OverflowError, ValueError):
        return True
    except ZeroDivisionError:
        return False  # not an overflow: the symbolic check reports these
