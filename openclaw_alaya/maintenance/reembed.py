"""`alaya reembed` and the `embed-pending` introspect step: L1 vectors from the configured
embedder.

`alaya reembed` rebuilds the whole index when the embedder changed (another model, another
dimension, hash → openai): every card's index text is embedded again (no lock; the embedder's
cache makes an interrupted run cheap to resume), a new index is built beside the old one (the
scratch port, store/ports/scratch.py), and under the write lock it is installed (a crash cannot
leave no index) if the cards did not change meanwhile (else it is built again, up to three
times). COLD cards keep their L1 row like any other (issue 31).

`embed-pending` embeds the cards that were stored while the embedder was down
(`state/pending_embeddings.json`) and relation names that have no embedding yet.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import AlayaError
from ..models import CORE_RELATIONS, index_row, index_text, relation_description
from ..progress import progress
from ..providers import read_pending, write_pending
from .steps import Step

if TYPE_CHECKING:
    from ..memory import Memory

_ATTEMPTS = 3
KIND = "reembed"  # what the index built aside is for (store/ports/scratch.py)
_CHUNK = 1000  # texts per embed() call (the embedder batches and parallelises inside)


def _indexed_cards(memory: "Memory") -> tuple[list[Any], list[str]]:
    """Cards that belong in L1 (all of them) and every relation name in use (read lock)."""
    with memory.reading("reembed (reading cards)") as graph:
        ids = graph.l1_card_ids()
        cards = graph.get_cards(ids)
        names = sorted(set(CORE_RELATIONS) | set(graph.relation_counts()))
    return [cards[i] for i in ids if i in cards], names


def embed_all(embedder: Any, texts: list[str], what: str) -> np.ndarray:
    out = []
    for start in range(0, len(texts), _CHUNK):
        out.append(embedder.embed(texts[start : start + _CHUNK]))
        done = min(len(texts), start + _CHUNK)
        progress(f"embedded {done}/{len(texts)} {what}", done, len(texts))
    return np.concatenate(out) if out else np.zeros((0, embedder.dim), dtype=np.float32)


def reembed(memory: "Memory") -> dict[str, Any]:
    """Build a new L1 with the configured embedder beside the old one and swap it in."""
    memory.dirs.require()
    scratch = memory.storage.scratch()
    embedder = memory.embedder
    started = time.monotonic()
    for _attempt in range(_ATTEMPTS):
        cards, names = _indexed_cards(memory)
        vectors = embed_all(embedder, [index_text(c) for c in cards], "cards")
        rel_rows = [{"name": n, "description": relation_description(n)} for n in names]
        rel_vectors = embedder.embed([r["description"] for r in rel_rows])
        with scratch.staged(KIND, graph=False) as stores:
            index = stores.index(embedder.id, embedder.dim)
            index.create()
            for start in range(0, len(cards), 5000):
                chunk = cards[start : start + 5000]
                index.upsert_cards([index_row(c) for c in chunk], vectors[start : start + len(chunk)])
            index.upsert_relations(rel_rows, rel_vectors)
            with memory.writing("reembed (swap in the new index)", change_graph=False) as graph:
                with graph:
                    now = graph.l1_card_ids()
                if now != [c.id for c in cards]:
                    continue  # cards changed while embedding: embed again (cached texts are free)
                stores.install()
                write_pending(memory, [])
            memory.reopen_index()
            return {"embedder": embedder.id, "dim": embedder.dim, "cards": len(cards), "relations": len(rel_rows),
                    "seconds": round(time.monotonic() - started, 2)}
    raise AlayaError(f"{memory.dirs.root}: cards kept changing during reembed; try again when it is quieter")


def embed_pending(memory: "Memory") -> dict[str, Any]:
    """Introspect step: vectors for cards stored while the embedder was down, and for relation
    names that have none yet."""
    pending = read_pending(memory)
    with memory.reading("introspect (pending embeddings)") as graph:
        cards = graph.get_cards(pending) if pending else {}
        used = set(graph.relation_counts())
        known = set(memory.index.relation_vectors())
    names = sorted((used | set(CORE_RELATIONS)) - known)
    if not pending and not names:
        return {"cards": 0, "relations": 0}
    todo = list(cards.values())
    vectors = memory.embedder.embed([index_text(c) for c in todo]) if todo else None  # raises while still down
    rel_rows = [{"name": n, "description": relation_description(n)} for n in names]
    rel_vectors = memory.embedder.embed([r["description"] for r in rel_rows]) if rel_rows else None
    with memory.writing("introspect (pending embeddings)", change_graph=False) as graph:
        with graph:
            still = graph.get_cards([c.id for c in todo])
        rows = [(i, c) for i, c in enumerate(todo) if c.id in still]
        if rows:
            memory.index.upsert_cards([index_row(still[c.id]) for _, c in rows], np.stack([vectors[i] for i, _ in rows]))
        if rel_rows:
            memory.index.upsert_relations(rel_rows, rel_vectors)
        done = set(pending)
        write_pending(memory, [c for c in read_pending(memory) if c not in done])
    return {"cards": len(rows), "relations": len(rel_rows)}


def introspect_steps() -> list[Step]:
    return [Step("embed-pending", embed_pending, order=15)]
