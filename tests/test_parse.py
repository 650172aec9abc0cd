"""Parsing as a table: source text -> the shape of the tree (sqlglot style)."""

import sys
from fractions import Fraction
from pathlib import Path

import pytest

from schedlang.syntax import ir
from schedlang.syntax.parser import parse


def shape(node):
    """A compact, span-free rendering of an IR node."""
    if isinstance(node, ir.Number):
        return str(node.value) if node.value.denominator != 1 else str(node.value.numerator)
    if isinstance(node, ir.Duration):
        return f"{node.value}{node.unit}"
    if isinstance(node, ir.String):
        return f'"{node.value}"'
    if isinstance(node, ir.Bool):
        return str(node.value).lower()
    if isinstance(node, ir.Name):
        return node.id
    if isinstance(node, ir.List):
        return "[" + " ".join(shape(i) for i in node.items) + "]"
    if isinstance(node, ir.Call):
        args = [shape(a) for a in node.args] + [f"{k.name}={shape(k.value)}" for k in node.keywords]
        return f"{node.func.id}({' '.join(args)})"
    if isinstance(node, ir.BinOp):
        return f"({node.op} {shape(node.left)} {shape(node.right)})"
    if isinstance(node, ir.Unary):
        return f"({node.op} {shape(node.operand)})"
    if isinstance(node, ir.Compare):
        parts = [shape(node.operands[0])]
        for op, operand in zip(node.ops, node.operands[1:]):
            parts += [op, shape(operand)]
        return "(" + " ".join(parts) + ")"
    if isinstance(node, ir.BoolOp):
        return f"({node.op} {shape(node.left)} {shape(node.right)})"
    if isinstance(node, ir.Not):
        return f"(not {shape(node.operand)})"
    if isinstance(node, ir.If):
        return f"(if {shape(node.cond)} {shape(node.then)} {shape(node.other)})"
    if isinstance(node, ir.For):
        return f"(for {shape(node.body)} {shape(node.steps)})"
    if isinstance(node, ir.Seq):
        return f"(>> {shape(node.first)} {shape(node.then)})"
    raise AssertionError(node)


EXPRESSIONS = [
    ("1", "1"),
    ("1_000", "1000"),
    ("1e-4", "1/10000"),
    ("0.1", "1/10"),
    (".5", "1/2"),
    ("2.5e3", "2500"),
    ("500ba", "500ba"),
    ("0.3dur", "3/10dur"),
    ("2ep", "2ep"),
    ("1e6tok", "1000000tok"),
    ("t", "t"),
    ("torch.StepLR", "torch.StepLR"),
    ("a + b * c", "(+ a (* b c))"),
    ("(a + b) * c", "(* (+ a b) c)"),
    ("a - b - c", "(- (- a b) c)"),
    ("a / b / c", "(/ (/ a b) c)"),
    ("-a ** 2", "(- (** a 2))"),
    ("a ** b ** c", "(** a (** b c))"),
    ("a ** -b", "(** a (- b))"),
    ("2 * -t", "(* 2 (- t))"),
    ("a >> b >> c", "(>> (>> a b) c)"),
    ("a + 1 >> b", "(>> (+ a 1) b)"),
    ("a for 10 >> b", "(>> (for a 10) b)"),
    ("a + b for n - 1", "(for (+ a b) (- n 1))"),
    ("if t < 5 then a else b", "(if (t < 5) a b)"),
    ("(if t < 5 then a else b) >> c", "(>> (if (t < 5) a b) c)"),
    ("if t < 5 then a else (b >> c)", "(if (t < 5) a (>> b c))"),
    ("(if t < 5 then a else b) for 10", "(for (if (t < 5) a b) 10)"),
    ("if a then x >> y else z", "(if a (>> x y) z)"),
    ("if a then 1 else if b then 2 else 3", "(if a 1 (if b 2 3))"),
    ("t < 5 and not t > 2 or x", "(or (and (t < 5) (not (t > 2))) x)"),
    ("0 <= t < 10", "(0 <= t < 10)"),
    ("a == b", "(a == b)"),
    ("f()", "f()"),
    ("f(1, 2)", "f(1 2)"),
    ("f(1, b=2,)", "f(1 b=2)"),
    ("poly(1e-3, 0, 1000, power=2)", "poly(1/1000 0 1000 power=2)"),
    ('cyclic(0, 1, 5, mode="triangular2")', 'cyclic(0 1 5 mode="triangular2")'),
    ("warmup(linear, 500)", "warmup(linear 500)"),
    ("[1, 2, 3]", "[1 2 3]"),
    ("[]", "[]"),
    ("[a, [b]]", "[a [b]]"),
    ("true", "true"),
    ("f(false)", "f(false)"),
    ("x # comment", "x"),
    ("iffy + form", "(+ iffy form)"),
]


