import os
import sys
from pathlib import Path

from hypothesis import settings

sys.path.insert(0, str(Path(__file__).resolve().parent))

# CI runs the same examples every time (a red build must be reproducible); a local run
# explores new ones.  SCHEDLANG_HYPOTHESIS=explore forces exploration anywhere.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI") and os.environ.get("SCHEDLANG_HYPOTHESIS") != "explore":
    settings.load_profile("ci")


def pytest_runtest_logreport(report):
    """Under ``.ci/run``'s fresh-clone pass, note each test that skipped for a missing install."""
    from installs import record_skip

    record_skip(report)
