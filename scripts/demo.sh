#!/usr/bin/env bash
# Offline demo: set up .venv, then ingest, distill, recall and trace the bundled sessions
# in ./demo-data. No network beyond package installs, no API key.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-venv.sh .venv
export ALAYA_HOME="$PWD/demo-data"
alaya() { .venv/bin/alaya "$@"; }
rm -rf "$ALAYA_HOME"

# echo each command as it can be pasted into a shell (arguments with spaces or symbols in single
# quotes), then run it
quoted() {
  local arg out=()
  for arg in "$@"; do
    if [[ "$arg" =~ ^[A-Za-z0-9_./,:=@%+-]+$ ]]; then out+=("$arg"); else out+=("'${arg//\'/\'\\\'\'}'"); fi
  done
  printf '%s' "${out[*]}"
}
step() { printf '\n\033[1m$ alaya %s\033[0m\n' "$(quoted "$@")"; alaya "$@"; }
step init
for session in openclaw_alaya/demo/*; do
  step ingest "$session"
done
step distill
step status
step recall "why did the billing service run out of database connections?"
step recall "回复用什么语言" --top-k 3
step recall --concepts pgbouncer --rel CAUSED_BY,DEPENDS_ON --depth 2 --top-k 5
card=$(alaya recall "which graph database did we choose" --json --top-k 1 | .venv/bin/python -c 'import json,sys; print(json.load(sys.stdin)["nodes"][0]["card_id"])')
step trace "$card"
printf '\nThe memory lives in %s; try `ALAYA_HOME=%s .venv/bin/alaya recall "…" --json`.\n' "$ALAYA_HOME" "$ALAYA_HOME"
