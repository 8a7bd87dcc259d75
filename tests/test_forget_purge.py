"""Forgetting that forgets (issue 30 class 1) and a purge no signal leaves half done (issue 30
class 6), shown as issue 30's must-show 5: after `forget CARD --purge-raw` and `forget
--session S --purge-raw`, no file of the data directory (the byte scan of test_redaction.py)
and no surface (session-start, the agent tools, recall, get, list, trace, summary, entities,
export, backup) holds the forgotten text, before and after `rebuild`; and the same when the
forget is stopped by SIGINT or SIGKILL at each of its steps (real child processes and real
signals: the child sends the signal to itself when it reaches the step, as test_crash.py's
children do) and the next command is a read."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from test_redaction import file_bytes

from helpers import session_json, unpack_backup

# (not a secret shape: the redactor would keep "alarm code is 4711" out of the store altogether)
NOTE = "My secret hiking spot is the Kestrel Ridge loop above Wexley."
GONE = [("user", "We decided the vault passphrase is Quokka-Marmalade, the auditor chose it."),
        ("assistant", "Noted: Quokka-Marmalade opens the vault, and the auditor keeps the paper copy.")]
KEEP = [("user", "We decided to cap the pgbouncer pool at 40 because billing ran out of connections."),
        ("assistant", "Gotcha: pgbouncer transaction mode breaks prepared statements.")]
NOTE_TEXT = ["Kestrel Ridge", "Wexley"]
SESSION_TEXT = ["Quokka-Marmalade", "quokka-marmalade", "Quokka", "quokka", "the auditor chose it"]
KEPT_TEXT = "pgbouncer"
EVENT = {"agentId": "main", "sessionKey": "agent:main:main", "sessionId": "s-now"}
# What a checker child runs, in order: a read first (it must finish a cut-off purge before it
# answers), then every surface; `{card}` is the forgotten card's id.
SURFACES = [
    ("hook", "session-start"), ("hook", "tool", "memory_search"), ("hook", "tool", "memory_get"),
    ("recall", "hiking spot Kestrel vault passphrase auditor Quokka", "--json"), ("recall", "Wexley"),
    ("get", "{card}"), ("list", "--json"), ("trace", "{card}"), ("summary", "--json"),
    ("entities", "--json"), ("status", "--json"), ("verify", "--json"), ("export",), ("backup",),
]
STDIN = {"session-start": {**EVENT, "prompt": "where is my hiking spot and what is the vault passphrase?"},
         "memory_search": {**EVENT, "params": {"query": "hiking spot Kestrel Ridge vault passphrase Quokka-Marmalade"}},
         "memory_get": {**EVENT, "params": {"ids": ["{card}", "s-gone#t1", "s-gone#t2"]}}}
CHECKER = """
import contextlib, io, json, sys
from openclaw_alaya.cli.main import main
data, card, stdins = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
control = sys.stdin
for request in control:  # one JSON list of commands a line; one JSON list of outputs a line back
    out = []
    for command in json.loads(request):
        argv = [*[a.replace("{card}", card) for a in command], "--data-dir", data]
        stdin = stdins.get(command[-1])
        text = json.dumps(stdin).replace("{card}", card) if stdin is not None else ""
        sys.stdin = io.TextIOWrapper(io.BytesIO(text.encode()), encoding="utf-8")
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                code = main(argv)
            except SystemExit as exc:
                code = exc.code
        out.append({"command": command, "code": code, "stdout": stdout.getvalue(), "stderr": stderr.getvalue()})
    print(json.dumps(out), flush=True)
"""


def env() -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if k != "ALAYA_HOME"}, "ALAYA_NO_SERVE": "1",
            "PYTHONPATH": os.pathsep.join(sys.path)}


def alaya(data: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(data), *args],
                          input=stdin, capture_output=True, text=True, env=env(), timeout=180)


class Checker:
    """One child process that runs CLI commands on request (a process start costs more than
    most commands): the parent scans the files between two requests."""

    def __init__(self, data: Path, card: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", CHECKER, str(data), card, json.dumps(STDIN)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env=env())

    def run(self, commands: list[tuple[str, ...]]) -> list[dict]:
        self.proc.stdin.write(json.dumps(commands) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, self.proc.stderr.read()[-3000:]
        return json.loads(line)

    def __enter__(self) -> "Checker":
        return self

    def __exit__(self, *exc: object) -> None:
        self.proc.stdin.close()
        assert self.proc.wait(timeout=120) == 0, self.proc.stderr.read()[-3000:]


def surfaces(data: Path, card: str, commands: list[tuple[str, ...]] = SURFACES) -> list[dict]:
    with Checker(data, card) as checker:
        return checker.run(commands)


def found(data: Path, outputs: list[dict], needles: list[str]) -> list[str]:
    """Where any needle is: a file of the data directory (an export made now included), a
    file of a backup made now (unpacked: the archive is compressed), or a command's output."""
    hits = []
    files = file_bytes(data, include_raw=True)
    for archive in sorted((data / "backups").glob("*.tar.gz")):
        unpacked = data.parent / "unpacked"
        shutil.rmtree(unpacked, ignore_errors=True)
        files.update({f"{archive.name}/{k}": v for k, v in file_bytes(unpack_backup(archive, unpacked), include_raw=True).items()})
    for name, blob in files.items():
        hits += [f"{name}: {n!r}" for n in needles if n.encode() in blob]
    for out in outputs:
        hits += [f"{' '.join(out['command'])}: {n!r}" for n in needles if n in out["stdout"] + out["stderr"]]
    return hits


