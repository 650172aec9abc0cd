"""Golden diagnostics: each bad file in tests/diagnostics/ and the exact message it must give.

Regenerate after an intended change with SCHEDLANG_UPDATE_GOLDEN=1 and review the diff.
"""

import os
from pathlib import Path

import pytest
from helpers import ROOT, run_cli

import schedlang

CASES = sorted((ROOT / "tests" / "diagnostics").glob("*.sched"))


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_diagnostic_is_golden(path: Path):
    relative = path.relative_to(ROOT)
    with pytest.raises(schedlang.SchedlangError) as info:
        schedlang.load(relative)
    expected_file = path.with_suffix(".txt")
    rendered = str(info.value) + "\n"
    if os.environ.get("SCHEDLANG_UPDATE_GOLDEN"):
        expected_file.write_text(rendered, encoding="utf-8")
    assert rendered == expected_file.read_text(encoding="utf-8")
    error = info.value
    assert error.line is not None and error.column is not None
    assert rendered.startswith(f"{relative}:{error.line}:{error.column}: error: ")
    assert "^" in rendered


@pytest.mark.parametrize("path", CASES[:6], ids=[p.stem for p in CASES[:6]])
def test_cli_exits_2_with_caret_and_no_traceback(path: Path):
    result = run_cli("check", path.relative_to(ROOT))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "^" in result.stderr and "error:" in result.stderr
    assert result.stdout == ""
