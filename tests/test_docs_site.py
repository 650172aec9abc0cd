"""The docs site (mkdocs.yml over docs/) builds with warnings as errors, `.sched` highlighted.

mkdocs and mkdocs-material are in the ``dev`` extra: without them this skips
locally and fails under CI (``CI`` set), as ``tests/frameworks/real.py`` does.
"""

import importlib.metadata
import importlib.util
import os
import subprocess
import sys

import pytest
from helpers import ROOT
from installs import DEV, needs_install

ENTRY_POINT = ("sched", "schedlang.cli.lexer:SchedlangLexer")


def _require(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        needs_install(f"{module} is not installed", DEV)


def _lexer_registered() -> bool:
    return any((ep.name, ep.value) == ENTRY_POINT
               for ep in importlib.metadata.entry_points(group="pygments.lexers"))


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    for module in ("mkdocs", "material", "pymdownx", "pygments"):
        _require(module)
    tmp = tmp_path_factory.mktemp("docs")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    if not _lexer_registered():
        # An editable install older than the entry point: register it for this build only.
        assert not os.environ.get("CI"), "CI installs the package: its pygments.lexers entry point is missing"
        dist = tmp / "entry" / "schedlang_docs_lexer-0.dist-info"
        dist.mkdir(parents=True)
        (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: schedlang-docs-lexer\nVersion: 0\n")
        (dist / "entry_points.txt").write_text("[pygments.lexers]\n{} = {}\n".format(*ENTRY_POINT))
        env["PYTHONPATH"] = os.pathsep.join([str(tmp / "entry"), env["PYTHONPATH"]])
    out = tmp / "site"
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return out


def test_site_builds_strictly_with_every_page(site):
    for page in ("language", "python", "stdlib", "presets", "gallery", "cookbook", "verify", "import_export",
                 "torch", "jax", "cli", "design", "testing", "guides", "playground"):
        assert (site / page / "index.html").exists(), page


def test_sched_blocks_are_highlighted_by_the_shipped_lexer(site):
    html = (site / "index.html").read_text(encoding="utf-8")
    assert '<span class="k">schedule</span>' in html
    assert '<span class="nb">warmup</span>' in html


def test_gallery_embeds_every_picture(site):
    html = (site / "gallery" / "index.html").read_text(encoding="utf-8")
    pictures = sorted((ROOT / "docs" / "img").glob("*.png"))
    assert pictures
    for png in pictures:
        assert f'src="../img/{png.name}"' in html, png.name
        assert (site / "img" / png.name).read_bytes() == png.read_bytes()


def test_playground_page_builds_without_its_runtime(site):
    # tools/build_playground.py may not have run: the page, its scripts and its examples are there
    # regardless (the page says the runtime is missing; tests/test_playground.py runs it).
    html = (site / "playground" / "index.html").read_text(encoding="utf-8")
    assert '<script type="application/json" id="pg-examples-data">{"bert_linear": ' in html
    assert '<script src="playground.js"></script>' in html
    for name in ("playground.js", "worker.js", "playground.css"):
        assert (site / "playground" / name).exists(), name
