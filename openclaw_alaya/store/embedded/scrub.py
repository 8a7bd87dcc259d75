"""Rewriting the graph after a purge, so that what was deleted is gone from its file too
(issue 30: forgetting must forget).

Kuzu does not give deleted rows' bytes back: measured with Kuzu 0.11.3, a deleted card's text
stays in `graph.kuzu` after `CHECKPOINT`, after closing, and after later writes, until its page
happens to be reused. There is no vacuum. So the purge copies the live rows into a new file
(`EXPORT DATABASE` to Parquet, `IMPORT DATABASE` into an empty graph: the same schema, the
same rows) in a work folder beside the graph (store/workdirs.py), and renames it over `graph.kuzu`:
one atomic rename, so a kill leaves the old graph or the new one. The old one still holds
the text, but the purge that called this is recorded (store/journal.py, `Journal.intend`)
and is carried out again, this step included, by the next process. The work folder (the
Parquet export names the live rows only) is removed, or swept by the next scrub if killed.

LanceDB's side is `VectorStore.scrub` (compaction and removal of every old version).
"""

from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING

import kuzu

from ..fsutil import FILE_MODE, fsync_dir
from .. import workdirs
from .graph import GraphStore

if TYPE_CHECKING:
    from ..datadir import DataDir

KIND = "scrub-graph"


def scrub_graph(dirs: "DataDir") -> None:
    """Under the write hold, the graph closed: replace `graph.kuzu` by a copy of its live rows."""
    root, graph = dirs.root, dirs.graph
    if not graph.is_file():
        return
    workdirs.sweep(root, KIND)
    folder = workdirs.make(root, KIND)
    try:
        export, fresh = folder / "export", folder / graph.name
        with GraphStore(graph, read_only=False) as store:  # read-write: a waiting WAL is replayed first
            store.query(f"EXPORT DATABASE '{_cypher_path(export)}' (format='parquet')")
        db = kuzu.Database(str(fresh))
        try:
            conn = kuzu.Connection(db)
            conn.execute(f"IMPORT DATABASE '{_cypher_path(export)}'")
            conn.close()
        finally:
            db.close()
        os.chmod(fresh, FILE_MODE)
        fsync_dir(fresh)
        os.replace(fresh, graph)
        fsync_dir(root)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _cypher_path(path: os.PathLike[str]) -> str:
    """A path inside a Cypher string literal (the data directory's path is the user's)."""
    return os.fspath(path).replace("\\", "\\\\").replace("'", "\\'")
