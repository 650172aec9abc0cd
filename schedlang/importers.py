"""``schedlang.importers``: the old name of the readers in ``schedlang.formats`` (SPEC section 7
names ``schedlang.importers.import_file``); a thin alias, ``schedlang.importers.X`` is
``schedlang.formats.X``."""

import importlib as _importlib

from .formats import *  # noqa: F403
from .formats import FORMATS, READERS, STYLES, guess_format, import_file  # noqa: F401
from .formats.aliases import install as _install

__path__: list[str] = []  # a package, so that ``schedlang.importers.timm_args`` resolves (to formats)
_install()


def __getattr__(name: str):
    """``importers.timm_args`` and the like: the module of that name in ``schedlang.formats``."""
    try:
        return _importlib.import_module(f"schedlang.formats.{name}")
    except ModuleNotFoundError:
        raise AttributeError(name) from None
