"""Run one program every way schedlang evaluates it and compare against ``exact``.

For each schedule of a program, at every sampled step:

* ``exact``: ``fuzzing.exact`` on ``Schedule.expr`` (the truth);
* ``reference``: ``schedlang.compile(src, params)[name](step)`` (plain Python);
* ``torch64`` / ``torch32``: ``Schedule.torch(steps)`` in float64 and float32;
* ``module``: the function of the same name in the module ``schedlang compile
  --target torch`` writes (``codegen.emit.emit``), loaded in a fresh namespace;
  it keeps the parameters symbolic (their values are keyword defaults);
* ``jax32`` / ``jax64`` (``jax_checks=True``): the function of the same name in the module
  ``schedlang compile --target jax`` writes, under ``jax.jit``, with JAX's default int32 steps
  and float32 values (steps up to ``2**31 - 1``) and with ``jax_enable_x64`` (every step).

Agreement (docs/testing.md): ``|got - exact| <= 1e-12 * scale + 8 * kappa * 2**-53 * scale
+ 8 * error`` where ``scale`` is the largest ``|exact|`` over the sampled steps (at least
``1e-30``), ``kappa`` the evaluator's condition number at that step (``|log|`` of a power with
the step in its exponent, ``|argument|`` of a trigonometric function of the step) and
``error`` its bound on the rounding error of the formula as written (cancellation).  float32 must be
within one float32 ulp of the exact value rounded to float32, or within the float64 bound.
``jax32`` computes in float32 throughout: ``|got - exact| <= 1e-4 * scale + 8 * kappa * 2**-24 * scale``.
Generated programs subtract and divide schedules (``0.25 / cosine(1e-3, 0.5, 7)`` loses 1.3e-5 of
its scale to float32 cancellation in the denominator), so the float32 check is there for wrapped
integers, wrong boundaries, NaN and crashes; tests/test_jax_values.py holds realistic schedules
to 1e-6.
"""

from __future__ import annotations

import math
import os
import pickle
import random
import select
import signal
import struct
import time
import traceback
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field

from . import exact
from .generator import Program

HUGE_STEPS = (2**24 + 1, 2**31 - 1, 2**40)
REL = 1e-12
KAPPA_FACTOR = 8 * 2.0**-53
ERROR_FACTOR = 8
SCALE_FLOOR = 1e-30
MAX_BREAKPOINTS = 40
BUDGET_S = 10.0

KINDS = ("crash", "hang", "rejected", "overflow", "reference", "reference-error", "torch64", "torch32",
         "module", "jax32", "jax64", "evaluator")
REL32 = 1e-4
KAPPA_FACTOR32 = 8 * 2.0**-24


@dataclass
class Failure:
    kind: str
    program: Program
    schedule: str | None = None
    step: int | None = None
    values: dict = field(default_factory=dict)
    detail: str = ""

    def report(self) -> str:
        lines = [f"[{self.kind}] {self.detail}".rstrip()]
        if self.schedule is not None:
            lines.append(f"schedule {self.schedule!r} at step {self.step}: "
                         + ", ".join(f"{k} = {v!r}" for k, v in self.values.items()))
        lines.append(self.program.describe().rstrip())
        return "\n".join(lines)


@dataclass
class Result:
    program: Program
    failures: list[Failure] = field(default_factory=list)
    schedules: int = 0
    points: int = 0
    skipped: int = 0
    seconds: float = 0.0
    refused_overflow: int = 0  # programs refused because a value leaves float64 (not a failure)


class Hang(BaseException):  # noqa: N818 - not an Exception: no `except Exception` in the core swallows it
    """The per-program time budget ran out."""


#: How much longer than its CPU budget a forked check may run by the clock before it is killed.
WALL_FACTOR = 4