@pytest.mark.parametrize("source, expected", EXPRESSIONS, ids=[e[0] for e in EXPRESSIONS])
def test_expression(source, expected):
    module = parse(source)
    (statement,) = module.statements
    assert isinstance(statement, ir.ScheduleDecl) and statement.name == "lr"
    assert shape(statement.value) == expected


def test_statements():
    module = parse("""
        # a full file
        param peak: float = 3e-4 where peak > 0
        param total: int
        let decay = cosine(peak, 0.1 * peak, total)
        def halving(v, every) = v * 0.5 ** floor(t / every)
        schedule lr = decay
        schedule wd = constant(0.1)
    """)
    kinds = [type(s).__name__ for s in module.statements]
    assert kinds == ["Param", "Param", "Let", "Def", "ScheduleDecl", "ScheduleDecl"]
    peak, total, _, halving, *_ = module.statements
    assert (peak.name, peak.type, shape(peak.default), shape(peak.where)) == (
        "peak", "float", "3/10000", "(peak > 0)")
    assert total.default is None and total.where is None
    assert halving.params == ("v", "every")


def test_decimal_literals_are_exact():
    (statement,) = parse("0.1").statements
    assert statement.value.value == Fraction(1, 10)


def test_spans_point_at_source():
    (statement,) = parse("linear(1, 0,\n   total)").statements
    total = statement.value.args[2]
    assert (total.span.line, total.span.column, total.span.end_column) == (2, 4, 9)


@pytest.mark.parametrize("number, written", [
    ("1.2M", "write 1_200_000 or 1.2e6"), ("3k", "write 3_000 or 3e3"), ("2T", "or 2e12"),
    ("1.5B", "write 1_500_000_000 or 1.5e9"), ("0.5G", "write 500_000_000 or 0.5e9"),
    ("12ktok", "write 12_000tok or 12e3tok"), ("4Msp", "write 4_000_000sp or 4e6sp"),
    ("1.2345k", "write 1_234.5 or 1.2345e3"), ("1e999999M", "write 1e1000005"),
    ("500steps", "only the units dur, ba, ep, sp, tok"), ("2x", "(2 * x)")])
def test_number_with_a_letter_suffix_says_what_to_write(number, written):
    """``1.2M`` is a number, then a name, to the lexer; the error names the whole literal and
    says how to write it, instead of the parser's twenty expected tokens."""
    from schedlang.errors import SchedlangError

    with pytest.raises(SchedlangError) as info:
        parse(f"schedule lr = constant(1e-3, {number})")
    error = info.value
    assert written in error.hint and "expected" not in error.hint, error.hint
    assert f"'{number}'" in error.message
    assert (error.column, error.span.end_column) == (30, 30 + len(number))
    with pytest.raises(SchedlangError) as spaced:  # not adjacent: the ordinary syntax error
        parse("schedule lr = constant(1e-3, 1.2 M)")
    assert "expected" in spaced.value.hint


def test_the_shipped_parser_tables_are_current_and_used():
    """``schedlang/syntax/tables.py`` holds the LALR tables of the grammar (``tools/
    gen_parser_tables.py``): computing them costs a cold ``schedlang check`` about 0.1 s."""
    import subprocess

    from schedlang.syntax import parser as parser_module
    from schedlang.syntax import tables

    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, str(root / "tools" / "gen_parser_tables.py"), "--check"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert tables.KEY == parser_module.tables_key(parser_module.grammar_text())
    assert parser_module.lark_parser().source_path == "<deserialized>"  # loaded, not built
    assert set(tables.TABLES) == set(parser_module.PARSERS)


def test_a_grammar_the_tables_were_not_computed_from_is_built(monkeypatch):
    from schedlang.syntax import parser as parser_module

    monkeypatch.setattr(parser_module, "grammar_text", lambda: "start: \"a\"\n")
    built = parser_module.make_parser("parse")
    assert built.source_path != "<deserialized>"
    assert built.parse("a") is not None


def test_lark_loads_without_regex_and_regex_stays_importable():
    """``syntax/__init__`` hides the ``regex`` module while lark loads (10-18 ms of a cold check,
    issue 39 item 17): lark then lexes with ``re``, and a later ``import regex`` gets the module."""
    import subprocess

    pytest.importorskip("regex")
    code = ("import sys; import schedlang.syntax.parser as p; import lark.utils;"
            "assert 'regex' not in sys.modules and not lark.utils._has_regex;"
            "p.parse('schedule lr = cosine(1e-3, 1e-4, 1000)');"
            "import regex; assert regex.compile('a+').match('aa')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parent.parent)
    assert done.returncode == 0, done.stderr
