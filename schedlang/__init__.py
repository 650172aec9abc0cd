"""schedlang: learning-rate (and other hyperparameter) schedules as exact, checked programs.

    import schedlang
    prog = schedlang.compile("warmup(linear, 500) >> cosine(1e-3, 1e-4, 500)")
    prog["lr"](250)          # 0.0005

See ``docs/`` for the language, the standard library and the presets.
"""

from importlib import import_module as _import_module

from .core.algebra import t
from .errors import SchedlangError, SchedlangWarning
from .program import Program, Schedule, compile, load  # noqa: A004 - the API name is compile

__all__ = ["Program", "Schedule", "SchedlangError", "SchedlangWarning", "audit", "branch",
           "build", "compile",
           "equivalent", "from_python", "load", "resume_check", "t"]
__version__ = "0.1.0"


def equivalent(a, b, **options):
    """Whether two schedules are the same function of the step (see ``schedlang.verify``)."""
    from .verify import equivalent as _equivalent  # lazy: numpy (verify.float_scan)

    return _equivalent(a, b, **options)


def __getattr__(name: str):
    """``schedlang.build`` (the language as Python objects) and ``schedlang.audit`` on first use:
    ``import schedlang`` alone stays light (``schedlang check`` imports neither, nor torch)."""
    if name == "build":
        return _import_module(".build", __name__)  # lazy: build loads every preset (0.1 s)
    if name == "audit":  # the package, callable: schedlang.audit(file, log, ...) (SPEC §15)
        return _import_module(".audit", __name__)  # lazy: reads logs (check loads no reader)
    raise AttributeError(f"module 'schedlang' has no attribute '{name}'")


def from_python(fn, params=None, name="lr"):
    """Trace a LambdaLR-style ``fn(step)`` into a ``Schedule`` (see ``schedlang.tracer``)."""
    from .tracer import from_python as _from_python  # lazy: the tracer (4 ms; check needs none)

    return _from_python(fn, params, name)


def resume_check(state_path, new, was=None, params=None):
    """Whether ``new`` continues the run checkpointed in ``state_path`` exactly (SPEC §10; see
    ``schedlang.resume.check``): a verdict like ``equivalent``'s with ``.step``, ``.last_lr``,
    ``.new_lr`` and ``.counterexample``."""
    from .resume.check import resume_check as _resume_check  # lazy: reads formats (check loads none)

    return _resume_check(state_path, new, was=was, params=params)


def branch(trunk, at, shape, n, to, *, schedule=None, params=None, format=None):  # noqa: A002
    """The cooldown branch of ``trunk`` at ``at`` over ``n`` to ``to``, with its certificate proven
    (SPEC §14; see ``schedlang.branch.certificate``): ``.source``, ``.claims``, ``.proven``, and
    ``.config`` with ``format`` (``"megatron-args"``, ``"hf-args"``)."""
    from .branches.certificate import branch as _branch  # lazy: reads formats and the prover

    return _branch(trunk, at, shape, n, to, schedule=schedule, params=params, format=format)
