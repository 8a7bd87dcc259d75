#!/usr/bin/env bash
# Set up .venv-test and run the whole test suite (Python, and the OpenClaw plugin's JS tests).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-venv.sh .venv-test test
export PATH="$PWD/.venv-test/bin:$PATH"
.venv-test/bin/python -m pytest -q "$@"
