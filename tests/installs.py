"""What a test needs that an install step brings, said in one way.

A fresh clone runs the README's test line before any of the optional installs (the training
frameworks, the playground runtime): every test that needs one skips, saying what is missing and
the command that installs it.  Under CI a missing install is a failure, so a broken install can
never turn a conformance test into a skip, except while ``.ci/run`` proves the fresh clone
(``SCHEDLANG_BEFORE_INSTALL`` names a file): then the test skips as on a developer's machine and
its id is written to that file, and ``.ci/run`` runs those ids again once everything is installed.
"""

from __future__ import annotations

import os

import pytest

FRAMEWORKS = "bash tools/install_frameworks.sh"
PLAYGROUND = "python tools/build_playground.py"
NEOVIM = "apt-get install neovim"  # a real editor client (tests/test_lsp_neovim.py)
DEV = "pip install -c constraints.txt -e '.[dev]'"
#: How every such skip reason ends; ``conftest.py`` finds the skipped tests by it.
MARK = "; install it with: "
BEFORE_INSTALL = "SCHEDLANG_BEFORE_INSTALL"


def needs_install(what: str, command: str) -> None:
    """Skip (fail under CI) because ``what`` is missing; ``command`` installs it."""
    message = f"{what}{MARK}{command}"
    if os.environ.get("CI") and not os.environ.get(BEFORE_INSTALL):
        pytest.fail(message + " (.ci/run does)")
    pytest.skip(message)


def record_skip(report) -> None:
    """Write the id of a test skipped by :func:`needs_install` to ``$SCHEDLANG_BEFORE_INSTALL``."""
    path = os.environ.get(BEFORE_INSTALL)
    if not path or not report.skipped or not isinstance(report.longrepr, tuple):
        return
    if MARK in str(report.longrepr[2]):
        with open(path, "a", encoding="utf-8") as out:
            out.write(report.nodeid + "\n")