def assert_forgotten(data: Path, card: str, needles: list[str], *, kept: list[str] = (), card_gone: bool = True,
                     commands: list[tuple[str, ...]] = SURFACES) -> None:
    """Nothing of `needles` anywhere, before and after a rebuild; `kept` (and the kept session)
    still there, so the scan is not blind; verify clean."""
    with Checker(data, card) as checker:
        for when in ("before rebuild", "after rebuild"):
            outputs = checker.run(commands)
            _check_round(data, outputs, when, needles, kept, card_gone, commands)
            if when == "before rebuild":
                assert checker.run([("rebuild",)])[0]["code"] == 0


def _check_round(data: Path, outputs: list[dict], when: str, needles: list[str], kept: list[str], card_gone: bool,
                 commands: list[tuple[str, ...]]) -> None:
    """One round's checks (`assert_forgotten`)."""
    assert ("backup",) not in commands or list((data / "backups").glob("*.tar.gz")), when
    assert list((data / "export").rglob("*.md")), when
    assert found(data, outputs, needles) == [], when
    assert all(found(data, outputs, [text]) for text in [KEPT_TEXT, *kept]), when
    checks = {" ".join(o["command"]): o for o in outputs}
    for out in outputs:  # each surface answered (asked for the forgotten card: not found)
        asked = "memory_get" in out["command"] or card_gone and {"get", "trace"} & set(out["command"])
        assert out["code"] == (1 if asked else 0), (when, out)
    assert json.loads(checks["verify --json"]["stdout"])["ok"], checks["verify --json"]
    assert KEPT_TEXT in checks["hook session-start"]["stdout"], when
    assert "[forgotten]" not in checks["hook session-start"]["stdout"], when  # no empty recent-session line
    for name in ("export", "backups"):  # made now, of the memory as it is: removed for the next round
        shutil.rmtree(data / name, ignore_errors=True)


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> tuple[Path, str]:
    """A store that holds the note, the session to forget and one to keep, in every layer and
    cache: distilled, introspected (full-text index, buckets), summarised, recalled."""
    data = tmp_path_factory.mktemp("forget") / "data"
    for sid, turns in (("s-keep", KEEP), ("s-gone", GONE)):
        (data.parent / f"{sid}.json").write_bytes(session_json(sid, turns))
    with Checker(data, "-") as checker:
        steps = checker.run([("init",), ("ingest", str(data.parent / "s-keep.json")),
                             ("ingest", str(data.parent / "s-gone.json")), ("distill",), ("remember", NOTE), ("introspect",)])
        assert [s["code"] for s in steps] == [0] * len(steps), steps
        card = steps[4]["stdout"].split()[1]
        assert card.startswith("card-")
        outputs = checker.run(SURFACES[:4])
    shutil.rmtree(data / "export", ignore_errors=True)
    shutil.rmtree(data / "backups", ignore_errors=True)
    for needle in (NOTE_TEXT[0], "Quokka-Marmalade"):  # the scan sees them before the forget
        assert found(data, outputs, [needle]), needle
    return data, card


def copy_of(template: tuple[Path, str], into: Path) -> tuple[Path, str]:
    data, card = template
    shutil.copytree(data, into / "data", symlinks=True)
    return into / "data", card


FORGET_CARD = ("forget", "{card}", "--purge-raw", "--reason", "secret")
FORGET_SESSION = ("forget", "--session", "s-gone", "--purge-raw")


def test_forget_with_purge_raw_leaves_nothing_in_any_file_or_surface(template, tmp_path):
    """issue 30 class 1: the note's text stayed in session-start's recent sessions,
    state/summary.json, graph.kuzu pages and a LanceDB fragment; a forgotten session's in
    graph.kuzu, old LanceDB versions, entities and other cards' context copies."""
    data, card = copy_of(template, tmp_path)
    with Checker(data, card) as checker:
        assert [out["code"] for out in checker.run([FORGET_CARD, FORGET_SESSION])] == [0, 0]
    assert_forgotten(data, card, NOTE_TEXT + SESSION_TEXT)


