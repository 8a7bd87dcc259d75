"""L1, the index: words and vectors over the cards, and the relations' vectors. What recall,
distill, curate and maintenance ask of it (the embedded one: store/embedded/vectors.py,
`VectorStore`, which reads through Lance's own reader or an in-memory vector copy when that is
quicker: one port whichever answers). Writes happen under the write lock."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import numpy as np


class VectorSearch(Protocol):
    """Nearest cards by vector: what the index, and an in-memory copy of its vectors, answer."""

    def search_many(self, vectors: "np.ndarray", limit: int, scopes: list[str]) -> list[list[tuple[str, float]]]:
        """For each row of `vectors`, (card id, cosine similarity) best first, in `scopes[i]`."""
        ...

    def vectors_for(self, ids: list[str]) -> "dict[str, np.ndarray]":
        """The stored vectors of those of `ids` that have one."""
        ...


class CardIndex(VectorSearch, Protocol):
    """The cards' words and vectors, and the relations' vectors."""

    embedder_id: str
    dim: int
    resident: bool  # a long-lived process (the daemon): keep in-memory copies warm

    # --- setup ------------------------------------------------------------------------------

    def create(self) -> None:
        """Empty tables and the full-text index, recorded as filled by this embedder."""
        ...

    def check_embedder(self) -> None:
        """Refuse an index filled by another embedder."""
        ...

    # --- reads ------------------------------------------------------------------------------

    def card_count(self) -> int:
        """How many cards have a row."""
        ...

    def card_ids(self) -> list[str]:
        """Every card id with a row."""
        ...

    def vector_search(self, vector: "np.ndarray", limit: int,
                      scopes: list[str] | None = None) -> list[tuple[str, float]]:
        """(card id, cosine similarity) best first."""
        ...

    def text_search(self, text: str, limit: int, scopes: list[str] | None = None,
                    vectors: "dict[str, np.ndarray] | None" = None) -> list[tuple[str, float]]:
        """(card id, full-text score) best first; `vectors`, when given, gets each hit's vector."""
        ...

    def all_vectors(self) -> "tuple[list[str], np.ndarray]":
        """Every card row's id and vector (consolidation)."""
        ...

    def relation_vectors(self) -> "dict[str, np.ndarray]":
        """Every relation name's embedding."""
        ...

    # --- writes (under the write lock) ------------------------------------------------------

    def upsert_cards(self, rows: list[dict[str, Any]], vectors: "np.ndarray") -> None:
        """Insert or replace card rows (`models.index_row`) with their vectors, in one commit."""
        ...

    def delete_cards(self, ids: list[str]) -> None:
        """The rows of these cards."""
        ...

    def upsert_relations(self, rows: list[dict[str, str]], vectors: "np.ndarray") -> None:
        """Insert or replace relation rows (name, description) with their vectors."""
        ...

    def optimize(self) -> None:
        """Compact what writes left behind (introspect)."""
        ...
