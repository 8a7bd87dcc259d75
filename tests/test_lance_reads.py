"""A process that only reads (a one-shot `alaya recall`, a hook with no daemon) reads L1 through
pylance instead of LanceDB (store/embedded/lance_reads.py): `import lancedb` costs about a second. Both
must return the same rows and scores over the same files, indexed rows and rows appended since
the index was built alike."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import session_json

from openclaw_alaya import Alaya
from openclaw_alaya.store.embedded.lance_reads import LanceReads

DEMO = Path(__file__).resolve().parents[1] / "openclaw_alaya" / "demo"
QUERIES = ["which graph database did we choose", "pnpm package manager", "billing service timeout",
           "我们用什么数据库", "前端 框架", "the", "Kuzu LanceDB Neo4j", "dog shelter city"]


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """The demo sessions distilled and the full-text index folded in (indexed rows), then more
    sessions in two agents' scopes distilled after it (rows the index has not seen yet)."""
    data = tmp_path_factory.mktemp("lance-reads") / "data"
    memory = Alaya(data)
    memory.init()
    for path in sorted(DEMO.iterdir()):
        memory.ingest(path)
    memory.distill()
    memory.index.optimize()
    memory.ingest(session_json("s-dog", [("user", "My son wants a dog, so we drove to the city shelter.")],
                               agent_id="ops"))
    memory.ingest(session_json("s-zh", [("user", "我们决定前端框架用 React，不用 Vue。")], agent_id="main"))
    memory.distill()
    return data


def _pair(data: Path):
    """The same store read by two fresh processes' worth of handles: one through pylance, one
    through LanceDB."""
    lance, lancedb = Alaya(data).index, Alaya(data).index
    lancedb._reads = False
    return lance, lancedb


def _same_ranking(a: list[tuple[str, float]], b: list[tuple[str, float]]) -> None:
    assert [cid for cid, _ in a] == [cid for cid, _ in b]
    assert np.allclose([s for _, s in a], [s for _, s in b], atol=1e-5)


@pytest.mark.parametrize("scopes", [None, ["main", "shared"], ["ops"]])
def test_same_full_text_and_vector_rankings(store, scopes):
    lance, lancedb = _pair(store)
    embedder = Alaya(store).embedder
    found = 0
    for query in QUERIES:
        lance_vectors: dict[str, np.ndarray] = {}
        lancedb_vectors: dict[str, np.ndarray] = {}
        hits = lance.text_search(query, 20, scopes, lance_vectors)
        _same_ranking(hits, lancedb.text_search(query, 20, scopes, lancedb_vectors))
        assert lance_vectors.keys() == lancedb_vectors.keys()
        found += len(hits)
        vector = embedder.embed([query])[0]
        _same_ranking(lance.vector_search(vector, 20, scopes), lancedb.vector_search(vector, 20, scopes))
    assert found  # the queries match something
    assert isinstance(lance._reads, LanceReads)  # read through pylance throughout, no fallback


def test_same_rows_vectors_and_relations(store):
    lance, lancedb = _pair(store)
    assert lance.card_count() == lancedb.card_count() > 0
    ids = lance.card_ids()
    assert sorted(ids) == sorted(lancedb.card_ids())
    got, want = lance.vectors_for(ids[:5] + ["card-missing"]), lancedb.vectors_for(ids[:5] + ["card-missing"])
    assert got.keys() == want.keys() == set(ids[:5])
    assert all(np.array_equal(got[cid], want[cid]) for cid in got)
    got, want = lance.relation_vectors(), lancedb.relation_vectors()
    assert got.keys() == want.keys() and got
    assert all(np.array_equal(got[name], want[name]) for name in got)
    assert isinstance(lance._reads, LanceReads)


def test_a_later_read_sees_another_process_write(store, tmp_path):
    """The reader opens a table again when it has committed a version since it was opened."""
    data = tmp_path / "data"
    shutil.copytree(store, data)
    reader = Alaya(data).index
    before = reader.card_count()
    assert not reader.text_search("nightly backup", 5)
    writer = Alaya(data)
    writer.ingest(session_json("s-later", [("user", "We moved the nightly backup to 03:00 UTC.")]))
    writer.distill()
    assert reader.card_count() == writer.index.card_count() > before
    assert reader.text_search("nightly backup", 5)
    assert isinstance(reader._reads, LanceReads)


def test_a_process_that_writes_reads_through_lancedb(memory):
    memory.ingest(session_json("s-1", [("user", "We chose Postgres for the billing ledger.")]))
    memory.distill()
    assert memory.index._reader() is None
    assert memory.index.text_search("Postgres ledger", 5)


def test_a_one_shot_call_runs_without_the_cyclic_collector_and_other_commands_keep_it(store):
    """A call the daemon would have served runs once and exits: the collector's scans of what
    the imports keep are wasted there (about 60 ms); `status` and every other command keep it."""
    def collector_after(*argv: str) -> str:
        code = ("import gc, sys; from openclaw_alaya.cli.client import main; "
                f"rc = main(['--data-dir', {str(store)!r}, *{list(argv)!r}]); print(gc.isenabled(), rc)")
        env = {**os.environ, "ALAYA_NO_SERVE": "1"}
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
        return run.stdout.strip().splitlines()[-1]

    assert collector_after("recall", "which graph database did we choose") == "False 0"
    assert collector_after("status") == "True 0"


def test_a_one_shot_recall_never_imports_lancedb(store):
    """Nor numpy.ma, which Lance's conversion of a numpy query vector imports (about 20 ms)."""
    code = ("import sys; from openclaw_alaya.cli.main import main; "
            f"rc = main(['--data-dir', {str(store)!r}, 'recall', 'which graph database did we choose']); "
            "print('lancedb' in sys.modules, 'numpy.ma' in sys.modules, rc)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "Kuzu" in out
    assert out.strip().splitlines()[-1] == "False False 0"
