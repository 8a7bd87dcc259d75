#!/usr/bin/env bash
# Create (or reuse) a virtual environment and install the project into it.
# Usage: scripts/setup-venv.sh DIR [EXTRAS]   e.g. scripts/setup-venv.sh .venv-test test
set -euo pipefail
venv=${1:?usage: setup-venv.sh DIR [EXTRAS]}
extras=${2:-}
python=${PYTHON:-python3}
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --upgrade pip >/dev/null
spec="."
[ -n "$extras" ] && spec=".[$extras]"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "$spec"
