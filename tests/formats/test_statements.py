"""``formats/common/statements``: the statements a format's ``source`` returns, as ``ir`` nodes
with the configuration's spans, printed by ``syntax/unparse``."""

from __future__ import annotations

from schedlang.errors import Source, Span
from schedlang.formats.common.statements import (
    def_stmt,
    formula,
    let_stmt,
    module,
    noted,
    number,
    param_stmt,
    run_stmt,
    schedule_stmt,
)
from schedlang.program import compile as compile_source
from schedlang.syntax import ir, unparse

CONFIG = Source('{"lr": 0.1, "steps": 100}', "config.json")
LR, STEPS = Span(CONFIG, 1, 8, 1, 11), Span(CONFIG, 1, 22, 1, 25)


def test_a_module_prints_its_statements_and_notes_in_order():
    tree = module(["# Imported by hand.", "# Two notes."],
                  param_stmt("total", "int", "100", where="total > 0", span=STEPS),
                  noted(run_stmt("total", STEPS), "the steps"),
                  def_stmt("half", ("x",), "x / 2"),
                  let_stmt("peak", "half(0.2)", LR),
                  noted(schedule_stmt("lr", "(constant(peak) for 10) >> cosine(peak, 0, total - 10)"), None))
    text = unparse.module(tree)
    assert text == ("# Imported by hand.\n# Two notes.\nparam total: int = 100 where total > 0\n"
                    "run = total  # the steps\ndef half(x) = x / 2\nlet peak = half(0.2)\n"
                    "schedule lr = (constant(peak) for 10) >> cosine(peak, 0, total - 10)\n")
    assert compile_source(text)["lr"](0) == 0.1


def test_each_statement_carries_the_span_of_what_it_was_read_from():
    stmt = schedule_stmt("lr", "constant(0.1)", LR)
    assert stmt.span == LR and isinstance(stmt.value, ir.Call)
    assert run_stmt("100", STEPS).span == STEPS
    assert schedule_stmt("lr", ir.Name(LR, "t")).value == ir.Name(LR, "t")  # a node as it is


def test_notes_after_the_last_statement_stay_there():
    tree = module(run_stmt("5"), "# the end")
    assert tree.comments == (ir.Comment("the end", 1),)
    assert unparse.module(tree) == "run = 5\n# the end\n"


def test_a_formula_keeps_its_values_nodes_and_puts_its_own_parts_at_the_span_given():
    """``formula``: the format's own text, each upper-case name replaced by the value's node (its
    config span kept); what the text itself wrote is at the span given, nothing at generated text."""
    whole = Span(CONFIG, 1, 1, 1, 26)
    tree = formula("LR * (1 + cos(pi * t / STEPS)) / 2", whole, LR=number(0.1, LR), STEPS=number(100, STEPS))
    assert unparse.expression(tree) == "0.1 * (1 + cos(pi * t / 100)) / 2"
    assert tree.span == whole and tree.left.left == number(0.1, LR) and tree.left.left.span == LR
    steps = tree.left.right.right.args[0].right
    assert steps.span == STEPS and isinstance(steps, ir.Number)
    assert tree.left.right.span == whole and tree.left.right.right.span == whole  # its own parts


def test_a_formula_puts_each_number_at_its_own_span_and_the_rest_at_the_one_given():
    """``statements.formula``: the format's text of names, each name the node given for it."""
    rest = Span(CONFIG, 1, 1, 1, 26)
    tree = formula("(LR * (t + 1) / N for N) >> constant(LR)", rest,
                   LR=number("0.1", LR), N=number(100, STEPS))
    assert unparse.expression(tree) == "(0.1 * (t + 1) / 100 for 100) >> constant(0.1)"
    numbers = [n for n in _nodes(tree) if isinstance(n, ir.Number)]
    assert [(n.text, n.span) for n in numbers] == [("0.1", LR), ("1", rest), ("100", STEPS), ("100", STEPS),
                                                  ("0.1", LR)]
    assert tree.span == rest
    assert all(n.span.source is CONFIG for n in _nodes(tree))


def _nodes(node):
    yield node
    for value in vars(node).values():
        for item in value if isinstance(value, tuple) else (value,):
            if isinstance(item, ir.Node):
                yield from _nodes(item)
