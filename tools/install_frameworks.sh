#!/usr/bin/env bash
# Install the pinned training frameworks (tests/frameworks/ and tests/formats/ compare against their
# real scheduler code) into the active environment without letting pip replace
# torch 2.13.0: the torch-dependent packages go in with --no-deps.
set -euo pipefail
cd "$(dirname "$0")/.."
DS_BUILD_OPS=0 pip install --no-deps -c constraints.txt -r .ci/frameworks.txt
pip install -c constraints.txt -r .ci/frameworks-deps.txt
# megatron-core 0.19.2's step batch-size calculator (--step-batch-size-schedule) for
# tests/frameworks/test_megatron_batch.py, which loads just its module files
# megatron/core/num_microbatches_calculator.py (stdlib imports only) and
# optimizer_param_scheduler.py (Megatron-LM main's lr scheduler) from this folder.
# A separate target folder keeps the 0.16.1 above installed; the wheel says Python >= 3.12,
# which the one pure-Python file does not need.
pip install --no-deps --upgrade --target .frameworks/megatron-core-0.19.2 \
  --python-version 3.12 --only-binary=:all: --ignore-requires-python megatron-core==0.19.2
# OLMo-core 3.0.0's schedulers for tests/frameworks/test_olmo_core.py, which loads just
# olmo_core/optim/scheduler.py (and exceptions.py) from this folder, its package stubbed,
# and its batch-size callback for test_olmo_core_batch.py (train/callbacks/batch_size_scheduler.py,
# train/common.py, the data loader's batch-size setter): the wheel alone, none of its dependencies.
pip install --no-deps --upgrade --target .frameworks/ai2-olmo-core-3.0.0 ai2-olmo-core==3.0.0
