"""The docs' pictures (docs/img) and gallery (docs/gallery.md) are up to date.

Every picture's inputs are hashed in ``docs/img/MANIFEST`` (``tools/gen_pictures.py``
writes it): checking all of them costs milliseconds; a sample is re-rendered for
real and must give the committed bytes.  The bytes depend on the matplotlib and
Pillow versions (pinned in ``constraints.txt``): with others installed the check is
skipped locally and fails under CI.  Regenerate with ``python tools/gen_pictures.py``.
"""

import hashlib
import os
import sys

import pytest
from helpers import ROOT

pytest.importorskip("matplotlib")
pytest.importorskip("PIL")
sys.path.insert(0, str(ROOT / "tools"))
import gen_pictures as G  # noqa: E402

STALE = "docs pictures are stale: run `python tools/gen_pictures.py` and commit docs/img and docs/gallery.md"
#: Re-rendered for real: two panels (an example), a never-ending built-in, a preset with parameters.
SAMPLE = ("example-wsd", "stdlib-noam", "preset-torch-OneCycleLR", "preset-composer-CosineAnnealingScheduler")


@pytest.fixture(scope="module")
def items():
    return G.pictures()


@pytest.fixture(scope="module")
def manifest():
    path = G.IMG / "MANIFEST"
    first = path.read_text(encoding="utf-8").splitlines()[0]
    if first != f"# {G._versions()}":
        message = f"pictures drawn with '{first[2:]}', this has '{G._versions()}' (see constraints.txt)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return G.read_manifest(path)


def test_manifest_names_every_picture_and_nothing_else(items, manifest):
    wanted = {p.filename for p in items}
    assert set(manifest) == wanted, STALE
    assert {p.name for p in G.IMG.glob("*.png")} == wanted, STALE


def test_every_picture_input_is_current(items, manifest):
    stale = [p.filename for p in items if manifest.get(p.filename, ("",))[0] != G.input_hash(p)]
    assert not stale, f"{STALE}: {stale}"


def test_committed_bytes_are_the_manifest_bytes(manifest):
    changed = [name for name, (_, digest) in manifest.items()
               if hashlib.sha256((G.IMG / name).read_bytes()).hexdigest()[:16] != digest]
    assert not changed, f"{STALE}: {changed}"


@pytest.mark.parametrize("stem", SAMPLE)
def test_sample_rerenders_to_the_committed_bytes(items, manifest, stem):
    picture = next(p for p in items if p.stem == stem)
    assert G.render(picture) == (G.IMG / picture.filename).read_bytes(), STALE


def test_pictures_are_small(manifest):
    sizes = [(G.IMG / name).stat().st_size for name in manifest]
    assert max(sizes) < 20_000 and sum(sizes) < 2_000_000


def test_gallery_is_current(items):
    assert G.GALLERY.read_text(encoding="utf-8") == G.gallery_markdown(items), STALE


def test_every_builtin_every_example_and_every_tested_preset_has_a_picture(items):
    from anchors.preset_cases import CASES

    from schedlang.library import stdlib

    stems = {p.stem for p in items}
    assert {f"stdlib-{name}" for name in stdlib.SCHEDULES} <= stems
    assert {f"example-{p.stem}" for p in (ROOT / "examples").glob("*.sched")} <= stems
    assert {f"preset-{c.preset.replace('.', '-')}" for c in CASES} <= stems


def test_check_mode_reports_stale(tmp_path, monkeypatch, items):
    monkeypatch.setattr(G, "IMG", tmp_path / "img")
    monkeypatch.setattr(G, "GALLERY", tmp_path / "gallery.md")
    monkeypatch.setattr(G, "pictures", lambda: [p for p in items if p.stem in SAMPLE[:1]])
    assert G.main(["--check"]) == 1
    G.write(G.IMG, G.GALLERY)
    assert G.main(["--check"]) == 0
