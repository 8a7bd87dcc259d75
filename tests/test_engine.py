"""The engine end to end on real Kuzu and LanceDB files: ingest, distill, recall, trace, link."""

from __future__ import annotations

import json

import pytest
from helpers import session_json

from openclaw_alaya.errors import InputError, NotFoundError
from openclaw_alaya.maintenance.status import status as alaya_status
from openclaw_alaya.text import estimate_tokens

OPS = [
    ("user", "The billing service went down at 14:05 after the deploy of v2.3.1."),
    ("assistant", "The root cause was pgbouncer pool_size=20 being exhausted because the new worker count is 64."),
    ("user", "We decided to raise pool_size to 80 in /etc/pgbouncer/pgbouncer.ini and cap workers at 48."),
]
ZH = [
    ("user", "记住：我们的团队回复一律用中文，代码注释用英文。"),
    ("assistant", "好的，已记录这个偏好：回复用中文，代码注释用英文。"),
    ("user", "另外注意：周五下午不要上线，上次周五发布导致了数据库迁移失败。"),
]


def _ingest(memory, session_id, turns, **kw):
    result = memory.ingest(session_json(session_id, turns, **kw))
    memory.distill()
    return result


def _card_for(memory, query, **kw):
    nodes = memory.recall(query, top_k=1, **kw).nodes
    assert nodes, f"no card for {query!r}"
    return nodes[0]


def test_ingest_is_idempotent_and_stores_only_new_turns(memory):
    first = memory.ingest(session_json("s-ops", OPS[:2]))
    again = memory.ingest(session_json("s-ops", OPS[:2]))
    longer = memory.ingest(session_json("s-ops", OPS))
    assert (first.new_turns, again.new_turns, longer.new_turns) == (2, 0, 1)
    assert longer.total_turns == 3
    assert [t.id for t in memory.raw.load("s-ops").turns] == ["t1", "t2", "t3"]
    assert alaya_status(memory)["sessions"] == 1


def test_distill_covers_only_new_turns_and_is_repeatable(memory):
    memory.ingest(session_json("s-ops", OPS[:2]))
    first = memory.distill()
    assert first.cards >= 1
    assert memory.distill().cards == 0  # nothing pending
    memory.ingest(session_json("s-ops", OPS))
    second = memory.distill()
    assert second.cards >= 1
    cards_after = alaya_status(memory)["cards"]
    node = _card_for(memory, "pool_size 80 pgbouncer.ini workers 48")
    assert node.sources[0].turn_ids == ["t3"]
    assert cards_after == first.cards + second.cards


def test_recall_json_shape_and_trace_back_to_turns(memory):
    _ingest(memory, "s-ops", OPS)
    result = memory.recall("why did pgbouncer run out of connections?")
    dumped = result.model_dump()
    assert set(dumped) == {"nodes", "explorable", "h_distance_avg", "forwarded"}
    node = dumped["nodes"][0]
    assert {"card_id", "title", "content", "score", "h_distance", "matched_rel", "rel_similarity",
            "type", "tags", "tier", "sources"} <= set(node)
    assert node["sources"][0]["session_id"] == "s-ops"
    assert "pool_size=20" in node["content"]
    trace = memory.trace(node["card_id"])
    source_turns = {t.id for s in trace.sessions for t in s.turns}
    assert source_turns == set(node["sources"][0]["turn_ids"])
    assert any("pool_size=20" in t.content for s in trace.sessions for t in s.turns)
    assert trace.sessions[0].path.endswith("s-ops.json")


def test_chinese_query_finds_chinese_card(memory):
    _ingest(memory, "s-ops", OPS)
    _ingest(memory, "s-zh", ZH)
    node = _card_for(memory, "周五上线")
    assert node.sources[0].session_id == "s-zh"
    assert "周五" in node.content


def _chain(memory):
    """Three single-fact sessions linked A -DEPENDS_ON-> B -DEPENDS_ON-> C, and A -SIMILAR_TO- D."""
    facts = {
        "a": "The deploy pipeline for Orion needs the artifact registry at registry.internal:5000.",
        "b": "The artifact registry stores blobs on the MinIO bucket called zephyr-artifacts.",
        "c": "MinIO credentials rotate every 30 days through Vault path secret/minio/rotation.",
        "d": "Another pipeline, Hermes, deploys static sites to Netlify with preview builds.",
    }
    ids = {}
    for key, text in facts.items():
        _ingest(memory, f"s-{key}", [("user", text)])
        ids[key] = _card_for(memory, text).card_id
    memory.link(ids["a"], ids["b"], "DEPENDS_ON")
    memory.link(ids["b"], ids["c"], "DEPENDS_ON")
    memory.link(ids["a"], ids["d"], "similar to")
    return ids


