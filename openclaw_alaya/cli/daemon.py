"""`alaya serve`: a resident process that keeps the libraries and the embedder loaded, so that
`alaya hook session-start` and `alaya recall` answer in milliseconds instead of paying about
a second of imports per call (client.py is the other half, serve.py starts and stops it).

- One daemon per data directory, listening on `<data dir>/serve.sock` (mode 0600, in the
  owner-only data directory; a peer with another uid is refused). A second daemon refuses to
  start while the first holds `state/serve.lock`, and so never removes a live daemon's socket.
- It holds no lock and no Kuzu database between requests: each request runs the ordinary CLI
  code (`cli.main`) with the request's argv and stdin, which takes the shared lock, opens Kuzu
  read-only and closes it before releasing (docs/architecture.md, "The lock protocol"). Only
  `hook session-start`, `hook turn` (issue 32), `hook session-end` (issue 33: answered once the
  turns are in L3, distilled afterwards by the background queue, distill_queue.py), `hook tool NAME` (the agent tools: memory_store and memory_forget write,
  under the same lock protocol as any writer), `recall`, `trace` and `get` are accepted. Each
  connection has its own thread, which reads the request with a short timeout (a client that
  sends nothing holds only its thread); the commands themselves run one at a time (the CLI
  code swaps sys.stdout).
- What it keeps: the imported modules, the `Alaya` object (config, embedder, LanceDB
  connection and table handles, cached relation vectors), rebuilt when config.json or the
  index metadata changes. It never runs `optimize()` or builds an index.
- It exits after `serve.idle_exit_minutes` without a request (0: never), on `alaya serve stop`,
  on SIGTERM/SIGINT, or when asked to run something by a client of another package version or
  after its own package was replaced on disk (an upgrade; the plugin's direct calls send no
  version): it answers that it is stale first (the caller starts a fresh daemon or runs in
  process), and removes its socket. A socket left by a killed daemon is stale: clients start a new daemon
  (autostart) or fall back to in-process, and the next start replaces it.

Run as `python -m openclaw_alaya.cli.daemon --data-dir DIR [--idle-exit MINUTES]` by `alaya serve
start` (background, waits until it answers), `alaya serve run` (foreground) and the client's
autostart (wire.ensure_daemon).
"""


from __future__ import annotations

import argparse
import base64
import contextlib
import ctypes
import io
import json
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

from .. import __version__
from ..errors import AlayaError
from ..bridge.capture import distill_later
from . import common
from .distill_queue import DistillQueue
from .main import main as run_command
from .wire import (
    INSTANCE_LOCK,
    PID_FILE,
    PROTOCOL,
    address,
    daemon_argv,
    peer_uid,
    remove_socket,
    socket_path,
)

_MAX_REQUEST_BYTES = 64 * 1024 * 1024
_READ_TIMEOUT = 10.0  # seconds for a client to send its request (it holds only its own thread)
_TICK = 1.0  # seconds between idle checks (exit, graph snapshot) while no request comes
_ALLOWED = (("hook", "session-start"), ("hook", "turn"), ("hook", "session-end"), ("hook", "tool"), ("recall",),
            ("trace",), ("get",))
_WRITES = (("hook", "tool", "memory_store"), ("hook", "tool", "memory_forget"), ("hook", "session-end"))  # never run twice
_DRAIN_WAIT = 8.0  # seconds `alaya serve stop` lets the distill queue empty (serve.py waits 10 for the exit)
_INSTANCE_WAIT = 1.0  # seconds: a client looking at the instance lock holds it for an instant
# changed by any install of another version (it holds __version__) or a reinstall
_PACKAGE_INIT = Path(__file__).resolve().parent.parent / "__init__.py"



