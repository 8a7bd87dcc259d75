"""`alaya serve` end to end: a real daemon subprocess on a temporary data directory, the
stdlib client path, fallback to in-process, stale sockets, the lock protocol, permissions.
No timing assertions: every wait is bounded and only checks what happened."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import session_json

import openclaw_alaya
from openclaw_alaya.cli.wire import request, socket_path

EVENT = {"agentId": "main", "sessionId": "s-new", "prompt": "which database did we pick for the graph?"}


def _env(extra: dict | None = None) -> dict:
    """The tests' environment with the daemon allowed (conftest.py turns it off for the other
    tests) and a generous wait for an autostarted daemon on a busy machine."""
    env = {k: v for k, v in os.environ.items() if k not in ("ALAYA_HOME", "ALAYA_NO_SERVE")}
    return {**env, "ALAYA_SERVE_START_WAIT": "300", **(extra or {})}


def alaya(data_dir: Path, *args: str, stdin: str | None = "", env: dict | None = None,
          timeout: float = 400) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(data_dir), *args],
                          input=stdin, capture_output=True, text=True, env=_env(env), timeout=timeout)


def tool(data_dir: Path, name: str, params: dict) -> dict:
    """`alaya hook tool NAME` through the client: its answer."""
    proc = alaya(data_dir, "hook", "tool", name, stdin=json.dumps({"agentId": "main", "params": params}))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def set_config(data_dir: Path, **serve: object) -> None:
    config = json.loads((data_dir / "config.json").read_text())
    config["serve"] = {**config.get("serve", {}), **serve}
    (data_dir / "config.json").write_text(json.dumps(config))


def daemons_of(data_dir: Path) -> list[int]:
    """The pids of every daemon process of `data_dir` (from /proc: started by anyone)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"openclaw_alaya.cli.daemon" in args and str(data_dir).encode() in args and not _zombie(int(entry.name)):
            found.append(int(entry.name))
    return found


def served_requests(data_dir: Path) -> int:
    reply = request(data_dir, {"op": "status"}, timeout=10)
    assert reply and reply["ok"], reply
    return reply["requests"]


def _pid(data_dir: Path) -> int | None:
    try:
        return int(json.loads((data_dir / "state" / "serve.pid").read_text())["pid"])
    except (OSError, ValueError, KeyError):
        return None


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _wait(predicate, seconds: float = 30) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def build_store(root: Path, source: Path) -> Path:
    """A data directory with one distilled session of agent main (Kuzu, the deploy timeout)."""
    from openclaw_alaya import Alaya

    root.mkdir()
    # a short lock wait for the writer test (filelock keeps one lock object per path and
    # process, so every Alaya in this process must agree on the timeout from the start)
    (root / "config.json").write_text(json.dumps({"lock": {"timeout_seconds": 1.0}}))
    memory = Alaya(root)
    memory.init()
    source.write_bytes(session_json("s1", [
        ("user", "We decided to use Kuzu as the graph database because it is embedded."),
        ("assistant", "Noted: Kuzu for the graph, LanceDB for vectors."),
        ("user", "The deploy failed with a timeout because redis held the lock."),
    ], agent_id="main"))
    memory.ingest(source)
    memory.distill()
    return root


def stop_daemon(root: Path) -> None:
    """Stop the daemon of `root`, if any, and make sure it is gone."""
    pid = _pid(root)
    alaya(root, "serve", "stop", timeout=60)
    if pid is not None and not _gone(pid):
        os.kill(pid, signal.SIGKILL)


@pytest.fixture
def store(tmp_path):
    root = build_store(tmp_path / "data", tmp_path / "s1.json")
    yield root
    stop_daemon(root)


@pytest.fixture
def daemon(store):
    proc = alaya(store, "serve", "start", "--idle-exit", "10")
    assert proc.returncode == 0, proc.stderr
    assert "started" in proc.stdout
    return store


