"""The old package names ``schedlang.importers`` and ``schedlang.exporters`` as thin aliases
of ``schedlang.formats`` (every framework's reader and writer now live there, one module per
framework): ``import schedlang.importers.timm_args`` gives the module
``schedlang.formats.timm_args`` itself, not a second copy."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types

_OLD = ("schedlang.importers.", "schedlang.exporters.")


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``schedlang.importers.X`` / ``schedlang.exporters.X`` as ``schedlang.formats.X``."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith(_OLD):
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        return types.ModuleType(spec.name)

    def exec_module(self, module):
        name = module.__name__
        # the import system returns whatever sys.modules holds for the name after this call
        sys.modules[name] = importlib.import_module("schedlang.formats." + name.split(".", 2)[2])


def install() -> None:
    if not any(isinstance(finder, _Alias) for finder in sys.meta_path):
        sys.meta_path.append(_Alias())
