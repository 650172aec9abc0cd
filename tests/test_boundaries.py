"""Stage boundaries (issue 21): imports follow the pipeline, imports inside functions say why,
and nothing outside lowering reaches into the ``Lowerer``.  Read from the source with ``ast``."""

import ast

import pytest
from helpers import ROOT

PACKAGE = ROOT / "schedlang"

#: The pipeline: a module may import from its own stage and the stages before it.
ORDER = ["errors", "limits", "syntax", "core", "library", "semantics", "codegen", "runtime", "program",
         "verify", "formats", "resume", ("tracer", "build", "importers", "exporters"), ("cli", "__main__"),
         "__init__"]
RANK = {name: rank for rank, entry in enumerate(ORDER)
        for name in (entry if isinstance(entry, tuple) else (entry,))}
#: Reads of the package root that go against the order: the version lives once, in ``__init__``.
ALLOWED_UPWARD = {("schedlang.cli.commands", "__version__")}


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        yield name, path, ast.parse(path.read_text(encoding="utf-8"))


def _stage(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _imports(module: str, path, tree):
    """(target module, names, node) for every import of the package inside ``module``."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else [])) if node.level else node.module
            if target.split(".")[0] == "schedlang":
                names = [a.name for a in node.names]
                if target == "schedlang":  # `from .. import formats`: the subpackages named
                    for name in names:
                        yield (f"schedlang.{name}" if name in RANK else "schedlang"), [name], node
                else:
                    yield target, names, node
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "schedlang":
                    yield alias.name, [], node


def test_no_import_goes_against_the_pipeline():
    upward = []
    for module, path, tree in _modules():
        for target, names, node in _imports(module, path, tree):
            if RANK[_stage(target)] > RANK[_stage(module)] and \
                    not all((module, name) in ALLOWED_UPWARD for name in names or [""]):
                upward.append(f"{module}:{node.lineno} imports {target} ({', '.join(names)})")
    assert not upward, upward


def test_the_order_names_every_stage():
    stages = {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir()
              if (p.is_dir() and (p / "__init__.py").exists()) or p.suffix == ".py"}
    assert stages <= set(RANK), stages - set(RANK)


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
