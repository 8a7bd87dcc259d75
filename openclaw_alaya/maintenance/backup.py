"""`alaya backup`: a consistent dated copy of the data directory (docs/architecture.md, "Data
layout" and "The lock protocol").

Taken under the shared lock, so no write is half-applied in the copy while recalls go on;
written to a hidden temporary folder and renamed when complete. The work folders of rebuilds,
reembeds and introspect's copies (store/aside.py) are left out. The copy is a data directory
itself (`alaya --data-dir COPY recall …` works). Keeps the newest `backup.keep` copies.
"""

from __future__ import annotations

import re
import shutil
import stat
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..store import aside
from ..store.fsutil import ensure_dir

if TYPE_CHECKING:
    from ..memory import Memory

PREFIX = "alaya-"
_NAME = re.compile(r"alaya-\d{8}T\d{6}Z(?:-\d+)?")
_SKIP = {".lock", "lock-holder.json", "cron.lock", "serve.lock"}


def backup(memory: "Memory", dest: str | Path | None = None, keep: int | None = None, now: datetime | None = None) -> dict[str, Any]:
    memory.dirs.require()
    root = memory.dirs.root
    target_dir = Path(dest or memory.config.backup.dest or root / "backups").expanduser().resolve()
    if target_dir == root or root.is_relative_to(target_dir):
        raise InputError(f"backup destination {target_dir} contains the data directory")
    keep = memory.config.backup.keep if keep is None else keep
    if keep < 1:
        raise InputError("--keep must be 1 or more")
    ensure_dir(target_dir)
    stamp = (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%SZ")
    name, n = PREFIX + stamp, 1
    while (target_dir / name).exists():
        n += 1
        name = f"{PREFIX}{stamp}-{n}"
    final = target_dir / name
    staging = target_dir / f".{name}.partial"

    def ignore(folder: str, names: list[str]) -> set[str]:
        here = Path(folder).resolve()
        skipped = {x for x in names if x in _SKIP or _special(here / x)}
        if here == root:
            skipped.add("backups")
            skipped.update(x for x in names if aside.is_aside(x))  # half-built or thrown-away stores
        skipped.update(x for x in names if (here / x).resolve() == target_dir)
        return skipped

    try:
        with memory.reading("backup"):
            shutil.copytree(root, staging, ignore=ignore, symlinks=True)
        staging.rename(final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    removed = []
    copies = sorted(p for p in target_dir.iterdir() if p.is_dir() and _NAME.fullmatch(p.name))
    for old in copies[:-keep]:
        shutil.rmtree(old, ignore_errors=True)
        removed.append(str(old))
    size = sum(p.stat().st_size for p in final.rglob("*") if p.is_file())
    return {"path": str(final), "bytes": size, "removed": removed, "kept": min(len(copies), keep)}


def _special(path: Path) -> bool:
    """Not a file, folder or link: the daemon's socket (copying one fails), a FIFO (reading one
    hangs). Nothing a data directory needs to be restored."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode))
