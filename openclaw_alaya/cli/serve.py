"""`alaya serve start | run | stop | status`: the commands that manage the resident daemon
(daemon.py) of a data directory. They reach it only through its socket (wire.py) or by
starting its module, so the command-line code never imports the daemon.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from ..errors import AlayaError, InputError
from .common import global_options
from .wire import (
    INSTANCE_LOCK,
    LOG_FILE,
    PID_FILE,
    current,
    daemon_argv,
    instance_held,
    ping,
    remove_socket,
    request,
    socket_path,
    spawn,
)


def add_commands(sub: Any, command: Any) -> None:
    serve = command("serve", _usage, "resident daemon that answers the hooks, agent tools, recall, trace and get fast",
                    json_flag=False)
    serve_sub = serve.add_subparsers(title="actions", metavar="ACTION")
    start = serve_sub.add_parser("start", parents=[global_options()], help="start the daemon in the background and wait until it answers")
    start.add_argument("--idle-exit", type=float, metavar="MINUTES",
                       help="exit after this long without a request (default: serve.idle_exit_minutes; 0: never)")
    start.set_defaults(handler=cmd_start)
    run = serve_sub.add_parser("run", parents=[global_options()], help="run the daemon in the foreground (for a service manager)")
    run.add_argument("--idle-exit", type=float, metavar="MINUTES", help="as for start")
    run.set_defaults(handler=cmd_run)
    stop = serve_sub.add_parser("stop", parents=[global_options()], help="stop the daemon serving this data directory")
    stop.set_defaults(handler=cmd_stop)
    status = serve_sub.add_parser("status", parents=[global_options()], help="is a daemon serving this data directory?")
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


def cmd_start(args: argparse.Namespace) -> int:
    root = _root(args)
    running = ping(root)
    if running and not current(running):  # left by an install of another version: replace it
        request(root, {"op": "stop"}, timeout=5.0)
        deadline = time.monotonic() + 30
        while instance_held(root) and time.monotonic() < deadline:
            time.sleep(0.05)
        running = ping(root)
    if running:
        print(f"alaya serve: already running for {root} (pid {running['pid']})")
        return 0
    proc = spawn(root, _idle_minutes(root, args.idle_exit))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        exited = proc.poll() is not None
        if exited and not instance_held(root):
            raise AlayaError(f"alaya serve exited at start ({_last_line(root / 'state' / LOG_FILE)}); "
                             f"see {root / 'state' / LOG_FILE}")
        running = ping(root)
        if running and running["pid"] == proc.pid:
            print(f"alaya serve: started for {root} (pid {proc.pid}, socket {socket_path(root)})")
            return 0
        if running and exited:  # a start at the same time won: ours refused to be a second daemon
            print(f"alaya serve: already running for {root} (pid {running['pid']})")
            return 0
        time.sleep(0.05)
    proc.terminate()
    raise AlayaError(f"alaya serve did not answer within 60s; see {root / 'state' / LOG_FILE}")


def cmd_run(args: argparse.Namespace) -> int:
    """The daemon in this process's place, in the foreground (a service manager keeps its pid)."""
    root = _root(args)
    idle = _idle_minutes(root, args.idle_exit)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, daemon_argv(root, idle))


def cmd_stop(args: argparse.Namespace) -> int:
    root = _root(args)
    running = ping(root)
    pid = running["pid"] if running else _pid_from_file(root)
    if pid is not None and not _is_daemon_of(pid, root):
        pid = None  # a stale pid file: that number is some other process now
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
                                                "graph_snapshot", "distill_queue") if k in running})
    if args.json:
        print(json.dumps(report, indent=2))
    elif running:
        print(f"alaya serve: running for {root} (pid {report['pid']}, up {report['uptime_s']:.0f}s, "
              f"{report['requests']} requests, idle exit {report['idle_exit_minutes']:g} min"
              + (f", {report['distill_queue']} captured sessions to distil" if report.get("distill_queue") else "") + ")")
    else:
        print(f"alaya serve: not running for {root}" + (" (stale socket left by a dead daemon)" if stale else ""))
    return 0


def _last_line(log: Path) -> str:
    """The daemon's last word in its log (its one-line error), without the `alaya: error:`."""
    try:
        lines = log.read_text(errors="replace").strip().splitlines()
    except OSError:
        lines = []
    return lines[-1].removeprefix("alaya: error: ") if lines else "no message"


def _pid_from_file(root: Path) -> int | None:
    try:
        return int(json.loads((root / "state" / PID_FILE).read_text())["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _is_daemon_of(pid: int, root: Path) -> bool:
    """Whether process `pid` is the daemon of `root` (its command line, from /proc): the only
    process `serve stop` may signal."""
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return [a.decode(errors="replace") for a in args[1:5]] == daemon_argv(root, 0)[1:5]


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


def _instance_lock(root: Path) -> Any:
    """The lock a daemon holds for its whole life (daemon.py), to be tried without waiting."""
    from filelock import FileLock

    return FileLock(str(root / "state" / INSTANCE_LOCK), timeout=0)


def _remove_stale(root: Path) -> None:
    """Remove the socket and pid file of a dead daemon: one that no longer holds the instance
    lock. A file on the socket's path that is not a socket is someone's, and stays."""
    from filelock import Timeout

    try:
        with _instance_lock(root):
            with contextlib.suppress(AlayaError):
                remove_socket(socket_path(root))
            (root / "state" / PID_FILE).unlink(missing_ok=True)
    except Timeout:
        pass  # a daemon is alive (starting, or stopping): its files are its own