def test_served_answers_match_in_process_and_socket_is_private(daemon):
    mode = stat.S_IMODE(os.stat(socket_path(daemon)).st_mode)
    assert stat.S_ISSOCK(os.stat(socket_path(daemon)).st_mode) and mode == 0o600
    before = served_requests(daemon)
    served = alaya(daemon, "hook", "session-start", stdin=json.dumps(EVENT))
    local = alaya(daemon, "hook", "session-start", stdin=json.dumps(EVENT), env={"ALAYA_NO_SERVE": "1"})
    assert served.returncode == local.returncode == 0, served.stderr + local.stderr
    assert "Kuzu" in served.stdout and served.stdout == local.stdout
    served = alaya(daemon, "recall", "graph database", "--json")
    local = alaya(daemon, "recall", "graph database", "--json", env={"ALAYA_NO_SERVE": "1"})
    assert served.returncode == 0 and json.loads(served.stdout)["nodes"]
    assert [n["card_id"] for n in json.loads(served.stdout)["nodes"]] == [n["card_id"] for n in json.loads(local.stdout)["nodes"]]
    # a recall request as JSON on stdin, and a user error with its exit code and one-line message
    served = alaya(daemon, "recall", "--json", stdin=json.dumps({"query": "redis lock"}))
    assert served.returncode == 0 and json.loads(served.stdout)["nodes"]
    bad = alaya(daemon, "recall", "--from-nodes", "card-nope")
    assert bad.returncode == 1 and bad.stderr.startswith("alaya: error: no card") and "Traceback" not in bad.stderr
    assert served_requests(daemon) == before + 4  # the four above went through the daemon

    status = json.loads(alaya(daemon, "serve", "status", "--json").stdout)
    assert status["running"] and status["pid"] == _pid(daemon)


