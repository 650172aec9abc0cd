"""KNOWN CORE DEFECTS: the one place where the fuzz tests are marked xfail.

The fuzzer and the soundness property find defects in the core that other
engineers are fixing now (issue 8).  Until those fixes are merged, the tests
that exercise them are marked with ``KNOWN_DEFECTS`` (``strict=False``: an
XPASS is fine).  REMOVE THIS MARKER (and its uses) once the fixes have landed:
from then on any failure is a regression.
"""

import pytest

KNOWN_DEFECTS = pytest.mark.xfail(strict=False, reason=(
    "known core defects being fixed (issue 8): torch printer drops parentheses around a "
    "Piecewise with one reachable branch; precision lost after long prefixes; RecursionError on "
    "nested programs; slow huge exact powers; cycle/repeat of a guarded singular branch refused "
    "as not finite; exp overflow not caught; abs(p) vs p proven with p outside its where clause"))
