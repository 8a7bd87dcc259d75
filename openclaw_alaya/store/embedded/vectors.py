"""L1: LanceDB tables under `lancedb/`: card vectors with a native full-text index (`icu`
tokenizer, so Chinese, Japanese and Korean are segmented offline), and relation embeddings.

Writes go through LanceDB. `import lancedb` costs about a second, so it is imported only on
a process's first write or LanceDB read; a process that has written nothing and is not resident
(a one-shot `alaya recall`, a hook with no daemon) reads through Lance's own reader of the same
files instead (lance_reads.py), which returns the same scores. The embedder that filled the
index is recorded beside it; a different one is refused.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa

from ...errors import AlayaError, DamagedStoreError
from ...text import CJK_STOPWORDS, STOPWORDS
from ..fsutil import atomic_write
from .index_meta import CARDS, FTS_VERSION, META, fts_current, read_meta
from .lance_reads import LanceReads, version_key
from .native import defer_rest_client

T = TypeVar("T")

RELATIONS = "relations"


def _cards_schema(dim: int) -> pa.Schema:
    return pa.schema(
        [
            pa.field("id", pa.string()),
            pa.field("text", pa.string()),
            pa.field("scope", pa.string()),
            pa.field("type", pa.string()),
            pa.field("vector", pa.list_(pa.float32(), dim)),
        ]
    )


def _relations_schema(dim: int) -> pa.Schema:
    return pa.schema(
        [
            pa.field("name", pa.string()),
            pa.field("description", pa.string()),
            pa.field("vector", pa.list_(pa.float32(), dim)),
        ]
    )


class VectorStore:
    """The L1 index. Writes happen under the data directory's write lock (docs/architecture.md,
    "The lock protocol")."""

    def __init__(self, path: Path, embedder_id: str, dim: int) -> None:
        self.path = path
        self.embedder_id = embedder_id
        self.dim = dim
        self._tables: dict[str, Any] = {}
        self._reads: LanceReads | bool | None = None  # None: not opened yet; False: read through LanceDB
        self._wrote = False
        self._relations_cache: tuple[Any, dict[str, np.ndarray]] | None = None
        # exact vector search from an in-memory copy once the table is big enough for LanceDB's
        # flat search to be slow (vector_cache.py), in a process that searches more than once
        # (from the second search on) or says it is long-lived (`resident`: alaya serve); a
        # one-shot CLI process would spend longer loading the copy than searching once
        self.resident = False
        self._cache: Any = None
        self._searches = 0

    @cached_property
    def _db(self) -> Any:
        defer_rest_client()  # about 0.8 s of the REST client's imports skipped (native.py)
        import lancedb

        return lancedb.connect(str(self.path), read_consistency_interval=timedelta(0))

    def _reader(self) -> LanceReads | None:
        """Lance's own reader, while this process has written nothing to the tables and is not
        resident. A process that writes reads its own writes through LanceDB, and a resident
        one keeps LanceDB's handles, which follow every new version."""
        if self.resident or self._wrote or self._reads is False:
            return None
        if self._reads is None:
            self._reads = LanceReads.open(self.path) or False
        return self._reads or None

    def _read(self, through_lance: Callable[[LanceReads], T], through_lancedb: Callable[[], T]) -> T:
        reader = self._reader()
        if reader is not None:
            try:
                return through_lance(reader)
            except Exception:  # noqa: BLE001 - what this pylance cannot read, LanceDB reads (or names what is wrong)
                self._reads = False
        return through_lancedb()

    def _table_to_write(self, name: str) -> Any:
        self._wrote = True
        return self._table(name)

    # --- setup ----------------------------------------------------------------------------

    def create(self) -> None:
        """Create empty tables and the FTS index, and record which embedder fills them."""
        self._wrote = True
        existing = set(self._table_names())
        if CARDS not in existing:
            self._index_text(self._db.create_table(CARDS, schema=_cards_schema(self.dim)))
        if RELATIONS not in existing:
            self._db.create_table(RELATIONS, schema=_relations_schema(self.dim))
        if not (self.path / META).exists():
            self._record()
        self.check_embedder()

    def upgrade_fts(self) -> None:
        """Rebuild the cards' full-text index in place when an earlier version built it with
        another configuration (`FTS_VERSION`), so that its words become searchable without
        `alaya rebuild`. Under the write lock; checked again there, since another process may
        have done it while this one waited."""
        if not fts_current(self.path):
            self._index_text(self._table_to_write(CARDS))

    def _index_text(self, table: Any) -> None:
        """(Re)build the full-text index over every card row, then record its configuration (in
        that order: a process killed in between leaves an index rebuilt again, never one
        recorded as current that is not)."""
        from lancedb.index import FTS

        # the project's English stop words: LanceDB's built-in list also drops English words
        # such as "son", "dog", "city", "want" and "door", which then match nothing; Chinese
        # function words stay searchable, as with the built-in list (我们决定 vs 决定)
        table.create_index(
            "text", config=FTS(base_tokenizer="icu", stem=True, remove_stop_words=True, ascii_folding=True,
                               custom_stop_words=sorted(STOPWORDS - CJK_STOPWORDS)),
            replace=True,
        )
        self._record(fts=FTS_VERSION)

    def _record(self, **fields: Any) -> None:
        """Add fields to index.json (first written with this store's embedder and dimension)."""
        meta = read_meta(self.path) or {"embedder": self.embedder_id, "dim": self.dim}
        atomic_write(self.path / META, json.dumps(meta | fields))

    def check_embedder(self) -> None:
        """Refuse to mix vectors from two embedders in one index."""
        meta = read_meta(self.path)
        if not meta:
            return
        if meta.get("embedder") != self.embedder_id or meta.get("dim") != self.dim:
            raise AlayaError(
                f"{self.path}: the index was built with embedder {meta.get('embedder')} "
                f"({meta.get('dim')} dims) but config asks for {self.embedder_id} ({self.dim} dims); "
                "set embedding back in config.json, or run `alaya reembed` to rebuild the index with the new embedder"
            )

    def _table_names(self) -> list[str]:
        listing = self._db.list_tables()
        return list(getattr(listing, "tables", listing))

    def _table(self, name: str):
        if name not in self._tables:
            if not (self.path / f"{name}.lance").is_dir():  # LanceDB's own error names no way out
                raise DamagedStoreError(f"{self.path / name}.lance is missing; run `alaya rebuild` to derive the index again")
            self._tables[name] = self._db.open_table(name)
        return self._tables[name]

    # --- cards ----------------------------------------------------------------------------

    def upsert_cards(self, rows: list[dict[str, Any]], vectors: np.ndarray) -> None:
        """Insert or replace card rows (id, text, scope, type) with their vectors: one commit."""
        if not rows:
            return
        data = [dict(row, vector=vectors[i].astype(np.float32)) for i, row in enumerate(rows)]
        table = self._table_to_write(CARDS)
        (
            table.merge_insert("id")
            .when_matched_update_all()
            .when_not_matched_insert_all()
            .execute(pa.Table.from_pylist(data, schema=_cards_schema(self.dim)))
        )

    def delete_cards(self, ids: list[str]) -> None:
        if ids:
            self._table_to_write(CARDS).delete(f"id IN ({_sql_list(ids)})")

    def card_count(self) -> int:
        return self._read(lambda lance: lance.count(CARDS), lambda: self._table(CARDS).count_rows())

    def vector_search(self, vector: np.ndarray, limit: int, scopes: list[str] | None = None) -> list[tuple[str, float]]:
        """(card id, cosine similarity) best first."""
        cache = self._vector_cache()
        if cache is not None:
            return cache.search(vector, limit, scopes)
        where = _in_scopes(scopes)

        def through_lancedb() -> pa.Table:
            query = (
                self._table(CARDS)
                .search(vector.astype(np.float32), vector_column_name="vector", query_type="vector")
                .metric("cosine")
            )
            return _filtered(query, where).limit(limit).select(["id", "_distance"]).to_arrow()

        data = self._read(lambda lance: lance.vector_search(CARDS, vector, limit, where), through_lancedb)
        ids, dist = data.column("id").to_pylist(), data.column("_distance").to_pylist()
        return [(cid, 1.0 - float(d)) for cid, d in zip(ids, dist)]

    def search_many(self, vectors: np.ndarray, limit: int, scopes: list[str]) -> list[list[tuple[str, float]]]:
        """`vector_search(vectors[i], limit, [scopes[i]])` for every row: one matrix product
        over the in-memory copy for a whole batch (distill's candidate search; worth loading
        the copy for from two vectors on), LanceDB's own search one by one otherwise."""
        cache = self._vector_cache(force=True) if len(vectors) > 1 else None
        if cache is not None:
            return cache.search_many(vectors, limit, scopes)
        return [self.vector_search(v, limit, [s]) if np.any(v) else [] for v, s in zip(vectors, scopes)]

    def text_search(self, text: str, limit: int, scopes: list[str] | None = None,
                    vectors: dict[str, np.ndarray] | None = None) -> list[tuple[str, float]]:
        """(card id, BM25 score) best first; empty when the text has no searchable words.
        `vectors`, when given, also gets each hit's vector."""
        if not text.strip():
            return []
        where = _in_scopes(scopes)
        columns = ["id", "_score"] + (["vector"] if vectors is not None else [])

        def through_lancedb() -> pa.Table:
            query = self._table(CARDS).search(text, query_type="fts", fts_columns="text")
            return _filtered(query, where).limit(limit).select(columns).to_arrow()

        try:
            data = self._read(lambda lance: lance.text_search(CARDS, text, limit, where, columns), through_lancedb)
        except (ValueError, RuntimeError):  # a query of only stop words or operators
            return []
        _collect(data, vectors)
        return list(zip(data.column("id").to_pylist(), map(float, data.column("_score").to_pylist())))

    def vectors_for(self, ids: list[str]) -> dict[str, np.ndarray]:
        if not ids:
            return {}
        if self._cache is not None and self._vector_cache() is not None:
            found = self._cache.vectors_for(ids)
            if len(found) == len(set(ids)):
                return found
        where = f"id IN ({_sql_list(ids)})"
        data = self._read(
            lambda lance: lance.rows(CARDS, ["id", "vector"], where),
            lambda: self._table(CARDS).search().where(where).select(["id", "vector"]).limit(len(ids)).to_arrow(),
        )
        found: dict[str, np.ndarray] = {}
        _collect(data, found)
        return found

    def all_vectors(self) -> tuple[list[str], np.ndarray]:
        """Every card row's id and vector, in one read (maintenance: consolidation)."""
        table = self._table(CARDS)
        n = table.count_rows()
        if not n:
            return [], np.zeros((0, self.dim), dtype=np.float32)
        data = table.search().select(["id", "vector"]).limit(n).to_arrow()
        ids = data.column("id").to_pylist()
        flat = data.column("vector").combine_chunks().flatten().to_numpy(zero_copy_only=False)
        return ids, np.asarray(flat, dtype=np.float32).reshape(len(ids), self.dim)

    def _vector_cache(self, force: bool = False):
        """The in-memory copy, brought up to date, or None where LanceDB searches itself
        (`force`: whatever the table's size and the process's life)."""
        from .vector_cache import MIN_ROWS, VectorCache

        try:
            if self._cache is None:
                self._searches += 1
                if not force and (not (self.resident or self._searches > 1) or self.card_count() < MIN_ROWS):
                    return None
                self._cache = VectorCache(self._table(CARDS), self.dim, self._pinned_cards)
            self._cache.refresh()
            return self._cache
        except Exception:  # noqa: BLE001 - an older table layout or API: LanceDB searches itself
            self._cache = None
            return None

    def _pinned_cards(self, version: int) -> Any:
        """A second handle on the cards table, held at one version (the vector copy loads from it)."""
        table = self._db.open_table(CARDS)
        table.checkout(version)
        return table

    def card_ids(self) -> list[str]:
        def through_lancedb() -> pa.Table:
            table = self._table(CARDS)
            return table.search().select(["id"]).limit(max(table.count_rows(), 1)).to_arrow()

        return self._read(lambda lance: lance.rows(CARDS, ["id"]), through_lancedb).column("id").to_pylist()

    def optimize(self, cleanup_older_than: timedelta = timedelta(hours=1)) -> None:
        """Compact files, fold new rows into the indexes, drop versions older than the given
        age (never 0: a reader may still be on an older version)."""
        for name in (CARDS, RELATIONS):
            self._table_to_write(name).optimize(cleanup_older_than=cleanup_older_than)

    def scrub(self) -> None:
        """After a purge, under the write lock (no reader inside): a LanceDB delete only marks
        rows deleted, and every older version keeps its fragments, so the forgotten text would
        stay in `lancedb/`. Compact each table, rebuild the cards' full-text index from the
        rows left (its old files knew the deleted words), and drop every version but the
        newest, files not yet referenced included (`delete_unverified`: nothing else writes
        while the lock is held)."""
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # LanceDB warns that an older version's reader would fail: none is inside
            for name in (CARDS, RELATIONS):
                self._table_to_write(name).optimize(cleanup_older_than=timedelta(0), delete_unverified=True)
            cards = self._table_to_write(CARDS)
            self._index_text(cards)
            cards.optimize(cleanup_older_than=timedelta(0), delete_unverified=True)
        self._cache = None  # the in-memory copy was loaded from a version that is gone

    # --- relations ------------------------------------------------------------------------

    def upsert_relations(self, rows: list[dict[str, str]], vectors: np.ndarray) -> None:
        if not rows:
            return
        data = [dict(row, vector=vectors[i].astype(np.float32)) for i, row in enumerate(rows)]
        (
            self._table_to_write(RELATIONS)
            .merge_insert("name")
            .when_matched_update_all()
            .when_not_matched_insert_all()
            .execute(pa.Table.from_pylist(data, schema=_relations_schema(self.dim)))
        )

    def relation_vectors(self) -> dict[str, np.ndarray]:
        """Every relation name's embedding; kept until the table gets a new version (a recall
        reads it twice, a resident process on every request)."""
        key = version_key(self.path / f"{RELATIONS}.lance")
        if key is not None and self._relations_cache is not None and self._relations_cache[0] == key:
            return dict(self._relations_cache[1])
        data = self._read(
            lambda lance: lance.rows(RELATIONS, ["name", "vector"]),
            lambda: self._table(RELATIONS).search().select(["name", "vector"]).limit(100_000).to_arrow(),
        )
        found: dict[str, np.ndarray] = {}
        _collect(data, found, key="name")
        self._relations_cache = (key, found) if key is not None else None
        return dict(found)


def _collect(data: pa.Table, vectors: dict[str, np.ndarray] | None, key: str = "id") -> None:
    """Add each row's vector to `vectors`, under its `key` column."""
    if vectors is None or not data.num_rows:
        return
    column = data.column("vector").combine_chunks()
    flat = column.flatten().to_numpy(zero_copy_only=False).astype(np.float32, copy=False)
    matrix = flat.reshape(data.num_rows, -1)
    vectors.update(zip(data.column(key).to_pylist(), matrix))


def _in_scopes(scopes: list[str] | None) -> str | None:
    return f"scope IN ({_sql_list(scopes)})" if scopes else None


def _filtered(query: Any, where: str | None) -> Any:
    """A LanceDB search narrowed by `where` before it ranks (as Lance's reader does)."""
    return query.where(where, prefilter=True) if where else query


def _sql_list(values: list[str]) -> str:
    """Quote string literals for a Lance SQL filter (ids are validated, quotes doubled anyway)."""
    return ", ".join("'" + v.replace("'", "''") + "'" for v in values)
