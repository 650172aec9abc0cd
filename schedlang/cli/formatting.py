"""``schedlang fmt`` over files: every ``.sched`` file named (or under a directory named) is laid
out by ``syntax.fmt.format_source``, checked (``--check``), shown as a diff (``--diff``) or
rewritten in place through ``output_file``."""

from __future__ import annotations

import difflib
import sys
from pathlib import Path

from ..errors import SchedlangError
from ..limits import read_source
from ..syntax.fmt import format_source
from .output_file import write_atomically


def sched_files(paths: list[str]) -> list[str]:
    """The files named, with each directory replaced by the ``.sched`` files under it (sorted)."""
    found = []
    for path in paths:
        if path != "-" and Path(path).is_dir():
            found += sorted(str(p) for p in Path(path).rglob("*.sched"))
        else:
            found.append(path)
    return found


def run(paths: list[str], check: bool = False, diff: bool = False, out=None, err=None) -> int:
    """``schedlang fmt``: 0 when every file is (now) formatted, 1 when ``--check``/``--diff``
    found files that would change, 2 when a file cannot be read or parsed (the others are
    still done)."""
    out, err = out or sys.stdout, err or sys.stderr
    changed, failed = [], False
    for path in sched_files(paths):
        try:
            data = read_source(path)  # bounded, standard input (-) too: never all of /dev/zero
            name = "<stdin>" if path == "-" else path
            formatted = format_source(data, name)
        except SchedlangError as exc:
            print(str(exc), file=err)
            failed = True
            continue
        original = data.decode("utf-8") if isinstance(data, bytes) else data
        if path == "-" and not (check or diff):
            out.write(formatted)
            continue
        if formatted == original:
            continue
        changed.append(path)
        if diff:
            out.writelines(difflib.unified_diff(original.splitlines(True), formatted.splitlines(True),
                                                f"{name} (original)", f"{name} (formatted)"))
        elif check:
            print(name, file=out)
        else:
            write_atomically(Path(path), formatted)
            print(f"reformatted {path}", file=err)
    if failed:
        return 2
    if changed and (check or diff):
        print(f"{len(changed)} file(s) would be reformatted", file=err)
        return 1
    return 0
