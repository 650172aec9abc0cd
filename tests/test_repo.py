"""Repository promises: the README's test command is what CI runs; the grammar ships in the wheel."""

import os
import re
import subprocess
import sys
import zipfile

import pytest
from helpers import ROOT


def readme_commands():
    text = (ROOT / "README.md").read_text()
    return re.findall(r"```sh\n(.*?)\n```", text, flags=re.S)


def test_readme_opens_with_two_commands():
    commands = readme_commands()
    assert len(commands) >= 2
    assert "schedlang eval examples/" in commands[0]
    assert "pytest" in commands[1]


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text()
    assert readme_commands()[1] in ci.splitlines()


def test_ci_runs_the_readme_test_command_before_the_optional_installs():
    """The README's line passes on a fresh clone: CI runs it before it installs the frameworks and
    the playground runtime, then runs again what skipped for want of them (tests/installs.py)."""
    lines = (ROOT / ".ci" / "run").read_text().splitlines()
    first = lines.index(readme_commands()[1])
    assert lines[first - 1] == 'export SCHEDLANG_BEFORE_INSTALL="$NEEDS_INSTALL"'
    later = [i for i, line in enumerate(lines)
             if "install_frameworks.sh" in line or "build_playground" in line]
    assert later and first < min(later)
    assert any('python -m pytest "@$NEEDS_INSTALL"' in line for line in lines[max(later):])


def test_a_missing_install_skips_with_its_command_and_is_noted(tmp_path):
    """A test that needs an install skips saying the command, and the fresh-clone pass notes its id."""
    test = tmp_path / "test_needs.py"
    test.write_text("from installs import FRAMEWORKS, needs_install\n\n"
                    "def test_it():\n    needs_install('megatron-core is not installed', FRAMEWORKS)\n")
    (tmp_path / "conftest.py").write_text((ROOT / "tests" / "conftest.py").read_text())
    noted = tmp_path / "noted.txt"
    env = dict(os.environ, SCHEDLANG_BEFORE_INSTALL=str(noted), CI="true",
               PYTHONPATH=os.pathsep.join([str(ROOT / "tests"), str(ROOT)]))
    pytest_cmd = [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", str(test)]
    result = subprocess.run(pytest_cmd, capture_output=True, text=True, cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stdout
    assert "install it with: bash tools/install_frameworks.sh" in result.stdout
    assert noted.read_text().split() == ["test_needs.py::test_it"]
    del env["SCHEDLANG_BEFORE_INSTALL"]  # after the installs, under CI, the same test fails
    result = subprocess.run(pytest_cmd, capture_output=True, text=True, cwd=tmp_path, env=env)
    assert result.returncode == 1, result.stdout


def test_constraints_pin_torch():
    assert "torch==2.13.0" in (ROOT / "constraints.txt").read_text()


@pytest.mark.skipif(os.environ.get("SCHEDLANG_SKIP_WHEEL") == "1", reason="wheel build disabled")
def test_grammar_found_after_non_editable_install(tmp_path):
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                            "-w", str(tmp_path / "dist"), str(ROOT)], capture_output=True, text=True)
    if build.returncode != 0 and "hatchling" in build.stderr:
        pytest.skip("hatchling is not installed")
    assert build.returncode == 0, build.stderr
    wheel = next((tmp_path / "dist").glob("schedlang-*.whl"))
    assert "schedlang/_grammar/schedlang.lark" in zipfile.ZipFile(wheel).namelist()
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--target", str(target), str(wheel)],
                   check=True, capture_output=True)
    code = ("import schedlang, sys; assert schedlang.__file__.startswith(sys.argv[1]), schedlang.__file__;"
            "print(schedlang.compile('warmup(linear, 500) >> cosine(0.001, 1e-4, 500)')['lr'](750))")
    env = dict(os.environ, PYTHONPATH=str(target))
    result = subprocess.run([sys.executable, "-c", code, str(target)], capture_output=True, text=True,
                            cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert float(result.stdout) == pytest.approx(5.5e-4)


def test_stdlib_reference_is_current():
    from schedlang.cli.docgen import stdlib_markdown

    committed = (ROOT / "docs" / "stdlib.md").read_text(encoding="utf-8")
    assert committed == stdlib_markdown(), "run `python -m schedlang.cli.docgen` and commit docs/stdlib.md"


def _named_in_design() -> set[str]:
    """Module paths (relative to ``schedlang/``) docs/design.md names: a path (``codegen/torch.py``,
    ``{a,b}`` groups expanded), or a folder (``verify/``) with the module's name in backticks on
    the same line (``verify/`` (``prover``, ``zero``))."""
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    named = set()
    for line in text.splitlines():
        tokens = re.findall(r"`([A-Za-z_/{},.]+)`", line)
        for token in tokens:
            token = token.removeprefix("schedlang/")
            group = re.search(r"\{([a-z_,]+)\}", token)
            options = group.group(1).split(",") if group else [""]
            for option in options:
                named.add(token.replace(group.group(0), option) if group else token)
        for folder in (t.removeprefix("schedlang/") for t in tokens if t.endswith("/")):
            named.update(f"{folder}{t}.py" for t in tokens if t.isidentifier())
    return named


def test_the_design_doc_names_every_module():
    # the module tables and the folders say the same thing: a new module gets its row, or
    # its name on its folder's row
    named = _named_in_design()
    missing = []
    for path in sorted((ROOT / "schedlang").rglob("*.py")):
        relative = path.relative_to(ROOT / "schedlang").as_posix()
        if path.name in ("__init__.py", "__main__.py") or relative.startswith("_grammar"):
            continue
        if relative not in named:
            missing.append(relative)
    assert not missing, f"docs/design.md does not name {missing}"


def _readme_command_lines() -> dict[str, list[str]]:
    """The README's "Command line" block: subcommand -> its lines."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("## Command line", 1)[1].split("```", 2)[1]
    lines: dict[str, list[str]] = {}
    for line in block.splitlines():
        words = line.split("#", 1)[0].split()
        if len(words) >= 2 and words[0] == "schedlang":
            lines.setdefault(words[1], []).append(line.split("#", 1)[0])
    return lines


def test_the_readme_lists_every_command_with_real_flags():
    """Every subcommand is in the README's command list (``resume`` once was not), and every
    flag written there is one its ``--help`` has."""
    import argparse

    from schedlang.cli.commands import _parser

    parser = _parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    listed = _readme_command_lines()
    assert set(sub.choices) <= set(listed) - {"--version"}, sorted(set(sub.choices) - set(listed))
    written = {name: {f for line in lines for f in re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", line)}
               for name, lines in listed.items() if not name.startswith("-")}
    for name, flags in written.items():
        real = {s for action in sub.choices[name]._actions for s in action.option_strings}
        assert flags <= real, f"schedlang {name}: the README writes {sorted(flags - real)}"
    resume = {s for a in sub.choices["resume"]._actions for s in a.option_strings} - {"-h", "--help"}
    assert resume <= written["resume"], listed["resume"]  # all of its flags: it has few


def test_the_readme_says_the_playground_needs_its_runtime_first():
    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    site = text[text.index("mkdocs build --strict") - 300:text.index("mkdocs build --strict") + 300]
    assert "tools/build_playground.py" in site, site