PLUGIN = Path(__file__).resolve().parents[1] / "hooks" / "openclaw-alaya" / "lib"
# the plugin's own caller, with a command that fails: only the daemon's socket can answer
PLUGIN_CALL = f"""
import {{ alayaCaller }} from {json.dumps((PLUGIN / "alaya.js").as_uri())};
import {{ resolveConfig }} from {json.dumps((PLUGIN / "config.js").as_uri())};
const call = alayaCaller({{}}, resolveConfig({{ dataDir: process.argv[1], command: ["false"] }}));
console.log(JSON.stringify(await call(["hook", "session-start"], JSON.parse(process.argv[2]), 60000)));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node")
def test_the_plugin_calls_the_daemon_directly(daemon):
    before = served_requests(daemon)
    proc = subprocess.run(["node", "--input-type=module", "-e", PLUGIN_CALL, str(daemon), json.dumps(EVENT)],
                          capture_output=True, text=True, timeout=120, env=_env())
    assert proc.returncode == 0, proc.stderr
    assert "Kuzu" in json.loads(proc.stdout)["prependContext"]
    assert served_requests(daemon) == before + 1


def test_client_path_stays_stdlib_only(daemon):
    code = (
        "import sys; from openclaw_alaya.cli.client import main; "
        f"sys.argv = ['alaya', '--data-dir', {str(daemon)!r}, 'recall', 'graph database', '--json']; rc = main(); "
        "heavy = [m for m in ('kuzu', 'lancedb', 'pydantic', 'numpy', 'pyarrow') if m in sys.modules]; "
        "print('HEAVY', heavy, file=sys.stderr); sys.exit(rc)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={k: v for k, v in os.environ.items() if k != "ALAYA_NO_SERVE"})
    assert proc.returncode == 0, proc.stderr
    assert "HEAVY []" in proc.stderr
    assert json.loads(proc.stdout)["nodes"]


def test_falls_back_in_process_when_not_running_and_autostart_is_off(store):
    assert not socket_path(store).exists()
    set_config(store, autostart=False)
    proc = alaya(store, "hook", "session-start", stdin=json.dumps(EVENT))
    assert proc.returncode == 0 and "Kuzu" in json.loads(proc.stdout)["prependContext"]
    set_config(store, autostart=True)
    proc = alaya(store, "hook", "session-start", stdin=json.dumps(EVENT), env={"ALAYA_NO_SERVE": "1"})
    assert proc.returncode == 0 and "Kuzu" in json.loads(proc.stdout)["prependContext"]
    # a command a user types uses a daemon when one runs, but does not start one
    assert alaya(store, "recall", "graph database").returncode == 0
    assert alaya(store, "trace", "card-nope").returncode == 1
    status = alaya(store, "serve", "status", "--json")
    assert json.loads(status.stdout)["running"] is False and not daemons_of(store)


def test_a_hook_call_starts_a_daemon_over_stale_files_and_waits_for_it(store):
    """No daemon, a socket left by a killed one, a pid file naming a stranger's live process:
    the hook call starts a daemon, is answered by it, and the stranger is never signalled."""
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(socket_path(store)))
    dead.close()
    bystander = subprocess.Popen(["sleep", "600"])
    try:
        (store / "state" / "serve.pid").write_text(json.dumps({"pid": bystander.pid, "started": 0}))
        proc = alaya(store, "hook", "session-start", stdin=json.dumps(EVENT))
        assert proc.returncode == 0 and "Kuzu" in json.loads(proc.stdout)["prependContext"], proc.stderr
        assert served_requests(store) == 1  # answered by the daemon it started, not in process
        assert daemons_of(store) == [_pid(store)] and _pid(store) != bystander.pid
        found = tool(store, "memory_search", {"query": "graph database"})
        assert "Kuzu" in found["text"] and served_requests(store) == 2
        stop = alaya(store, "serve", "stop")
        assert stop.returncode == 0 and "stopped" in stop.stdout
        assert _wait(lambda: not daemons_of(store), 60)
        assert bystander.poll() is None  # left alone throughout
    finally:
        bystander.kill()
        bystander.wait()
    assert "Traceback" not in (store / "state" / "serve.log").read_text()


def test_two_hook_calls_at_once_start_one_daemon(store):
    calls = [subprocess.Popen([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(store), *args],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
             for args in (("hook", "session-start"), ("hook", "tool", "memory_search"), ("hook", "session-start"))]
    event = json.dumps({**EVENT, "params": {"query": "graph database"}})
    results = [call.communicate(event, timeout=400) + (call.returncode,) for call in calls]
    assert all(code == 0 for _, _, code in results), results
    assert "Kuzu" in json.loads(results[0][0])["prependContext"] and "Kuzu" in json.loads(results[1][0])["text"]
    assert daemons_of(store) == [_pid(store)]
    assert served_requests(store) == 3  # all three answered by the one daemon
    assert "Traceback" not in (store / "state" / "serve.log").read_text()


def test_an_autostarted_daemon_exits_after_its_idle_time(store):
    set_config(store, idle_exit_minutes=0.02)  # 1.2 s
    proc = alaya(store, "hook", "tool", "memory_search", stdin=json.dumps({"params": {"query": "redis"}}))
    assert proc.returncode == 0, proc.stderr
    assert _wait(lambda: not daemons_of(store), 120)
    assert _wait(lambda: not socket_path(store).exists(), 10)


def test_no_daemon_for_a_directory_that_is_not_initialised(tmp_path):
    proc = alaya(tmp_path / "none", "hook", "session-start", stdin=json.dumps(EVENT))
    assert proc.returncode == 0 and json.loads(proc.stdout) == {}
    proc = alaya(tmp_path / "none", "hook", "tool", "memory_search", stdin=json.dumps({"params": {"query": "x"}}))
    assert proc.returncode == 1 and proc.stderr.startswith("alaya: error:") and proc.stderr.count("\n") == 1
    assert not (tmp_path / "none").exists() and not daemons_of(tmp_path / "none")


OLD_DAEMON = ("import sys, openclaw_alaya; openclaw_alaya.__version__ = '0.0.1'; "
              "from openclaw_alaya.cli import daemon; sys.argv[0] = 'daemon'; sys.exit(daemon._main())")


@pytest.mark.parametrize("replaced_by", ["hook call", "serve start"])
def test_a_daemon_of_another_version_is_replaced(store, replaced_by):
    """After an upgrade the daemon still running is older code: asked to run something, it
    says so and exits, and the hook call starts a daemon of its own version; `serve start`
    stops it and starts one."""
    from openclaw_alaya import __version__

    with open(store / "state" / "serve.log", "ab") as log:
        old = subprocess.Popen([sys.executable, "-c", OLD_DAEMON, "--data-dir", str(store), "--idle-exit", "10"],
                               stdout=log, stderr=log, env=_env())
    try:
        assert _wait(lambda: (request(store, {"op": "status"}, timeout=10) or {}).get("version") == "0.0.1", 300)
        if replaced_by == "hook call":
            proc = alaya(store, "hook", "session-start", stdin=json.dumps(EVENT))
            assert proc.returncode == 0 and "Kuzu" in json.loads(proc.stdout)["prependContext"], proc.stderr
        else:
            proc = alaya(store, "serve", "start")
            assert proc.returncode == 0 and "started" in proc.stdout, proc.stdout + proc.stderr
        assert old.wait(timeout=60) == 0
        status = request(store, {"op": "status"}, timeout=10)
        assert status and status["version"] == __version__ and status["pid"] != old.pid
        assert status["requests"] == (replaced_by == "hook call") and daemons_of(store) == [status["pid"]]
    finally:
        if old.poll() is None:
            old.kill()
            old.wait()


def test_a_daemon_whose_code_was_replaced_answers_stale_to_a_versionless_call(store, tmp_path):
    """The plugin's direct calls carry no version: a daemon notices an upgrade by itself (its
    package's __init__.py replaced on disk), refuses to answer and exits."""
    code = tmp_path / "code"
    shutil.copytree(Path(openclaw_alaya.__file__).parent, code / "openclaw_alaya",
                    ignore=shutil.ignore_patterns("__pycache__"))
    with open(store / "state" / "serve.log", "ab") as log:
        copy = subprocess.Popen([sys.executable, "-m", "openclaw_alaya.cli.daemon", "--data-dir", str(store),
                                 "--idle-exit", "10"], stdout=log, stderr=log, cwd=tmp_path,
                                env=_env({"PYTHONPATH": str(code)}))
    try:
        assert _wait(lambda: request(store, {"op": "status"}, timeout=10) is not None, 300)
        run = {"op": "run", "version": None, "argv": ["--data-dir", str(store), "hook", "session-start"],
               "stdin": base64.b64encode(json.dumps(EVENT).encode()).decode()}
        assert (request(store, run, timeout=120) or {}).get("ok") is True
        init = code / "openclaw_alaya" / "__init__.py"
        (code / "upgrade.py").write_bytes(init.read_bytes())
        os.replace(code / "upgrade.py", init)  # what an install does: a new file in its place
        reply = request(store, run, timeout=120)
        assert reply and reply["ok"] is False and reply["stale"] is True, reply
        assert copy.wait(timeout=60) == 0 and not socket_path(store).exists()
    finally:
        if copy.poll() is None:
            copy.kill()
            copy.wait()


