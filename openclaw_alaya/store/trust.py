"""Whether a data directory can be trusted: this user's, and no one else can reach or change it.

Another local user who can write into the data directory can replace `config.json`, listen on
`serve.sock` in the daemon's place, or rewrite a raw session file so that, after a rebuild,
her text is injected as the owner's. One who can enter it can read the memory. So, in three
depths, each as cheap as what is read at that point allows:

- every command (`require_private`, a few dozen stats): the data directory itself is the
  user's and closed to everyone else (mode 0700: then nobody else reaches anything inside,
  whatever the modes in there); its entries, and those of `state/`, `journal/`, `tokens/`,
  `raw/` and `lancedb/` (the small files every command reads as trusted: caches, journal,
  tokens, the L3 logs, the index's metadata), are the user's and writable by no one else.
- every file read as trusted on its way in (`read_trusted`: raw sessions, card contexts, the
  L3 logs), checked on the open file, one `fstat`: a file left writable by others while the
  directory was open, or given by another user, is refused when it would be read.
- `alaya rebuild` and `alaya verify`, which read everything anyway, walk the whole tree
  (`tree_problems`). Symbolic links are not followed here (store/raw.py decides about those).

Every refusal is one line that says what to chmod. `alaya init` makes the directory
owner-only (`make_private`). Stdlib only: the daemon's client (cli/client.py) imports this
through cli/wire.py.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..errors import AlayaError

_OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH
_OTHERS_ANY = 0o077
# folders whose entries every command reads or relies on (caches, journal, tokens, the L3 logs
# and index, the index's metadata); what lies deeper is walked by rebuild and verify
_SMALL_FOLDERS = ("state", "journal", "tokens", "raw", "lancedb")


class UntrustedDataDirError(AlayaError):
    """The data directory or one of its files is owned or writable by another user."""


def problem(path: Path, st: os.stat_result | None = None, *, closed: bool = False) -> str | None:
    """Why `path` is not safe to use (another owner, writable by group or others; with `closed`,
    open to them at all), or None (also when it does not exist yet). One `stat`, none given `st`."""
    if st is None:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return None
    mode = stat.S_IMODE(st.st_mode)
    if st.st_uid != os.getuid():
        return f"{path} belongs to uid {st.st_uid}, not to you (uid {os.getuid()})"
    fix = f"chmod 700 {path}" if closed else f"chmod go-w {path}"
    if mode & _OTHERS_WRITE:
        return f"{path} is writable by other users (mode {mode:o}); run `{fix}`"
    if closed and mode & _OTHERS_ANY:
        return f"{path} is open to other users (mode {mode:o}), who can read the memory in it; run `{fix}`"
    return None


def require_private(root: Path, paths: Iterable[Path] = ()) -> None:
    """Refuse a data directory another user could reach or change (the module docstring's first
    depth): `root` closed to others, its entries and those of the small folders, and `paths`."""
    reason = problem(root, closed=True) or next(_shallow_problems(root, paths), None)
    if reason:
        raise UntrustedDataDirError(f"{reason}: another user could change this memory store; refusing to use it")


def _shallow_problems(root: Path, paths: Iterable[Path]) -> Iterator[str]:
    for path in paths:
        if reason := problem(path):
            yield reason
    for folder in (root, *(root / name for name in _SMALL_FOLDERS)):
        for entry, st in _entries(folder):
            if reason := problem(Path(entry.path), st):
                yield reason


def _entries(folder: Path) -> Iterator[tuple[os.DirEntry[str], os.stat_result]]:
    """The entries of `folder` with their own stat (links are not followed, and not judged)."""
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                try:
                    st = entry.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue  # removed since the listing (a temp file renamed)
                if not stat.S_ISLNK(st.st_mode):
                    yield entry, st
    except (FileNotFoundError, NotADirectoryError):
        return


def read_trusted(path: Path, offset: int = 0) -> bytes:
    """The bytes of a file read as trusted, refused (UntrustedDataDirError) unless it is this
    user's and writable by no one else, checked on the open file: the second depth. A link is
    not followed (it could point anywhere another user chose). `offset`: from that byte on (an
    append-only log read on from where the last read stopped: maintenance/access.py)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError as error:
        if error.errno != errno.ELOOP:
            raise
        raise UntrustedDataDirError(f"{path} is a symbolic link: refusing to read memory through it") from None
    with os.fdopen(fd, "rb") as handle:
        reason = problem(path, os.fstat(handle.fileno()))
        if reason:
            raise UntrustedDataDirError(f"{reason}: another user could have written it; refusing to read it "
                                        "(check what it says, then fix its permissions)")
        handle.seek(offset)
        return handle.read()


def tree_problems(root: Path, under: Iterable[str] | None = None) -> list[str]:
    """Every directory and file below `root` (or below its folders `under`) that is not this
    user's or is writable by others: what rebuild and verify check (the third depth)."""
    found: list[str] = []
    tops = [root] if under is None else [root / name for name in under]
    for top in tops:
        if (reason := problem(top)) and top.exists():
            found.append(reason)
        for folder, dirs, files in os.walk(top):
            for name in (*dirs, *files):
                path = Path(folder) / name
                try:
                    st = os.lstat(path)
                except FileNotFoundError:
                    continue
                if not stat.S_ISLNK(st.st_mode) and (reason := problem(path, st)):
                    found.append(reason)
    return found


def require_tree_private(root: Path, under: Iterable[str] | None = None) -> None:
    """`tree_problems` as one refusal: the first problem, how many more, and the one command
    that fixes the modes of them all."""
    found = tree_problems(root, under)
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise UntrustedDataDirError(f"{found[0]}{more}: another user could have changed this memory; check it, "
                                    f"then run `chmod -R go-w {root}` (files of another user: remove them)")


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
