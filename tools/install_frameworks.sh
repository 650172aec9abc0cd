#!/usr/bin/env bash
# Install the pinned training frameworks (tests/frameworks/ compares against their
# real scheduler code) into the active environment without letting pip replace
# torch 2.13.0: the torch-dependent packages go in with --no-deps.
set -euo pipefail
cd "$(dirname "$0")/.."
DS_BUILD_OPS=0 pip install --no-deps -c constraints.txt -r .ci/frameworks.txt
pip install -c constraints.txt -r .ci/frameworks-deps.txt
