"""Turn generated source into live functions: the package's only use of ``exec``.

The source given here always comes from one of our printers (see
``codegen/base.py``: user text reaches it only as checked identifiers and
numbers), never from the user directly.  Running it, rather than
interpreting sympy trees, makes the in-process reference exactly the code
that ``schedlang compile`` writes, and makes evaluating a step cheap.
"""

from __future__ import annotations

import linecache
import types

from .base import GeneratedModule

_counter = 0


def load(module: GeneratedModule, name: str = "schedlang_generated") -> types.ModuleType:
    global _counter
    _counter += 1
    filename = f"<schedlang-generated-{_counter}>"
    # Register the text so tracebacks inside generated code show the lines.
    linecache.cache[filename] = (len(module.source), None, module.source.splitlines(True), filename)
    namespace = types.ModuleType(name)
    code = compile(module.source, filename, "exec")
    exec(code, namespace.__dict__)  # noqa: S102 - printer output only, see the module docstring
    return namespace
