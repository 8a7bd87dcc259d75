"""Work folders beside the stores (docs/architecture.md, "Data layout"): what rebuild, reembed
and introspect's shadow copy build outside the lock, in `<data dir>/.<kind>-<pid>-<ns>/`.

The data directory's own filesystem, so putting the result in place is a rename; a folder of
the builder's own, so Kuzu's and LanceDB's sidecar files are never taken for the store's. A
process that dies leaves its folder behind: the next builder of the same kind removes the
folders of processes that are gone (`sweep`), and backups leave them out (`is_aside`).
"""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

from ..fsutil import DIR_MODE

_NAME = re.compile(r"^\.[a-z][a-z-]*?-(\d+)-\d+$")


def make(root: Path, kind: str) -> Path:
    """A new, empty work folder of this process (`kind`: "rebuild", "reembed", …)."""
    folder = root / f".{kind}-{os.getpid()}-{time.time_ns()}"
    folder.mkdir(mode=DIR_MODE)
    return folder


def is_aside(name: str) -> bool:
    """A work folder's name (a backup leaves them out: they are half-built or being thrown away)."""
    return _NAME.match(name) is not None


def sweep(root: Path, kind: str) -> list[Path]:
    """Remove the `kind` folders of processes that are gone (killed mid-build); returns them."""
    gone = [p for p in root.glob(f".{kind}-*") if is_aside(p.name) and not _alive(_owner(p))]
    for folder in gone:
        shutil.rmtree(folder, ignore_errors=True)
    return gone


def _owner(folder: Path) -> int:
    """The pid in `.<kind>-<pid>-<ns>`; 0 (nobody) for a name not of that shape."""
    match = _NAME.match(folder.name)
    return int(match.group(1)) if match else 0


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
