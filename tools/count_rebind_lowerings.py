"""How many ``rebind``s over the project's corpus lower a file again (issue 40 item 4).

The corpus: every example, every import of ``tests/frameworks/configs`` (both styles), every
string constant of ``tests/`` and every code block of ``docs/`` that declares ``batch =`` and a
schedule.  Each file that compiles with a batch schedule is rebound once per parameter its
placement was computed with (``Program.fixed``: ``seq_len``, a batch size), to twice its value;
a rebind that runs ``Lowerer.run`` (the walk of a file) again is counted.

    python tools/count_rebind_lowerings.py          # prints "N of M rebinds lowered the file again"
"""

from __future__ import annotations

import ast
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import schedlang  # noqa: E402 - the checkout's, not an installed one
from schedlang import formats  # noqa: E402
from schedlang.errors import SchedlangError  # noqa: E402
from schedlang.semantics import lower  # noqa: E402


def corpus() -> list[tuple[str, str]]:
    """(where, text) of every source with a batch schedule the project holds."""
    found = [(str(p.relative_to(ROOT)), p.read_text()) for p in sorted((ROOT / "examples").rglob("*.sched"))]
    for path in sorted((ROOT / "tests" / "frameworks" / "configs").rglob("*")):
        if path.is_file() and "_base_" not in path.parts:
            for style in ("presets", "core"):
                try:
                    text = formats.import_file(path, style=style)
                except SchedlangError:
                    continue
                found.append((f"{path.relative_to(ROOT)} ({style})", text))
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and _clocked(node.value):
                found.append((f"{path.relative_to(ROOT)}:{node.lineno}", node.value))
    for path in sorted((ROOT / "docs").rglob("*.md")):
        for block in path.read_text().split("```")[1::2]:
            if _clocked(block):
                found.append((str(path.relative_to(ROOT)), block.partition("\n")[2]))
    return found


def _clocked(text: str) -> bool:
    return "batch =" in text and "schedule " in text


def main() -> int:
    runs: list[int] = []
    walk = lower.Lowerer.run
    lower.Lowerer.run = lambda self: runs.append(1) or walk(self)
    total = again = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for where, text in corpus():
            try:
                program = schedlang.compile(text)
            except Exception:  # noqa: BLE001 - the corpus holds refusals, and text that is no program
                continue
            if program.batch_schedule is None:
                continue
            for name, value in program.fixed.items():
                runs.clear()
                try:
                    program.rebind({name: int(value) * 2})
                except SchedlangError:
                    pass  # a value the file refuses: its placement was still tried
                total += 1
                if runs:
                    again += 1
                    print(f"lowered again: {where} ({name})")
    print(f"{again} of {total} rebinds lowered the file again")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
