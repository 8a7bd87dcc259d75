"""Several renames that put a rebuilt store in place, as one step a crash cannot cut in half
(docs/architecture.md, "Crash safety").

`alaya rebuild` replaces `graph.kuzu` and `lancedb/`, `alaya reembed` replaces `lancedb/`:
each needs more than one rename (the old one aside, the new one in), and a SIGKILL between two
of them would leave the data directory without a graph or an index. So, under the write lock,
the list of moves is written first (`swap.json` in the data directory, atomic and fsynced),
then the moves are made, then the record is removed and the old store, moved into the
builder's work folder, thrown away. A record left behind means a process died inside the
swap: the next write-lock hold, before anything else, makes every move whose source is still
there and whose destination is not (in order: the swap rolls forward to the new store), then
removes the record and the work folder (`finish`).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from ..datadir import DataDir
from ..fsutil import DIR_MODE, atomic_write, fsync_dir


def install(root: Path, folder: Path, new: list[str], old: list[str]) -> None:
    """Under the write lock, as one step: the entries `old` of the data directory `root` go
    into `<folder>/old/`, then the entries `new` of the work folder `folder` take their place;
    then `folder` is removed, the old store with it."""
    (folder / "old").mkdir(mode=DIR_MODE, exist_ok=True)
    moves = [(root / name, folder / "old" / name) for name in old] + [(folder / name, root / name) for name in new]
    record = {"moves": [[str(src.relative_to(root)), str(dst.relative_to(root))] for src, dst in moves],
              "trash": str(folder.relative_to(root))}
    atomic_write(DataDir(root).swap, json.dumps(record))
    finish(root)


def pending(root: Path) -> bool:
    """A swap was cut off and waits to be finished (cheap: one stat)."""
    return DataDir(root).swap.exists()


def finish(root: Path) -> bool:
    """Finish a swap that a killed process left (the caller holds the write lock); False when
    there was none."""
    path = DataDir(root).swap
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return False
    for src, dst in record["moves"]:
        source, target = root / src, root / dst
        if source.exists() and not target.exists():
            os.replace(source, target)
            fsync_dir(target.parent)
    path.unlink()
    fsync_dir(root)
    shutil.rmtree(root / record["trash"], ignore_errors=True)
    return True