def test_stale_socket_is_ignored_and_replaced(store):
    # a socket file nobody listens on: what a daemon killed with SIGKILL leaves behind
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(socket_path(store)))
    dead.close()
    assert socket_path(store).exists()
    proc = alaya(store, "recall", "graph database", "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["nodes"]  # fell back to in-process
    assert json.loads(alaya(store, "serve", "status", "--json").stdout)["stale_socket"] is True
    started = alaya(store, "serve", "start")
    assert started.returncode == 0 and "started" in started.stdout, started.stderr
    assert served_requests(store) == 0
    assert alaya(store, "recall", "graph database").returncode == 0
    assert served_requests(store) == 1


def test_killed_daemon_leaves_a_socket_the_client_survives(daemon):
    pid = _pid(daemon)
    os.kill(pid, signal.SIGKILL)
    assert _wait(lambda: _gone(pid) or _zombie(pid))
    recall = alaya(daemon, "recall", "graph database", "--json")  # no autostart: in process
    assert recall.returncode == 0 and json.loads(recall.stdout)["nodes"] and not daemons_of(daemon)
    proc = alaya(daemon, "hook", "session-start", stdin=json.dumps(EVENT))  # starts a new daemon
    assert proc.returncode == 0 and "Kuzu" in json.loads(proc.stdout)["prependContext"]
    assert daemons_of(daemon) == [_pid(daemon)] and _pid(daemon) != pid and served_requests(daemon) == 1
    stop = alaya(daemon, "serve", "stop")
    assert stop.returncode == 0 and not socket_path(daemon).exists()


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[1].split()[0] == "Z"
    except OSError:
        return True


def test_served_read_waits_for_a_writer_and_holds_nothing_between_requests(daemon):
    from openclaw_alaya import Alaya

    memory = Alaya(daemon)
    with memory.lock.write("test writer"):
        proc = alaya(daemon, "recall", "graph database", "--json")
    assert proc.returncode == 1
    assert "could not get the lock for" in proc.stderr and "recall" in proc.stderr and "test writer" in proc.stderr
    assert served_requests(daemon) >= 1  # the daemon answered (with the lock error), not a fallback
    ok = alaya(daemon, "recall", "graph database", "--json")
    assert ok.returncode == 0 and json.loads(ok.stdout)["nodes"]
    # between requests the daemon holds neither the lock nor Kuzu: a writer gets both at once
    with memory.writing("test writer 2") as graph:
        assert graph.counts()["cards"] > 0


def test_graph_snapshot_is_read_again_between_requests_after_a_write(daemon):
    def snapshot() -> str:
        reply = request(daemon, {"op": "status"}, timeout=10)
        assert reply and reply["ok"], reply
        return reply["graph_snapshot"]

    assert snapshot() == "current"  # read at warm-up
    cards = json.loads(alaya(daemon, "recall", "Kuzu graph database", "--json", env={"ALAYA_NO_SERVE": "1"}).stdout)
    ids = [n["card_id"] for n in cards["nodes"]]
    assert len(ids) >= 2
    linked = alaya(daemon, "link", ids[0], ids[1], "--rel", "CAUSES", env={"ALAYA_NO_SERVE": "1"})
    assert linked.returncode == 0, linked.stderr
    assert _wait(lambda: snapshot() == "current", 20), "re-read without waiting for a request"
    served = json.loads(alaya(daemon, "recall", "--from-nodes", ids[0], "--json").stdout)
    assert ids[1] in {n["card_id"] for n in served["nodes"] if n["matched_rel"] == "CAUSES"}


def test_agent_tools_trace_and_get_are_served_and_a_store_is_found_at_once(daemon):
    before = served_requests(daemon)
    stored = tool(daemon, "memory_store", {"text": "The billing service runs on port 8442.", "tags": ["billing"]})
    card = stored["details"]["card_id"]
    found = tool(daemon, "memory_search", {"query": "which port does billing run on?"})
    assert card in [n["card_id"] for n in found["details"]["nodes"]]
    got = tool(daemon, "memory_get", {"ids": [card]})
    assert "8442" in got["text"]
    assert alaya(daemon, "trace", card, "--json").returncode == 0
    assert json.loads(alaya(daemon, "get", card, "--json").stdout)["cards"][0]["id"] == card
    gone = tool(daemon, "memory_forget", {"ids": [card]})
    assert gone["details"]["cards"][0]["id"] == card
    assert card not in [n["card_id"] for n in tool(daemon, "memory_search", {"query": "billing port"})["details"]["nodes"]]
    bad = alaya(daemon, "hook", "tool", "memory_get", stdin=json.dumps({"params": {"ids": [card]}}))
    assert bad.returncode == 1 and bad.stderr.startswith("alaya: error: no card") and bad.stderr.count("\n") == 1
    assert served_requests(daemon) == before + 8  # every call above went through the daemon
    local = alaya(daemon, "get", card, env={"ALAYA_NO_SERVE": "1"})
    assert local.returncode == 1  # and the daemon's writes are the store's: forgotten in process too


def test_commands_the_daemon_does_not_serve_are_refused(daemon):
    reply = request(daemon, {"op": "run", "argv": ["--data-dir", str(daemon), "init"], "stdin": None})
    assert reply["ok"] is False and reply["error"] == "command not served"
    reply = request(daemon, {"op": "run", "argv": ["--data-dir", "/elsewhere", "recall", "x"], "stdin": None})
    assert reply["ok"] is False


def test_idle_daemon_exits_and_removes_its_socket(store):
    proc = alaya(store, "serve", "start", "--idle-exit", "0.02")  # 1.2 s
    assert proc.returncode == 0, proc.stderr
    pid = _pid(store)
    assert _wait(lambda: _gone(pid) or _zombie(pid), 60)
    assert _wait(lambda: not socket_path(store).exists(), 10)


def test_stop_when_not_running_and_start_twice(store):
    assert "not running" in alaya(store, "serve", "stop").stdout
    assert alaya(store, "serve", "start").returncode == 0
    again = alaya(store, "serve", "start")
    assert again.returncode == 0 and "already running" in again.stdout
    stopped = alaya(store, "serve", "stop")
    assert stopped.returncode == 0 and "stopped" in stopped.stdout
    assert not socket_path(store).exists()


# --- hostile neighbours and stale state ------------------------------------------------------


class FakeDaemon:
    """A socket server in this process on the data directory's socket path, answering every
    request with `reply`: what another program listening on `serve.sock` looks like."""

    def __init__(self, data_dir: Path, reply: dict) -> None:
        import threading

        self.reply = json.dumps(reply).encode()
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(socket_path(data_dir)))
        self.sock.listen(8)
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                try:
                    conn.recv(1 << 16)
                    conn.sendall(self.reply)
                except OSError:
                    pass

    def close(self) -> None:
        self.sock.close()