class Server:
    def __init__(self, root: Path, idle_exit_minutes: float | None) -> None:
        self.root = root
        if idle_exit_minutes is None:
            from ..config import Config

            idle_exit_minutes = Config.load(root / "config.json").serve.idle_exit_minutes
        self.idle = idle_exit_minutes * 60.0
        self.started = time.time()
        self.requests = 0
        self._memory: Any = None
        self._memory_key: Any = None
        self._sock: socket.socket | None = None
        self._stop = False
        self._restart = False
        self._drain = False  # asked to stop: let the distill queue empty first
        self._lock_timeout: float | None = None
        self._last = time.monotonic()  # when the last request came (idle exit)
        self._running = Turns()  # one command (or snapshot refresh, or session distilled) at a time
        self._queue: DistillQueue | None = None  # captures' background distilling (issue 33)
        self._code = _stamp(_PACKAGE_INIT)  # the installed code this process runs

    # -- the resident Alaya ---------------------------------------------------------------

    def _key(self) -> tuple:
        """What invalidates the resident `Alaya`: config, index metadata, the table set."""
        out = []
        for path in (self.root / "config.json", self.root / "lancedb" / "index.json", self.root / "lancedb"):
            try:
                st = path.stat()
                out.append((st.st_mtime_ns, st.st_ino))
            except OSError:
                out.append(None)
        return tuple(out)

    def memory_for(self, data_dir: Any) -> Any:
        from ..engine import Alaya
        from ..store.datadir import DataDir, resolve_data_dir

        if resolve_data_dir(data_dir) != self.root:
            return Alaya(data_dir)  # not ours (cannot happen through the client): no caching
        DataDir(self.root).require_private()  # the directory may have been opened since the last request
        key = self._key()
        if self._memory is None or key != self._memory_key:
            fresh = Alaya(self.root)
            timeout = fresh.config.lock.timeout_seconds
            if self._lock_timeout is not None and timeout != self._lock_timeout:
                # filelock keeps one lock object per path and process, with its timeout fixed:
                # a new timeout needs a new process
                self._restart = self._stop = True
                raise _Restart()
            self._lock_timeout = timeout
            fresh.graph_views.resident = True
            self._memory, self._memory_key = fresh, key
        return self._memory

    def warm_up(self) -> None:
        """Bring the store up to date (reads write nothing, so the daemon does it before its
        first read: a stale schema, an old full-text index, a dead writer's missing index
        rows), import what requests need and open the index, under the read lock."""
        from ..bridge import inject  # noqa: F401
        from ..recall import navigate  # noqa: F401

        memory = self.memory_for(self.root)
        memory.hooks  # the plugin manager is built now (entry points, $ALAYA_PLUGINS), not on a request
        if memory.dirs.graph.exists():
            try:
                memory.upgrade()
            except OSError:
                pass  # a read-only data directory: read it as it is, where it can be
            with memory.viewing("serve warm-up"):  # reads the graph snapshot
                index = memory.index
                index.resident = True
                index.card_count()
                index.relation_vectors()
                index.vector_search(memory.embedder.embed(["warm up"])[0], 1)  # loads the vector copy

    # -- socket loop ----------------------------------------------------------------------

    def serve_forever(self) -> None:
        from filelock import FileLock, Timeout

        instance = FileLock(str(self.root / "state" / INSTANCE_LOCK), timeout=_INSTANCE_WAIT)
        try:
            instance.acquire()
        except Timeout:
            raise AlayaError(f"{self.root}: another alaya serve is already running") from None
        try:
            self._serve_locked()
        finally:
            instance.release()
        if self._restart:
            print("alaya serve: configuration changed, restarting", file=sys.stderr, flush=True)
            os.execv(sys.executable, daemon_argv(self.root, self.idle / 60))

    def _serve_locked(self) -> None:
        """The daemon's life, under the single-instance lock: a socket already on the path is
        a dead daemon's, removed only if it is a socket."""
        path = socket_path(self.root)
        remove_socket(path)
        self.warm_up()
        common.set_provider(self.memory_for)
        self._queue = DistillQueue(lambda: self.memory_for(self.root), self._running, self._running.waited_for)
        distill_later(self._queue.add)
        self._queue.start()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        where, fd = address(path)
        old = os.umask(0o177)
        try:
            sock.bind(where)
        finally:
            os.umask(old)
            if fd is not None:
                os.close(fd)
        os.chmod(path, 0o600)
        inode = path.stat().st_ino
        sock.listen(64)
        self._sock = sock
        from ..store.fsutil import atomic_write

        atomic_write(self.root / "state" / PID_FILE, json.dumps({"pid": os.getpid(), "started": self.started}))
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._on_signal)
        print(f"alaya serve: pid {os.getpid()} listening on {path}", file=sys.stderr, flush=True)
        self._last = time.monotonic()
        try:
            while not self._stop:
                sock.settimeout(_TICK)
                try:
                    conn, _ = sock.accept()
                except socket.timeout:
                    if self.idle > 0 and time.monotonic() - self._last >= self.idle:
                        print("alaya serve: idle, exiting", file=sys.stderr, flush=True)
                        break
                    self.refresh_snapshot()
                    continue
                except InterruptedError:
                    continue
                self._last = time.monotonic()
                threading.Thread(target=self._connection, args=(conn,), daemon=True).start()
        finally:
            sock.close()
            if self._queue is not None:
                if self._drain:  # `serve stop`: the sessions captured get distilled first
                    self._queue.drain(_DRAIN_WAIT)
                self._queue.stop(1.0)  # what is left stays pending for the next daemon
                distill_later(None)
            common.set_provider(None)
            with contextlib.suppress(OSError):
                if path.stat().st_ino == inode:  # still ours, not a newer daemon's
                    path.unlink()
            (self.root / "state" / PID_FILE).unlink(missing_ok=True)
            with self._running:  # let a command under way finish before the process goes
                pass

    def _connection(self, conn: socket.socket) -> None:
        """One client, in its own thread."""
        with conn:
            self._handle(conn)
        self.refresh_snapshot()
        self._last = time.monotonic()

    def refresh_snapshot(self) -> None:
        """After each request and each idle second: re-read the graph snapshot once another
        process changed the graph (a capture at a session's end), so that the next
        session-start does not wait for it (about 1 s at 100k cards). A lock that cannot be had
        at once is tried again next time."""
        if not self._running.acquire(blocking=False):
            return  # a command is running; it or the next tick reads the snapshot
        try:
            memory = self.memory_for(self.root)
            views = memory.graph_views
            if views.stale():
                with memory.viewing("serve (graph snapshot)", timeout=0):
                    pass
        except (_Restart, AlayaError, OSError):
            pass  # a restart is already decided; anything else: the next request reads the graph itself
        finally:
            self._running.release()

    def _snapshot_state(self) -> str:
        """"current", "stale" (the graph changed; re-read between requests) or "none"."""
        views = self._memory.graph_views if self._memory is not None else None
        if views is None or views.empty():
            return "none"
        return "stale" if views.stale() else "current"

    def _on_signal(self, signum: int, frame: Any) -> None:
        self._stop = True
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.shutdown(socket.SHUT_RDWR)
        raise SystemExit(0)

    def _handle(self, conn: socket.socket) -> None:
        try:
            if peer_uid(conn) != os.getuid():
                return _send(conn, {"ok": False, "error": "refused: another user"})
            conn.settimeout(_READ_TIMEOUT)
            message = json.loads(_read_all(conn))
            if not isinstance(message, dict) or message.get("v") != PROTOCOL:
                return _send(conn, {"ok": False, "error": "unsupported protocol version"})
            op = message.get("op")
            if op == "status":
                return _send(conn, {"ok": True, "pid": os.getpid(), "uptime_s": time.time() - self.started,
                                    "requests": self.requests, "idle_exit_minutes": self.idle / 60,
                                    "data_dir": str(self.root),
                                    "graph_snapshot": self._snapshot_state(),
                                    "distill_queue": self._queue.waiting() if self._queue else 0})
            if op == "stop":
                self._stop = self._drain = True
                return _send(conn, {"ok": True, "pid": os.getpid()})
            if op == "run":
                stale = self._stale(message.get("version"))
                if stale:
                    self._stop = True  # code from before an upgrade: make way for a fresh daemon
                    return _send(conn, {"ok": False, "stale": True, "error": f"{stale}: exiting"})
                if (quick := _nothing_to_store(message)) is not None:
                    return _send(conn, quick)
                return _send(conn, self._in_turn(message))
            return _send(conn, {"ok": False, "error": f"unknown op {op!r}"})
        except (OSError, ValueError) as exc:
            with contextlib.suppress(OSError):
                _send(conn, {"ok": False, "error": f"bad request: {exc}"})

    def _in_turn(self, message: dict) -> dict:
        """Run one command when its turn comes (a capture's first: its caller waits on it);
        while it waits, the distill queue waits too."""
        argv = message.get("argv") or []
        self._running.acquire(urgent=argv[2:4] == ["hook", "session-end"])
        try:
            self.requests += 1
            return self._run(message)
        finally:
            self._running.release()

    def _stale(self, asked: object) -> str | None:
        """Why this daemon must not answer: a client of another version, or its package
        replaced on disk since it started (an upgrade the plugin, which sends no version, could
        not see); None when current. One stat per request."""
        if asked is not None and asked != __version__:
            return f"daemon runs version {__version__}, client {asked}"
        if _stamp(_PACKAGE_INIT) != self._code:
            return f"daemon's code changed on disk since it started ({_PACKAGE_INIT})"
        return None

    def _run(self, message: dict) -> dict:
        argv = message.get("argv")
        if not (isinstance(argv, list) and all(isinstance(a, str) for a in argv)):
            return {"ok": False, "error": "argv must be a list of strings"}
        if len(argv) < 3 or argv[0] != "--data-dir" or Path(argv[1]) != self.root:
            return {"ok": False, "error": "not this daemon's data directory"}
        if not any(tuple(argv[2:2 + len(cmd)]) == cmd for cmd in _ALLOWED):
            return {"ok": False, "error": "command not served"}
        stdin = base64.b64decode(message["stdin"]) if message.get("stdin") else b""
        try:
            self.memory_for(self.root)
        except _Restart:
            return {"ok": False, "error": "configuration changed: restarting"}  # the client runs it in process
        except AlayaError:
            pass  # the command reports it, as it would in process
        exit_code, out, err = self._call(argv, stdin, bool(message.get("tty")))
        writes = any(tuple(argv[2:2 + len(cmd)]) == cmd for cmd in _WRITES)
        if exit_code == 1 and b"internal error" in err and not writes:
            self._memory = None  # a stale handle (a table rebuilt under us?): retry once, fresh
            exit_code, out, err = self._call(argv, stdin, bool(message.get("tty")))
        return {"ok": True, "exit": exit_code, "stdout": base64.b64encode(out).decode("ascii"),
                "stderr": base64.b64encode(err).decode("ascii")}

    def _call(self, argv: list[str], stdin: bytes, tty: bool) -> tuple[int, bytes, bytes]:
        """`main.main(argv)` with this request's stdin, stdout and stderr."""
        out, err = _Capture(), _Capture()
        saved = sys.stdin, sys.stdout, sys.stderr
        sys.stdin = _Input(stdin, tty)
        sys.stdout, sys.stderr = out, err
        try:
            code = run_command(argv)
        except SystemExit as exc:  # argparse usage errors
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
        finally:
            sys.stdin, sys.stdout, sys.stderr = saved
        return code, out.value(), err.value()