@contextmanager
def time_budget(seconds: float):
    """Raise ``Hang`` after ``seconds`` of this process's CPU time (main thread only; a
    no-op elsewhere).  CPU time, not wall time: a busy machine slows a program down but
    does not make it a hang."""
    def alarm(signum, frame):
        raise Hang(f"over the {seconds:g} s budget (CPU time)")

    try:
        previous = signal.signal(signal.SIGPROF, alarm)
    except ValueError:  # not the main thread
        yield
        return
    signal.setitimer(signal.ITIMER_PROF, seconds, 0.5)  # and again every 0.5 s should one be swallowed
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def sample_steps(schedule, seed: int) -> list[int]:
    """0, each breakpoint and duration +-1, a few random steps, the huge steps."""
    rng = random.Random(seed)
    found = {0, 1, 2}
    marks = []
    for b in schedule.breakpoints:
        try:
            marks.append(int(b))
        except TypeError:
            continue
    if len(marks) > MAX_BREAKPOINTS:
        marks = marks[:MAX_BREAKPOINTS // 2] + rng.sample(marks[MAX_BREAKPOINTS // 2:], MAX_BREAKPOINTS // 2)
    if isinstance(schedule.duration, int):
        marks.append(schedule.duration)
    for m in marks:
        found.update((m - 1, m, m + 1))
    top = max([m for m in marks if m < 2**40] + [1000])
    found.update(rng.randrange(0, 2 * top + 2) for _ in range(4))
    found.update(HUGE_STEPS)
    return sorted(s for s in found if 0 <= s <= 2**40)


def _f32(x: float) -> float:
    """x rounded to float32 (to nearest, ties to even)."""
    try:
        return struct.unpack("f", struct.pack("f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def _ulp32(x: float) -> float:
    """The spacing of float32 numbers at |x| (subnormal spacing near 0)."""
    if not math.isfinite(x):
        return math.inf
    exponent = math.frexp(abs(x))[1] if x else -125
    return math.ldexp(1.0, max(exponent, -125) - 24)


def load_module(program_obj, params: dict):
    from schedlang.codegen.emit import emit

    text = emit(program_obj, "torch", "fuzz.sched", "FuzzScheduler")
    namespace: dict = {"__name__": "schedlang_fuzz_module"}
    exec(compile(text, "<fuzz-module>", "exec"), namespace)  # noqa: S102 - our own generated module
    return namespace


def load_jax_module(program_obj):
    from schedlang.codegen.emit import emit

    text = emit(program_obj, "jax", "fuzz.sched")
    namespace: dict = {"__name__": "schedlang_fuzz_jax_module"}
    exec(compile(text, "<fuzz-jax-module>", "exec"), namespace)  # noqa: S102 - our own generated module
    return namespace


def check_program(program: Program, budget: float = BUDGET_S, torch_checks: bool = True,
                  jax_checks: bool = False) -> Result:
    """Every disagreement, crash or hang of ``program`` (see the module docstring).

    ``jax_checks`` runs in this process only (``check_isolated`` forks, and a process
    that has started JAX must not fork).
    """
    result = Result(program)
    start = time.perf_counter()
    try:
        with time_budget(budget):
            _check(program, result, torch_checks, jax_checks)
    except Hang as exc:
        result.failures.append(Failure("hang", program, detail=str(exc)))
    except RecursionError:
        result.failures.append(Failure("crash", program, detail="RecursionError"))
    result.seconds = time.perf_counter() - start
    return result


def check_isolated(program: Program, budget: float = BUDGET_S, torch_checks: bool = True) -> Result:
    """``check_program`` in a forked child, killed after ``WALL_FACTOR * budget`` + 2 s.

    A signal cannot interrupt one long C call (a huge big-integer power inside sympy),
    so a hang there would stall the parent; the child is simply killed instead.  The
    child's own budget is CPU time; the wall-clock kill is generous so that a loaded
    machine does not turn a slow program into a hang.
    """
    import schedlang  # noqa: F401 - imported once in the parent, not in every child
    if torch_checks:
        import torch  # noqa: F401
    read_end, write_end = os.pipe()
    with warnings.catch_warnings():
        # JAX (imported by other tests in this process) warns that a forked child must not
        # use it; the child here never does (``jax_checks`` run in process only).
        warnings.filterwarnings("ignore", message=r"os\.fork\(\) was called", category=RuntimeWarning)
        pid = os.fork()
    if pid == 0:  # child
        os.close(read_end)
        try:
            data = pickle.dumps(check_program(program, budget, torch_checks))
        except BaseException as exc:  # noqa: BLE001 - reported to the parent
            data = pickle.dumps(Result(program, [Failure("crash", program, detail=_crash(exc))]))
        with os.fdopen(write_end, "wb") as out:
            out.write(data)
        os._exit(0)
    os.close(write_end)
    wall = WALL_FACTOR * budget + 2
    chunks, deadline = [], time.monotonic() + wall
    with os.fdopen(read_end, "rb") as source:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([source], [], [], remaining)[0]:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return Result(program, [Failure("hang", program, detail=f"killed after {wall:g} s")],
                              seconds=wall)
            chunk = source.read1(1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    os.waitpid(pid, 0)
    return pickle.loads(b"".join(chunks))  # noqa: S301 - our own child's result


def _check(program: Program, result: Result, torch_checks: bool, jax_checks: bool = False) -> None:
    import schedlang
    from schedlang.codegen.base import mangle

    try:
        compiled = schedlang.compile(program.source, program.params)
    except schedlang.SchedlangError as exc:
        detail = str(exc).splitlines()[0]
        if "overflows float64 from step" in detail:
            # Refusing a schedule that leaves float64 is the documented behaviour (docs/testing.md);
            # tests/test_correctness.py pins the reported step for known cases.
            result.refused_overflow += 1
        else:
            result.failures.append(Failure("rejected", program, detail=detail))
        return
    except (Hang, RecursionError):
        raise
    except Exception as exc:  # noqa: BLE001 - any other exception is a finding
        result.failures.append(Failure("crash", program, detail=_crash(exc)))
        return
    module = None
    if torch_checks:
        try:
            module = load_module(compiled, program.params)
        except (Hang, RecursionError):
            raise
        except Exception as exc:  # noqa: BLE001
            result.failures.append(Failure("crash", program, detail="emit torch: " + _crash(exc)))
    jax_module = None
    if jax_checks:
        try:
            jax_module = load_jax_module(compiled)
        except (Hang, RecursionError):
            raise
        except Exception as exc:  # noqa: BLE001
            result.failures.append(Failure("crash", program, detail="emit jax: " + _crash(exc)))
    for name in program.schedules:
        result.schedules += 1
        schedule = compiled[name]
        _check_schedule(program, result, schedule, module and module.get(mangle(name)), torch_checks,
                        jax_module and jax_module.get(mangle(name)))


def _crash(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    where = next((f"{f.filename.split('/schedlang/')[-1]}:{f.lineno}" for f in reversed(frames)
                  if "/schedlang/" in f.filename), "?")
    return f"{type(exc).__name__}: {str(exc)[:200]} (at {where})"


def _check_schedule(program, result, schedule, module_fn, torch_checks, jax_fn=None) -> None:  # noqa: C901
    import schedlang

    try:
        steps = sample_steps(schedule, program.seed)
    except (Hang, RecursionError):
        raise
    except Exception as exc:  # noqa: BLE001
        result.failures.append(Failure("crash", program, schedule.name, detail="breakpoints: " + _crash(exc)))
        return
    try:
        evaluator = exact.Evaluator(schedule.expr)
        truth = {s: evaluator(s) for s in steps}
    except exact.NotSupported as exc:
        result.failures.append(Failure("evaluator", program, schedule.name, detail=str(exc)[:200]))
        return
    except (ZeroDivisionError, ValueError) as exc:
        result.failures.append(Failure("evaluator", program, schedule.name, detail=repr(exc)[:200]))
        return
    floats = {s: exact.to_float(v[0]) for s, v in truth.items()}
    finite = [abs(x) for x in floats.values() if math.isfinite(x)]
    scale = max(finite + [SCALE_FLOOR])
    result.points += len(steps)

    phase = _trig_phase(schedule)

    as_computed = _symbolic_error(schedule)

    def tolerance(step):
        _, kappa, _, error = truth[step]
        error = max(error, as_computed(step))
        return REL * scale + KAPPA_FACTOR * max(kappa, phase(step)) * scale + ERROR_FACTOR * error

    overflow = [s for s in steps if not math.isfinite(floats[s])]
    if overflow:
        s = overflow[0]
        result.failures.append(Failure("overflow", program, schedule.name, s, {"exact": floats[s]},
                                       "compiled, but the exact value overflows float64 "
                                       "(not finite in float64: should be refused)"))
    checked = [s for s in steps if math.isfinite(floats[s])]
    float_floors = _float_floor_steps(schedule, checked)
    # fragile steps: see exact.Evaluator._rounded and _float_floor_steps
    compared = [s for s in checked if not truth[s][2] and s not in float_floors]
    result.skipped += len(checked) - len(compared)

    def compare(kind, got: dict, tol32=False, computed32=False):
        for s in compared:
            if s not in got:  # that evaluation crashed (reported as a crash), or int32 cannot hold s
                if computed32:
                    continue
                return
            want, value = floats[s], got[s]
            if computed32:
                bound = REL32 * scale + KAPPA_FACTOR32 * truth[s][1] * scale
                ok = math.isfinite(value) and abs(value - want) <= max(bound, tolerance(s))
            elif tol32:
                ok = value == _f32(want) or abs(value - _f32(want)) <= max(_ulp32(want), tolerance(s))
            else:
                ok = math.isfinite(value) and abs(value - want) <= tolerance(s)
            if not ok:
                result.failures.append(Failure(kind, program, schedule.name, s,
                                               {"exact": want, kind: value, **others(s)},
                                               f"|diff| = {abs(value - want):.3g} > tol {tolerance(s):.3g}"))
                return

    reference = {}
    for s in checked:
        try:
            reference[s] = schedule(s)
        except schedlang.SchedlangError as exc:
            result.failures.append(Failure("reference-error", program, schedule.name, s, {"exact": floats[s]},
                                           str(exc).splitlines()[0]))
            return
        except (Hang, RecursionError):
            raise
        except Exception as exc:  # noqa: BLE001
            result.failures.append(Failure("crash", program, schedule.name, s,
                                           detail="reference: " + _crash(exc)))
            return

    torch64, torch32, module, jax32, jax64 = {}, {}, {}, {}, {}

    def others(s):
        out = {"reference": reference.get(s)}
        for label, table in (("torch64", torch64), ("torch32", torch32), ("module", module),
                             ("jax32", jax32), ("jax64", jax64)):
            if s in table:
                out[label] = table[s]
        return out

    compare("reference", reference)
    if jax_fn is not None and checked:
        _jax_values(program, result, schedule, jax_fn, checked, jax32, jax64)
        compare("jax64", jax64)
        compare("jax32", jax32, computed32=True)
    if not torch_checks or not checked:
        return
    import torch

    tensor = torch.tensor(checked, dtype=torch.int64)
    for label, table, call in (
        ("torch64", torch64, lambda: schedule.torch(tensor)),
        ("torch32", torch32, lambda: schedule.torch(tensor, dtype=torch.float32)),
        ("module", module, lambda: module_fn(tensor) if module_fn else None),
    ):
        try:
            out = call()
        except (Hang, RecursionError):
            raise
        except Exception as exc:  # noqa: BLE001
            result.failures.append(Failure("crash", program, schedule.name,
                                           detail=f"{label}: " + _crash(exc)))
            continue
        if out is not None:
            table.update(zip(checked, (float(x) for x in out.tolist())))
    compare("torch64", torch64)
    if torch32:
        compare("torch32", torch32, tol32=True)
    if module:
        compare("module", module)


def _jax_values(program, result, schedule, jax_fn, steps, jax32: dict, jax64: dict) -> None:
    """``jax_fn`` under ``jax.jit`` at int32 steps in float32, and at every step with x64."""
    import jax
    import jax.numpy as jnp

    previous = bool(jax.config.jax_enable_x64)
    try:
        for enabled, table in ((False, jax32), (True, jax64)):
            jax.config.update("jax_enable_x64", enabled)
            chosen = steps if enabled else [s for s in steps if s <= 2**31 - 1]
            try:
                out = jax.jit(jax_fn)(jnp.asarray(chosen, dtype=jnp.int64 if enabled else jnp.int32))
            except (Hang, RecursionError):
                raise
            except OverflowError as exc:  # a whole-number constant past int32: x64 needed (documented)
                if enabled:
                    raise
                detail = str(exc)
                if "jax_enable_x64" not in detail:
                    raise
                continue
            except Exception as exc:  # noqa: BLE001
                result.failures.append(Failure("crash", program, schedule.name,
                                               detail=f"jax{64 if enabled else 32}: " + _crash(exc)))
                continue
            table.update(zip(chosen, (float(x) for x in out.tolist())))
    finally:
        jax.config.update("jax_enable_x64", previous)


def summarize(results: list[Result]) -> dict:
    failures = [f for r in results for f in r.failures]
    counts = {k: sum(1 for f in failures if f.kind == k) for k in KINDS}
    return {
        "programs": len(results),
        "schedules": sum(r.schedules for r in results),
        "points": sum(r.points for r in results),
        "skipped_fragile_points": sum(r.skipped for r in results),
        "disagreements": sum(counts[k] for k in ("reference", "torch64", "torch32", "module", "jax32",
                                                  "jax64")),
        "crashes": counts["crash"],
        "hangs": counts["hang"],
        "rejections": counts["rejected"],
        "refused_overflow": sum(r.refused_overflow for r in results),
        "overflows": counts["overflow"],
        "reference_errors": counts["reference-error"],
        "evaluator_unsupported": counts["evaluator"],
        "failing_programs": sum(1 for r in results if r.failures),
    }


def _bound_arguments(schedule, kinds, holds_parameter=False) -> list:
    """Exact evaluators of the arguments of the ``kinds`` nodes of the *symbolic* formula
    (the one the modules compute, parameters kept), with the parameter values put in.
    ``holds_parameter``: only arguments that hold a parameter.  Evaluated by
    ``fuzzing.exact`` (a sympy ``xreplace`` of the step would build huge exact powers)."""
    import sympy as sp

    from schedlang.core.algebra import t

    values = schedule.program.substitutions if schedule.program is not None else {}
    out = []
    for node in sp.preorder_traversal(schedule.symbolic_expr):
        if isinstance(node, kinds) and (not holds_parameter or node.args[0].free_symbols - {t}):
            try:
                argument = node.args[0].xreplace(values)
            except (ValueError, TypeError):  # a branch no value reaches, complex once bound
                continue
            if not argument.free_symbols - {t}:
                out.append(exact.Evaluator(argument))
    return out


def _value_at(evaluator, step) -> float | None:
    try:
        x = exact.to_float(evaluator(step)[0])
    except (exact.NotSupported, ZeroDivisionError, ValueError, TypeError):
        return None
    return x if math.isfinite(x) else None


def _float_floor_steps(schedule, steps) -> set:
    """Steps where a ``floor``/``ceiling``/``Mod`` whose argument holds a parameter has that
    argument within 1e-9 of a whole number.  The Python reference and the modules compute
    such an argument from the parameter's float value (``floor(lr / peak * 1000)`` at an
    exact 560 may give 559), while binding the exact value may fold the node away."""
    import sympy as sp

    fragile = set()
    for evaluator in _bound_arguments(schedule, (sp.floor, sp.ceiling, sp.Mod), holds_parameter=True):
        for step in steps:
            x = _value_at(evaluator, step)
            if x is not None and abs(x - round(x)) <= 1e-9 * max(1.0, abs(x)):
                fragile.add(step)
    return fragile


def _symbolic_error(schedule):
    """``step -> the rounding-error bound of the symbolic formula`` (parameters kept, their
    exact values given to the evaluator): what the Python reference and the modules compute,
    which may cancel where the bound formula does not (binding folds ``2*sin(617*pi*t)`` to 0,
    the modules compute it from a float argument near 1938 and get 4e-13)."""
    program = schedule.program
    values = program.substitutions if program is not None else {}
    if not values or schedule.symbolic_expr == schedule.expr:
        return lambda step: 0.0
    try:
        evaluator = exact.Evaluator(schedule.symbolic_expr, values)
    except exact.NotSupported:
        return lambda step: 0.0

    def error(step):
        try:
            return evaluator(step)[3]
        except (exact.NotSupported, ZeroDivisionError, ValueError, TypeError, KeyError):
            return 0.0

    return error


def _trig_phase(schedule):
    """``step -> max |argument|`` of the step-dependent ``cos``/``sin``/``tan`` as the generated
    modules compute them: from the symbolic formula with the parameter values put into the
    arguments only.  Binding can rewrite ``cos(pi*t/warm + 5)`` as ``(-1)**t*cos(5)`` (exact,
    so the evaluator's own kappa is 0), while a module with ``warm`` a parameter still computes
    ``cos(pi*t/warm + 5)`` in floats, with that argument's phase error."""
    import sympy as sp

    from schedlang.core.algebra import t

    arguments = [e for e in _bound_arguments(schedule, (sp.cos, sp.sin, sp.tan)) if t in e.expr.free_symbols]

    def phase(step):
        found = [abs(x) for x in (_value_at(e, step) for e in arguments) if x is not None]
        return max(found, default=0.0)

    return phase
