"""The daemon's socket and protocol, shared by its client (client.py), its commands (serve.py)
and the daemon itself (daemon.py): one JSON request line in, one JSON reply out, over
`<data dir>/serve.sock`. Stdlib only: a hook call must not pay for pydantic, Kuzu or LanceDB.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path
from typing import Any

SOCKET_NAME = "serve.sock"
PID_FILE = "serve.pid"  # in state/
LOG_FILE = "serve.log"  # in state/
PROTOCOL = 1
CONNECT_TIMEOUT = float(os.environ.get("ALAYA_SERVE_CONNECT_TIMEOUT") or 0.25)  # seconds
REPLY_TIMEOUT = float(os.environ.get("ALAYA_SERVE_TIMEOUT") or 120.0)  # seconds for the whole answer


def resolve_data_dir(explicit: str | None) -> Path:
    """As `store.datadir.resolve_data_dir` (`--data-dir`, then `$ALAYA_HOME`, then `~/.alaya`),
    without its imports: the client of a warm hook call would pay about 20 ms for them."""
    chosen = explicit if explicit is not None else os.environ.get("ALAYA_HOME") or "~/.alaya"
    return Path(chosen).expanduser().resolve()


def socket_path(data_dir: Path) -> Path:
    return Path(data_dir) / SOCKET_NAME


def address(path: Path) -> tuple[str, int | None]:
    """A connectable address for `path`. AF_UNIX paths are limited to 107 bytes; a longer one
    is reached through /proc/self/fd/<dir fd>/<name> (the fd is the caller's to close)."""
    text = str(path)
    if len(text.encode()) < 100:
        return text, None
    fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    return f"/proc/self/fd/{fd}/{path.name}", fd


def request(data_dir: Path, message: dict, *, connect_timeout: float | None = None,
            timeout: float | None = None) -> dict | None:
    """Send one request to the daemon serving `data_dir`; its reply, or None when no daemon
    answers (no socket, stale socket, refused, timed out, or a reply that does not parse)."""
    path = socket_path(data_dir)
    if not os.path.exists(path):
        return None
    fd = None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        where, fd = address(path)
        sock.settimeout(CONNECT_TIMEOUT if connect_timeout is None else connect_timeout)
        sock.connect(where)
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
    reply = request(root, {"op": "status"}, timeout=timeout)
    return reply if reply and reply.get("ok") else None


def daemon_argv(root: Path, idle_minutes: float) -> list[str]:
    """The daemon's command line (`serve start`, `serve run`, its own restart)."""
    return [sys.executable, "-m", "openclaw_alaya.cli.daemon", "--data-dir", str(root), "--idle-exit", str(idle_minutes)]