FORGED = {"ok": True, "exit": 0, "stdout": base64.b64encode(b'{"prependContext": "FORGED"}').decode(), "stderr": ""}


def test_client_trusts_only_a_daemon_running_as_its_own_user(store):
    fake = FakeDaemon(store, FORGED)
    try:
        # the same socket, judged as if this process ran under another uid: refused
        assert request(store, {"op": "status"}, timeout=10, owner=os.getuid() + 1) is None
        # a listener of our own uid is trusted (the real daemon is one: see the tests above)
        assert request(store, {"op": "status"}, timeout=10) == FORGED
    finally:
        fake.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to listen as another user")
def test_hook_ignores_a_fake_daemon_of_another_user(store):
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(socket_path(store)))
    child = os.fork()
    if child == 0:  # listen() records the credentials a client sees: those of user nobody
        try:
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            listener.listen(8)
            while True:
                conn, _ = listener.accept()
                with contextlib.suppress(OSError), conn:
                    conn.recv(1 << 16)
                    conn.sendall(json.dumps(FORGED).encode())
        finally:
            os._exit(0)
    try:
        assert _wait(lambda: _listening(store), 20)
        proc = alaya(store, "hook", "session-start", stdin=json.dumps(EVENT))
        assert proc.returncode == 0, proc.stderr
        assert "FORGED" not in proc.stdout and "Kuzu" in json.loads(proc.stdout)["prependContext"]
    finally:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
        listener.close()


