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
# The versions the tests and benchmarks ran on (constraints.txt), where they exist (Python 3.11+).
constraints=()
if "$venv/bin/python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  constraints=(-c constraints.txt)
fi
# Installed already from this very pyproject.toml and constraints.txt: nothing to do (a second
# run works offline).
stamp="$venv/.alaya-install"
want="$spec ${constraints[*]:-} $(cat pyproject.toml constraints.txt | sha256sum | cut -d' ' -f1)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$venv/bin/alaya" ]; then
  exit 0
fi
"$venv/bin/python" -m pip install --quiet --upgrade pip >/dev/null
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${constraints[@]}" -e "$spec"
echo "$want" > "$stamp"
