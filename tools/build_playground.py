"""Fetch and build the playground's runtime into ``docs/playground/runtime/`` (not in git).

    python tools/build_playground.py            # then: mkdocs build
    python tools/build_playground.py --schedlang-only   # rebuild only schedlang's wheel

What the page (``docs/playground/worker.js``) loads, all served by the site itself:

* Pyodide: npm's ``pyodide`` package at ``PYODIDE_VERSION`` (``npm pack``, checked against
  the registry's integrity string pinned here), only the files a browser needs;
* lark, sympy, mpmath: pure-Python wheels from PyPI at the versions and sha256 hashes
  pinned in ``WHEELS`` (``pip download --require-hashes``, kept in ``build/playground/``);
* schedlang's own wheel, built from this tree (``hatchling``);
* each wheel precompiled by Pyodide's own CPython under node (``tools/playground_pyc.js``:
  bytecode beside every module, ``tests`` folders left out), which saves a cold start
  about 10 s of compiling sympy; without node the wheels are copied as they are;
* ``manifest.json``: the Pyodide folder and the wheels in load order, with their versions
  and the hash of the schedlang sources its wheel was built from (``source_hash``).

Downloads already there with the pinned hash are kept, so a second run needs no network.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNTIME = ROOT / "docs" / "playground" / "runtime"
DOWNLOADS = ROOT / "build" / "playground"  # the wheels as fetched and built, before precompiling

PYODIDE_VERSION = "0.29.5"
PYODIDE_INTEGRITY = ("sha512-TkYrUv9m8QmfImADKRmpwZulL48E0uUaBSO+dvRQKyAJc0qh9gu7jn8btyHPh3NZm1r2IH2"
                     "YrJhIr7Q2B9urAw==")  # npm view pyodide@0.29.5 dist.integrity
PYODIDE_DIR = "pyodide"
# What the browser loads from the npm package (README and LICENSE facts live in package.json).
PYODIDE_FILES = ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip",
                 "pyodide-lock.json", "package.json")

# name: (version, sha256 of the py3-none-any wheel on PyPI); load order: dependencies first.
WHEELS = {
    "mpmath": ("1.3.0", "a0b2b9fe80bbcd81a6647ff13108738cfb482d481d826cc0e02f5b35e5c88d2c"),
    "sympy": ("1.14.0", "e091cc3e99d2141a0ba2847328f5479b05d94a6635cb96148ccb3f34671bd8f5"),
    "lark": ("1.3.1", "c629b661023a014c37da873b4ff58a817398d12635d3bbb2c5a03be7fe5d1e12"),
}


def _sri(path: Path) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(path.read_bytes()).digest()).decode()


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fetch_pyodide(runtime: Path) -> None:
    """npm's pyodide package, pinned, unpacked to ``runtime/pyodide/`` (kept when it is already there)."""
    dest = runtime / PYODIDE_DIR
    stamp = dest / "package.json"
    if stamp.exists() and json.loads(stamp.read_text())["version"] == PYODIDE_VERSION and all(
            (dest / name).exists() for name in PYODIDE_FILES):
        return
    npm = shutil.which("npm")
    if npm is None:
        raise SystemExit("build_playground: npm is needed to fetch pyodide (apt-get install npm)")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([npm, "pack", f"pyodide@{PYODIDE_VERSION}", "--pack-destination", tmp, "--silent"],
                       check=True, stdout=subprocess.DEVNULL)
        tarball = Path(tmp) / f"pyodide-{PYODIDE_VERSION}.tgz"
        if _sri(tarball) != PYODIDE_INTEGRITY:
            raise SystemExit(f"build_playground: {tarball.name} does not match its pinned integrity")
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        with tarfile.open(tarball) as archive:
            for name in PYODIDE_FILES:
                member = archive.getmember(f"package/{name}")
                if not member.isfile():
                    raise SystemExit(f"build_playground: package/{name} is not a file")
                with archive.extractfile(member) as src, open(dest / name, "wb") as out:
                    shutil.copyfileobj(src, out)


def wheel_name(name: str) -> str:
    return f"{name}-{WHEELS[name][0]}-py3-none-any.whl"


