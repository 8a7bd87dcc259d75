"""The `alaya` entry point, and the stdlib-only client of `alaya serve` (daemon.py).

`import lancedb` alone costs about a second, so a process that starts per hook call cannot be
fast. When a daemon is serving the data directory, `alaya hook session-start`, `alaya hook turn`, `alaya hook
session-end` (answered once the turns are stored, distilled after: issue 33), `alaya hook tool NAME`, `alaya recall`, `alaya trace` and `alaya get` are forwarded to it over its unix
socket (`<data dir>/serve.sock`) and this process never imports pydantic, Kuzu or LanceDB: it
parses just enough of the command line, sends `{argv, stdin, version}`, and copies back the
daemon's stdout, stderr and exit code. The daemon runs the same CLI code under the same lock
protocol, so the answer is identical.

Autostart: a hook call (session-start, turn, session-end, tool) that finds no daemon starts one in the background
and waits for it to answer (wire.ensure_daemon) rather than racing it with a cold run of its
own; it runs in process when that start fails or takes longer than `$ALAYA_SERVE_START_WAIT`
(30 s). Off with `serve.autostart: false` in config.json; never for a directory `alaya init`
has not made, and never for other commands (a user's `alaya recall` uses a daemon, but does
not leave one behind). A daemon of another package version (an upgrade since it started) is
stale: it says so and exits, or is told to stop, and the call goes on as if there were none.

Anything else, or no daemon (no socket, a stale one, a refused or broken connection, a
listener running as another user: `wire.request` checks its SO_PEERCRED uid), runs in process
as before (`cli.main`). `ALAYA_NO_SERVE=1` forces in-process, and so does `ALAYA_NOW` (a fixed
"now" for time phrases, common.fixed_now): the daemon's clock is its own.
"""

from __future__ import annotations

import base64
import gc
import io
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from .. import __version__
from .common import MAX_STDIN_BYTES, stdout_closed
from .generated import recall_options
from .wire import ensure_daemon, request, resolve_data_dir


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--version"]:  # without importing cli/main.py and building its parsers: 100 -> 60 ms (issue 35)
        print(f"alaya {__version__}")
        return 0
    plan = fast_path(args)
    if plan is not None and not (os.environ.get("ALAYA_NO_SERVE") or os.environ.get("ALAYA_NOW")):
        data_dir, forwarded, needs_stdin, hook = plan
        stdin, tty = _stdin_for(needs_stdin)
        reply = _served(data_dir, {"op": "run", "argv": forwarded, "stdin": stdin, "tty": tty},
                        autostart=hook)
        if reply is not None:
            try:
                _write(sys.stdout, reply.get("stdout"))
            except BrokenPipeError:
                return stdout_closed()
            _write(sys.stderr, reply.get("stderr"))
            return reply["exit"]
        if stdin is not None:  # already read: hand the same bytes to the in-process run
            sys.stdin = io.TextIOWrapper(io.BytesIO(base64.b64decode(stdin)), encoding="utf-8")
    if plan is not None:
        # A call the daemon would have served (recall, trace, get, a hook) runs once and exits.
        # Left on, the cyclic collector spends about 60 ms of it (some 140 collections) scanning
        # what the imports allocate and keep, to free under 1,000 objects; reference counting
        # still frees the rest. The daemon and every other command keep it.
        gc.disable()
    from .main import main as run_in_process

    return run_in_process(args)


def _served(data_dir: Path, message: dict, *, autostart: bool) -> dict | None:
    """The daemon's answer to `message`, from a daemon of this version (started first when
    `autostart`, config.json allows it and none is alive: config.json is read only then, not on
    every warm call); None: run the command in process."""
    reply = request(data_dir, message)
    if reply is not None and reply.get("version") != __version__:
        if not reply.get("stale"):  # a daemon from before version checks: it must be told
            request(data_dir, {"op": "stop"}, timeout=5.0)
        reply = None  # a stale daemon's answer (if it ran the command, it was a read) is not used
    if reply is None and autostart and autostart_on(data_dir) and ensure_daemon(data_dir):
        reply = request(data_dir, message)
    if reply is not None and reply.get("ok") and isinstance(reply.get("exit"), int) \
            and reply.get("version") == __version__:
        return reply
    return None


