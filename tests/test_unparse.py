"""``syntax/unparse``: the one ``ir`` -> ``.sched`` printer, comments included."""

from __future__ import annotations

import pytest

from schedlang.syntax import ir, unparse
from schedlang.syntax.fmt import format_source
from schedlang.syntax.parser import parse

TEXT = """\
param total: int = 1000 where total > 0
let warm = linear(0, 0.1, 100)
def half(x) = x / 2
batch = stages([0, 64], [1000])
run = total
schedule lr = warm >> half(cosine(0.1, 0.001, total - 100)) for total - 100
"""


def test_every_statement_prints_as_it_parsed():
    tree = parse(TEXT)
    assert unparse.module(tree) == TEXT
    assert unparse.module(parse(unparse.module(tree))) == TEXT


def test_comments_on_their_own_lines_and_at_line_ends():
    tree = parse("run = 10\nschedule lr = constant(0.1)\n")
    noted = ir.Module(tree.span, tree.statements, (
        ir.Comment("Imported by hand.", 0), ir.Comment("the steps", 0, trailing=True),
        ir.Comment("", 1), ir.Comment("the end", 2)))
    text = unparse.module(noted)
    assert text == "# Imported by hand.\nrun = 10  # the steps\n#\nschedule lr = constant(0.1)\n# the end\n"
    assert format_source(text) == text
    assert unparse.module(parse(text)) == unparse.module(tree)  # the parser keeps none


@pytest.mark.parametrize("bad", ["two\nlines", "a\rb", "a\u2028b"])
def test_a_comment_cannot_end_its_line(bad):
    tree = parse("run = 10\n")
    with pytest.raises(ValueError):
        unparse.module(ir.Module(tree.span, tree.statements, (ir.Comment(bad, 0),)))


def test_parentheses_as_written_are_kept_and_mean_nothing():
    text = "schedule lr = (0.1 * (t + 1) / 101 for 100) >> ((0.1))\n"
    tree = parse(text)
    assert unparse.module(tree) == text
    plain = parse("schedule lr = 0.1 * (t + 1) / 101 for 100 >> 0.1\n")
    assert _shape(tree) == _shape(plain)
    assert unparse.module(plain) == "schedule lr = 0.1 * (t + 1) / 101 for 100 >> 0.1\n"


def _shape(tree) -> list:
    """Each node's type and plain fields, spans and parentheses left out."""
    out = []
    for node in ir.walk(tree):
        values = [getattr(node, f) for f in node.__dataclass_fields__ if f not in ("span", "parens")]
        out.append((type(node).__name__, *(v for v in values if not isinstance(v, (ir.Node, tuple)))))
    return out
