"""Import a training framework's real scheduler module for a conformance test.

The frameworks are installed by ``tools/install_frameworks.sh`` (CI runs it).  A
developer without them gets a skip that says so; under CI a missing framework is
an error (``tests/installs.py``).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import types
import warnings

from installs import FRAMEWORKS, needs_install


def _bare_package(name: str) -> None:
    """Register ``name`` as a package without running its ``__init__``.

    timm's ``__init__`` imports its models, which import torchvision (no CPU
    build exists here); its ``scheduler`` subpackage is plain torch code.
    """
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None:
        raise ModuleNotFoundError(name)
    package = types.ModuleType(name)
    package.__path__ = list(spec.submodule_search_locations)
    sys.modules[name] = package


_PREPARE = {
    "timm": lambda: _bare_package("timm"),
    "keras": lambda: os.environ.setdefault("KERAS_BACKEND", "numpy"),
    # mmpretrain's __init__ imports mmcv (not installed); its schedulers and registry need mmengine only.
    "mmpretrain": lambda: (_bare_package("mmpretrain"), _bare_package("mmpretrain.engine")),
}


def real(module: str):
    """The framework module ``module`` (e.g. ``"deepspeed.runtime.lr_schedules"``)."""
    top = module.split(".")[0]
    try:
        _PREPARE.get(top, lambda: None)()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return importlib.import_module(module)
    except ImportError as exc:
        needs_install(f"{module} is not installed ({exc})", FRAMEWORKS)


def framework_file(path, what: str):
    """``path``, a file of a framework installed beside the environment (``.frameworks/``), or a
    skip saying how to install it (a failure under CI).  Call it inside a test or fixture, never
    while a test module is imported: a file read at import time stops the whole collection."""
    if not path.is_file():
        needs_install(f"{what} is not installed ({path} is missing)", FRAMEWORKS)
    return path
