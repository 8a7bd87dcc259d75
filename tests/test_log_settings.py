"""A log file and level for the CLI (issue 35): `log.file` / `log.level` in config.json, or
ALAYA_LOG_FILE / ALAYA_LOG_LEVEL, through real `alaya` processes. Main had no way to set either:
nothing was ever written to a log."""

from __future__ import annotations

import os
import subprocess
import sys


def _alaya(data, *argv, env=None):
    return subprocess.run([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(data), *argv],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "ALAYA_NO_SERVE": "1", **(env or {})})


def test_log_file_and_level_from_config_and_env(tmp_path):
    data = tmp_path / "data"
    assert _alaya(data, "init").returncode == 0
    quiet = _alaya(data, "status")  # nothing set: stderr as it was, no log file
    assert quiet.returncode == 0 and quiet.stderr == "" and not list(data.glob("*.log"))
    assert _alaya(data, "config", "set", "log.file", "alaya.log").returncode == 0
    assert _alaya(data, "config", "set", "log.level", "verbose").returncode == 1  # checked when set
    assert _alaya(data, "status").returncode == 0
    lines = (data / "alaya.log").read_text().splitlines()
    assert any(" INFO openclaw_alaya: status: started" in line for line in lines), lines
    assert any("status: exit 0 after" in line for line in lines), lines
    # an error is logged as well as said once on stderr
    failed = _alaya(data, "recall", "x", "--since", "notadate")
    assert failed.returncode == 1 and failed.stderr.count("alaya: error:") == 1
    assert " ERROR openclaw_alaya: recall: since: cannot read 'notadate'" in (data / "alaya.log").read_text()
    # the environment wins: ERROR only leaves the next command's INFO lines out
    before = (data / "alaya.log").read_text()
    assert _alaya(data, "status", env={"ALAYA_LOG_LEVEL": "error"}).returncode == 0
    assert (data / "alaya.log").read_text() == before
    other = tmp_path / "other.log"
    assert _alaya(data, "status", env={"ALAYA_LOG_FILE": str(other)}).returncode == 0
    assert "status: started" in other.read_text()

