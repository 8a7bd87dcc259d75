"""An in-memory copy of the card vectors for exact nearest-neighbour search in a long-lived
process (`alaya serve`, a distill backlog, an application calling `recall` repeatedly).

LanceDB's flat search costs about 7 µs a row with 1024 dimensions on this machine (70 ms at
10k cards, 1.4 s at 100k; bench/recall.py), and an ANN index takes minutes to build at 100k
and loses recall on hash vectors. This keeps the vectors column-major: a query touches only
the columns where the query vector is non-zero, which for the hash embedder is a few dozen of
1024, so a 100k search reads a few MB instead of 400. Dense queries fall back to a full
matrix product. Exact: the same cosine ranking as LanceDB's flat search.

It follows the table, never the other way round: before each use the table version is checked
(one manifest read); rows added since are appended (row ids only grow), deleted ones masked,
and anything that does not add up reloads the whole copy. Above `FLOAT16_ABOVE_BYTES` the
copy is kept as float16 (half the memory; cosines change by about 1e-4).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .native import release_freed_memory

FLOAT16_ABOVE_BYTES = 512 * 1024 * 1024  # float32 up to 128k cards of 1024 dimensions: numpy
# converts float16 element by element (a search at 100k: 23 ms p95 as float32, 42 as float16)
_CHUNK = 2048  # rows per read while loading
_COPY_ROWS = 256  # rows per transposing copy into the matrix
MIN_ROWS = 2000  # below this LanceDB's own flat search is fast enough; no copy is kept
_BLOCKS_MAX = 16  # appended blocks are merged back into one past this
_QUERIES = 128  # queries per matrix product in search_many (128 x 100k cosines: 51 MB)
_DOT_ROWS = 16384  # float16 rows converted at a time for a matrix product


class _Block:
    __slots__ = ("ids", "scopes", "rowids", "matrix", "norms", "alive", "masks")

    def __init__(self, ids: list[str], scopes: np.ndarray, rowids: np.ndarray, matrix: np.ndarray,
                 norms: np.ndarray) -> None:
        self.ids = ids
        self.scopes = scopes  # int codes
        self.rowids = rowids
        self.matrix = matrix  # (rows, dim), Fortran order, rows scaled to unit length
        self.norms = norms  # the rows' original lengths (0 for an all-zero vector)
        self.alive = np.ones(len(ids), dtype=bool)
        self.masks: dict[tuple[int, ...], np.ndarray] = {}  # alive & in these scopes


class VectorCache:
    def __init__(self, table: Any, dim: int, open_version: Callable[[int], Any]) -> None:
        self.table = table
        self.open_version = open_version  # a separate handle on one version of the same table
        self.dim = dim
        self.version: Any = None
        self.blocks: list[_Block] = []
        self.max_rowid = -1
        self.codes: dict[str, int] = {}
        self.dtype = np.float32
        self._where: dict[str, tuple[int, int]] = {}  # card id -> (block, row) of its newest row

    # --- keeping up with the table ------------------------------------------------------------

    def refresh(self) -> None:
        version = self.table.version
        if version == self.version:
            return
        snapshot = self.open_version(version)  # every read below sees this one version
        current = snapshot.search().with_row_id(True).select(["id"]).limit(2**31 - 1).to_arrow()
        now = np.asarray(current.column("_rowid").to_numpy(), dtype=np.uint64)
        if not self.blocks:
            self.dtype = np.float16 if len(now) * self.dim * 4 > FLOAT16_ABOVE_BYTES else np.float32
        alive = 0
        for block in self.blocks:
            block.alive &= np.isin(block.rowids, now, assume_unique=True)
            block.masks.clear()
            alive += int(block.alive.sum())
        fresh = self._load(snapshot, now, self.max_rowid) if self.blocks else None
        if fresh is not None:
            self.blocks.append(fresh)
            alive += len(fresh.ids)
            self.max_rowid = max(self.max_rowid, int(fresh.rowids.max()))
        if not self.blocks or alive != len(now) or len(self.blocks) > _BLOCKS_MAX:
            self.blocks, self.max_rowid = [], -1  # first load, compaction or something unforeseen: start over
            fresh = self._load(snapshot, now, -1)
            if fresh is not None:
                self.blocks = [fresh]
                self.max_rowid = int(fresh.rowids.max())
            self._where = {}
            start = 0
        else:
            start = len(self.blocks) - (1 if fresh is not None else 0)
        for b in range(start, len(self.blocks)):
            self._where.update((cid, (b, row)) for row, cid in enumerate(self.blocks[b].ids))
        self.version = version

    def _load(self, snapshot: Any, now: np.ndarray, after: int) -> _Block | None:
        """The rows of `now` with a row id above `after` (all when -1), read a chunk at a time
        into one Fortran-order matrix sized up front: the transient memory stays a chunk (one
        LanceDB read of the whole table held about 600 MB at 100k cards)."""
        expected = int((now > after).sum()) if after >= 0 else len(now)
        if not expected:
            return None
        matrix = np.zeros((expected, self.dim), dtype=self.dtype, order="F")
        norms = np.zeros(expected, dtype=np.float32)
        ids: list[str] = []
        scopes: list[int] = []
        rowids: list[np.ndarray] = []
        for batch in _batches(snapshot, after, expected):
            n, at = batch.num_rows, len(ids)
            if at + n > expected:
                raise RuntimeError("the table changed under a pinned version")  # the caller falls back to LanceDB
            flat = batch.column("vector").flatten().to_numpy(zero_copy_only=False)
            norms[at:at + n] = _copy_unit_rows(np.asarray(flat, dtype=np.float32).reshape(n, self.dim), matrix, at)
            ids += batch.column("id").to_pylist()
            scopes += [self.codes.setdefault(s or "", len(self.codes)) for s in batch.column("scope").to_pylist()]
            # a copy: a view would keep the whole batch's buffer (its vectors) alive
            rowids.append(np.array(batch.column("_rowid").to_numpy(), dtype=np.uint64))
        release_freed_memory()
        read = np.concatenate(rowids) if rowids else np.zeros(0, dtype=np.uint64)
        if not np.array_equal(np.sort(read), np.sort(now[now > after] if after >= 0 else now)):
            raise RuntimeError("the chunked read does not match the table's rows")
        return _Block(ids, np.asarray(scopes, dtype=np.int32), read, matrix, norms)

    # --- queries --------------------------------------------------------------------------

    def search(self, vector: np.ndarray, limit: int, scopes: list[str] | None = None) -> list[tuple[str, float]]:
        """(card id, cosine similarity) best first, as LanceDB's flat cosine search."""
        q = np.asarray(vector, dtype=np.float32)
        q_norm = float(np.linalg.norm(q))
        if not self.blocks or q_norm == 0 or limit <= 0:
            return []
        nz = np.flatnonzero(q)
        sparse = len(nz) * 4 <= self.dim
        wanted = None if not scopes else tuple(sorted(self.codes[s] for s in set(scopes) if s in self.codes))
        scored: list[np.ndarray] = []
        unit = q / q_norm
        for block in self.blocks:
            if sparse:
                sims = block.matrix[:, nz].astype(np.float32, copy=False) @ unit[nz]
            else:
                sims = _dot_rows(unit[None, :], block.matrix)[0]
            keep = block.alive
            if wanted is not None:
                keep = block.masks.get(wanted)
                if keep is None:
                    keep = block.masks[wanted] = block.alive & np.isin(block.scopes, np.array(wanted, dtype=np.int32))
            sims[~keep] = -np.inf
            scored.append(sims)
        allsims = np.concatenate(scored)
        offsets = np.cumsum([0] + [len(s) for s in scored])
        k = min(limit, int(np.isfinite(allsims).sum()))
        if k <= 0:
            return []
        top = np.argpartition(-allsims, k - 1)[:k]
        top = top[np.argsort(-allsims[top], kind="stable")]
        out = []
        for i in top:
            b = int(np.searchsorted(offsets, i, side="right") - 1)
            row = int(i - offsets[b])
            out.append((self.blocks[b].ids[row], float(allsims[i])))
        return out

    def search_many(self, vectors: np.ndarray, limit: int, scopes: list[str]) -> list[list[tuple[str, float]]]:
        """`search(vectors[i], limit, [scopes[i]])` for every row, as one matrix product per
        block for a chunk of queries instead of one pass over the copy each (distill compares
        hundreds of new cards at once; pipeline.py)."""
        ids = [cid for block in self.blocks for cid in block.ids]
        out: list[list[tuple[str, float]]] = []
        for start in range(0, len(vectors), _QUERIES):
            sims = self._similarities(vectors[start:start + _QUERIES], scopes[start:start + _QUERIES])
            k = min(limit, sims.shape[1])
            top = np.argpartition(-sims, k - 1, axis=1)[:, :k] if k > 0 else np.zeros((len(sims), 0), dtype=int)
            for row, cols in zip(sims, top):
                cols = cols[np.argsort(-row[cols], kind="stable")]
                out.append([(ids[c], float(row[c])) for c in cols if np.isfinite(row[c])])
        return out

    def _similarities(self, queries: np.ndarray, scopes: list[str]) -> np.ndarray:
        """(queries, rows) cosines over every block; -inf for a deleted row, a row of another
        scope than the query's, and an all-zero query."""
        q = np.asarray(queries, dtype=np.float32)
        lengths = np.linalg.norm(q, axis=1)
        unit = q / np.where(lengths > 0, lengths, 1.0)[:, None]
        wanted = np.array([self.codes.get(s, -1) for s in scopes], dtype=np.int32)[:, None]
        parts = []
        for block in self.blocks:
            sims = _dot_rows(unit, block.matrix)
            sims[~(block.alive & (block.scopes == wanted))] = -np.inf
            parts.append(sims)
        sims = np.concatenate(parts, axis=1) if parts else np.zeros((len(q), 0), dtype=np.float32)
        sims[lengths == 0] = -np.inf
        return sims

    def vectors_for(self, ids: list[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        for cid in ids:
            where = self._where.get(cid)
            if where is not None and self.blocks[where[0]].alive[where[1]]:
                block = self.blocks[where[0]]
                found[cid] = np.asarray(block.matrix[where[1]], dtype=np.float32) * block.norms[where[1]]
        return found


def _copy_unit_rows(rows: np.ndarray, matrix: np.ndarray, at: int) -> np.ndarray:
    """Write `rows` scaled to unit length into the Fortran-order `matrix` from row `at`, a
    few hundred rows at a time (a row-major block that stays in cache makes the transposing
    copy ~10x faster than one big strided write); returns the original lengths."""
    lengths = np.sqrt(np.einsum("ij,ij->i", rows, rows))
    scale = 1.0 / np.where(lengths > 0, lengths, 1.0)
    for start in range(0, len(rows), _COPY_ROWS):
        part = slice(start, start + _COPY_ROWS)
        matrix[at + start:at + start + len(rows[part])] = rows[part] * scale[part, None]
    return lengths


def _batches(snapshot: Any, after: int, rows: int) -> Iterator[Any]:
    """(id, scope, vector, _rowid) record batches: the new rows in one read, or the whole
    pinned version in chunks of `_CHUNK` rows."""
    def query() -> Any:
        return snapshot.search().with_row_id(True).select(["id", "scope", "vector"])

    if after >= 0:
        yield from query().where(f"_rowid > {after}", prefilter=True).limit(rows).to_arrow().to_batches()
        return
    for offset in range(0, rows, _CHUNK):
        yield from query().offset(offset).limit(_CHUNK).to_arrow().to_batches()


def _dot_rows(unit: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """`unit @ matrix.T`; a float16 matrix is converted a slice of rows at a time, so the
    transient float32 copy stays small."""
    if matrix.dtype == np.float32:
        return unit @ matrix.T
    return np.concatenate([unit @ matrix[i:i + _DOT_ROWS].astype(np.float32).T
                           for i in range(0, len(matrix), _DOT_ROWS)], axis=1)
