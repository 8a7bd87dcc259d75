"""Capture under load in real OpenClaw (issue 33, must-show 1): 10 sessions through a Gateway
beside 8 CPU-bound processes with the page cache dropped, then 16 session_end captures at a
shutdown; prints every acknowledgement time and how soon each fact was recallable, and fails when
an acknowledgement passes 1 s (1.5 s at shutdown) or a fact is not recallable within 60 s.

It runs the end-to-end file tests/e2e/test_openclaw_capture.py with ALAYA_CAPTURE_LOAD=1 (the
suite runs it without the load and without timing thresholds). Needs the OpenClaw install the e2e
tests use (scripts/test.sh makes it).

    python bench/capture_load.py
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    env = {**os.environ, "ALAYA_CAPTURE_LOAD": "1"}
    test = ROOT / "tests" / "e2e" / "test_openclaw_capture.py"
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider",
                          str(test)], cwd=ROOT, env=env, capture_output=True, text=True)
    for line in run.stdout.splitlines():
        if line.startswith("[e2e]") or " passed" in line or " failed" in line:
            print(line)
    if run.returncode:
        print(run.stdout[-4000:] + run.stderr[-2000:], file=sys.stderr)
    return run.returncode


if __name__ == "__main__":
    raise SystemExit(main())
