"""Introspect's batch applied to a copy of the graph, outside the lock (maintenance/batch.py,
through the scratch port: store/ports/scratch.py, store/embedded/scratch.py).

Applying a night's maintenance to 10,000 cards, and Kuzu's checkpoint when the database closes,
take hundreds of milliseconds: on a copy, that time passes while other processes read and write
as usual, and the write lock is held only to swap the copy in (a rename) and write L1.

- The copy is taken under the read lock, when no writer can be inside, and refused while
  `graph.kuzu.wal` exists (a dead writer's transaction, replayed only by a read-write open).
- Under the write lock it replaces `graph.kuzu` only if the graph is still the one copied: the
  same generation (bumped by every read-write open, graph_store.version), the same device,
  inode, size and file times, and no WAL. Otherwise a writer came in
  between, and batch.py applies the batch to the graph itself, under the lock, as it would
  without a copy (the copy is thrown away: the writer's change is never lost).
- The copy lives in a work folder `.introspect-graph-<pid>-<ns>/` (store/workdirs.py): the same
  filesystem, so the swap is one atomic rename, and a folder of its own, so Kuzu's sidecar
  files for the copy (`.wal`, `.shadow`) are never taken for the graph's. A process that dies
  leaves its folder behind; the next copy removes the folders of processes that are gone.
"""

from __future__ import annotations

import os
import shutil
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import workdirs
from ..fsutil import FILE_MODE, fsync_dir
from .graph import GraphStore, version

if TYPE_CHECKING:
    from ..datadir import DataDir

KIND = "introspect-graph"
Identity = tuple[Any, ...]


def identity(graph: Path) -> Identity | None:
    """What tells the graph file apart from any later version of it (`graph_store.version`:
    the generation every read-write open bumps, and the file's identity); None while a WAL
    waits (its changes are not in the file yet) or when there is no file."""
    if graph.with_name(graph.name + ".wal").exists() or not graph.is_file():
        return None
    return version(graph)


@dataclass(frozen=True)
class Copy:
    """A private copy of `graph.kuzu`, and the identity of the file it was copied from."""

    folder: Path
    target: Path
    base: Identity

    @property
    def path(self) -> Path:
        return self.folder / self.target.name

    def open(self) -> GraphStore:
        """Read-write, one transaction (as `Memory.writing` opens the graph), no lock: the copy is ours."""
        return GraphStore(self.path, read_only=False, atomic=True)

    def sync(self) -> None:
        """Make the applied copy durable before the lock, so the swap under it is only a rename."""
        fsync_dir(self.path)

    def unchanged(self) -> bool:
        """Under the write lock: no writer touched the graph since the copy, and the copy is
        still there (a stranger's sweep might have taken it)."""
        return identity(self.target) == self.base and self.path.is_file()

    def install(self) -> None:
        """Under the write lock, after `unchanged`: the copy becomes the graph, atomically."""
        os.replace(self.path, self.target)
        fsync_dir(self.target.parent)

    def discard(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def take(dirs: "DataDir", hold: AbstractContextManager[Any]) -> Copy | None:
    """A copy of the graph taken inside `hold` (the caller's read-lock hold of its own, entered
    here); None when it cannot be copied now (a WAL waits, or the disk refuses): the batch is
    then applied in place."""
    root, graph = dirs.root, dirs.graph
    workdirs.sweep(root, KIND)
    with hold:
        base = identity(graph)
        if base is None:
            return None
        try:
            copy = Copy(workdirs.make(root, KIND), graph, base)
        except OSError:
            return None
        try:
            shutil.copyfile(graph, copy.path)
            os.chmod(copy.path, FILE_MODE)
        except OSError:
            copy.discard()
            return None
    return copy
