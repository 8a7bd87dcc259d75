"""The embedded side of the scratch port (store/ports/scratch.py): work folders beside the
stores (store/workdirs.py), the renames that install them in one step (swap.py), the shadow copy of the
graph (shadow.py), and the data directory copied file by file for a backup."""

from __future__ import annotations

import shutil
import stat
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import workdirs
from . import swap

if TYPE_CHECKING:  # Kuzu and LanceDB load only when a build or copy opens them
    from ..datadir import DataDir
    from .graph import GraphStore
    from .shadow import Copy
    from .vectors import VectorStore

# what a rebuild replaces (the graph, its WAL, the index) and what reembed replaces
_GRAPH_AND_INDEX = (["graph.kuzu", "lancedb"], ["graph.kuzu", "graph.kuzu.wal", "lancedb"])
_INDEX = (["lancedb"], ["lancedb"])
# the data directory's locks: a restored copy starts unlocked
_LOCKS = {".lock", "lock-holder.json", "cron.lock", "serve.lock"}
_BACKUPS = "backups"  # `alaya backup`'s default destination inside the data directory


class _Staged:
    """A new `graph.kuzu` and `lancedb/` (or `lancedb/` alone) in a work folder of this process."""

    def __init__(self, root: Path, folder: Path, graph: bool) -> None:
        self.root, self.folder, self.with_graph = root, folder, graph

    def graph(self) -> "GraphStore":
        from .graph import GraphStore

        if not self.with_graph:
            raise ValueError("these staged stores have no graph")
        return GraphStore(self.folder / "graph.kuzu", read_only=False)

    def index(self, embedder_id: str, dim: int) -> "VectorStore":
        from .vectors import VectorStore

        return VectorStore(self.folder / "lancedb", embedder_id, dim)

    def install(self) -> None:
        """The renames as one step (swap.py); the old stores go into the work folder."""
        new, old = _GRAPH_AND_INDEX if self.with_graph else _INDEX
        swap.install(self.root, self.folder, new, old)


class EmbeddedScratch:
    """Scratch space in the data directory itself: its filesystem, so installing is a rename."""

    def __init__(self, dirs: "DataDir") -> None:
        self.dirs = dirs

    @contextmanager
    def staged(self, kind: str, *, graph: bool) -> Iterator[_Staged]:
        """A work folder `.<kind>-<pid>-<ns>/`, after the folders killed builders of `kind` left
        are removed; removed at the end (with the old stores, once installed)."""
        workdirs.sweep(self.dirs.root, kind)
        folder = workdirs.make(self.dirs.root, kind)
        try:
            yield _Staged(self.dirs.root, folder, graph)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    @contextmanager
    def graph_draft(self, hold: AbstractContextManager[Any]) -> Iterator["Copy | None"]:
        from . import shadow

        copy = shadow.take(self.dirs, hold)
        try:
            yield copy
        finally:
            if copy is not None:
                copy.discard()

    def roll_forward(self) -> bool:
        return swap.finish(self.dirs.root)

    def clear_leftovers(self) -> None:
        workdirs.sweep(self.dirs.root)  # every kind, of processes that are gone

    def copy_store(self, dest: Path, *, leave_out: Path) -> None:
        """The data directory copied as it is (links as links), without its locks, special
        files, backups, work folders and `leave_out`."""
        root = self.dirs.root

        def ignore(folder: str, names: list[str]) -> set[str]:
            here = Path(folder).resolve()
            skipped = {x for x in names if x in _LOCKS or _special(here / x)}
            if here == root:
                skipped.add(_BACKUPS)
                skipped.update(x for x in names if workdirs.is_workdir(x))  # half-built or thrown-away stores
            skipped.update(x for x in names if (here / x).resolve() == leave_out)
            return skipped

        shutil.copytree(root, dest, ignore=ignore, symlinks=True)


def _special(path: Path) -> bool:
    """Not a file, folder or link: the daemon's socket (copying one fails), a FIFO (reading one
    hangs). Nothing a data directory needs to be restored."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode))
