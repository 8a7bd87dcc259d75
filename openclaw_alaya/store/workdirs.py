"""Work folders of one process (docs/architecture.md, "Data layout"): what rebuild, reembed and
introspect's shadow copy build outside the lock, in `<data dir>/.<kind>-<pid>-<ns>/`, and what
`alaya backup` copies and packs, in `<backup dest>/.backup-<pid>-<ns>/`.

A folder of the builder's own, so Kuzu's and LanceDB's sidecar files are never taken for the
store's, on the filesystem of where the result goes, so putting it in place is a rename. A
process that dies (kill -9, OOM) leaves its folder behind, and the folder holds a copy of the
store as it was: text forgotten since included. So such folders are removed by the next builder
of the same kind and, whatever their kind, by the next write-lock hold (`sweep`, through crash
recovery: ingest/recovery.py) — once `alaya forget` has returned, no dead process's copy of the
forgotten text is left. Backups leave work folders out (`is_workdir`).
"""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

from .fsutil import DIR_MODE

BACKUP = "backup"  # the kind of `alaya backup`'s work folders, in the backup destination
_NAME = re.compile(r"^\.([a-z][a-z-]*?)-(\d+)-\d+$")


def make(parent: Path, kind: str) -> Path:
    """A new, empty work folder of this process in `parent` (`kind`: "rebuild", "backup", …)."""
    folder = parent / f".{kind}-{os.getpid()}-{time.time_ns()}"
    folder.mkdir(mode=DIR_MODE)
    return folder


def is_workdir(name: str) -> bool:
    """A work folder's name (a backup leaves them out: they are half-built or being thrown away)."""
    return _NAME.match(name) is not None


def sweep(parent: Path, kind: str | None = None) -> list[Path]:
    """Remove the work folders in `parent` (of `kind`, or of every kind) whose processes are
    gone (killed mid-build); returns them. A live process's folder is left alone."""
    try:
        names = [p for p in parent.iterdir() if p.name.startswith(".")]
    except OSError:  # no such folder (no backup made yet), or not ours to list
        return []
    gone = []
    for path in names:
        match = _NAME.match(path.name)
        if match and (kind is None or match.group(1) == kind) and not _alive(int(match.group(2))):
            shutil.rmtree(path, ignore_errors=True)
            gone.append(path)
    return gone


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True
