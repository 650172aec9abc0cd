"""Stage boundaries (issue 21): imports inside functions say why, and nothing outside lowering
reaches into the ``Lowerer``.  Read from the source with ``ast``.  (Which part may import which
is docs/design.md's table, held by tests/test_layout.py.)"""

import ast

import pytest
from helpers import ROOT

PACKAGE = ROOT / "schedlang"

def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        yield name, path, ast.parse(path.read_text(encoding="utf-8"))


def _in_function_imports(tree):
    def walk(node, inside):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)) and inside:
                yield child
            yield from walk(child, inside or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)))
    return list(walk(tree, False))


def test_imports_inside_functions_say_why():
    """An import stays inside a function only for a reason written on its line (``# lazy: torch``):
    heavy optional libraries, what would load them, a module loaded on use, a cycle."""
    silent = []
    for module, path, tree in _modules():
        lines = path.read_text(encoding="utf-8").splitlines()
        for node in _in_function_imports(tree):
            if "lazy:" not in lines[node.lineno - 1]:
                silent.append(f"{path.relative_to(ROOT)}:{node.lineno}: {lines[node.lineno - 1].strip()}")
    assert not silent, silent


@pytest.mark.parametrize("name", ["Lowerer", "_lowerer"])
def test_only_lowering_touches_the_lowerer(name):
    """Everything else reads a lowered file through ``Lowered``'s public methods."""
    found = []
    for module, path, tree in _modules():
        if module == "schedlang.semantics.lower":
            continue
        for node in ast.walk(tree):
            if (isinstance(node, ast.Name) and node.id == name) or \
                    (isinstance(node, ast.Attribute) and node.attr == name) or \
                    (isinstance(node, ast.alias) and node.name == name):
                found.append(f"{module}:{getattr(node, 'lineno', '?')}")
    assert not found, found


def test_lowered_answers_for_the_nodes_of_its_file():
    """The public lowering API the exporters and ``durations`` use: any node's value, as lowering
    gives it, with lowering's errors at the node."""
    import sympy as sp

    import schedlang
    from schedlang.errors import SchedlangError
    from schedlang.library.stdlib import SCHEDULES, Warmup
    from schedlang.semantics.lower import lower
    from schedlang.syntax import ir
    from schedlang.syntax.parser import parse

    module = parse("param n: int = 10\nlet xs = [1, 2 * n]\n"
                   "schedule lr = warmup(linear, 5) >> exp(1, 0.5, n, staircase=true)\n")
    lowered = lower(module)
    xs = module.statements[1].value
    warm, decay = module.statements[2].value.first, module.statements[2].value.then
    n = lowered.params["n"].symbol
    assert isinstance(lowered.value(warm), Warmup) and lowered.value(warm).steps == 5
    assert lowered.segment(decay.args[2], "a number").expr == n
    items = lowered.value(xs).items
    assert [lowered.constant_of(v, node, "an item") for v, node in zip(items, xs.items)] == [1, 2 * n]
    staircase = next(a for a in SCHEDULES["exp"].args if a.name == "staircase")
    assert lowered.argument(SCHEDULES["exp"], staircase, decay.keywords[0].value) is True
    with pytest.raises(SchedlangError, match="expected a number, got a list") as caught:
        lowered.segment(xs, "a number")
    assert caught.value.span == xs.span
    assert isinstance(xs, ir.List) and isinstance(n, sp.Symbol)
    traced = schedlang.Schedule.from_sympy(schedlang.t / 2).program._lowered
    with pytest.raises(ValueError, match="not lowered from source"):
        traced.value(xs)


def test_every_argument_kind_has_its_conversion():
    """Lowering converts an argument by one method per ``Kind``: a new kind needs its method."""
    from schedlang.library.stdlib import Kind
    from schedlang.semantics import lower

    assert [k.value for k in Kind if not hasattr(lower.Lowerer, f"_{k.value}_argument")] == []