def fetch_wheels(dest: Path = DOWNLOADS) -> list[Path]:
    """The pinned PyPI wheels into ``dest`` (hash-checked; kept when already there)."""
    dest.mkdir(parents=True, exist_ok=True)
    missing = [n for n, (_, sha) in WHEELS.items()
               if not (dest / wheel_name(n)).exists() or _sha256(dest / wheel_name(n)) != sha]
    if not missing:
        return [dest / wheel_name(n) for n in WHEELS]
    with tempfile.TemporaryDirectory() as tmp:
        requirements = Path(tmp) / "requirements.txt"
        requirements.write_text("".join(f"{n}=={WHEELS[n][0]} --hash=sha256:{WHEELS[n][1]}\n"
                                        for n in missing))
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                        "--only-binary=:all:", "--require-hashes", "-r", str(requirements), "-d", tmp],
                       check=True)
        for name in missing:
            shutil.copyfile(Path(tmp) / wheel_name(name), dest / wheel_name(name))
    return [dest / wheel_name(n) for n in WHEELS]


def source_hash() -> str:
    """A hash of what schedlang's wheel is built from (its package and grammar files)."""
    digest = hashlib.sha256()
    paths = [*sorted((ROOT / "schedlang").rglob("*.py")), *sorted((ROOT / "grammar").glob("*.lark")),
             ROOT / "pyproject.toml"]
    for path in paths:
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def build_schedlang(dest: Path = DOWNLOADS) -> Path:
    """schedlang's wheel from this tree into ``dest`` (any older one removed)."""
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "hatchling", "build", "-t", "wheel", "-d", tmp], cwd=ROOT,
                       check=True, stdout=subprocess.DEVNULL)
        (built,) = Path(tmp).glob("schedlang-*.whl")
        for old in dest.glob("schedlang-*.whl"):
            old.unlink()
        shutil.copyfile(built, dest / built.name)
    return dest / built.name


def install_wheels(runtime: Path, wheels: list[Path], precompile: bool = True) -> None:
    """``wheels`` into ``runtime/wheels/``, precompiled by ``tools/playground_pyc.js`` when node
    is there (and ``precompile``), else copied."""
    dest = runtime / "wheels"
    dest.mkdir(parents=True, exist_ok=True)
    node = shutil.which("node")
    if precompile and node is None:
        print("build_playground: no node, the wheels are not precompiled (a cold start takes longer)")
    if precompile and node is not None:
        script = ROOT / "tools" / "playground_pyc.js"
        subprocess.run([node, str(script), str(runtime / PYODIDE_DIR), str(dest), *map(str, wheels)],
                       check=True)
    else:
        for wheel in wheels:
            shutil.copyfile(wheel, dest / wheel.name)


def write_manifest(runtime: Path, schedlang_wheel: str) -> None:
    version = schedlang_wheel.split("-")[1]
    wheels = [wheel_name(n) for n in WHEELS] + [schedlang_wheel]
    for stale in (runtime / "wheels").glob("*.whl"):
        if stale.name not in wheels:
            stale.unlink()
    manifest = {
        "pyodide_dir": PYODIDE_DIR,
        "wheels": wheels,
        "versions": {"pyodide": PYODIDE_VERSION, **{n: v for n, (v, _) in WHEELS.items()},
                     "schedlang": version},
        "source_hash": source_hash(),
    }
    (runtime / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")


def build(runtime: Path = RUNTIME, schedlang_only: bool = False, precompile: bool = True) -> Path:
    """The runtime in ``runtime``; ``schedlang_only``: only schedlang's wheel (the rest is there)."""
    runtime.mkdir(parents=True, exist_ok=True)
    wheels = []
    if not schedlang_only:
        fetch_pyodide(runtime)
        wheels = fetch_wheels()
    schedlang = build_schedlang()
    install_wheels(runtime, [*wheels, schedlang], precompile)
    write_manifest(runtime, schedlang.name)
    return runtime


def is_current(runtime: Path = RUNTIME) -> bool:
    """Whether ``runtime`` holds schedlang's wheel built from the sources as they are now."""
    try:
        manifest = json.loads((runtime / "manifest.json").read_text())
    except (OSError, ValueError):
        return False
    return manifest.get("source_hash") == source_hash()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runtime", type=Path, default=RUNTIME, help=f"default: {RUNTIME.relative_to(ROOT)}")
    parser.add_argument("--schedlang-only", action="store_true",
                        help="rebuild only schedlang's wheel (Pyodide and the other wheels already fetched)")
    parser.add_argument("--no-precompile", action="store_true", help="copy the wheels as they are")
    args = parser.parse_args(argv)
    runtime = build(args.runtime, args.schedlang_only, not args.no_precompile)
    print(f"playground runtime in {runtime}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