class _Restart(Exception):
    pass


class Turns:
    """The daemon's one-at-a-time lock, with captures first in line (issue 33: a capture's
    answer is what a Gateway shutting down waits for) and a count of who waits for it (the
    distill queue lets them all go first)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._held = False
        self._waiting = 0
        self._urgent = 0

    def acquire(self, blocking: bool = True, *, urgent: bool = False) -> bool:
        with self._cond:
            if not blocking:
                if self._held or self._waiting:
                    return False
                self._held = True
                return True
            self._waiting += 1
            self._urgent += urgent
            try:
                self._cond.wait_for(lambda: not self._held and (urgent or not self._urgent))
                self._held = True
                return True
            finally:
                self._waiting -= 1
                self._urgent -= urgent

    def release(self) -> None:
        with self._cond:
            self._held = False
            self._cond.notify_all()

    def waited_for(self) -> bool:
        return self._waiting > 0

    def __enter__(self) -> "Turns":
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _nothing_to_store(message: dict) -> dict | None:
    """The answer to a `hook session-end` that carries no messages (OpenClaw's session_end,
    at every Gateway shutdown for every open session): nothing to make durable, so it is
    acknowledged at once, without a turn; its session's turns were handed over (and queued)
    by the captures before it. None for anything else."""
    argv = message.get("argv") or []
    if argv[2:4] != ["hook", "session-end"] or len(argv) != 4:
        return None
    try:
        event = json.loads(base64.b64decode(message.get("stdin") or b""))
    except ValueError:
        return None
    if not isinstance(event, dict) or event.get("messages") not in (None, []):
        return None
    from ..bridge.capture import agent_of, session_of

    reason = event.get("reason") if isinstance(event.get("reason"), str) and event.get("reason") else "unknown"
    report = {"session_id": session_of(event), "agent_id": agent_of(event), "reason": reason, "new_turns": 0}
    return {"ok": True, "exit": 0, "stdout": base64.b64encode((json.dumps(report) + "\n").encode()).decode("ascii"),
            "stderr": ""}


class _Capture(io.TextIOWrapper):
    def __init__(self) -> None:
        super().__init__(io.BytesIO(), encoding="utf-8", errors="surrogateescape", write_through=True)

    def value(self) -> bytes:
        self.flush()
        return self.buffer.getvalue()


class _Input(io.TextIOWrapper):
    def __init__(self, data: bytes, tty: bool) -> None:
        super().__init__(io.BytesIO(data), encoding="utf-8")
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns


def _read_all(conn: socket.socket) -> bytes:
    chunks, size = [], 0
    while True:
        chunk = conn.recv(1 << 16)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > _MAX_REQUEST_BYTES:
            raise ValueError("request too large")
        chunks.append(chunk)
        if chunk.endswith(b"\n"):
            return b"".join(chunks)


def _send(conn: socket.socket, reply: dict) -> None:
    conn.sendall(json.dumps({**reply, "version": __version__}).encode("utf-8"))


_M_ARENA_MAX = -8  # mallopt parameter (malloc.h)


def limit_malloc_arenas(arenas: int = 2) -> None:
    """Call before starting threads: glibc gives each new thread a malloc arena of its own, and
    what a request thread allocated (a graph snapshot, LanceDB batches) stays resident in it
    (the threaded daemon's peak RSS went from ~300 to ~470 MiB). Not glibc: nothing to do.
    The daemon's own (its threads, whatever backend they read), so it lives here."""
    try:
        ctypes.CDLL("libc.so.6").mallopt(_M_ARENA_MAX, arenas)
    except (OSError, AttributeError):
        pass


def _main() -> int:
    parser = argparse.ArgumentParser(prog="alaya serve run")
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--idle-exit", type=float, help="minutes (default: serve.idle_exit_minutes)")
    args = parser.parse_args()
    os.umask(0o077)
    limit_malloc_arenas()  # before the libraries and the request threads start theirs
    try:
        Server(Path(args.data_dir), args.idle_exit).serve_forever()
    except AlayaError as exc:
        print(f"alaya: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(_main())
