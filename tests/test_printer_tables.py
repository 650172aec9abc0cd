"""Each target's printer as a table: a schedlang expression -> the function it prints.

``golden/printers/<target>.txt`` pins, for one row per node type and printing rule, the
function each printer writes (sqlglot-style tables of input -> output): a printer change
shows as a diff of the rows it touches.  Every row is also evaluated by every target at
steps around its breakpoints and far out, and must agree with the exact value.
``SCHEDLANG_UPDATE_GOLDEN=1`` rewrites the tables.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest
import torch

import schedlang
from schedlang.codegen import jax as jax_codegen
from schedlang.codegen import python as python_codegen
from schedlang.codegen import torch as torch_codegen
from schedlang.codegen.base import GeneratedModule
from schedlang.codegen.emit import emit
from schedlang.codegen.load import load
from schedlang.core.functions import FUNCTIONS

TABLES = Path(__file__).parent / "golden" / "printers"
UPDATE = os.environ.get("SCHEDLANG_UPDATE_GOLDEN") == "1"
PARAMS = "param total: int = 1000 where total > 0\nparam peak: float = 1e-3 where peak > 0\n"

#: The arguments of the math functions' rows (as many as each takes).
ARGUMENTS = ["linear(0.5, 1.5, 1000)", "1.2", "0.75"]

#: One row per thing a printer does differently; the math functions come from their table.
ROWS = [
    "0.5 * linear(3, 6, 10)",                                   # a table under arithmetic
    "linear(1, 0, 1000000000)",                                 # (n - t)/n, one rounding
    "constant(1, 1000000000) >> linear(1e-6, 0, 100)",          # a branch in its local step
    "cosine(peak, 1e-5, total)",                                # parameters
    "warmup(linear, 10) >> cosine(1e-3, 1e-5, 90)",
    "0.99 ** t",                                                # a power of the step
    "exp(1e-3, 0.9, 100, staircase=true)",
    "step(1, 0.5, 30)",
    "multistep(1, 0.1, [30, 60])",
    "piecewise([1, 2, 3], [10, 20])",
    "cosine_restarts(1, 0, 10, mult=2)",                        # restart_index
    "repeat(linear(1, 0, 10), times=3)",                        # Mod of the step
    "stretch(cosine(1, 0, 10), 3)",                             # a whole-number ratio
    "inverse_sqrt(1e-3, 100)",
    "onecycle(1e-3, total, pct_start=0.25)",                    # t <= c bounds
    "if t < 0.55 * total then 1 else 2",                        # a fractional parameter bound
    "constant(peak, 0.8 * total) >> linear(peak, 0, total - 0.8 * total)",
    "abs(linear(-1, 1, 10))",
    "cos(pi * t / 7)",                                          # argument reduced mod 14 in integers
    "sin(pi * t / 7)",
    "cosine(1, 0.1, 10) >> linear(0.1, 1, 10)",                 # cos(x/2)**2 tail, no remainder when clamped
    "1 - sqrt(linear(1, 0, 100))",                              # a - sqrt(x) over its conjugate
    *(f"{f.name}({', '.join(ARGUMENTS[:3 if f.arity == 3 else 2 if f.arity is None else 1])})"
      for f in FUNCTIONS),
]


def _program(row: str):
    return schedlang.compile(PARAMS + f"schedule lr = {row}\n")


def _python(spec) -> str:
    return python_codegen.function_source("lr", spec.schedules[0].expr, spec.params,
                                          python_codegen.ReferencePrinter())


def _torch(spec) -> str:
    return torch_codegen.function_source("lr", spec.schedules[0].expr, spec.params)


def _jax(spec) -> str:
    return jax_codegen.function_source("lr", spec.schedules[0].expr, spec.params)


PRINTERS = {"python": _python, "torch": _torch, "jax": _jax}


def _table(target: str) -> str:
    out = [f"# The {target} printer: a schedlang expression (with {PARAMS.strip().replace(chr(10), '; ')}),\n"
           "# then the function it prints.  Written by tests/test_printer_tables.py "
           "(SCHEDLANG_UPDATE_GOLDEN=1).\n"]
    for row in ROWS:
        out.append(f"\n### {row}\n{PRINTERS[target](_program(row).module_spec('table.sched'))}")
    return "".join(out)


@pytest.mark.parametrize("target", list(PRINTERS))
def test_printer_table(target):
    text = _table(target)
    path = TABLES / f"{target}.txt"
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), "run with SCHEDLANG_UPDATE_GOLDEN=1 to create the tables"
    assert text == path.read_text(encoding="utf-8")


def _steps(schedule) -> list[int]:
    near = {int(b) + d for b in schedule.breakpoints if b.is_Integer for d in (-1, 0, 1)}
    return sorted({0, 1, 57, 999, 1000, 10**6, *(s for s in near if 0 <= s < 2**31)})


@pytest.mark.parametrize("row", ROWS)
def test_every_target_gives_the_row_its_values(row):
    program = _program(row)
    schedule = program["lr"]
    steps = _steps(schedule)
    exact = [float(schedule.expr.xreplace({schedlang.t: k}).evalf(30)) for k in steps]
    modules = {target: load(GeneratedModule(emit(program, target, "table.sched"), {}), f"table_{target}")
               for target in ("python", "torch")}
    values = {"python": [modules["python"].lr(k) for k in steps],
              "torch": modules["torch"].lr(torch.tensor(steps)).tolist()}
    # relative 1e-12, or 1e-13 of the schedule's largest value where a canonical sum cancels
    # (one-cycle's end: 749997/5e8*cos(...) + 750003/5e8 is 4e-9 from terms of 1.5e-3)
    scale = 1e-13 * max(abs(v) for v in exact)
    for target, got in values.items():
        for step, want, value in zip(steps, exact, got):
            assert math.isclose(value, want, rel_tol=1e-12, abs_tol=scale), (target, step, value, want)
