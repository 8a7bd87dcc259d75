"""The daemon's socket and protocol, shared by its client (client.py), its commands (serve.py)
and the daemon itself (daemon.py): one JSON request line in, one JSON reply out, over
`<data dir>/serve.sock`. Stdlib only: a hook call must not pay for pydantic, Kuzu or LanceDB.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import struct
import sys
from pathlib import Path
from typing import Any

from ..errors import AlayaError

SOCKET_NAME = "serve.sock"
PID_FILE = "serve.pid"  # in state/
LOG_FILE = "serve.log"  # in state/
INSTANCE_LOCK = "serve.lock"  # in state/: held by the one daemon of a data directory
PROTOCOL = 1
CONNECT_TIMEOUT = float(os.environ.get("ALAYA_SERVE_CONNECT_TIMEOUT") or 0.25)  # seconds
REPLY_TIMEOUT = float(os.environ.get("ALAYA_SERVE_TIMEOUT") or 120.0)  # seconds for the whole answer
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
        sock.sendall(json.dumps({"v": PROTOCOL, **message}).encode("utf-8") + b"\n")
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


def daemon_argv(root: Path, idle_minutes: float) -> list[str]:
    """The daemon's command line (`serve start`, `serve run`, its own restart)."""
    return [sys.executable, "-m", "openclaw_alaya.cli.daemon", "--data-dir", str(root), "--idle-exit", str(idle_minutes)]