def _listening(data_dir: Path) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(socket_path(data_dir)))
        return True
    except OSError:
        return False
    finally:
        probe.close()


def test_serve_status_survives_an_unexpected_answer(store):
    fake = FakeDaemon(store, {"ok": True})
    try:
        for args in (("serve", "status"), ("serve", "status", "--json")):
            proc = alaya(store, *args)
            assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
            assert "not running" in proc.stdout or json.loads(proc.stdout)["running"] is False
    finally:
        fake.close()


def test_backup_skips_the_daemon_socket(daemon, tmp_path):
    proc = alaya(daemon, "backup", "--dest", str(tmp_path / "copies"), "--json")
    assert proc.returncode == 0, proc.stderr
    from helpers import unpack_backup

    copy = unpack_backup(json.loads(proc.stdout)["path"], tmp_path / "restored")
    assert (copy / "config.json").exists() and not (copy / "serve.sock").exists()


def test_stop_never_signals_a_process_that_is_not_this_daemon(store):
    bystander = subprocess.Popen(["sleep", "60"])
    try:
        (store / "state" / "serve.pid").write_text(json.dumps({"pid": bystander.pid, "started": 0}))
        stop = alaya(store, "serve", "stop")
        assert stop.returncode == 0 and "not running" in stop.stdout, stop.stdout + stop.stderr
        assert bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait()


