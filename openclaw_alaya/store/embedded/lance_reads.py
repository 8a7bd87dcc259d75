"""Reads of the L1 tables through pylance (`lance`), Lance's own reader of the files LanceDB
writes, for a process that starts per call (`alaya recall`, a hook with no daemon).

`import lancedb` costs about a second here (its namespace, remote and embedding modules;
docs/performance.md), `import lance` about 0.1 s on top of numpy and pyarrow, which recall
loads anyway. Both run the same Lance code over the same files and indexes: the full-text
scores (BM25 over the `text` index) and the flat cosine distances are the ones LanceDB returns
(tests/test_lance_reads.py compares them). A table is opened again when it has committed a
version since (`version_key`: one stat), so a later read lock sees what another process wrote
in between; a process that writes or lives on reads through LanceDB instead
(`VectorStore._reader`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa


class LanceReads:
    def __init__(self, folder: Path, lance: Any) -> None:
        self.folder = folder
        self._lance = lance
        self._datasets: dict[str, tuple[tuple[int, int] | None, Any]] = {}

    @classmethod
    def open(cls, folder: Path) -> LanceReads | None:
        """None where pylance is not installed: the caller reads through LanceDB."""
        try:
            import lance
        except ImportError:
            return None
        return cls(folder, lance)

    def _dataset(self, name: str) -> Any:
        path = self.folder / f"{name}.lance"
        key = version_key(path)
        opened = self._datasets.get(name)
        if opened is None or key is None or opened[0] != key:
            opened = self._datasets[name] = (key, self._lance.dataset(str(path)))
        return opened[1]

    def count(self, name: str) -> int:
        return self._dataset(name).count_rows()

    def text_search(self, name: str, text: str, limit: int, where: str | None, columns: list[str]) -> pa.Table:
        """Rows of `columns` (with `_score`) ranked by BM25 over the `text` index."""
        return self._dataset(name).to_table(columns=columns, filter=where, prefilter=True, limit=limit,
                                            full_text_query={"query": text, "columns": ["text"]})

    def vector_search(self, name: str, vector: np.ndarray, limit: int, where: str | None) -> pa.Table:
        """(id, _distance) rows, nearest first by cosine distance over every row (no vector
        index is built: LanceDB's flat search). Lance converts a numpy vector, and so does
        `pa.array` given one, through code that imports numpy.ma (about 20 ms of a cold call),
        so the vector goes in as an Arrow array made from a list."""
        query = pa.array(vector.astype(np.float32).tolist(), type=pa.float32())
        nearest = {"column": "vector", "q": query, "k": limit, "metric": "cosine"}
        return self._dataset(name).to_table(columns=["id", "_distance"], filter=where, prefilter=True,
                                            nearest=nearest)

    def rows(self, name: str, columns: list[str], where: str | None = None) -> pa.Table:
        return self._dataset(name).to_table(columns=columns, filter=where)


def version_key(table_dir: Path) -> tuple[int, int] | None:
    """Changes whenever the table commits a version (a manifest is added) or is recreated."""
    try:
        versions = (table_dir / "_versions").stat()
        return (table_dir.stat().st_ino, versions.st_mtime_ns)
    except OSError:
        return None
