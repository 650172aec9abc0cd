#!/usr/bin/env python3
"""Write the docs' pictures (``docs/img/*.png``), their ``MANIFEST`` and ``docs/gallery.md``.

    python tools/gen_pictures.py [--check] [--out DIR]

One picture per file in ``examples/``, per built-in of the standard library and per
preset.  No call is invented here: a built-in is drawn from its first case in
``tests/test_stdlib_values.py`` (the boundary table), a preset from its first case
in ``tests/anchors/preset_cases.py`` (the cookbook's conformance table), so every
picture shows a tested call.  The range is ``schedlang.cli.ranges.plot_steps``, the one
``schedlang plot`` uses (to 5% past the end, or a shape-showing range for schedules
that never end).

The bytes are deterministic: matplotlib's Agg backend at a fixed size and dpi, PNG
metadata cleared (``{"Software": None}``, no dates), quantized to a small palette by
Pillow so each picture is a few KB.  ``MANIFEST`` records, per picture, the hash of
what it is drawn from (source, parameters, ``RENDERER`` and the matplotlib and
Pillow versions) and of its bytes; ``tests/test_pictures.py`` recomputes the first
without drawing (fast) and re-renders a sample for real.  ``--check`` writes nothing
and exits 1 when anything is stale.
"""

from __future__ import annotations

import hashlib
import io
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

IMG = ROOT / "docs" / "img"
GALLERY = ROOT / "docs" / "gallery.md"
#: Bump when the drawing changes (it is part of every picture's input hash).
RENDERER = "schedlang-docs-pictures 1"
WIDTH, HEIGHT, DPI = 4.8, 3.0, 100  # 480 x 300 pixels
COLORS = 16


@dataclass(frozen=True)
class Picture:
    stem: str          # docs/img/<stem>.png
    title: str
    source: str        # schedlang text
    section: str       # gallery section: "Recipes", "Standard library", or a preset library
    label: str = ""    # the gallery heading (a preset's name)
    params: dict = field(default_factory=dict)

    @property
    def filename(self) -> str:
        return f"{self.stem}.png"


def _versions() -> str:
    import matplotlib
    import PIL

    return f"{RENDERER}; matplotlib {matplotlib.__version__}; Pillow {PIL.__version__}"


def pictures() -> list[Picture]:
    """Every picture, in gallery order."""
    from anchors.preset_cases import CASES as PRESET_CASES
    from test_stdlib_values import CASES as STDLIB_CASES

    from schedlang.library import stdlib
    from schedlang.library.presets import LIBRARIES, PRESETS, Rejected

    found = [Picture(f"example-{path.stem}", f"examples/{path.name}", path.read_text(encoding="utf-8"),
                     "Recipes")
             for path in sorted((ROOT / "examples").glob("*.sched"))]
    for name in stdlib.SCHEDULES:
        source = next(s for s, _, _ in STDLIB_CASES if s.startswith(f"{name}(") or f">> {name}(" in s)
        found.append(Picture(f"stdlib-{name}", source, source, "Standard library"))
    for library in LIBRARIES:
        for name, preset in PRESETS.items():
            if name.split(".", 1)[0] != library or isinstance(preset, Rejected):
                continue
            case = next((c for c in PRESET_CASES if c.preset == name), None)
            if case is not None:
                found.append(Picture(f"preset-{name.replace('.', '-')}", case.source, case.source, library,
                                     name, dict(case.params)))
    return found


def _program(picture: Picture):
    import schedlang

    return schedlang.compile(picture.source, params=picture.params, filename=picture.title)


