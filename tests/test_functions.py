"""The math-function table (``schedlang/core/functions.py``) drives every stage: one row each.

For every row: the name is a function of the language and highlighted, lowering
builds its node, the closed-form check allows it, the Python reference, the torch and JAX
code and the prover's enclosures all compute it, and the importers' core printer writes
it back.  A row added to the table shows up in each of these without other edits.
"""

import math
import re
from pathlib import Path

import mpmath
import pytest

import schedlang
from schedlang.cli.lexer import SchedlangLexer
from schedlang.codegen.array import ArrayPrinter
from schedlang.codegen.sched import text
from schedlang.core.exact_eval import _COMPILERS, compile_expr, to_float
from schedlang.core.functions import FUNCTIONS
from schedlang.library import stdlib
from schedlang.semantics import check

UNARY = [f for f in FUNCTIONS if f.arity == 1]
#: An argument inside every one-argument function's domain (bounded: exp must stay finite),
#: and mpmath's value of it.
ARGUMENT = "min((1 + t / 8) / 3, 2)"


def _truth(name, step):
    x = min(mpmath.mpf(1 + step / 8) / 3, 2)
    fn = {"abs": abs, "ceil": mpmath.ceil}.get(name) or getattr(mpmath, name)
    return float(fn(x))


@pytest.mark.parametrize("row", FUNCTIONS, ids=lambda r: r.name)
def test_every_row_is_a_function_of_the_language(row):
    assert row.name in stdlib.MATH
    tokens = [tok for tok in SchedlangLexer().get_tokens(f"schedule lr = {row.name}(t)")]
    assert any(value == row.name and "Builtin" in str(kind) for kind, value in tokens)
    if row.node is not None:
        assert row.node in check.ALLOWED


@pytest.mark.parametrize("row", UNARY, ids=lambda r: r.name)
def test_every_stage_computes_a_one_argument_function(row):
    prog = schedlang.compile(f"schedule lr = {row.name}({ARGUMENT})")
    lr = prog["lr"]
    steps = [0, 1, 7, 100]
    want = [_truth(row.name, s) for s in steps]
    assert [lr(s) for s in steps] == pytest.approx(want, rel=1e-14)
    torch = pytest.importorskip("torch")
    got = lr.torch(torch.tensor(steps)).tolist()
    assert got == pytest.approx(want, rel=1e-14)
    if row.array is not None:
        # a periodic row's argument is reduced in integers first (codegen/stable.py)
        printer = ArrayPrinter._print_periodic if row.period else ArrayPrinter._print_elementwise
        assert getattr(ArrayPrinter, f"_print_{row.node.__name__}") is printer
    enclosure = compile_expr(lr.expr)
    assert [to_float(enclosure(s)) for s in steps] == pytest.approx(want, rel=1e-14)
    if row.interval is not None:
        assert row.node in _COMPILERS
    assert schedlang.equivalent(lr, f"{row.name}({ARGUMENT}) + 0").equivalent
    again = schedlang.compile(f"schedule lr = {text(lr.expr)}")["lr"]
    assert [again(s) for s in steps] == pytest.approx(want, rel=1e-14)


def test_the_tracer_reads_every_math_name():
    def traced(fn):
        return schedlang.from_python(lambda s: fn(min((1 + s / 8) / 3, 2)))

    for row in FUNCTIONS:
        for name in row.math_names:
            fn = getattr(math, name)
            assert traced(fn)(5) == pytest.approx(fn((1 + 5 / 8) / 3), rel=1e-14), name


def test_the_docs_that_list_the_math_functions_list_every_row():
    """The hand-written lists (step 4 of the recipe in ``core/functions.py``) stay complete."""
    docs = Path(__file__).resolve().parent.parent / "docs"
    names = " ".join(row.name for row in FUNCTIONS)
    assert f"`{names}`" in (docs / "python.md").read_text(encoding="utf-8"), "docs/python.md"
    import_export = (docs / "import_export.md").read_text(encoding="utf-8")
    traced = re.search(r"`math\.([a-z0-9]+(?:/[a-z0-9]+)+)`", import_export)
    assert traced is not None, "docs/import_export.md lists the tracer's math functions"
    missing = [name for row in FUNCTIONS for name in row.math_names if name not in traced[1].split("/")]
    assert not missing, f"docs/import_export.md does not list math.{missing}"
