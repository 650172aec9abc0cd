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
