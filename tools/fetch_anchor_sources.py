#!/usr/bin/env python3
"""Fetch the pinned anchor-library sources used by tests/anchors/reference.py.

Downloads mosaicml 0.32.1, llm-foundry 0.21.0 and cerebras_pytorch 2.10.0 (cp311
manylinux wheel, whatever the host python is) with ``pip download --no-deps``, extracts only the
scheduler ``.py`` files (~200 kB, SHA-256 checked) and deletes the wheels.
Packages already in the cache are left alone.

    python tools/fetch_anchor_sources.py [--cache-dir DIR] [--only mosaicml|llm_foundry|cerebras_pytorch]

The cache defaults to $SCHEDLANG_ANCHOR_CACHE or ~/.cache/schedlang-anchors.
Exit status: 0 on success, 1 if a source could not be fetched.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

REFERENCE = Path(__file__).resolve().parent.parent / "tests" / "anchors" / "reference.py"


def _load_reference():
    # load by path: `tests` is not an installed package
    spec = importlib.util.spec_from_file_location("_schedlang_anchor_reference", REFERENCE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    ref = _load_reference()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache-dir", default=None,
                        help=f"cache directory (default: {ref.default_cache_dir()})")
    parser.add_argument("--only", action="append", choices=sorted(ref.SOURCES),
                        help="fetch only this package (repeatable)")
    parser.add_argument("--timeout", type=float, default=30.0, help="network timeout in seconds")
    args = parser.parse_args(argv)

    start = time.monotonic()
    try:
        dirs = ref.fetch_sources(args.cache_dir, packages=args.only, timeout=args.timeout)
    except ref.AnchorUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for name, path in dirs.items():
        print(f"{ref.SOURCES[name]['requirement']:<28s} {path}")
    print(f"done in {time.monotonic() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
