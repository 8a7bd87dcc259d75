"""A backlog distilled batch after batch finds the duplicates and contradictions that distilling
one session at a time finds: candidates by one vector search for the whole batch, full-text
search for cards that state a fact, merge writes batched (pipeline.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import session_json

from openclaw_alaya import Alaya, engine
from openclaw_alaya.store.embedded.vectors import VectorStore

REPEATED = "We decided to keep the billing service on Postgres because the migration to Mongo failed twice."
TOPICS = ["kafka consumer lag", "redis eviction policy", "nginx upstream timeouts", "terraform state locking"]


@pytest.fixture
def small_batches(monkeypatch):
    """Two cards per write-lock hold: every session below is a batch of its own."""
    monkeypatch.setattr(engine, "_APPLY_BATCH_CARDS", 2)


def _ingest_repeats(memory: Alaya) -> None:
    for i, topic in enumerate(TOPICS):
        memory.ingest(session_json(f"s{i}", [
            ("user", REPEATED), ("assistant", f"Separately, the {topic} needs a look before Friday's release."),
        ]))


def _cards(memory: Alaya) -> dict[str, tuple[str, list[str]]]:
    """id -> (content, source sessions)."""
    with memory.reading("test") as graph:
        rows = graph.query("MATCH (c:Card) RETURN c.id, c.content, c.sources")
    return {cid: (content, [s["session_id"] for s in json.loads(sources)]) for cid, content, sources in rows}


@pytest.mark.parametrize("batch_cards", [2, 1000], ids=["into a stored card", "within one batch"])
def test_a_backlog_merges_a_repeated_statement_into_the_first_card(memory, monkeypatch, batch_cards):
    monkeypatch.setattr(engine, "_APPLY_BATCH_CARDS", batch_cards)
    _ingest_repeats(memory)
    report = memory.distill()
    assert (report.sessions, report.cards) == (4, 5)
    cards = _cards(memory)
    [(kept, (_, sessions))] = [(cid, c) for cid, c in cards.items() if REPEATED in c[0]]
    assert sessions == ["s0", "s1", "s2", "s3"]
    assert set(memory.raw.load_context(kept)) == {"s0", "s1", "s2", "s3"}  # L3 has every session's turns
    with memory.reading("test") as graph:
        extracted = graph.query("MATCH (c:Card {id: $id})-[:EXTRACTED_FROM]->(s:Session) RETURN s.id", {"id": kept})
    assert sorted(r[0] for r in extracted) == ["s0", "s1", "s2", "s3"]
    assert memory.index.card_count() == 5


def test_a_backlog_ends_as_one_session_at_a_time_does(tmp_path, small_batches):
    backlog, stepwise = Alaya(tmp_path / "backlog"), Alaya(tmp_path / "stepwise")
    for memory in (backlog, stepwise):
        memory.init()
    _ingest_repeats(backlog)
    backlog.distill()
    for i, topic in enumerate(TOPICS):
        stepwise.ingest(session_json(f"s{i}", [
            ("user", REPEATED), ("assistant", f"Separately, the {topic} needs a look before Friday's release."),
        ]))
        stepwise.distill()
    assert _cards(backlog) == _cards(stepwise)


def test_a_fact_is_contradicted_from_a_later_batch(memory, small_batches):
    memory.ingest(session_json("s-berlin", [("user", "I live in Berlin and love the winter markets there."),
                                            ("assistant", "The winter markets open in late November.")],
                               started_at="2025-03-01T10:00:00+00:00"))
    memory.ingest(session_json("s-lisbon", [("user", "Big news: I moved from Berlin to Lisbon last month."),
                                            ("assistant", "Congratulations on the move, the light there is lovely.")],
                               started_at="2025-06-01T10:00:00+00:00"))
    report = memory.distill()
    assert report.contradicted == 1
    old = next(c for c in memory.recall("where do I live? Berlin or Lisbon").nodes if "I live in Berlin" in c.content)
    assert old.superseded and old.valid_until == "2025-06-01T10:00:00+00:00"


def test_search_many_ranks_as_one_search_per_vector(tmp_path):
    rng = np.random.default_rng(3)
    store = VectorStore(tmp_path / "lancedb", "test", 32)
    store.create()
    vectors = rng.normal(size=(60, 32)).astype(np.float32)
    rows = [{"id": f"c{i}", "text": f"card {i}", "scope": ["main", "shared"][i % 2], "type": "concept"} for i in range(60)]
    store.upsert_cards(rows, vectors)
    store.delete_cards(["c0", "c1"])
    queries = np.concatenate([vectors[:8] + 0.1 * rng.normal(size=(8, 32)).astype(np.float32), np.zeros((1, 32), np.float32)])
    scopes = ["main", "shared"] * 4 + ["main"]
    found = store.search_many(queries, 5, scopes)
    lancedb = VectorStore(tmp_path / "lancedb", "test", 32)  # below MIN_ROWS: LanceDB's own flat search
    expected = [lancedb.vector_search(q, 5, [s]) if np.any(q) else [] for q, s in zip(queries, scopes)]
    assert [[cid for cid, _ in hits] for hits in found] == [[cid for cid, _ in hits] for hits in expected]
    assert all(abs(a[1] - b[1]) < 1e-4 for hits, want in zip(found, expected) for a, b in zip(hits, want))
    assert not {"c0", "c1"} & {cid for hits in found for cid, _ in hits}
