"""What every command uses: the `Alaya` to run against, JSON output, and the cap on stdin.

The `Alaya` is a fresh one per command, or, inside `alaya serve`, one kept between requests
(imports, embedder and LanceDB handles stay warm; the lock and Kuzu are still taken and opened
per operation). Stdlib only at import: the daemon client imports this module too.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError

if TYPE_CHECKING:
    from datetime import datetime

    from ..engine import Alaya

MAX_STDIN_BYTES = 50 * 1024 * 1024

_provider: Callable[[Any], "Alaya"] | None = None  # set by the daemon (daemon.py)


DATA_DIR_HELP = "data directory (default: $ALAYA_HOME or ~/.alaya)"


@functools.cache
def global_options() -> argparse.ArgumentParser:
    """The options every command also takes after its name (`alaya status --data-dir X`), as an
    argparse parent; unset unless given there, so one given before the command still counts."""
    options = argparse.ArgumentParser(add_help=False)
    options.add_argument("--data-dir", default=argparse.SUPPRESS, help=DATA_DIR_HELP)
    return options


def memory(data_dir: str | Path | None) -> "Alaya":
    if _provider is not None:
        return _provider(data_dir)
    from ..engine import Alaya

    return Alaya(data_dir)


def set_provider(provider: Callable[[Any], "Alaya"] | None) -> None:
    global _provider
    _provider = provider


def fixed_now() -> "datetime | None":
    """`ALAYA_NOW` (an ISO date or time): the "now" that time phrases, `--since`/`--until` and
    `alaya summary` count from, fixed for tests and reproducible runs; None: the current time.
    A command run with it never goes to the daemon (client.py), whose clock is its own."""
    from .. import clock

    return clock.fixed()


def print_json(data: Any) -> None:
    print(json.dumps(data, ensure_ascii=False, indent=2))


def print_memory(data: Any, *, as_json: bool) -> None:
    """Memory as recall, get, list and trace print it: for a reader that may be a model, so
    through the output sanitiser (safety/output.py), JSON or text (`data` then a str)."""
    from ..safety.output import for_model, for_model_json

    if as_json:
        print_json(for_model_json(data))
    else:
        print(for_model(data))


def stdout_closed() -> int:
    """What a command does when its reader went away (`alaya recall | head -1`): exit quietly
    with 141 (128 + SIGPIPE), as Unix tools do. Stdout is pointed at /dev/null first, so the
    interpreter's last flush does not complain about the closed pipe either."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 141


def read_stdin(too_large: str) -> bytes:
    """All of stdin, refused with the message `too_large` past MAX_STDIN_BYTES."""
    data = sys.stdin.buffer.read(MAX_STDIN_BYTES + 1)
    if len(data) > MAX_STDIN_BYTES:
        raise InputError(too_large)
    return data
