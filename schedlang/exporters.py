"""``schedlang.exporters``: the old name of the writers in ``schedlang.formats``; a thin alias
(``schedlang.exporters.export`` is ``schedlang.formats.export.export``)."""

from .formats.aliases import install as _install
from .formats.export import FORMATS, WRITERS, export  # noqa: F401

__path__: list[str] = []  # a package, so that ``schedlang.exporters.X`` resolves (to formats)
_install()
