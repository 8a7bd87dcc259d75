"""`alaya serve`: a resident process that keeps the libraries and the embedder loaded, so that
`alaya hook session-start` and `alaya recall` answer in milliseconds instead of paying about
a second of imports per call (client.py is the other half).

- One daemon per data directory, listening on `<data dir>/serve.sock` (mode 0600, in the
  owner-only data directory; a peer with another uid is refused).
- It holds no lock and no Kuzu database between requests: each request runs the ordinary CLI
  code (`cli.main`) with the request's argv and stdin, which takes the shared lock, opens Kuzu
  read-only and closes it before releasing (DESIGN.md §2). Only `hook session-start` and
  `recall` are accepted. Requests are served one at a time.
- What it keeps: the imported modules, the `Alaya` object (config, embedder, LanceDB
  connection and table handles, cached relation vectors), rebuilt when config.json or the
  index metadata changes. It never runs `optimize()` or builds an index.
- It exits after `serve.idle_exit_minutes` without a request (0: never), on `alaya serve stop`,
  or on SIGTERM/SIGINT, and removes its socket. A socket left by a killed daemon is stale:
  clients fall back to in-process, and the next `serve start` replaces it.

Commands: `alaya serve start` (background, waits until it answers), `alaya serve run`
(foreground, for a service manager), `alaya serve stop`, `alaya serve status [--json]`.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import io
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .client import PROTOCOL, address, request, socket_path
from ..errors import AlayaError, InputError

PID_FILE = "serve.pid"
LOG_FILE = "serve.log"
_MAX_REQUEST_BYTES = 64 * 1024 * 1024
_READ_TIMEOUT = 30.0  # seconds for a client to send its request
_TICK = 1.0  # seconds between idle checks (exit, graph snapshot) while no request comes
_ALLOWED = (("hook", "session-start"), ("recall",))


# --- CLI --------------------------------------------------------------------------------------


def add_commands(sub: Any, command: Any) -> None:
    serve = command("serve", _usage, "resident daemon that answers session-start and recall fast", json_flag=False)
    serve_sub = serve.add_subparsers(title="actions", metavar="ACTION")
    start = serve_sub.add_parser("start", help="start the daemon in the background and wait until it answers")
    start.add_argument("--idle-exit", type=float, metavar="MINUTES",
                       help="exit after this long without a request (default: serve.idle_exit_minutes; 0: never)")
    start.set_defaults(handler=cmd_start)
    run = serve_sub.add_parser("run", help="run the daemon in the foreground (for a service manager)")
    run.add_argument("--idle-exit", type=float, metavar="MINUTES", help="as for start")
    run.set_defaults(handler=cmd_run)
    stop = serve_sub.add_parser("stop", help="stop the daemon serving this data directory")
    stop.set_defaults(handler=cmd_stop)
    status = serve_sub.add_parser("status", help="is a daemon serving this data directory?")
    status.add_argument("--json", action="store_true", help="print JSON for programs and agents")
    status.set_defaults(handler=cmd_status)


def _usage(args: argparse.Namespace) -> int:
    print("usage: alaya serve {start,run,stop,status}", file=sys.stderr)
    return 2


def _root(args: argparse.Namespace) -> Path:
    from ..store.datadir import DataDir, resolve_data_dir

    dirs = DataDir(resolve_data_dir(args.data_dir))
    dirs.require()
    return dirs.root


def _idle_minutes(root: Path, override: float | None) -> float:
    if override is not None:
        if override < 0:
            raise InputError("--idle-exit must be 0 or more minutes")
        return override
    from ..config import Config

    return Config.load(root / "config.json").serve.idle_exit_minutes


def ping(root: Path, timeout: float = 1.0) -> dict[str, Any] | None:
    reply = request(root, {"op": "status"}, timeout=timeout)
    return reply if reply and reply.get("ok") else None


def cmd_start(args: argparse.Namespace) -> int:
    root = _root(args)
    running = ping(root)
    if running:
        print(f"alaya serve: already running for {root} (pid {running['pid']})")
        return 0
    idle = _idle_minutes(root, args.idle_exit)
    log = open(root / "state" / LOG_FILE, "ab")  # noqa: SIM115 - handed to the child
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "openclaw_alaya.cli.daemon", "--data-dir", str(root), "--idle-exit", str(idle)],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True, close_fds=True,
        )
    finally:
        log.close()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AlayaError(f"alaya serve exited at start (code {proc.returncode}); see {root / 'state' / LOG_FILE}")
        running = ping(root)
        if running and running.get("pid") == proc.pid:
            print(f"alaya serve: started for {root} (pid {proc.pid}, socket {socket_path(root)})")
            return 0
        time.sleep(0.05)
    proc.terminate()
    raise AlayaError(f"alaya serve did not answer within 60s; see {root / 'state' / LOG_FILE}")


def cmd_run(args: argparse.Namespace) -> int:
    root = _root(args)
    Server(root, _idle_minutes(root, args.idle_exit)).serve_forever()
    return 0


def cmd_stop(args: argparse.Namespace) -> int:
    root = _root(args)
    running = ping(root)
    pid = running["pid"] if running else _pid_from_file(root)
    if running:
        request(root, {"op": "stop"}, timeout=5.0)
    elif pid is not None and _alive(pid):
        os.kill(pid, signal.SIGTERM)  # not answering: ask it to go the hard way
    else:
        _remove_stale(root)
        print(f"alaya serve: not running for {root}")
        return 0
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and pid is not None and _alive(pid):
        time.sleep(0.05)
    if pid is not None and _alive(pid):
        os.kill(pid, signal.SIGTERM)
    _remove_stale(root)
    print(f"alaya serve: stopped (pid {pid})")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    root = _root(args)
    running = ping(root)
    stale = not running and socket_path(root).exists()
    report = {"running": bool(running), "data_dir": str(root), "socket": str(socket_path(root)), "stale_socket": stale}
    if running:
        report.update({k: running[k] for k in ("pid", "uptime_s", "requests", "idle_exit_minutes", "version",
                                                "graph_snapshot") if k in running})
    if args.json:
        print(json.dumps(report, indent=2))
    elif running:
        print(f"alaya serve: running for {root} (pid {report['pid']}, up {report['uptime_s']:.0f}s, "
              f"{report['requests']} requests, idle exit {report['idle_exit_minutes']:g} min)")
    else:
        print(f"alaya serve: not running for {root}" + (" (stale socket left by a dead daemon)" if stale else ""))
    return 0


def _pid_from_file(root: Path) -> int | None:
    try:
        return int(json.loads((root / "state" / PID_FILE).read_text())["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie child of ours counts as gone
        done, _ = os.waitpid(pid, os.WNOHANG)
        return done == 0
    except ChildProcessError:
        return True


def _remove_stale(root: Path) -> None:
    """Remove a socket nobody answers on (a killed daemon's)."""
    path = socket_path(root)
    if path.exists() and not ping(root, timeout=0.5):
        path.unlink(missing_ok=True)
        (root / "state" / PID_FILE).unlink(missing_ok=True)


# --- the daemon --------------------------------------------------------------------------------


class Server:
    def __init__(self, root: Path, idle_exit_minutes: float) -> None:
        self.root = root
        self.idle = idle_exit_minutes * 60.0
        self.started = time.time()
        self.requests = 0
        self._memory: Any = None
        self._memory_key: Any = None
        self._sock: socket.socket | None = None
        self._stop = False
        self._restart = False
        self._lock_timeout: float | None = None

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
        from ..store.datadir import resolve_data_dir
        from ..engine import Alaya

        if resolve_data_dir(data_dir) != self.root:
            return Alaya(data_dir)  # not ours (cannot happen through the client): no caching
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
        """Import what requests need and open the index, under the read lock."""
        from . import main as cli
        from ..bridge import inject
        from ..recall import navigate as recall  # noqa: F401
        from ..plugins import get_plugin_manager

        get_plugin_manager()
        memory = self.memory_for(self.root)
        if memory.dirs.graph.exists():
            with memory.lock.read("serve warm-up"):
                index = memory.index
                index.resident = True
                index.card_count()
                index.relation_vectors()
                index.vector_search(memory.embedder.embed(["warm up"])[0], 1)  # loads the vector copy
                with memory.graph_views.view(lambda: memory.graph(write=False)):
                    pass  # reads the graph snapshot

    # -- socket loop ----------------------------------------------------------------------

    def serve_forever(self) -> None:
        from . import common as resident

        path = socket_path(self.root)
        if path.exists():
            if ping(self.root, timeout=0.5):
                raise AlayaError(f"{self.root}: another alaya serve is already running")
            path.unlink(missing_ok=True)  # stale: its daemon died
        self.warm_up()
        resident.set_provider(self.memory_for)
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
        last = time.monotonic()
        try:
            while not self._stop:
                sock.settimeout(_TICK)
                try:
                    conn, _ = sock.accept()
                except socket.timeout:
                    if self.idle > 0 and time.monotonic() - last >= self.idle:
                        print("alaya serve: idle, exiting", file=sys.stderr, flush=True)
                        break
                    self.refresh_snapshot()
                    continue
                except InterruptedError:
                    continue
                last = time.monotonic()
                with conn:
                    self._handle(conn)
                self.refresh_snapshot()
                last = time.monotonic()
        finally:
            resident.set_provider(None)
            sock.close()
            with contextlib.suppress(OSError):
                if path.stat().st_ino == inode:  # still ours, not a newer daemon's
                    path.unlink()
            (self.root / "state" / PID_FILE).unlink(missing_ok=True)
        if self._restart:
            print("alaya serve: configuration changed, restarting", file=sys.stderr, flush=True)
            os.execv(sys.executable, [sys.executable, "-m", "openclaw_alaya.cli.daemon", "--data-dir", str(self.root),
                                      "--idle-exit", str(self.idle / 60)])

    def refresh_snapshot(self) -> None:
        """After each request and each idle second: re-read the graph snapshot once another
        process changed the graph (a capture at a session's end), so that the next
        session-start does not wait for it (about 1 s at 100k cards). A lock that cannot be had
        at once is tried again next time."""
        try:
            memory = self.memory_for(self.root)
            views = memory.graph_views
            if views.stale():
                with memory.lock.read("serve (graph snapshot)", timeout=0):
                    with views.view(lambda: memory.graph(write=False)):
                        pass
        except (_Restart, AlayaError, OSError):
            pass  # a restart is already decided; anything else: the next request reads the graph itself

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
            creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            _pid, uid, _gid = struct.unpack("3i", creds)
            if uid != os.getuid():
                return _send(conn, {"ok": False, "error": "refused: another user"})
            conn.settimeout(_READ_TIMEOUT)
            message = json.loads(_read_all(conn))
            if not isinstance(message, dict) or message.get("v") != PROTOCOL:
                return _send(conn, {"ok": False, "error": "unsupported protocol version"})
            op = message.get("op")
            if op == "status":
                return _send(conn, {"ok": True, "pid": os.getpid(), "uptime_s": time.time() - self.started,
                                    "requests": self.requests, "idle_exit_minutes": self.idle / 60,
                                    "data_dir": str(self.root), "version": _version(),
                                    "graph_snapshot": self._snapshot_state()})
            if op == "stop":
                self._stop = True
                return _send(conn, {"ok": True, "pid": os.getpid()})
            if op == "run":
                self.requests += 1
                return _send(conn, self._run(message))
            return _send(conn, {"ok": False, "error": f"unknown op {op!r}"})
        except (OSError, ValueError) as exc:
            with contextlib.suppress(OSError):
                _send(conn, {"ok": False, "error": f"bad request: {exc}"})

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
        exit_code, out, err = self._call(argv, stdin, bool(message.get("tty")))
        if exit_code == 1 and b"internal error" in err:
            self._memory = None  # a stale handle (a table rebuilt under us?): retry once, fresh
            exit_code, out, err = self._call(argv, stdin, bool(message.get("tty")))
        return {"ok": True, "exit": exit_code, "stdout": base64.b64encode(out).decode("ascii"),
                "stderr": base64.b64encode(err).decode("ascii")}

    def _call(self, argv: list[str], stdin: bytes, tty: bool) -> tuple[int, bytes, bytes]:
        """`cli.main(argv)` with this request's stdin, stdout and stderr."""
        from .main import main

        out, err = _Capture(), _Capture()
        saved = sys.stdin, sys.stdout, sys.stderr
        sys.stdin = _Input(stdin, tty)
        sys.stdout, sys.stderr = out, err
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse usage errors
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
        finally:
            sys.stdin, sys.stdout, sys.stderr = saved
        return code, out.value(), err.value()


class _Restart(Exception):
    pass


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
    conn.sendall(json.dumps(reply).encode("utf-8"))


def _version() -> str:
    from .. import __version__

    return __version__


def _main() -> int:
    parser = argparse.ArgumentParser(prog="alaya serve run")
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--idle-exit", type=float, required=True)
    args = parser.parse_args()
    os.umask(0o077)
    try:
        Server(Path(args.data_dir), args.idle_exit).serve_forever()
    except AlayaError as exc:
        print(f"alaya: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(_main())
