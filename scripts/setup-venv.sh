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
spec="."
[ -n "$extras" ] && spec=".[$extras]"
# Installed already from this very pyproject.toml: nothing to do (a second run works offline).
stamp="$venv/.alaya-install"
want="$spec $(sha256sum pyproject.toml | cut -d' ' -f1)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$venv/bin/alaya" ]; then
  exit 0
fi
"$venv/bin/python" -m pip install --quiet --upgrade pip >/dev/null
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "$spec"
echo "$want" > "$stamp"
