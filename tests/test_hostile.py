"""Hostile input (issue 6): every entry point refuses it with one line on stderr, exit 1, and
leaves the data directory exactly as it was. Run with -s to print the table of messages."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import session_json, tree_digest

from openclaw_alaya import Alaya

BIG = 51 * 1024 * 1024
DEEP = b"[" * 100_000 + b"]" * 100_000
DEEP_OBJ = ('{"a":' * 5000 + "1" + "}" * 5000).encode()


def cli(data: Path, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "ALAYA_HOME"}
    return subprocess.run([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(data), *args],
                          input=stdin, capture_output=True, env=env, timeout=180)


def event(**fields) -> bytes:
    return json.dumps({"agentId": "main", "sessionId": "s1", "reason": "agent_end",
                       "messages": [{"role": "user", "content": "hello there, pgbouncer"}], **fields}).encode()


CASES = [
    # (name, args, stdin, file content for FILE)
    ("ingest: path traversal session id", ["ingest", "--stdin"], session_json("../../etc/passwd", [("user", "hi there")]), None),
    ("ingest: session id with a trailing newline", ["ingest", "--stdin"], session_json("evil\n", [("user", "hi there")]), None),
    ("ingest: --session-id with a trailing newline", ["ingest", "--stdin", "--session-id", "evil\n"], json.dumps([{"role": "user", "content": "hi"}]).encode(), None),
    ("ingest: absurd session id (10k chars)", ["ingest", "--stdin"], session_json("a" * 10_000, [("user", "hi there")]), None),
    ("ingest: --session-id with a slash", ["ingest", "--stdin", "--session-id", "x/../../y"], json.dumps([{"role": "user", "content": "hi"}]).encode(), None),
    ("ingest: agent id traversal", ["ingest", "--stdin", "--agent", "../root"], json.dumps([{"role": "user", "content": "hi"}]).encode(), None),
    ("ingest: turn id with NUL", ["ingest", "--stdin"], json.dumps({"session_id": "ok1", "turns": [{"id": "t\u0000", "role": "user", "content": "hi"}]}).encode(), None),
    ("ingest: NUL bytes (binary)", ["ingest", "--stdin"], b"\x00" * 64, None),
    ("ingest: deeply nested JSON (list)", ["ingest", "--stdin"], DEEP, None),
    ("ingest: deeply nested JSON (object)", ["ingest", "--stdin"], DEEP_OBJ, None),
    ("ingest: wrong types (turns is a string)", ["ingest", "--stdin"], b'{"session_id": "x1", "turns": "hello"}', None),
    ("ingest: wrong types (content is a number)", ["ingest", "--stdin"], b'{"session_id": "x1", "turns": [{"role": "user", "content": 5}]}', None),
    ("ingest: huge stdin (51 MB)", ["ingest", "--stdin"], b"[" + b" " * BIG + b"]", None),
    ("ingest: huge FILE (51 MB)", ["ingest", "FILE"], b"", b"[" + b" " * BIG + b"]"),
    ("ingest: FILE is a directory", ["ingest", "DIR"], b"", None),
    ("ingest: FILE with invalid UTF-8", ["ingest", "FILE"], b"", b"\x80\x81\x82 not text"),
    ("ingest: empty stdin", ["ingest", "--stdin"], b"", None),
    ("hook session-end: not JSON", ["hook", "session-end"], b"{nope", None),
    ("hook session-end: invalid UTF-8", ["hook", "session-end"], b'{"messages": "\xff"}', None),
    ("hook session-end: deeply nested", ["hook", "session-end"], DEEP, None),
    ("hook session-end: messages is an object", ["hook", "session-end"], event(messages={"a": 1}), None),
    ("hook session-end: a JSON list, not an object", ["hook", "session-end"], b"[1, 2]", None),
    ("hook session-end: huge stdin (51 MB)", ["hook", "session-end"], b'{"messages": "' + b"a" * BIG + b'"}', None),
    ("hook session-start: not JSON", ["hook", "session-start"], b"\x00\x01\x02", None),
    ("hook session-start: deeply nested", ["hook", "session-start"], DEEP_OBJ, None),
    ("hook session-start: huge stdin (51 MB)", ["hook", "session-start"], b'{"prompt": "' + b"a" * BIG + b'"}', None),
    ("recall: stdin not JSON", ["recall", "--json"], b"{{{", None),
    ("recall: stdin deeply nested", ["recall", "--json"], DEEP, None),
    ("recall: stdin wrong types", ["recall", "--json"], b'{"depth": "deep", "query": "x"}', None),
    ("recall: stdin unknown key", ["recall", "--json"], b'{"query": "x", "drop": "tables"}', None),
    ("recall: stdin from_nodes traversal", ["recall", "--json"], b'{"from_nodes": ["../../x"]}', None),
    ("recall: stdin invalid UTF-8", ["recall", "--json"], b'{"query": "\xff"}', None),
    ("recall: --scope traversal", ["recall", "x", "--scope", "../a"], b"", None),
    ("trace: card id traversal", ["trace", "../../config.json"], b"", None),
    ("trace: absurd card id", ["trace", "c" * 5000], b"", None),
    ("trace: unknown card", ["trace", "card-nope"], b"", None),
    ("link: card id traversal", ["link", "../a", "card-b", "--rel", "CAUSES"], b"", None),
    ("link: unknown cards", ["link", "card-a", "card-b", "--rel", "CAUSES"], b"", None),
    ("link: relation name injection", ["link", "card-a", "card-b", "--rel", "X]->(b) DETACH DELETE b //"], b"", None),
    ("link: card to itself", ["link", "card-a", "card-a", "--rel", "CAUSES"], b"", None),
]


@pytest.fixture(scope="module")
def populated(tmp_path_factory) -> Path:
    data = tmp_path_factory.mktemp("hostile") / "data"
    mem = Alaya(data)
    mem.init()
    mem.ingest(session_json("base-1", [("user", "We decided to cap the pgbouncer pool at 40."), ("assistant", "Noted.")]))
    mem.distill()
    return data


ROWS: list[tuple[str, int, str]] = []


@pytest.mark.parametrize("name,args,stdin,content", CASES, ids=[c[0] for c in CASES])
def test_hostile_input_is_refused_cleanly(populated, tmp_path, name, args, stdin, content):
    if "FILE" in args:
        path = tmp_path / "input.json"
        path.write_bytes(content)
        args = [str(path) if a == "FILE" else a for a in args]
    if "DIR" in args:
        args = [str(tmp_path) if a == "DIR" else a for a in args]
    before = tree_digest(populated)
    proc = cli(populated, *args, stdin=stdin)
    err = proc.stderr.decode("utf-8", "replace")
    ROWS.append((name, proc.returncode, err.strip()))
    assert proc.returncode == 1, (proc.returncode, err[-500:])
    assert err.startswith("alaya: error: ") and err.count("\n") == 1, err[-800:]
    assert "Traceback" not in err and "internal error" not in err, err
    assert proc.stdout == b""
    assert tree_digest(populated) == before


def test_print_table():
    print("\n| input | exit | message |\n|---|---|---|")
    for name, code, message in ROWS:
        print(f"| {name} | {code} | `{message[:160]}` |")
