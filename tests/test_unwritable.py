"""A data directory on a read-only or full disk: reads still answer (recall, status,
session-start), writes fail in one line with nothing half-written, and once there is room again
the same write goes through. Real tmpfs mounts (root only; skipped elsewhere)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

DEMO = Path(__file__).resolve().parents[1] / "openclaw_alaya" / "demo"
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")


def alaya(data: Path, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess:
    env = {**os.environ, "ALAYA_NO_SERVE": "1"}
    return subprocess.run([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(data), *args],
                          input=stdin, capture_output=True, timeout=120, env=env)


@pytest.fixture
def disk(tmp_path):
    mount = tmp_path / "disk"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=80M", "tmpfs", str(mount)]).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    data = mount / "data"
    assert alaya(data, "init").returncode == 0
    assert alaya(data, "ingest", str(DEMO / "prefs-pnpm.json"), "--distill").returncode == 0
    yield mount, data
    subprocess.run(["umount", "-l", str(mount)])


def reads_answer(data: Path) -> None:
    recall = alaya(data, "recall", "pnpm", "--top-k", "1", "--json")
    assert recall.returncode == 0, recall.stderr.decode()
    assert json.loads(recall.stdout)["nodes"]
    assert json.loads(alaya(data, "status", "--json").stdout)["sessions"] == 1
    start = alaya(data, "hook", "session-start", stdin=b'{"agentId": "shared", "sessionId": "s2", "prompt": "pnpm?"}')
    assert start.returncode == 0 and "prependContext" in json.loads(start.stdout)


def fails_in_one_line(proc: subprocess.CompletedProcess, reason: str) -> None:
    err = proc.stderr.decode()
    assert proc.returncode == 1 and err.count("\n") == 1 and reason in err and "internal error" not in err, err


def test_a_read_only_disk_still_answers_reads_and_refuses_writes_in_one_line(disk):
    mount, data = disk
    subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)
    reads_answer(data)
    fails_in_one_line(alaya(data, "ingest", str(DEMO / "ops-incident.jsonl")), "Read-only file system")


def test_a_full_disk_answers_reads_refuses_writes_and_takes_them_once_there_is_room(disk):
    mount, data = disk
    filler = mount / "filler"
    subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=1M", "count=100"], capture_output=True)
    reads_answer(data)
    event = json.dumps({"agentId": "shared", "sessionId": "s9", "reason": "agent_end",
                        "messages": [{"role": "user", "content": "Deploys on Fridays are banned from now on."}]})
    fails_in_one_line(alaya(data, "hook", "session-end", stdin=event.encode()), "No space left on device")
    filler.unlink()
    captured = alaya(data, "hook", "session-end", stdin=event.encode())
    assert captured.returncode == 0 and json.loads(captured.stdout)["new_turns"] == 1, captured.stderr.decode()
    assert alaya(data, "verify").returncode == 0
    assert json.loads(alaya(data, "status", "--json").stdout)["sessions"] == 2
