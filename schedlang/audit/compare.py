"""When a logged value is the planned one: within the precision the log was written in.

A value printed as text carries half a unit in its last digit (Megatron's ``:.6E``: seven
significant digits), a TensorBoard scalar one float32 ulp; every comparison also allows
``RTOL`` relative, what float64 arithmetic done in another order (a LambdaLR's
``base_lr * factor`` against the file's formula) can leave.  A non-finite logged value
matches nothing.
"""

from __future__ import annotations

import math

#: Relative slack of every comparison: float64 rounding, never a schedule's difference.
RTOL = 1e-9


def matches(value: float, planned: float, tol: float) -> bool:
    if not (math.isfinite(value) and math.isfinite(planned)):
        return False
    return abs(value - planned) <= max(tol, RTOL * abs(planned))


def difference(value: float, planned: float) -> float:
    """Relative difference (absolute where the plan is 0); ``inf`` for a non-finite value."""
    if not (math.isfinite(value) and math.isfinite(planned)):
        return math.inf
    gap = abs(value - planned)
    return gap / abs(planned) if planned else gap
