"""A damaged store file (issue 30 class 11): a LanceDB data fragment, a manifest or a whole
table, the Kuzu graph's header or body. Every read fails in one line naming the file and
`alaya rebuild` (no "internal error"), `hook session-start` still answers (exit 0, what it can
inject, a warning on stderr), and `alaya rebuild` mends the store. Real files, damaged on disk."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DEMO = Path(__file__).resolve().parents[1] / "openclaw_alaya" / "demo"
START = b'{"agentId": "shared", "sessionId": "s2", "prompt": "pnpm?"}'


def alaya(data: Path, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(data), *args],
                          input=stdin, capture_output=True, timeout=120)


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    data = tmp_path_factory.mktemp("store") / "data"
    assert alaya(data, "init").returncode == 0
    for name in ("prefs-pnpm.json", "ops-incident.jsonl"):
        assert alaya(data, "ingest", str(DEMO / name), "--distill").returncode == 0
    return data


def _garble(path: Path, size: int = 2000) -> None:
    path.write_bytes(os.urandom(size))


DAMAGE = {
    "lance fragment truncated": lambda d: os.truncate(sorted((d / "lancedb/cards.lance/data").glob("*.lance"))[0], 100),
    "lance fragments garbled": lambda d: [_garble(p) for p in (d / "lancedb/cards.lance/data").glob("*.lance")],
    "lance fragment deleted": lambda d: [p.unlink() for p in (d / "lancedb/cards.lance/data").glob("*.lance")],
    "lance manifest garbled": lambda d: [p.write_bytes(b"junk\n") for p in (d / "lancedb/cards.lance/_versions").glob("*.manifest")],
    "lance table gone": lambda d: shutil.rmtree(d / "lancedb/cards.lance/_versions"),
    "kuzu catalog garbled": lambda d: _overwrite(d / "graph.kuzu", 4096, 8192),
    "kuzu truncated": lambda d: os.truncate(d / "graph.kuzu", 8192),
}


def _overwrite(path: Path, at: int, size: int) -> None:
    with open(path, "r+b") as handle:
        handle.seek(at)
        handle.write(os.urandom(size))


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_store_file_is_named_with_rebuild_and_session_start_still_answers(store, tmp_path, damage):
    """issue 30 class 11: on main a damaged LanceDB file gives "internal error" on every read
    and breaks session-start (exit 1), naming neither the file nor `alaya rebuild`."""
    data = tmp_path / "data"
    shutil.copytree(store, data)
    DAMAGE[damage](data)
    for args, stdin in ((("recall", "pnpm"), b""), (("hook", "tool", "memory_search"), b'{"params": {"query": "pnpm"}}')):
        proc = alaya(data, *args, stdin=stdin)
        err = proc.stderr.decode()
        assert proc.returncode == 1 and err.count("\n") == 1, (proc.returncode, err)
        assert "internal error" not in err and "alaya rebuild" in err and str(data) in err, err
    start = alaya(data, "hook", "session-start", stdin=START)
    err = start.stderr.decode()
    assert start.returncode == 0 and isinstance(json.loads(start.stdout), dict), (start.returncode, err)
    assert "alaya: warning:" in err and "alaya rebuild" in err and "Traceback" not in err, err
    if damage.startswith("lance"):  # the graph is whole: its hottest and newest cards are injected
        assert "pnpm" in json.loads(start.stdout)["prependContext"]
    rebuilt = alaya(data, "rebuild")
    assert rebuilt.returncode == 0, rebuilt.stderr.decode()
    recall = alaya(data, "recall", "pnpm", "--json")
    assert recall.returncode == 0 and json.loads(recall.stdout)["nodes"], recall.stderr.decode()
    assert alaya(data, "verify").returncode == 0
