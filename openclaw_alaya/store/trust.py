"""Whether a data directory can be trusted: owned by this user and writable by nobody else.

Another local user who can write the data directory can replace `config.json` or listen on
`serve.sock` in the daemon's place (and so read prompts and forge the context injected into
them). `alaya init` makes the directory owner-only; every command refuses one that is not.
Stdlib only: the daemon's client (cli/client.py) imports this through cli/wire.py.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..errors import AlayaError

_OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH


class UntrustedDataDirError(AlayaError):
    """The data directory or one of its files is owned or writable by another user."""


def problem(path: Path) -> str | None:
    """Why `path` is not safe to use (another owner, writable by group or others), or None
    (also when it does not exist yet). One `stat`."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    if st.st_uid != os.getuid():
        return f"{path} belongs to uid {st.st_uid}, not to you (uid {os.getuid()})"
    if st.st_mode & _OTHERS_WRITE:
        return f"{path} is writable by other users (mode {stat.S_IMODE(st.st_mode):o}); run `chmod go-w {path}`"
    return None


def require_private(paths: list[Path]) -> None:
    """Refuse to use a data directory another user could change (see the module docstring)."""
    for path in paths:
        reason = problem(path)
        if reason:
            raise UntrustedDataDirError(f"{reason}: another user could change this memory store; refusing to use it")


def make_private(paths: list[Path], mode: int) -> None:
    """Take group and other permissions off those of `paths` this user owns (what `alaya init`
    does to a directory that existed before it); the others are left for `require_private`."""
    for path in paths:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            continue
        if st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) & ~mode:
            os.chmod(path, stat.S_IMODE(st.st_mode) & mode)
