"""``Schedule.jax(steps)``: evaluate a schedule with its generated branch-free JAX code.

The code comes from ``codegen/jax.py`` with every parameter bound (constants
fold to literals), is loaded once per program through the one audited loader,
wrapped in ``jax.jit`` and cached on each ``Schedule``.  Steps become an
integer array of JAX's widest integer type (int32, or int64 with
``jax_enable_x64``); steps given as Python numbers are checked on the host
first, so a step past int32 without x64 is a ``SchedlangError`` rather than a
silent wrap.  jax is imported only here, inside the functions.
"""

from __future__ import annotations

from ..codegen import jax as jax_codegen
from ..codegen.load import load as load_generated
from ..errors import SchedlangError

_CACHE_ATTRIBUTE = "_schedlang_jax_function"


def jax_function(schedule):
    """The jitted generated function ``f(t, *, _dtype=None)`` of a bound schedule."""
    function = schedule.__dict__.get(_CACHE_ATTRIBUTE)
    if function is None:
        import jax  # lazy: jax

        schedule._require_bound()
        spec = schedule.program.module_spec(bind_all=True)
        module = load_generated(jax_codegen.generate(spec), "schedlang_jax")
        for other in schedule.program.schedules.values():
            other.__dict__[_CACHE_ATTRIBUTE] = jax.jit(module.SCHEDULES[other.name],
                                                       static_argnames=("_dtype",))
        function = schedule.__dict__[_CACHE_ATTRIBUTE]
    return function


def as_steps(steps):
    """Steps as a JAX integer array of the widest enabled type; whole numbers in its range only."""
    import jax  # lazy: jax
    import jax.numpy as jnp  # lazy: jax
    import numpy as np  # lazy: numpy

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


def evaluate(schedule, steps, dtype=None):
    """Values of ``schedule`` at ``steps`` (array or sequence, any shape), under ``jax.jit``.

    ``dtype`` is the result's dtype; the default is float32, or float64 with x64.
    """
    return jax_function(schedule)(as_steps(steps), _dtype=dtype)
