"""``Schedule.torch(steps)``: evaluate a schedule with its generated branch-free torch code.

The code comes from ``codegen/torch.py`` with every parameter bound (so
constants fold to literals), is loaded once per schedule through the one
audited loader and cached on the ``Schedule``.  Steps are converted to an
int64 tensor on their own device: the generated code keeps step arithmetic
in integers, which a float step (or a float32 counter past 2**24) would not.
"""

from __future__ import annotations

import importlib.util

from ..codegen import torch as torch_codegen
from ..codegen.load import load as load_generated
from ..errors import SchedlangError

_CACHE_ATTRIBUTE = "_schedlang_torch_function"


def torch_function(schedule):
    """The generated torch function ``f(t_int64, *, _dtype, _compute)`` of a bound schedule."""
    function = schedule.__dict__.get(_CACHE_ATTRIBUTE)
    if function is None:
        schedule._require_bound()
        spec = schedule.program.module_spec(bind_all=True)
        module = load_generated(torch_codegen.generate(spec), "schedlang_torch")
        for other in schedule.program.schedules.values():
            other.__dict__[_CACHE_ATTRIBUTE] = module.SCHEDULES[other.name]
        function = schedule.__dict__[_CACHE_ATTRIBUTE]
    return function


def as_steps(steps):
    """Steps as an int64 tensor (same shape and device); whole numbers only."""
    import torch  # lazy: torch

    if isinstance(steps, torch.Tensor):
        if steps.dtype.is_floating_point or steps.dtype.is_complex or steps.dtype == torch.bool:
            raise SchedlangError(f"steps must be a tensor of whole numbers, not {steps.dtype}",
                                 hint="use an integer dtype such as torch.int64")
        return steps.to(torch.int64)
    try:
        return torch.as_tensor(steps, dtype=torch.int64)
    except (TypeError, ValueError, RuntimeError, OverflowError) as exc:
        raise SchedlangError(f"steps must be whole numbers: {exc}") from None


def evaluate(schedule, steps, dtype=None):
    """Values of ``schedule`` at ``steps`` (tensor or sequence, any shape and device).

    ``dtype`` is the result's dtype (default float64); values are computed in
    float64 and rounded once.  Negative steps are not checked (that would need
    a device sync) and give unspecified values.
    """
    import torch  # lazy: torch

    function = torch_function(schedule)
    return function(as_steps(steps), _dtype=dtype or torch.float64)


#: From this many steps on, ``values`` evaluates with torch (when it is installed).
LONG_RANGE = 100_000


def values(schedule, steps) -> list[float]:
    """Values at ``steps`` for plots: torch for long ranges, else Python (``eval`` prints the
    reference's own digits and always uses Python).

    Short ranges never import torch (``find_spec`` only looks), so a quick
    ``eval`` stays as quick as the reference; long ranges are evaluated in one
    vectorised call instead of a Python loop.
    """
    if len(steps) < LONG_RANGE or importlib.util.find_spec("torch") is None:
        return schedule.values(steps)
    import torch  # lazy: torch

    if isinstance(steps, range):
        tensor = torch.arange(steps.start, steps.stop, steps.step, dtype=torch.int64)
    else:
        tensor = torch.tensor(list(steps), dtype=torch.int64)
    return evaluate(schedule, tensor).tolist()