def test_a_regular_file_named_like_the_socket_is_left_alone(store):
    keep = socket_path(store)
    keep.write_text("not a socket")
    assert alaya(store, "serve", "stop").returncode == 0
    started = alaya(store, "serve", "start")
    assert started.returncode == 1 and started.stderr.startswith("alaya: error:"), started.stdout + started.stderr
    assert "not a socket" in started.stderr and "Traceback" not in started.stderr
    # a hook call's autostart: the daemon it starts cannot start, so the call runs in process
    proc = alaya(store, "hook", "session-start", stdin=json.dumps(EVENT))
    assert proc.returncode == 0 and "Kuzu" in json.loads(proc.stdout)["prependContext"], proc.stderr
    assert not daemons_of(store) and "not a socket" in (store / "state" / "serve.log").read_text()
    assert keep.read_text() == "not a socket"


def test_a_silent_client_does_not_stall_the_daemon(daemon):
    silent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    silent.connect(str(socket_path(daemon)))  # connects and sends nothing
    try:
        before = served_requests(daemon)
        proc = alaya(daemon, "hook", "session-start", stdin=json.dumps(EVENT))
        assert proc.returncode == 0 and "Kuzu" in json.loads(proc.stdout)["prependContext"]
        assert served_requests(daemon) == before + 1  # answered by the daemon, not in process
    finally:
        silent.close()


def test_a_second_daemon_refuses_to_start_and_leaves_the_live_one_alone(daemon):
    pid, inode = _pid(daemon), socket_path(daemon).stat().st_ino
    silent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    silent.connect(str(socket_path(daemon)))  # keeps the live daemon busy
    try:
        second = subprocess.run([sys.executable, "-m", "openclaw_alaya.cli.daemon", "--data-dir", str(daemon),
                                 "--idle-exit", "1"], capture_output=True, text=True, timeout=120)
    finally:
        silent.close()
    assert second.returncode == 1 and "already running" in second.stderr, second.stderr
    assert second.stderr.count("\n") == 1 and "Traceback" not in second.stderr
    assert socket_path(daemon).stat().st_ino == inode
    reply = request(daemon, {"op": "status"}, timeout=10)
    assert reply and reply["pid"] == pid


def test_concurrent_starts_leave_one_daemon_and_a_clean_log(store):
    starts = [subprocess.Popen([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(store), "serve", "start"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [p.communicate(timeout=120) + (p.returncode,) for p in starts]
    assert all(code == 0 for _, _, code in results), results
    assert sorted("started" in out for out, _, _ in results) == [False, True], results
    assert "Traceback" not in (store / "state" / "serve.log").read_text()
    reply = request(store, {"op": "status"}, timeout=10)
    assert reply and reply["pid"] == _pid(store)
