"""Owner-only directories and atomic file writes: L3 is the truth, so it is never half-written.

Nothing inside a data directory is reached through a symbolic link (issue 30 class 14): a
linked `raw/` had writes land elsewhere and a rebuild derive from another folder; a linked
session file was forgotten by removing the link while its text stayed in the target. So
`refuse_links` refuses a path that passes through one, appends open with O_NOFOLLOW, and an
atomic write replaces (never follows) a link at its destination.
"""

from __future__ import annotations

import errno
import os
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

from ..errors import AlayaError

DIR_MODE = 0o700
FILE_MODE = 0o600


class LinkRefusedError(AlayaError):
    """A path inside the data directory is a symbolic link (or passes through one)."""


def linked_part(path: Path, root: Path) -> Path | None:
    """The first of `path` and the folders between `root` and it that is a symbolic link, or
    None; `root` itself may be one (a data directory kept on another disk). An lstat each."""
    current = root
    for part in path.relative_to(root).parts:
        current = current / part
        if current.is_symlink():
            return current
    return None


def refuse_links(paths: Iterable[Path], root: Path) -> None:
    """Raise LinkRefusedError, naming the link, when one of `paths` is or passes through one."""
    for path in paths:
        if (link := linked_part(path, root)) is not None:
            raise link_refused(link)


def link_refused(link: Path) -> LinkRefusedError:
    return LinkRefusedError(f"{link} is a symbolic link: alaya reads and writes nothing inside its data directory"
                            " through a link (put the real file or folder in its place, or remove the link)")


def ensure_dir(path: Path) -> Path:
    """Create `path` and any missing parents owner-only (mkdir's `mode` covers only the last
    level); existing directories are left as they are."""
    missing = []
    current = path
    while not current.exists():
        missing.append(current)
        current = current.parent
    for folder in reversed(missing):
        folder.mkdir(mode=DIR_MODE, exist_ok=True)
    return path


def atomic_write(path: Path, data: bytes | str) -> None:
    """Write via a temp file in the same directory, fsync, then rename over `path`."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    ensure_dir(path.parent)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, FILE_MODE)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def atomic_write_many(items: list[tuple[Path, bytes | str]]) -> None:
    """`atomic_write` for many files at once, with the same guarantee (each path ends up with
    its old bytes or its new bytes, never a mix) but a fraction of the cost: every temp file is
    written first, then made durable together (one `syncfs` on Linux for a big batch, else an
    fsync each, back to back), then renamed, and each directory fsynced once. A few hundred
    context files cost tens of milliseconds instead of 12 ms each (bench/ingest.py)."""
    staged: list[tuple[str, Path]] = []
    fds: list[int] = []
    try:
        for path, data in items:
            ensure_dir(path.parent)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
            staged.append((tmp, path))
            fds.append(fd)
            os.fchmod(fd, FILE_MODE)
            view = memoryview(data.encode("utf-8") if isinstance(data, str) else data)
            while view:
                view = view[os.write(fd, view):]
        if not (len(fds) >= _SYNCFS_MIN_FILES and _syncfs(fds[0])):
            for fd in fds:
                os.fsync(fd)
    except BaseException:
        for tmp, _ in staged:
            Path(tmp).unlink(missing_ok=True)
        raise
    finally:
        for fd in fds:
            try:
                os.close(fd)
            except OSError:
                pass
    for tmp, path in staged:
        os.replace(tmp, path)
    for folder in dict.fromkeys(path.parent for _, path in staged):
        fsync_dir(folder)


_SYNCFS_MIN_FILES = 8
_libc: object = None


def _syncfs(fd: int) -> bool:
    """Flush the whole filesystem holding `fd` (Linux syncfs(2)); False where unavailable."""
    global _libc
    if not sys.platform.startswith("linux"):
        return False
    try:
        if _libc is None:
            import ctypes

            _libc = ctypes.CDLL(None, use_errno=True)
        return _libc.syncfs(fd) == 0  # type: ignore[attr-defined]
    except (OSError, AttributeError):
        _libc = False
        return False


def append_line(path: Path, line: str) -> None:
    """Append one line with O_APPEND, which keeps concurrent small appends whole. After a line a
    crash cut short (no newline at the end) the new one starts on a line of its own: glued to
    the torn one, both would be dropped as one unreadable line."""
    ensure_dir(path.parent)
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, FILE_MODE)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise link_refused(path) from None
        raise
    try:
        size = os.fstat(fd).st_size
        torn = size > 0 and os.pread(fd, 1, size - 1) != b"\n"
        os.write(fd, (("\n" if torn else "") + line.rstrip("\n") + "\n").encode("utf-8"))
    finally:
        os.close(fd)


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
