"""The daemon's socket and protocol, shared by its client (client.py), its commands (serve.py)
and the daemon itself (daemon.py): one JSON request line in, one JSON reply out, over
`<data dir>/serve.sock`; and how a daemon is started in the background and waited for
(`serve start`, and the client's autostart). Stdlib only: a hook call must not pay for
pydantic, Kuzu or LanceDB.

Every request carries the client's package version and every reply the daemon's: a daemon
left running by an older (or newer) install answers a request of another version that it is
stale and exits, so that code from before an upgrade never answers for long.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import stat
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .. import __version__
from ..errors import AlayaError

SOCKET_NAME = "serve.sock"
PID_FILE = "serve.pid"  # in state/
LOG_FILE = "serve.log"  # in state/
INSTANCE_LOCK = "serve.lock"  # in state/: held by the one daemon of a data directory
START_LOCK = "serve-start.lock"  # in state/: held by the one client starting a daemon (autostart)
PROTOCOL = 1
CONNECT_TIMEOUT = float(os.environ.get("ALAYA_SERVE_CONNECT_TIMEOUT") or 0.25)  # seconds
REPLY_TIMEOUT = float(os.environ.get("ALAYA_SERVE_TIMEOUT") or 120.0)  # seconds for the whole answer
# seconds an autostarting client waits for the daemon to answer before it runs the call itself
START_WAIT = float(os.environ.get("ALAYA_SERVE_START_WAIT") or 30.0)
_POLL = 0.05  # seconds between looks at a starting daemon
# what a status answer must hold to come from a daemon (serve status prints these)
_STATUS_FIELDS = {"pid": int, "uptime_s": (int, float), "requests": int, "idle_exit_minutes": (int, float)}


def resolve_data_dir(explicit: str | None) -> Path:
    """As `store.datadir.resolve_data_dir` (`--data-dir`, then `$ALAYA_HOME`, then `~/.alaya`),
    without its imports: the client of a warm hook call would pay about 20 ms for them."""
    chosen = explicit if explicit is not None else os.environ.get("ALAYA_HOME") or "~/.alaya"
    return Path(chosen).expanduser().resolve()


def socket_path(data_dir: Path) -> Path:
    return Path(data_dir) / SOCKET_NAME


def remove_socket(path: Path) -> None:
    """Remove what a dead daemon left at `path`; anything there that is not a socket is
    someone's file, and stays."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(mode):
        raise AlayaError(f"{path} is in the daemon's way and is not a socket; move it elsewhere")
    path.unlink(missing_ok=True)


def address(path: Path) -> tuple[str, int | None]:
    """A connectable address for `path`. AF_UNIX paths are limited to 107 bytes; a longer one
    is reached through /proc/self/fd/<dir fd>/<name> (the fd is the caller's to close)."""
    text = str(path)
    if len(text.encode()) < 100:
        return text, None
    fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    return f"/proc/self/fd/{fd}/{path.name}", fd


def peer_uid(sock: socket.socket) -> int:
    """The uid of the process at the other end of a connected unix socket (SO_PEERCRED: for a
    client, the uid the listener had when it called listen())."""
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]


