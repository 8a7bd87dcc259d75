"""L1 on PostgreSQL (issue 34): each card's vector (pgvector, searched by the embedder's HNSW
cosine index, schema.ensure_vector_index) and its words (a tsvector of words.py's tokens, GIN),
and the relation names' vectors. Vectors travel as pgvector's text form, so no connection
needs the type registered before the schema exists."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from ...errors import StaleStoreError
from . import schema, words

if TYPE_CHECKING:
    from .db import Database


class PostgresIndex:
    """One memory's cards' vectors and words, for one embedder."""

    resident = False  # nothing is copied into memory: the database answers every search

    def __init__(self, db: "Database", embedder_id: str, dim: int) -> None:
        self.db = db
        self.embedder_id = embedder_id
        self.dim = int(dim)

    # --- setup ------------------------------------------------------------------------------

    def create(self) -> None:
        with self.db.connection() as conn, conn.transaction():
            conn.execute("INSERT INTO index_meta (store_id, embedder, dim) VALUES (%s, %s, %s)"
                         " ON CONFLICT (store_id) DO NOTHING", (self.db.store_id, self.embedder_id, self.dim))
            self.check_embedder()
            schema.ensure_vector_index(conn, self.dim)

    def check_embedder(self) -> None:
        with self.db.connection() as conn:
            have = conn.execute("SELECT embedder, dim FROM index_meta WHERE store_id = %s",
                                (self.db.store_id,)).fetchone()
        if have is not None and tuple(have) != (self.embedder_id, self.dim):
            raise StaleStoreError(f"store {self.db.store_id}: its index was built with embedder {have[0]} "
                                  f"(dim {have[1]}), not {self.embedder_id} (dim {self.dim}); run `alaya reembed`")

    # --- reads ------------------------------------------------------------------------------

    def card_count(self) -> int:
        with self.db.connection() as conn:
            return conn.execute("SELECT count(*) FROM card_vectors WHERE store_id = %s",
                                (self.db.store_id,)).fetchone()[0]

    def card_ids(self) -> list[str]:
        with self.db.connection() as conn:
            return [r[0] for r in conn.execute("SELECT card_id FROM card_vectors WHERE store_id = %s ORDER BY card_id",
                                               (self.db.store_id,))]

    def vector_search(self, vector: np.ndarray, limit: int, scopes: list[str] | None = None) -> list[tuple[str, float]]:
        """(card id, cosine similarity) best first, through the HNSW index (iterative scan, so
        a scope filter still fills `limit`); a zero vector (an embedder that was down) matches nothing."""
        if limit <= 0 or not np.any(vector):
            return []
        d = self.dim
        where, params = self._scoped(scopes)
        probe = _text(vector)
        with self.db.connection() as conn, conn.transaction():
            conn.execute("SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true)")
            rows = conn.execute(
                f"SELECT card_id, 1 - (embedding::vector({d}) <=> %s::vector({d})) FROM card_vectors"
                f" WHERE store_id = %s AND dim = {d}{where}"
                f" ORDER BY embedding::vector({d}) <=> %s::vector({d}) LIMIT %s",
                (probe, self.db.store_id, *params, probe, limit)).fetchall()
        hits = [(cid, float(score)) for cid, score in rows if score is not None and not math.isnan(score)]
        return sorted(hits, key=lambda hit: -hit[1])  # relaxed order: nearly sorted

    def search_many(self, vectors: np.ndarray, limit: int, scopes: list[str]) -> list[list[tuple[str, float]]]:
        return [self.vector_search(vector, limit, [scope]) for vector, scope in zip(vectors, scopes)]

    def text_search(self, text: str, limit: int, scopes: list[str] | None = None,
                    vectors: dict[str, np.ndarray] | None = None) -> list[tuple[str, float]]:
        """(card id, ts_rank score) best first, any token matching; empty for a text without words."""
        tsquery = words.query(text)
        if tsquery is None or limit <= 0:
            return []
        where, params = self._scoped(scopes)
        with self.db.connection() as conn:
            rows = conn.execute(
                "SELECT card_id, ts_rank(words, q, 1), embedding::text FROM card_vectors,"
                " to_tsquery('simple', %s) q WHERE store_id = %s AND words @@ q" + where +
                " ORDER BY 2 DESC, card_id LIMIT %s", (tsquery, self.db.store_id, *params, limit)).fetchall()
        if vectors is not None:
            vectors.update({cid: _array(vec) for cid, _, vec in rows})
        return [(cid, float(score)) for cid, score, _ in rows]

    def vectors_for(self, ids: list[str]) -> dict[str, np.ndarray]:
        if not ids:
            return {}
        with self.db.connection() as conn:
            return {cid: _array(vec) for cid, vec in conn.execute(
                "SELECT card_id, embedding::text FROM card_vectors WHERE store_id = %s AND card_id = ANY(%s)",
                (self.db.store_id, list(ids)))}

    def all_vectors(self) -> tuple[list[str], np.ndarray]:
        with self.db.connection() as conn:
            rows = conn.execute("SELECT card_id, embedding::text FROM card_vectors WHERE store_id = %s"
                                " ORDER BY card_id", (self.db.store_id,)).fetchall()
        if not rows:
            return [], np.zeros((0, self.dim), dtype=np.float32)
        return [r[0] for r in rows], np.stack([_array(r[1]) for r in rows])

    def relation_vectors(self) -> dict[str, np.ndarray]:
        with self.db.connection() as conn:
            return {name: _array(vec) for name, vec in conn.execute(
                "SELECT name, embedding::text FROM relation_vectors WHERE store_id = %s", (self.db.store_id,))}

    # --- writes -----------------------------------------------------------------------------

    def upsert_cards(self, rows: list[dict[str, Any]], vectors: np.ndarray) -> None:
        """Rows (`models.index_row`) with their vectors, in one transaction (the hold's, under a write hold)."""
        self.db.many(
            "INSERT INTO card_vectors (store_id, card_id, scope, type, text, words, dim, embedding)"
            " VALUES (%s, %s, %s, %s, %s, to_tsvector('simple', %s), %s, %s::vector)"
            " ON CONFLICT (store_id, card_id) DO UPDATE SET scope = EXCLUDED.scope, type = EXCLUDED.type,"
            " text = EXCLUDED.text, words = EXCLUDED.words, dim = EXCLUDED.dim, embedding = EXCLUDED.embedding",
            [(self.db.store_id, row["id"], row["scope"], row["type"], row["text"], words.document(row["text"]),
              self.dim, _text(vectors[i])) for i, row in enumerate(rows)])

    def delete_cards(self, ids: list[str]) -> None:
        if ids:
            with self.db.connection() as conn:
                conn.execute("DELETE FROM card_vectors WHERE store_id = %s AND card_id = ANY(%s)",
                             (self.db.store_id, list(ids)))

    def upsert_relations(self, rows: list[dict[str, str]], vectors: np.ndarray) -> None:
        self.db.many(
            "INSERT INTO relation_vectors (store_id, name, description, dim, embedding)"
            " VALUES (%s, %s, %s, %s, %s::vector) ON CONFLICT (store_id, name) DO UPDATE SET"
            " description = EXCLUDED.description, dim = EXCLUDED.dim, embedding = EXCLUDED.embedding",
            [(self.db.store_id, row["name"], row["description"], self.dim, _text(vectors[i]))
             for i, row in enumerate(rows)])

    def optimize(self) -> None:
        """Fresh planner statistics (vacuuming is the server's autovacuum's)."""
        with self.db.connection() as conn:
            conn.execute("ANALYZE card_vectors")

    # --- internals --------------------------------------------------------------------------

    @staticmethod
    def _scoped(scopes: list[str] | None) -> tuple[str, tuple[Any, ...]]:
        return ("", ()) if scopes is None else (" AND scope = ANY(%s)", (list(scopes),))


def _text(vector: np.ndarray) -> str:
    """pgvector's text form of a vector."""
    return "[" + ",".join(f"{float(x):.8g}" for x in np.asarray(vector, dtype=np.float32)) + "]"


def _array(text: str) -> np.ndarray:
    return np.array(text[1:-1].split(","), dtype=np.float32)
