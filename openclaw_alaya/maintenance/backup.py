"""`alaya backup`: a consistent dated copy of the data directory (docs/architecture.md, "Data
layout" and "The lock protocol"), by default as one archive, `alaya-<UTC stamp>.tar.gz` (the
seed's contract), or with `format="dir"` as a folder `alaya-<UTC stamp>/`.

Copied under the shared lock (the scratch port's `copy_store`, store/ports/scratch.py), so no
write is half-applied in the copy while recalls go on, into a work folder of this process in
the destination, `.backup-<pid>-<ns>/` (store/workdirs.py); the archive is then packed from the
copy with the lock released (compression is the slow part), into the same folder, and renamed
out of it when complete, so a listed backup is always whole. A killed backup's folder (a plain
copy of the store) is removed by the next backup and by the next write-lock hold (crash
recovery), so it outlives no `alaya forget`. Locks, sockets, other backups and what rebuilds,
reembeds and introspect build aside are left out, and so is the owner's MCP token
(`tokens/owner`): a backup travels to other disks and hosts, and a copied token would open the
memory over HTTP to whoever holds the copy; a restored store makes a new one on first use (agent
tokens are kept: only their digests are stored). The archive holds one folder, `alaya-<stamp>/`, which is a data directory itself:
`tar -xzf alaya-<stamp>.tar.gz -C DIR`, then `alaya --data-dir DIR/alaya-<stamp> recall …` (or
move it to `~/.alaya`). Keeps the newest `backup.keep` backups, archives and folders counted
together.
"""

from __future__ import annotations

import os
import re
import shutil
import tarfile
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..store import workdirs
from ..store.fsutil import FILE_MODE, ensure_dir, fsync_dir
from ..store.tokens import TokenBook

if TYPE_CHECKING:
    from ..memory import Memory

PREFIX = "alaya-"
_NAME = re.compile(r"alaya-\d{8}T\d{6}Z(?:-\d+)?(?:\.tar\.gz)?")
ARCHIVE = ".tar.gz"
FORMATS = ("tar.gz", "dir")


def backup(memory: "Memory", dest: str | Path | None = None, keep: int | None = None, now: datetime | None = None,
           format: str = "tar.gz") -> dict[str, Any]:
    memory.dirs.require()
    if format not in FORMATS:
        raise InputError(f"unknown backup format {format!r}: use {' or '.join(FORMATS)}")
    root = memory.dirs.root
    target_dir = memory.config.backup.folder(root, dest)
    if target_dir == root or root.is_relative_to(target_dir):
        raise InputError(f"backup destination {target_dir} contains the data directory")
    keep = memory.config.backup.keep if keep is None else keep
    if keep < 1:
        raise InputError("--keep must be 1 or more")
    ensure_dir(target_dir)
    stamp = (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%SZ")
    name, n = PREFIX + stamp, 1
    workdirs.sweep(target_dir, workdirs.BACKUP)  # what killed backups left
    work = workdirs.make(target_dir, workdirs.BACKUP)
    while _taken(target_dir, name):
        n += 1
        name = f"{PREFIX}{stamp}-{n}"
    final = target_dir / (name + ARCHIVE if format == "tar.gz" else name)
    staging = work / name
    try:
        with memory.reading("backup"):
            memory.storage.scratch().copy_store(staging, leave_out=target_dir)
        TokenBook(staging).owner_file.unlink(missing_ok=True)
        if format == "tar.gz":
            _pack(staging, name, work / final.name)
        os.replace(work / final.name, final)
        fsync_dir(target_dir)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    removed = []
    copies = sorted((p for p in target_dir.iterdir() if _NAME.fullmatch(p.name) and (p.is_dir() or p.is_file())),
                    key=lambda p: p.name.removesuffix(ARCHIVE))
    for old in copies[:-keep]:
        if old.is_dir():
            shutil.rmtree(old, ignore_errors=True)
        else:
            old.unlink(missing_ok=True)
        removed.append(str(old))
    size = final.stat().st_size if final.is_file() else sum(p.stat().st_size for p in final.rglob("*") if p.is_file())
    return {"path": str(final), "bytes": size, "removed": removed, "kept": min(len(copies), keep), "format": format}


def _taken(target_dir: Path, name: str) -> bool:
    """A backup named `name` exists, or another backup running now is making it."""
    if (target_dir / name).exists() or (target_dir / (name + ARCHIVE)).exists():
        return True
    return any((p / name).exists() for p in target_dir.glob(f".{workdirs.BACKUP}-*"))


def _pack(folder: Path, name: str, archive_path: Path) -> None:
    """`folder` as `archive_path` (a .tar.gz holding it as `name/`), owner-only and synced."""
    fd = os.open(archive_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    with os.fdopen(fd, "wb") as handle:
        with tarfile.open(fileobj=handle, mode="w:gz", compresslevel=6) as archive:
            archive.add(folder, arcname=name)
        handle.flush()
        os.fsync(handle.fileno())
