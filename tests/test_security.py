"""Nothing a user writes is ever evaluated as Python.

The package source may call ``exec`` in exactly one audited place
(``codegen/load.py``, which runs printer output); no ``eval``, ``sympify``,
``parse_expr`` or ``lambdify`` anywhere, and generated code never contains the
user's text except identifiers and numbers.
"""

import ast
from pathlib import Path

import pytest

import schedlang

PACKAGE = Path(schedlang.__file__).parent
FORBIDDEN_CALLS = {"eval", "exec", "sympify", "parse_expr", "lambdify", "S", "__import__"}
ALLOWED = {("codegen/load.py", "exec")}


def calls_in(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(
                func, ast.Attribute) else None
            if name in FORBIDDEN_CALLS:
                yield name, node.lineno


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_evaluation_of_text(path):
    relative = str(path.relative_to(PACKAGE))
    found = [(name, line) for name, line in calls_in(path) if (relative, name) not in ALLOWED]
    assert not found, f"{relative}: {found}"


def test_exec_only_sees_printer_output():
    # the one exec is fed by GeneratedModule objects that printers build
    source = (PACKAGE / "codegen" / "load.py").read_text()
    assert "def load(module: GeneratedModule" in source


@pytest.mark.parametrize("source", [
    'schedule lr = __import__("os").system("true")',
    "schedule lr = exec(1)",
    "schedule lr = open(1)",
    'schedule lr = cyclic(0, 1, 10, mode="triangular\\nimport os")',
])
def test_hostile_input_is_a_schedlang_error(source):
    with pytest.raises(schedlang.SchedlangError):
        schedlang.compile(source)


def test_user_names_are_mangled_not_pasted():
    program = schedlang.compile("param lambda_: float = 1\nschedule class_ = constant(1)\n"
                                "schedule print = constant(2)\nschedule None_ = 3")
    generated = program.python_source("x/../evil\nimport os.sched")
    assert "\nimport os" not in generated
    compiled = compile(generated, "<test>", "exec")
    assert compiled is not None
    assert "def print_(" in generated


def test_hostile_names_cannot_reach_generated_code():
    for name in ("print", "math", "t", "SCHEDULES", "_restart_index", "lambda"):
        from schedlang.codegen.base import mangle

        assert mangle(name) != name or name.isidentifier()
        assert mangle(name) not in ("print", "math", "t", "SCHEDULES", "_restart_index")
