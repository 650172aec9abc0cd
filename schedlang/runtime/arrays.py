"""``Schedule.torch(steps)`` and ``Schedule.jax(steps)``: a schedule evaluated by an array library.

One path for every array target: the code is the module ``schedlang compile --target
torch|jax`` prints, made by the same builder (``codegen.emit.module``, the registry's row;
for torch the part before the class template), with every bound value folded into the
formulas (``bind_all``): constants are exact numbers rounded once, which float32 results
need (``tests/test_float32_ulps.py``; computed from parameter values at run time, a
difference like ``max_duration - t`` loses 20 ulps).  It is loaded through the one
audited loader, once per text, and kept per program (``_MODULES``, as long as the program
lives).  What differs per library is a row of ``LIBRARIES``: how
steps become an integer array, and how the generated function is wrapped (JAX: under
``jax.jit``, the result dtype static).

Steps stay integers: torch's an int64 tensor on their own device (a float32 step counter
would lose whole steps past 2**24); JAX's its widest integer type (int32, or int64 with
``jax_enable_x64``), steps given as Python numbers checked on the host first, so a step
past int32 without x64 is a ``SchedlangError`` rather than a silent wrap.  torch and jax
are imported only inside the functions that need them (``schedlang check`` loads neither).
"""

from __future__ import annotations

import importlib.util
import weakref
from collections.abc import Callable
from dataclasses import dataclass

from ..codegen.base import GeneratedModule
from ..codegen.emit import BUILDERS
from ..codegen.emit import module as build_module
from ..codegen.load import load as load_generated
from ..errors import SchedlangError

#: program -> {target: its loaded module}; schedule -> {target: its wrapped function}.  Weak:
#: an entry goes with its program or schedule.
_MODULES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_FUNCTIONS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def generated_module(program, target: str):
    """The loaded module of ``target`` for ``program``, its bound values folded in (see above)."""
    cache = _MODULES.setdefault(program, {})
    loaded = cache.get(target)
    if loaded is None:
        spec = program.module_spec(bind_all=True, measured=BUILDERS[target].measured)
        class_name = "Scheduler"
        taken = {s.py_name for s in spec.schedules} | {p.py_name for p in spec.params}
        while class_name in taken:  # the class is not used here, but its name must be free
            class_name += "_"
        code = build_module(spec, target, class_name=class_name).code
        loaded = cache[target] = load_generated(GeneratedModule(code, {}), f"schedlang_{target}")
    return loaded


def function(schedule, target: str):
    """The generated ``target`` function of a bound schedule, ``f(steps, _dtype=...)`` (torch
    also takes ``_compute``), kept per schedule."""
    cache = _FUNCTIONS.setdefault(schedule, {})
    cached = cache.get(target)
    if cached is None:
        schedule._require_bound()
        generated = generated_module(schedule.program, target).SCHEDULES[schedule.name]
        cached = cache[target] = LIBRARIES[target].wrap(generated)
    return cached


def evaluate(schedule, steps, target: str, dtype=None):
    """Values of ``schedule`` at ``steps`` (an array or a sequence, any shape; torch: any device).

    ``dtype`` is the result's dtype; the default is the generated function's: torch's
    float64 (values computed in float64 and rounded once), JAX's float32, or float64 with
    x64.  Negative steps are not checked on a torch device (that would need a sync) and
    give unspecified values.
    """
    options = {} if dtype is None else {"_dtype": dtype}
    return function(schedule, target)(LIBRARIES[target].steps(steps), **options)


def _torch_steps(steps):
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


def _jax_steps(steps):
    """Steps as a JAX integer array of the widest enabled type; whole numbers in its range only."""
    import jax  # lazy: jax
    import jax.numpy as jnp  # lazy: jax
    import numpy as np  # lazy: numpy (with jax)

    wide = jax.dtypes.canonicalize_dtype(jnp.int64)
    if isinstance(steps, jax.Array):
        if not jnp.issubdtype(steps.dtype, jnp.integer):
            raise SchedlangError(f"steps must be an array of whole numbers, not {steps.dtype}",
                                 hint="use an integer dtype such as jnp.int32")
        return steps.astype(wide)
    try:
        host = np.asarray(steps)
        if host.dtype == object or host.dtype == bool or not (
                np.issubdtype(host.dtype, np.integer) or host.size == 0):
            if not np.issubdtype(host.dtype, np.floating) or not np.all(np.mod(host, 1) == 0):
                raise TypeError(f"not whole numbers ({host.dtype})")
            host = host.astype(np.int64)
    except (TypeError, ValueError, OverflowError) as exc:
        raise SchedlangError(f"steps must be whole numbers: {exc}") from None
    top = int(np.iinfo(wide).max)
    if host.size and (int(host.max()) > top or int(host.min()) < 0):
        raise SchedlangError(f"steps must be in 0 .. {top} for {np.dtype(wide).name} steps",
                             hint="enable jax_enable_x64 for steps past 2**31 - 1")
    return jnp.asarray(host, dtype=wide)


def _as_is(generated):
    return generated


def _jitted(generated):
    """Under ``jax.jit``, the result dtype static."""
    import jax  # lazy: jax

    return jax.jit(generated, static_argnames=("_dtype",))


@dataclass(frozen=True)
class Library:
    """What evaluating with one array library needs beyond the generated module."""

    steps: Callable  # steps as given -> the library's integer array
    wrap: Callable  # the generated function -> the function ``evaluate`` calls


#: The array targets ``Schedule.<name>(steps)`` evaluates with: ``codegen.emit.BUILDERS`` name -> row.
LIBRARIES = {"torch": Library(_torch_steps, _as_is), "jax": Library(_jax_steps, _jitted)}

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
    return evaluate(schedule, tensor, "torch").tolist()