def test_relation_filtered_traversal_at_depth_two(memory):
    ids = _chain(memory)
    result = memory.recall(concepts=["Orion deploy pipeline"], relations=["DEPENDS_ON"], depth=2, top_k=10)
    by_id = {n.card_id: n for n in result.nodes}
    assert ids["b"] in by_id and by_id[ids["b"]].matched_rel == "DEPENDS_ON"
    assert ids["c"] in by_id and by_id[ids["c"]].matched_rel == "DEPENDS_ON"
    assert by_id[ids["c"]].h_distance > by_id[ids["b"]].h_distance
    one_hop = memory.recall(concepts=["Orion deploy pipeline"], relations=["DEPENDS_ON"], depth=1, top_k=10)
    assert ids["c"] not in {n.card_id for n in one_hop.nodes if n.matched_rel}


def test_from_nodes_navigation_returns_neighbours(memory):
    ids = _chain(memory)
    result = memory.recall(from_nodes=[ids["a"]])
    got = {n.card_id: n.matched_rel for n in result.nodes}
    assert ids["a"] not in got
    assert got.get(ids["b"]) == "DEPENDS_ON"
    assert got.get(ids["d"]) == "SIMILAR_TO"
    onward = memory.recall(from_nodes=[ids["b"]], relations=["DEPENDS_ON"])
    assert {n.card_id for n in onward.nodes} == {ids["a"], ids["c"]}
    with pytest.raises(NotFoundError):
        memory.recall(from_nodes=["card-does-not-exist"])


def test_explorable_lists_relations_leading_out(memory):
    ids = _chain(memory)
    result = memory.recall("Orion deploy pipeline registry", top_k=1)
    assert result.nodes[0].card_id == ids["a"]
    rels = {e.rel: e.count for e in result.explorable}
    assert rels.get("DEPENDS_ON") == 1 and rels.get("SIMILAR_TO") == 1


def test_budget_is_respected(memory):
    for i in range(6):
        _ingest(memory, f"s-{i}", [("user", f"Server node-{i} in rack {i} runs PostgreSQL 16 with 64 GB RAM and {i} replicas for the ledger database.")])
    full = memory.recall("PostgreSQL ledger database replicas", top_k=20)
    assert len(full.nodes) >= 4
    for budget in (30, 60, 120):
        nodes = memory.recall("PostgreSQL ledger database replicas", budget=budget).nodes
        used = sum(estimate_tokens(n.title) + estimate_tokens(n.content) for n in nodes)
        assert nodes and used <= budget


def test_scope_filters_other_agents(memory):
    _ingest(memory, "s-main", [("user", "The staging cluster kubeconfig lives at ~/.kube/staging-eu.yaml.")], agent_id="main")
    _ingest(memory, "s-other", [("user", "The staging cluster for marketing uses ~/.kube/mkt-staging.yaml.")], agent_id="marketing")
    _ingest(memory, "s-shared", [("user", "Every staging cluster is reset on Sundays at 02:00 UTC.")])
    scoped = memory.recall("staging cluster", scope="main", top_k=10)
    sessions = {n.sources[0].session_id for n in scoped.nodes}
    assert "s-main" in sessions and "s-shared" in sessions and "s-other" not in sessions


def test_link_rules(memory):
    ids = _chain(memory)
    custom = memory.link(ids["c"], ids["d"], "blocks release of")
    assert custom.rel == "BLOCKS_RELEASE_OF" and custom.custom and custom.edges == 1
    symmetric = memory.link(ids["b"], ids["d"], "CONTRADICTS")
    assert symmetric.edges == 2
    schema = {r["name"]: r for r in memory.schema()["relations"]}
    assert schema["BLOCKS_RELEASE_OF"]["core"] is False and schema["BLOCKS_RELEASE_OF"]["count"] == 1
    assert schema["CONTRADICTS"]["count"] == 2
    with pytest.raises(InputError):
        memory.link(ids["a"], ids["b"], "../../etc")
    with pytest.raises(NotFoundError):
        memory.link(ids["a"], "card-missing", "DEPENDS_ON")


@pytest.mark.embedded_only
def test_recall_writes_access_log_not_graph(memory):
    _ingest(memory, "s-ops", OPS)
    before = memory.dirs.graph.stat().st_mtime_ns
    memory.recall("pgbouncer")
    assert memory.dirs.graph.stat().st_mtime_ns == before
    lines = memory.dirs.access_log.read_text().splitlines()
    assert json.loads(lines[-1])["cards"]