def request(data_dir: Path, message: dict, *, connect_timeout: float | None = None,
            timeout: float | None = None, owner: int | None = None) -> dict | None:
    """Send one request to the daemon serving `data_dir`; its reply, or None when no daemon
    answers (no socket, stale socket, refused, timed out, or a reply that does not parse) or
    when the listener is not running as `owner` (default: this process's uid): another user's
    program on the socket path never sees the request nor gets its answer trusted."""
    path = socket_path(data_dir)
    if not os.path.exists(path):
        return None
    fd = None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        where, fd = address(path)
        sock.settimeout(CONNECT_TIMEOUT if connect_timeout is None else connect_timeout)
        sock.connect(where)
        if peer_uid(sock) != (os.getuid() if owner is None else owner):
            return None
        sock.settimeout(REPLY_TIMEOUT if timeout is None else timeout)
        sock.sendall(json.dumps({"v": PROTOCOL, "version": __version__, **message}).encode("utf-8") + b"\n")
        sock.shutdown(socket.SHUT_WR)
        chunks = []
        while True:
            chunk = sock.recv(1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
        reply = json.loads(b"".join(chunks) or b"null")
        return reply if isinstance(reply, dict) else None
    except (OSError, ValueError):
        return None
    finally:
        sock.close()
        if fd is not None:
            os.close(fd)


def ping(root: Path, timeout: float = 1.0) -> dict[str, Any] | None:
    """The daemon's status answer, or None when no daemon answers with one."""
    reply = request(root, {"op": "status"}, timeout=timeout)
    if not reply or reply.get("ok") is not True:
        return None
    if not all(isinstance(reply.get(k), kind) for k, kind in _STATUS_FIELDS.items()):
        return None
    return reply


def current(status: dict[str, Any] | None) -> bool:
    """Whether a status answer comes from a daemon running this very version of the package."""
    return status is not None and status.get("version") == __version__


def daemon_argv(root: Path, idle_minutes: float | None) -> list[str]:
    """The daemon's command line (`serve start`, `serve run`, autostart, its own restart);
    without `idle_minutes` it reads serve.idle_exit_minutes itself."""
    idle = [] if idle_minutes is None else ["--idle-exit", str(idle_minutes)]
    return [sys.executable, "-m", "openclaw_alaya.cli.daemon", "--data-dir", str(root), *idle]


def spawn(root: Path, idle_minutes: float | None) -> subprocess.Popen:
    """Start a daemon in the background, in its own session (a hook's process group may be
    killed when the hook times out), its output appended to `state/serve.log`."""
    with open(root / "state" / LOG_FILE, "ab") as log:
        return subprocess.Popen(daemon_argv(root, idle_minutes), stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                start_new_session=True, close_fds=True)


def instance_held(root: Path) -> bool:
    """Whether a daemon of `root` is alive (answering, or still warming up): it holds
    `state/serve.lock` (a flock, as filelock takes it) for its whole life. The look takes the
    lock for an instant; a daemon starting in that instant waits a little for it (daemon.py)."""
    try:
        fd = os.open(root / "state" / INSTANCE_LOCK, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
    return False


def ensure_daemon(root: Path, wait: float = START_WAIT) -> bool:
    """Whether a daemon of this version answers for `root`, starting one when none is alive
    (autostart). One client at a time starts one (`state/serve-start.lock`); the others wait
    for it to answer, and one that waited never starts another: when that start failed, they
    run in process. A daemon that is still warming up is waited for, not raced; a start that
    dies (its reason is in the serve log) or does not answer within `wait` seconds: False."""
    deadline = time.monotonic() + wait
    try:
        guard = os.open(root / "state" / START_LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        return False  # not an initialised data directory, or not ours to write
    try:
        waited = False
        while True:
            if current(ping(root)):
                return True
            if time.monotonic() >= deadline:
                return False
            try:
                fcntl.flock(guard, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                waited = True
                time.sleep(_POLL)
                continue
            try:
                return current(ping(root)) if waited else _start(root, deadline)
            finally:
                fcntl.flock(guard, fcntl.LOCK_UN)
    finally:
        os.close(guard)


def _start(root: Path, deadline: float) -> bool:
    """Start a daemon unless one is alive, then wait until one of this version answers. A
    daemon of another version still answering is on its way out (it was told it is stale)."""
    proc: subprocess.Popen | None = None
    while time.monotonic() < deadline:
        running = ping(root)
        if current(running):
            return True
        if running is None and not instance_held(root):
            if proc is None:
                proc = spawn(root, None)
            elif proc.poll() is not None:
                return False  # ours died and no other daemon is alive
        time.sleep(_POLL)
    return False
