"""Turn generated source into live functions: the package's only use of ``exec``.

The source given here always comes from one of our printers (see
``codegen/base.py``: user text reaches it only as checked identifiers and
numbers), never from the user directly.  Running it, rather than
interpreting sympy trees, makes the in-process reference exactly the code
that ``schedlang compile`` writes, and makes evaluating a step cheap.
"""

from __future__ import annotations

import hashlib
import linecache
import sys
import types

from .base import GeneratedModule


def load(module: GeneratedModule, name: str = "schedlang_generated") -> types.ModuleType:
    """The module of ``module.source``, registered in ``sys.modules`` as ``<name>_<hash>``.

    Registered because ``torch.compile`` (Dynamo) imports the module of every function
    it traces by name; named by the hash of the text so the same text is loaded once
    and two different texts never share a name.
    """
    digest = hashlib.sha256(module.source.encode()).hexdigest()[:20]
    qualified = f"{name}_{digest}"
    loaded = sys.modules.get(qualified)
    if loaded is not None and getattr(loaded, "__schedlang_source__", None) == module.source:
        return loaded
    filename = f"<{qualified}>"
    # Register the text so tracebacks inside generated code show the lines.
    linecache.cache[filename] = (len(module.source), None, module.source.splitlines(True), filename)
    namespace = types.ModuleType(qualified)
    namespace.__file__ = filename
    namespace.__schedlang_source__ = module.source
    code = compile(module.source, filename, "exec")
    exec(code, namespace.__dict__)  # noqa: S102 - printer output only, see the module docstring
    sys.modules[qualified] = namespace
    return namespace
