#!/usr/bin/env python3
"""Extract the files that set a Cerebras ModelZoo run's length, for tests/frameworks/test_cerebras_loop.py.

ModelZoo is not on PyPI, so CI cannot install it: this copies, unmodified, ModelZoo's
``TrainingLoop`` (``trainer/callbacks/loop.py``) and ``GradientAccumulationCallback``
(``trainer/callbacks/grad_accum.py``) from a ModelZoo checkout (a work tree, or a bare git
directory: its ``--commit``, default HEAD) and ``compute_num_steps``'s file
(``cerebras/pytorch/utils/data/utils.py``) from a cerebras_pytorch wheel or unpacked package,
into OUT, with a MANIFEST.json (the commit, each file's SHA-256).  Then

    SCHEDLANG_CEREBRAS_MODELZOO=OUT pytest tests/frameworks/test_cerebras_loop.py

    python tools/extract_cerebras_loop.py MODELZOO --cstorch WHEEL_OR_DIR --out OUT [--commit C]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import zipfile
from pathlib import Path

MODELZOO_FILES = ("src/cerebras/modelzoo/trainer/callbacks/loop.py",
                  "src/cerebras/modelzoo/trainer/callbacks/grad_accum.py")
CSTORCH_FILE = "cerebras/pytorch/utils/data/utils.py"


def _git(git_dir: Path, *args: str) -> bytes:
    return subprocess.run(["git", "--git-dir", str(git_dir), *args], check=True, capture_output=True).stdout


def _modelzoo(source: Path, commit: str) -> tuple[dict[str, bytes], str]:
    """The ModelZoo files and the commit they are from ("" when the checkout has no git)."""
    if (source / MODELZOO_FILES[0]).is_file():  # a work tree
        files = {name: (source / name).read_bytes() for name in MODELZOO_FILES}
        try:
            sha = _git(source / ".git", "rev-parse", "HEAD").decode().strip()
        except (OSError, subprocess.CalledProcessError):
            sha = ""
        return files, sha
    sha = _git(source, "rev-parse", commit).decode().strip()  # a bare git directory
    return {name: _git(source, "show", f"{sha}:{name}") for name in MODELZOO_FILES}, sha


def _cstorch(source: Path) -> bytes:
    if source.is_file():
        with zipfile.ZipFile(source) as wheel:
            return wheel.read(CSTORCH_FILE)
    for root in (source, source / "site-packages"):
        if (root / CSTORCH_FILE).is_file():
            return (root / CSTORCH_FILE).read_bytes()
    raise FileNotFoundError(f"{source} has no {CSTORCH_FILE}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modelzoo", type=Path, help="a ModelZoo work tree or bare git directory")
    parser.add_argument("--cstorch", type=Path, required=True,
                        help="a cerebras_pytorch wheel, or a directory holding cerebras/pytorch/")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--commit", default="HEAD", help="the commit of a bare git directory")
    args = parser.parse_args(argv)
    try:
        files, sha = _modelzoo(args.modelzoo, args.commit)
        files[CSTORCH_FILE] = _cstorch(args.cstorch)
    except (OSError, KeyError, subprocess.CalledProcessError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for name, data in files.items():
        (args.out / name).parent.mkdir(parents=True, exist_ok=True)
        (args.out / name).write_bytes(data)
    manifest = {"modelzoo_commit": sha, "cstorch": args.cstorch.name,
                "files": {name: hashlib.sha256(data).hexdigest() for name, data in files.items()}}
    (args.out / "MANIFEST.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(f"{len(files)} files of ModelZoo {sha or '(no commit)'} in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
