"""KNOWN CORE DEFECTS: the one place where the fuzz tests are marked xfail.

The fuzzer and the soundness property find defects in the core that other
engineers are fixing now (issue 8).  Until those fixes are merged, the tests
that exercise them are marked with ``KNOWN_DEFECTS`` (``strict=False``: an
XPASS is fine).  REMOVE THIS MARKER (and its uses) once the fixes have landed:
from then on any failure is a regression.
"""

import pytest

KNOWN_DEFECTS = pytest.mark.xfail(strict=False, reason=(
    "known core defect still open (issue 8 item 6): exact powers with huge exponents make "
    "compile and equivalent slow"))

#: Fuzz chunks (first seed) that still hit one of the open defects above.
KNOWN_FAILING_CHUNKS = {40}  # seed 75: a huge exact power
