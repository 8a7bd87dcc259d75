"""Reads only read (issue 29): a recall, a session-start hook or a tool call on a store that an
earlier version made, or that a dead writer left work in, changes no file of the data directory;
it answers from what is there, or, where the store cannot be read as it is, says in one line
to run `alaya init`. The upgrade and the recovery wait for a write hold."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import session_json

from openclaw_alaya import Alaya
from openclaw_alaya.errors import StaleStoreError
from openclaw_alaya.store.embedded.index_meta import META, read_meta


def files(root: Path, *, leave_out: frozenset[str] = frozenset()) -> dict[str, tuple[int, bytes]]:
    """Every file's mtime and bytes, but the lock file (taking the lock creates it) and `leave_out`."""
    return {str(p.relative_to(root)): (p.stat().st_mtime_ns, p.read_bytes())
            for p in sorted(root.rglob("*")) if p.is_file() and p.name not in {".lock", *leave_out}}


def alaya(data: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    env = {**os.environ, "ALAYA_NO_SERVE": "1"}
    return subprocess.run([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(data), *args],
                          input=stdin, capture_output=True, text=True, timeout=120, env=env)


@pytest.fixture
def stored(memory):
    memory.ingest(session_json("s1", [("user", "We decided to use pnpm because installs were slow.")]))
    memory.distill()
    return memory


def reads(data: Path) -> list[subprocess.CompletedProcess]:
    """A recall, a session-start hook and a tool call (the agent's memory_search)."""
    return [
        alaya(data, "recall", "pnpm", "--json"),
        alaya(data, "hook", "session-start", stdin=json.dumps({"agentId": "main", "sessionId": "s2", "prompt": "pnpm?"})),
        alaya(data, "hook", "tool", "memory_search",
              stdin=json.dumps({"agentId": "main", "sessionId": "s2", "params": {"query": "pnpm"}})),
    ]


def test_a_dead_writers_work_and_an_old_index_are_read_as_they_are_and_left_for_a_write(stored):
    data = stored.dirs.root
    (stored.dirs.journal / f"{os.getpid()}-1.json").write_text(json.dumps({"operation": "distill", "pid": 1, "since": 0}))
    meta = read_meta(stored.dirs.lancedb)
    (stored.dirs.lancedb / META).write_text(json.dumps({**meta, "fts": 1}))  # an index an earlier version built
    # recall's usage log and session-start's summary cache: state/ files a read keeps, skipped
    # on an unwritable disk (test_unwritable.py); no store is touched
    kept = frozenset({stored.dirs.access_log.name, "summary.json"})
    before = files(data, leave_out=kept)
    for proc in reads(data):
        assert proc.returncode == 0, proc.stderr
    assert json.loads(reads(data)[0].stdout)["nodes"]
    assert files(data, leave_out=kept) == before
    stored.upgrade()  # `alaya init`: the write hold finishes the dead write and rebuilds the index
    assert not list(stored.dirs.journal.iterdir()) and read_meta(stored.dirs.lancedb)["fts"] == meta["fts"]


def test_a_store_with_an_old_schema_is_refused_by_reads_in_one_line_and_not_written(stored):
    data = stored.dirs.root
    schema = stored.dirs.graph.with_name(stored.dirs.graph.name + ".schema")
    schema.write_text("3")  # a graph an earlier version made: its reads would name columns it lacks
    before = files(data)
    with pytest.raises(StaleStoreError, match="alaya init"):
        Alaya(data).recall("pnpm")
    for proc in reads(data)[:1]:
        assert proc.returncode == 1 and "alaya init" in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
    assert files(data) == before
    assert alaya(data, "init").returncode == 0
    assert schema.read_text() != "3" and json.loads(alaya(data, "recall", "pnpm", "--json").stdout)["nodes"]
