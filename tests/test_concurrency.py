"""Many agents on one data directory (issue 6; docs/architecture.md, "The lock protocol"): six
processes at once, each a chain of real `alaya` commands: three agents capturing their own sessions through
`alaya hook session-end`, one recalling, one starting sessions (`alaya hook session-start`),
one running introspect. Zero failed calls, every session present, `alaya verify` passes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from openclaw_alaya import Alaya

TOPICS = ["pgbouncer pool size", "the billing service", "pnpm hoisting", "search reindexing", "auth token rotation"]


def cli(data: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "ALAYA_HOME"}
    return subprocess.run([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(data), *args],
                          input=stdin, capture_output=True, text=True, env=env, timeout=110)


def capture_event(agent: str, n: int) -> dict:
    topic = TOPICS[n % len(TOPICS)]
    messages = [
        {"role": "user", "content": f"[{agent} #{n}] Why did {topic} break last night?", "timestamp": 1775811601000 + n},
        {"role": "assistant", "content": f"Because {topic} ran out of connections; we decided to cap it at {40 + n}.",
         "timestamp": 1775811602000 + n},
        {"role": "user", "content": f"Remember that {agent} owns {topic} from now on.", "timestamp": 1775811603000 + n},
    ]
    return {"agentId": agent, "sessionId": f"{agent}-s{n}", "sessionKey": f"agent:{agent}:main", "reason": "agent_end",
            "messages": messages}


def test_six_processes_of_mixed_operations(tmp_path):
    data = tmp_path / "data"
    Alaya(data).init()
    failures: list[str] = []
    calls: list[tuple[str, float]] = []
    captured: list[str] = []
    guard = threading.Lock()

    def run(name: str, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
        started = time.monotonic()
        proc = cli(data, *args, stdin=stdin)
        with guard:
            calls.append((name, time.monotonic() - started))
            if proc.returncode != 0:
                failures.append(f"{name} {' '.join(args)}: exit {proc.returncode}: {proc.stderr.strip()[-300:]}")
        return proc

    def capturer(agent: str) -> None:
        for n in range(3):
            event = capture_event(agent, n)
            proc = run("capture", "hook", "session-end", stdin=json.dumps(event))
            if proc.returncode == 0:
                assert json.loads(proc.stdout)["new_turns"] == 3
                with guard:
                    captured.append(event["sessionId"])
            if n:
                continue
            # the same history again (OpenClaw re-sends it on every turn): nothing new
            again = run("capture", "hook", "session-end", stdin=json.dumps(event))
            if again.returncode == 0:
                assert json.loads(again.stdout)["new_turns"] == 0

    def recaller() -> None:
        for topic in TOPICS[:3]:
            run("recall", "recall", topic, "--json")

    def starter() -> None:
        for n, topic in enumerate(TOPICS[:3]):
            proc = run("session-start", "hook", "session-start",
                       stdin=json.dumps({"agentId": f"agent{n % 3}", "prompt": f"what about {topic}?"}))
            if proc.returncode == 0:
                json.loads(proc.stdout)

    def introspector() -> None:
        run("introspect", "introspect")

    workers = [threading.Thread(target=capturer, args=(f"agent{i}",)) for i in range(3)]
    workers += [threading.Thread(target=recaller), threading.Thread(target=starter), threading.Thread(target=introspector)]
    started = time.monotonic()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    elapsed = time.monotonic() - started
    slowest = max(calls, key=lambda c: c[1])
    print(f"{len(calls)} calls from 6 processes in {elapsed:.1f}s; slowest {slowest[0]} {slowest[1]:.1f}s")
    assert failures == []
    assert len(captured) == 9

    memory = Alaya(data)
    with memory.reading("test") as graph:
        nodes = {row["id"]: row for row in graph.sessions()}
    for sid in captured:
        assert sid in nodes and nodes[sid]["turn_count"] == 3, sid
        assert len(memory.raw.load(sid).turns) == 3
    proc = cli(data, "verify", "--json")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
    assert elapsed < 120


def owner_only_problems(root: Path) -> list[str]:
    bad = []
    for path in [root, *root.rglob("*")]:
        mode = path.lstat().st_mode & 0o777
        if path.is_dir() and mode != 0o700 or path.is_file() and mode != 0o600:
            bad.append(f"{path.relative_to(root)} {oct(mode)}")
    return bad


def test_everything_is_owner_only_after_every_command(tmp_path):
    data = tmp_path / "data"
    assert cli(data, "init").returncode == 0
    event = capture_event("agent0", 1)
    assert cli(data, "hook", "session-end", stdin=json.dumps(event)).returncode == 0
    for args in (["recall", "pgbouncer"], ["introspect"], ["status"], ["verify"], ["backup"], ["export"]):
        proc = cli(data, *args)
        assert proc.returncode == 0, (args, proc.stderr)
    assert cli(data, "hook", "session-start", stdin=json.dumps({"prompt": "pgbouncer"})).returncode == 0
    assert owner_only_problems(data) == []
    # the Python API, without the CLI's umask
    memory = Alaya(tmp_path / "api")
    memory.init()
    memory.ingest(json.dumps({"session_id": "a1", "turns": [{"role": "user", "content": "we decided to use pnpm"}]}).encode())
    memory.distill()
    assert owner_only_problems(tmp_path / "api") == []


def test_a_lock_timeout_is_one_line_naming_the_directory_and_the_holder(tmp_path):
    data = tmp_path / "data"
    memory = Alaya(data)
    memory.init()
    config = json.loads(memory.dirs.config.read_text())
    config.setdefault("lock", {})["timeout_seconds"] = 1
    memory.dirs.config.write_text(json.dumps(config))
    code = ("import sys, time\nfrom openclaw_alaya import Alaya\nm = Alaya(sys.argv[1])\n"
            "with m.lock.write('introspect consolidate'):\n    print('holding', flush=True)\n    time.sleep(60)\n")
    holder = subprocess.Popen([sys.executable, "-c", code, str(data)], stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    try:
        assert holder.stdout.readline().strip() == "holding"
        for args, stdin in ((["recall", "pgbouncer"], ""), (["hook", "session-end"], json.dumps(capture_event("a", 1)))):
            proc = cli(data, *args, stdin=stdin)
            assert proc.returncode == 1
            lines = proc.stderr.strip().splitlines()
            assert len(lines) == 1, proc.stderr
            assert str(data) in lines[0] and "introspect consolidate" in lines[0] and f"pid {holder.pid}" in lines[0]
    finally:
        holder.kill()
        holder.wait()
    assert cli(data, "recall", "pgbouncer").returncode == 0  # a killed holder frees the lock at once