# (command, module:attribute[@n] the child stops at, on its n-th call): every step of a purge
# (curate/purge.py), in order. The session forget has no turns to blank; the card forget no
# session to delete.
CARD_STEPS = [
    "openclaw_alaya.store.tombstones:record",
    "openclaw_alaya.store.raw:RawStore.blank_turns",
    "openclaw_alaya.store.raw:RawStore.remove_context",
    "openclaw_alaya.store.embedded.graph:GraphStore.remove_cards",
    "openclaw_alaya.store.embedded.vectors:VectorStore.delete_cards",
    "openclaw_alaya.store.embedded.scrub:_cypher_path@2",  # the graph exported, not imported yet
    "openclaw_alaya.store.embedded.vectors:VectorStore.scrub",
    "openclaw_alaya.store.journal:Journal.fulfilled",
]
SESSION_STEPS = [
    "openclaw_alaya.store.tombstones:record",
    "openclaw_alaya.store.raw:RawStore.remove_session",
    "openclaw_alaya.store.embedded.upkeep_queries:UpkeepQueries.delete_sessions",
    "openclaw_alaya.store.embedded.scrub:scrub_graph",
    "openclaw_alaya.store.journal:Journal.fulfilled",
]
STOPPER = """
import os, signal, sys
import importlib
target, nth, signum = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
module, attr = target.split(":")
owner = importlib.import_module(module)
*path, name = attr.split(".")
for part in path:
    owner = getattr(owner, part)
real = getattr(owner, name)
calls = [0]
def stop(*args, **kwargs):
    calls[0] += 1
    if calls[0] >= nth:
        print("stopping", flush=True)
        os.kill(os.getpid(), signum)
    return real(*args, **kwargs)
setattr(owner, name, stop)
from openclaw_alaya.cli.main import main
sys.exit(main(sys.argv[4:]))
"""


def _stop_at(data: Path, step: str, signum: int, command: list[str]) -> subprocess.CompletedProcess:
    target, _, nth = step.partition("@")
    return subprocess.run([sys.executable, "-c", STOPPER, target, nth or "1", str(int(signum)), *command,
                           "--data-dir", str(data)], capture_output=True, text=True, env=env(), timeout=180)


# a stopped forget's checks: the first read, the surfaces that hand text to a model, verify, export
AFTER_STOP = [SURFACES[0], SURFACES[1], SURFACES[3], ("verify", "--json"), ("export",)]
CASES = [(FORGET_CARD, step) for step in CARD_STEPS] + [(FORGET_SESSION, step) for step in SESSION_STEPS]


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGINT], ids=["SIGKILL", "SIGINT"])
@pytest.mark.parametrize("command,step", CASES, ids=[f"{'card' if c is FORGET_CARD else 'session'}-{s.split(':')[1]}" for c, s in CASES])
def test_a_forget_stopped_at_any_step_is_finished_by_the_next_read(template, tmp_path, command, step, signum):
    """issue 30 class 6: a kill inside `forget --session X --purge-raw` left the conversation
    in the raw files under a `purged_raw: true` tombstone, recovery brought the session back,
    verify reported session_not_in_l2 after a rebuild, and a kill at the tombstone left every
    card recalled. Now the purge's intent is journalled first and the next read carries it out."""
    data, card = copy_of(template, tmp_path)
    argv = [a.replace("{card}", card) for a in command]
    proc = _stop_at(data, step, signum, argv)
    assert "stopping" in proc.stdout, proc.stderr[-2000:]  # the step was reached
    if signum == signal.SIGKILL:
        assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
    else:
        assert proc.returncode == 130 and "interrupted" in proc.stderr, proc.stderr[-2000:]
    needles, kept = (NOTE_TEXT, ["Quokka-Marmalade"]) if command is FORGET_CARD else (SESSION_TEXT, [NOTE_TEXT[0]])
    assert_forgotten(data, card, needles, kept=kept, card_gone=command is FORGET_CARD,
                     commands=AFTER_STOP)
    assert not list((data / "journal").iterdir())


def test_recovery_after_a_dead_write_does_not_bring_a_forgotten_session_back(template, tmp_path):
    """issue 30 class 6: crash recovery gave every session file without a node its node again,
    so a session forgotten without --purge-raw (its file stays, L3 keeps the source) came back
    into L2 after any later writer was killed, and verify then disagreed with the tombstone."""
    data, card = copy_of(template, tmp_path)
    proc = alaya(data, "forget", "--session", "s-gone")
    assert proc.returncode == 0, proc.stderr
    assert (data / "raw" / "sessions" / "2026-03" / "s-gone.json").is_file()  # kept, as documented
    src = tmp_path / "s-new.json"
    src.write_bytes(session_json("s-new", KEEP))
    proc = _stop_at(data, "openclaw_alaya.store.embedded.graph:GraphStore.upsert_sessions", signal.SIGKILL,
                    ["ingest", str(src)])
    assert proc.returncode == -signal.SIGKILL and "stopping" in proc.stdout, proc.stderr[-2000:]
    assert alaya(data, "init").returncode == 0  # the next write hold recovers the dead ingest
    outputs = surfaces(data, card, [("verify", "--json"), ("recall", "vault passphrase auditor", "--json")])
    assert json.loads(outputs[0]["stdout"])["ok"], outputs[0]
    assert "Quokka" not in outputs[1]["stdout"]
    from openclaw_alaya import Alaya

    with Alaya(data).reading("test") as graph:
        sessions = {row["id"] for row in graph.sessions()}
    assert "s-new" in sessions and "s-gone" not in sessions, sessions
