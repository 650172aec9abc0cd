"""Writing a command's output file: atomically, never over one of its inputs.

``compile -o``, ``import -o``, ``export -o``, ``plot -o`` and ``fmt`` write here.  The write
goes to a temporary file next to the target and is renamed over it, so a failure leaves the old
file whole; the new file keeps the old one's permission bits (a temporary file is created 0600),
and a symlink is written through (its target is replaced, the link stays).  An output that is
one of the command's inputs (``compile c.sched -o c.sched``), or a directory, is a located error
before anything is read or written.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from ..errors import SchedlangError
from ..limits import STDIN, input_name


def check_output(output, inputs=(), span=None) -> None:
    """Refuse ``output`` when it is a directory or the same file as one of ``inputs``."""
    if output is None:
        return
    path = Path(output)
    name = input_name(output)
    if path.is_dir():
        raise SchedlangError(f"-o {name}: is a directory", span, hint="give a file name, e.g. -o out.sched")
    for given in inputs:
        if given is None or str(given) == STDIN:
            continue
        if _same_file(path, Path(given)):
            raise SchedlangError(f"-o {name} is the input file {input_name(given)}: writing it would "
                                 "replace the input", span, hint="write to another file")


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # the output does not exist yet: compare where it would be
        return os.path.realpath(a) == os.path.realpath(b)


def write_atomically(path, text: str) -> None:
    """Write ``text`` via a temporary file and a rename, keeping the mode of the file it replaces
    and writing through a symlink to its target."""
    path = Path(os.path.realpath(path)) if os.path.islink(path) else Path(path)
    name = input_name(path)
    if path.is_dir():
        raise SchedlangError(f"cannot write {name}: it is a directory")
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask  # what open() would have created
    directory = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise SchedlangError(f"cannot write {name}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise SchedlangError(f"cannot write {name}: {exc.strerror or exc}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
