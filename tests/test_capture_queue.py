"""Capture through the warm daemon (issue 33): `alaya hook session-end` answered once the turns
are stored (L3, and the Session node that marks them pending), distilled afterwards by the
daemon's background queue (cli/distill_queue.py), which a killed daemon's successor resumes.
A real daemon subprocess on a temporary data directory; every wait is bounded and checks only
what happened."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

FACT = "We decided to deploy the billing service from pnpm workspaces on the host kestrel-7."
EVENT = {"agentId": "main", "sessionId": "cap-1", "reason": "agent_end",
         "messages": [{"role": "user", "content": FACT},
                      {"role": "assistant", "content": "Understood: billing deploys from pnpm workspaces on kestrel-7."}]}


def alaya(root: Path, *args: str, stdin: str = "", timeout: float = 300) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("ALAYA_HOME", "ALAYA_NO_SERVE")}
    return subprocess.run([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(root), *args], input=stdin,
                          capture_output=True, text=True, env={**env, "ALAYA_SERVE_START_WAIT": "300"}, timeout=timeout)


def ok(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def eventually(predicate, seconds: float = 120):
    end = time.monotonic() + seconds
    while not (value := predicate()) and time.monotonic() < end:
        time.sleep(0.2)
    return value


def recallable(root: Path, word: str) -> bool:
    return word in ok(alaya(root, "recall", word, "--json"))


def pending(root: Path) -> int:
    return json.loads(ok(alaya(root, "status", "--json")))["pending_sessions"]


def daemon_pid(root: Path) -> int:
    return json.loads((root / "state" / "serve.pid").read_text())["pid"]


@pytest.fixture
def root(tmp_path):
    data = tmp_path / "data"
    ok(alaya(data, "init"))
    yield data
    alaya(data, "serve", "stop", timeout=60)


def test_a_capture_is_acknowledged_once_stored_and_distilled_by_the_daemon_after(root):
    ok(alaya(root, "serve", "start", "--idle-exit", "10"))
    report = json.loads(ok(alaya(root, "hook", "session-end", stdin=json.dumps(EVENT))))
    assert report["new_turns"] == 2 and report["distilled"] is False and report["distilling"] == "queued", report
    assert list((root / "raw" / "sessions").rglob("cap-1.json")), "the turns are in L3 when the answer comes"
    assert eventually(lambda: recallable(root, "kestrel-7")), "the daemon distilled the session after answering"
    assert eventually(lambda: pending(root) == 0)
    status = json.loads(ok(alaya(root, "serve", "status", "--json")))
    assert status["distill_queue"] == 0
    again = json.loads(ok(alaya(root, "hook", "session-end", stdin=json.dumps(EVENT))))
    assert again["new_turns"] == 0, "the same messages again store nothing"
    # OpenClaw's session_end (at every Gateway shutdown, for every open session) carries no
    # messages: nothing to make durable, acknowledged without waiting for the daemon's turn
    end = json.loads(ok(alaya(root, "hook", "session-end", stdin=json.dumps(
        {"agentId": "main", "sessionId": "cap-1", "reason": "shutdown", "messages": []}))))
    assert end == {"session_id": "cap-1", "agent_id": "main", "reason": "shutdown", "new_turns": 0}, end


def test_what_a_killed_daemon_left_undistilled_the_next_one_distils(root):
    ok(alaya(root, "serve", "start", "--idle-exit", "10"))
    report = json.loads(ok(alaya(root, "hook", "session-end", stdin=json.dumps(EVENT))))
    assert report["distilling"] == "queued", report
    os.kill(daemon_pid(root), signal.SIGKILL)  # acknowledged; distilled or not, it dies now
    # and one captured for certain without a distill: what the acknowledgement leaves behind
    other = [{"role": "user", "content": "The staging database moved to the host plover-3 last week."},
             {"role": "assistant", "content": "Noted: staging database on plover-3."}]
    ok(alaya(root, "ingest", "--stdin", "--agent", "main", stdin=json.dumps(other)))
    assert pending(root) >= 1
    ok(alaya(root, "serve", "start", "--idle-exit", "10"))
    assert eventually(lambda: pending(root) == 0), "the new daemon resumed the pending sessions"
    assert recallable(root, "plover-3") and recallable(root, "kestrel-7")
