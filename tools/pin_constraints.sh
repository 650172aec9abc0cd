#!/usr/bin/env bash
# Rewrite constraints.txt from the active virtual environment: run it in a venv where the
# README's test command has just passed (after a deliberate upgrade), then commit the file.
# torch stays pinned by its public version (the CPU build's +cpu label is left off).
set -euo pipefail
cd "$(dirname "$0")/.."
header=$(sed -n '/^torch==/q;p' constraints.txt)
{
  printf '%s\n' "$header"
  echo "torch==$(python -c 'import torch; print(torch.__version__.split("+")[0])')"
  pip freeze --exclude-editable | grep -v -E '^(-e |schedlang|torch==)' | sort -f
} > constraints.txt.new
mv constraints.txt.new constraints.txt
