"""The shipped Pygments lexer: every ``.sched`` in the repository tokenizes cleanly and round-trips."""

import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT, SCHED_FILES, expected_error_at

pygments = pytest.importorskip("pygments")
from pygments.token import Error, Keyword, Name, Number  # noqa: E402

from schedlang.cli.lexer import SchedlangLexer  # noqa: E402
from schedlang.library import stdlib  # noqa: E402
from schedlang.syntax.parser import RESERVED  # noqa: E402


def tokens(text: str):
    return list(SchedlangLexer(stripnl=False, ensurenl=False).get_tokens(text))


def test_repository_has_sched_files():
    assert len(SCHED_FILES) > 20


@pytest.mark.parametrize("path", SCHED_FILES, ids=[str(p.relative_to(ROOT)) for p in SCHED_FILES])
def test_every_sched_file_tokenizes_and_round_trips(path: Path):
    data = path.read_bytes()
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:  # the corpus's not-UTF-8 file: nothing to highlight
        assert "not valid UTF-8" in path.with_suffix(".txt").read_text(encoding="utf-8")
        return
    toks = tokens(text)
    assert "".join(value for _, value in toks) == text
    offset, errors = 0, []
    for kind, value in toks:
        if kind in Error:
            line = text.count("\n", 0, offset) + 1
            errors.append((line, offset - (text.rfind("\n", 0, offset) + 1) + 1))
        offset += len(value)
    # Only a file written to fail on a character may hold an Error token, and only where it fails.
    assert not errors or errors[0] == expected_error_at(path), f"{path}: error tokens at {errors}"


def test_token_kinds():
    toks = [(k, v) for k, v in tokens(
        'param n: int = 10\nschedule lr = warmup(linear, 5) >> torch.StepLR(0.1, step_size=2ep)'
        ' # done\n') if v.strip()]
    kinds = dict((v, k) for k, v in toks)
    assert kinds["param"] in Keyword and kinds["schedule"] in Keyword
    assert kinds["int"] in Keyword.Type
    assert kinds["warmup"] in Name.Builtin and kinds["linear"] in Name.Builtin
    assert kinds["torch.StepLR"] in Name.Builtin
    assert kinds["2ep"] in Number and kinds["10"] in Number
    assert kinds["lr"] is Name and kinds["n"] is Name
    assert tokens("a @ b")[2][0] in Error


def test_batch_and_run_are_keywords_only_where_a_statement_starts():
    text = ("param run: int = 5\nbatch = 8\nrun = run\n"
            "schedule lr = cosine(1, 0, run, run=3) >> constant(run == 3)")
    toks = [(k, v) for k, v in tokens(text + "\n") if v.strip()]
    words = [(k, v) for k, v in toks if v in ("run", "batch")]
    assert [k in Keyword for k, _ in words] == [False, True, True, False, False, False, False]


def test_words_come_from_the_language():
    text = " ".join(sorted(RESERVED))
    assert all(k in Keyword or k in pygments.token.Operator.Word for k, v in tokens(text) if v.strip())
    names = [*stdlib.SCHEDULES, *stdlib.MATH]
    assert all(k in Name.Builtin for k, v in tokens(" ".join(names)) if v.strip())


def test_registered_as_pygments_entry_point():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["entry-points"]["pygments.lexers"]["sched"] == "schedlang.cli.lexer:SchedlangLexer"
    assert any(r.startswith("pygments") for r in project["optional-dependencies"]["dev"])


def test_check_does_not_import_pygments():
    code = ("import sys, schedlang.cli.commands; schedlang.cli.main(['check', 'examples/wsd.sched']); "
            "sys.exit(1 if 'pygments' in sys.modules else 0)")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_calls_of_the_clock_are_builtins():
    """``on_tokens``, ``stages`` and the dotted batch presets are rows of ``library/clock_calls``:
    highlighted as the calls they are, not as plain names (issue 40)."""
    from schedlang.library.clock_calls import CLOCK_CALLS

    text = "".join(f"let x{i} = {name}(1)\n" for i, name in enumerate(CLOCK_CALLS))
    kinds = {v: k for k, v in tokens(text) if v.strip()}
    assert {name: kinds[name] in Name.Builtin for name in CLOCK_CALLS} == dict.fromkeys(CLOCK_CALLS, True)