def autostart_on(data_dir: Path) -> bool:
    """`serve.autostart` of an initialised data directory (default on); read as plain JSON, as
    the client must not import the config models. An unreadable config is left to the
    in-process run to report."""
    try:
        config = json.loads((data_dir / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    serve = config.get("serve") if isinstance(config, dict) else None
    return not (isinstance(serve, dict) and serve.get("autostart") is False)


# --- which commands go to the daemon ---------------------------------------------------------


def fast_path(args: list[str]) -> tuple[Path, list[str], bool, bool] | None:
    """(data dir, argv for the daemon, whether stdin carries input, whether it is a hook call
    that may start a daemon) for the commands the daemon serves; None for anything else
    (help, version, other commands, odd options)."""
    explicit, rest = _data_dir_option(args)
    if not rest or rest[0].startswith("-"):
        return None  # --help, --version, or something the real parser should judge
    if any(a in ("-h", "--help") for a in rest):
        return None
    hook = rest[:2] in (["hook", "session-start"], ["hook", "turn"], ["hook", "session-end"]) or (rest[:2] == ["hook", "tool"] and len(rest) == 3)
    if hook:
        needs_stdin = True
    elif rest[:1] == ["recall"]:
        needs_stdin = not _recall_has_target(rest[1:])
    elif rest[:1] in (["trace"], ["get"]):
        needs_stdin = False
    else:
        return None
    data_dir = resolve_data_dir(explicit)
    return data_dir, ["--data-dir", str(data_dir), *rest], needs_stdin, hook


def _data_dir_option(args: list[str]) -> tuple[str | None, list[str]]:
    """(the `--data-dir` given, the other arguments): it may come before the command or after
    it (`alaya recall Q --data-dir X`); the last one wins, as in the parser, and the daemon's
    argv then carries it once, in front."""
    explicit: str | None = None
    kept: list[str] = []
    j = 0
    while j < len(args):
        if args[j] == "--data-dir" and j + 1 < len(args):
            explicit, j = args[j + 1], j + 2
        elif args[j].startswith("--data-dir="):
            explicit, j = args[j].split("=", 1)[1], j + 1
        else:
            kept.append(args[j])
            j += 1
    return explicit, kept


def _recall_has_target(rest: list[str]) -> bool:
    """A query or an option that names what to look for (--concepts, --from-nodes): recall
    then does not read stdin. Every recall option takes a value (recall-flags.json)."""
    flags = {o["flag"]: o["target"] for o in recall_options() if o["flag"]}
    j = 0
    while j < len(rest):
        arg = rest[j]
        name = arg.split("=", 1)[0]
        if flags.get(name):
            return True
        if name in flags:
            j += 1 if "=" in arg else 2
            continue
        if not arg.startswith("-") or arg == "-":
            return True
        j += 1
    return False


def _stdin_for(needs: bool) -> tuple[str | None, bool]:
    """(stdin as base64, stdin is a terminal)."""
    try:
        tty = sys.stdin is not None and sys.stdin.isatty()
    except (ValueError, OSError):
        tty = False
    if not needs or tty or sys.stdin is None:
        return None, tty
    data = sys.stdin.buffer.read(MAX_STDIN_BYTES + 1)
    return base64.b64encode(data).decode("ascii"), False


def _write(stream, payload: str | None) -> None:
    if payload:
        data = base64.b64decode(payload)
        stream.flush()
        stream.buffer.write(data)
        stream.buffer.flush()


if __name__ == "__main__":
    sys.exit(main())
