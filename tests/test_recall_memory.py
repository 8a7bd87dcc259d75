"""What a long-lived process keeps in memory for recall (graph_snapshot.py, vector_cache.py)
answers exactly as the stores on disk do, and never outlives a write by another process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import session_json

from openclaw_alaya.store.embedded import vector_cache
from openclaw_alaya.store.embedded.snapshot import GraphSnapshot

ALAYA = Path(sys.executable).with_name("alaya")

FACTS = {
    "a": "Alice Chen said the deploy pipeline for Orion needs the artifact registry at registry.internal:5000.",
    "b": "Bob Meyer said the artifact registry stores blobs on the MinIO bucket called zephyr-artifacts.",
    "c": "Alice Chen noted MinIO credentials rotate every 30 days through Vault path secret/minio/rotation.",
    "d": "Carol Diaz said another pipeline, Hermes, deploys static sites to Netlify with preview builds.",
}


def _store(memory) -> dict[str, str]:
    ids = {}
    for key, text in FACTS.items():
        memory.ingest(session_json(f"s-{key}", [("user", text)]))
        memory.distill()
        ids[key] = memory.recall(text, top_k=1).nodes[0].card_id
    memory.link(ids["a"], ids["b"], "DEPENDS_ON")
    memory.link(ids["b"], ids["c"], "DEPENDS_ON", weight=0.5)
    memory.link(ids["a"], ids["d"], "similar to")
    memory.link(ids["d"], ids["c"], "inspired by")  # a custom relation
    return ids


@pytest.mark.embedded_only
def test_snapshot_answers_as_the_graph_does(memory):
    ids = _store(memory)
    everything = list(ids.values()) + ["card-not-there"]
    with memory.reading("test") as graph:
        snapshot = GraphSnapshot(graph)
        entities = [row[0] for row in graph.query("MATCH (e:Entity) RETURN e.name")]
        assert entities, "the heuristic distiller names the speakers"
        assert snapshot.get_cards(everything) == graph.get_cards(everything)
        for chosen in ([ids["a"]], [ids["b"], ids["c"]], everything):
            for relations in (None, ["DEPENDS_ON"], ["INSPIRED_BY"]):
                assert sorted(snapshot.neighbours(chosen, relations)) == sorted(graph.neighbours(chosen, relations))
            assert snapshot.fanout(chosen) == graph.fanout(chosen)
        for names in ([entities[0]], [e.upper() for e in entities], ["nobody at all"]):
            assert set(snapshot.card_ids_mentioning(names)) == set(graph.card_ids_mentioning(names))
    assert snapshot.fanout([ids["a"]]) == {"DEPENDS_ON": 1, "SIMILAR_TO": 1}
    assert snapshot.fanout([ids["d"]]) == {"INSPIRED_BY": 1, "SIMILAR_TO": 1}  # names normalised


@pytest.mark.embedded_only
def test_snapshot_of_an_empty_graph(memory):
    with memory.reading("test") as graph:
        snapshot = GraphSnapshot(graph)
    assert snapshot.get_cards(["card-x"]) == {} and snapshot.neighbours(["card-x"], None) == []
    assert snapshot.fanout(["card-x"]) == {} and snapshot.card_ids_mentioning(["Alice"]) == []


@pytest.mark.embedded_only
def test_recall_sees_what_another_process_wrote(memory):
    ids = _store(memory)
    for _ in range(2):  # from the second recall on, this process answers from its snapshot
        memory.recall(from_nodes=[ids["c"]])
    assert memory.graph_views._snapshot is not None
    before = {n.card_id for n in memory.recall(from_nodes=[ids["c"]]).nodes}
    assert ids["a"] not in before

    data_dir = str(memory.dirs.root)
    run = [str(ALAYA), "--data-dir", data_dir]
    subprocess.run([*run, "link", ids["c"], ids["a"], "--rel", "CAUSES"], check=True, capture_output=True)
    after = {n.card_id: n.matched_rel for n in memory.recall(from_nodes=[ids["c"]]).nodes}
    assert after.get(ids["a"]) == "CAUSES"

    new = memory.dirs.root.parent / "new.json"
    new.write_bytes(session_json("s-new", [("user", "Dana Wu said the Kestrel cluster runs on ARM nodes in Frankfurt.")]))
    subprocess.run([*run, "ingest", str(new), "--distill"], check=True, capture_output=True)
    found = memory.recall("Kestrel cluster ARM nodes Frankfurt", top_k=1).nodes
    assert found and "Kestrel" in found[0].content


@pytest.fixture
def table_store(tmp_path):
    """A bare L1 index with 2,500 random 64-dimension rows in two scopes (enough for the copy)."""
    from openclaw_alaya.store.embedded.vectors import VectorStore

    store = VectorStore(tmp_path / "lancedb", "test-random", 64)
    store.create()
    rng = np.random.default_rng(7)
    _add(store, rng, 0, 2500)
    return store, rng


def _add(store, rng, start: int, count: int) -> None:
    rows = [{"id": f"card-{i:05d}", "text": f"row {i}", "scope": "shared" if i % 3 else "agent-x", "type": "fact"}
            for i in range(start, start + count)]
    vectors = rng.normal(size=(count, store.dim)).astype(np.float32)
    vectors[::97] = 0.0  # a few all-zero vectors
    store.upsert_cards(rows, vectors)


def _flat(store, query, scopes):
    """LanceDB's own flat search: a fresh handle's first search never uses the copy."""
    from openclaw_alaya.store.embedded.vectors import VectorStore

    fresh = VectorStore(store.path, store.embedder_id, store.dim)
    return fresh.vector_search(query, 20, scopes)


@pytest.mark.parametrize("float16", [False, True])
def test_vector_copy_ranks_as_lancedb_through_changes(table_store, monkeypatch, float16):
    monkeypatch.setattr(vector_cache, "_CHUNK", 300)  # several chunks, one partial
    if float16:
        monkeypatch.setattr(vector_cache, "FLOAT16_ABOVE_BYTES", 0)
    store, rng = table_store
    store.resident = True
    queries = rng.normal(size=(4, store.dim)).astype(np.float32)

    def check() -> None:
        for query in queries:
            for scopes in (None, ["agent-x"]):
                got, want = store.vector_search(query, 20, scopes), _flat(store, query, scopes)
                assert store._cache is not None, "the in-memory copy answered"
                tolerance = 2e-3 if float16 else 1e-5
                assert [c for c, _ in got[:5]] == [c for c, _ in want[:5]]
                assert np.allclose([s for _, s in got], [s for _, s in want], atol=tolerance)

    check()
    assert store._cache.dtype == (np.float16 if float16 else np.float32)
    store.delete_cards([f"card-{i:05d}" for i in range(0, 2500, 7)])
    _add(store, rng, 2500, 400)
    _add(store, rng, 100, 50)  # rewritten rows: new vectors under old ids
    check()