def input_hash(picture: Picture) -> str:
    """What the picture is drawn from: its text, parameters and the renderer's versions.

    Computed without compiling anything, so the staleness test can check every picture in
    milliseconds; what the text does not show (the step range, the values) is covered by
    re-rendering a sample for real.
    """
    text = json.dumps([_versions(), picture.title, picture.source, sorted(picture.params.items())],
                      default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def render(picture: Picture, program=None) -> bytes:
    """The PNG bytes of one picture: a panel per bound schedule, sharing the step axis."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from PIL import Image

    from schedlang.cli.ranges import plot_steps

    program = program or _program(picture)
    steps = list(plot_steps(program))
    schedules = [s for s in program if s.is_bound]
    with matplotlib.rc_context({"font.size": 7, "axes.titlesize": 8, "svg.hashsalt": "schedlang",
                                "path.simplify": True}):
        fig, axes = plt.subplots(len(schedules), 1, figsize=(WIDTH, HEIGHT), dpi=DPI, sharex=True,
                                 squeeze=False)
        for ax, schedule in zip(axes[:, 0], schedules):
            ax.plot(steps, schedule.values(steps), linewidth=1.3, color="#1f5fa8")
            for b in schedule.breakpoints:
                if steps[0] <= float(b) <= steps[-1]:
                    ax.axvline(float(b), color="#999999", linestyle=":", linewidth=0.7)
            ax.set_ylabel(schedule.name)
            ax.grid(alpha=0.3)
        axes[-1, 0].set_xlabel("step")
        axes[0, 0].set_title(picture.title if len(picture.title) <= 70 else picture.title[:67] + "...")
        fig.tight_layout()
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
        plt.close(fig)
    image = Image.open(io.BytesIO(buffer.getvalue())).convert("RGB")
    small = image.quantize(colors=COLORS, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    out = io.BytesIO()
    small.save(out, format="PNG", optimize=True)
    return out.getvalue()


def manifest_line(picture: Picture, inputs: str, data: bytes) -> str:
    return f"{picture.filename} {inputs} {hashlib.sha256(data).hexdigest()[:16]}"


def read_manifest(path: Path = IMG / "MANIFEST") -> dict[str, tuple[str, str]]:
    """``{filename: (input hash, bytes hash)}`` from a MANIFEST."""
    rows = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            name, inputs, digest = line.split()
            rows[name] = (inputs, digest)
    return rows


def _block(source: str) -> str:
    return "```sched\n" + source.rstrip("\n") + "\n```\n"


def gallery_markdown(items: list[Picture]) -> str:
    """``docs/gallery.md``: every picture under its section, the recipes with their source."""
    out = ["# Gallery\n",
           "Generated by `python tools/gen_pictures.py` from the examples, the standard library's "
           "boundary cases and the presets' conformance cases; do not edit. Each picture is drawn by "
           "schedlang itself over the range `schedlang plot` uses; dotted lines are breakpoints.\n"]
    section = None
    for picture in items:
        if picture.section != section:
            section = picture.section
            heading = section if section in ("Recipes", "Standard library") else f"Presets: `{section}`"
            out.append(f"## {heading}\n")
        if section == "Recipes":
            out.append(f"### {picture.title}\n")
            out.append(_block(picture.source))
        else:
            out.append(f"### `{picture.title}`\n" if section == "Standard library"
                       else f"### `{picture.label}`\n")
            if section != "Standard library":
                out.append(_block(picture.source))
        out.append(f"![{picture.label or picture.stem}](img/{picture.filename})\n")
    return "\n".join(out)


def write(out_dir: Path = IMG, gallery: Path = GALLERY) -> list[str]:
    out_dir.mkdir(parents=True, exist_ok=True)
    items = pictures()
    lines = [f"# {_versions()}", "# file  input-sha256[:16]  png-sha256[:16]  (tools/gen_pictures.py)"]
    for picture in items:
        program = _program(picture)
        data = render(picture, program)
        (out_dir / picture.filename).write_bytes(data)
        lines.append(manifest_line(picture, input_hash(picture), data))
    known = {p.filename for p in items}
    for stale in out_dir.glob("*.png"):
        if stale.name not in known:
            stale.unlink()
    (out_dir / "MANIFEST").write_text("\n".join(lines) + "\n", encoding="utf-8")
    gallery.write_text(gallery_markdown(items), encoding="utf-8")
    return lines


def main(argv: list[str]) -> int:
    if "--check" in argv:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            write(Path(tmp) / "img", Path(tmp) / "gallery.md")
            fresh = (Path(tmp) / "img" / "MANIFEST").read_text(encoding="utf-8")
            same = (IMG / "MANIFEST").exists() and (IMG / "MANIFEST").read_text(encoding="utf-8") == fresh
            same = same and GALLERY.read_text(encoding="utf-8") == (Path(tmp) / "gallery.md").read_text(
                encoding="utf-8")
        print("docs/img is up to date" if same else "docs/img or docs/gallery.md is stale")
        return 0 if same else 1
    out = Path(argv[argv.index("--out") + 1]) if "--out" in argv else IMG
    lines = write(out, GALLERY if out == IMG else out / "gallery.md")
    print(f"wrote {len(lines) - 2} pictures to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
