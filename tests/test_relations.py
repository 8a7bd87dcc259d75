"""Relations by meaning, offline (issue 35): the curated synonyms `--rel` follows with the hash
embedder (CAUSED_BY follows LED_TO into a card, never out of it), alias candidates of relation
names, entity-to-entity relations and their hierarchy, and the action items the heuristic
distiller extracts."""

from __future__ import annotations

import shlex

from test_maintenance import card, put
from test_cli import alaya, ok

from openclaw_alaya import Alaya
from openclaw_alaya.recall.synonyms import SYNONYM_FIT, following


def chain(memory) -> tuple[str, str, str]:
    """cause LED_TO effect, effect RESULTED_IN follow-up (English and Chinese cards)."""
    put(memory, [card("card-cause", "PgBouncer 的连接池只有 20 个连接，workers 开了 50 个", session="s1"),
                 card("card-effect", "Billing ran out of database connections during the nightly batch", session="s2"),
                 card("card-after", "We paged the on-call engineer and rolled back the worker count", session="s3")])
    memory.link("card-cause", "card-effect", "LED_TO")
    memory.link("card-effect", "card-after", "RESULTED_IN")
    return "card-cause", "card-effect", "card-after"


def walk(memory, start: str, rel: str) -> dict[str, tuple[str, float]]:
    result = memory.recall(from_nodes=[start], relations=[rel], depth=1)
    return {n.card_id: (n.matched_rel, n.rel_similarity) for n in result.nodes}


def test_caused_by_follows_led_to_into_the_card_with_the_hash_embedder(memory):
    cause, effect, after = chain(memory)
    assert memory.config.embedding.provider == "hash"
    assert walk(memory, effect, "CAUSED_BY") == {cause: ("LED_TO", SYNONYM_FIT)}  # its cause, not its follow-up
    assert walk(memory, cause, "CAUSED_BY") == {}  # LED_TO out of the cause leads to its effect
    assert walk(memory, cause, "CAUSES") == {effect: ("LED_TO", SYNONYM_FIT)}  # LED_TO means CAUSES
    assert walk(memory, after, "BECAUSE_OF") == {effect: ("RESULTED_IN", SYNONYM_FIT)}
    for _ in range(2):  # a process that recalls again reads the in-memory snapshot: the same walk
        assert walk(memory, effect, "CAUSED_BY") == {cause: ("LED_TO", SYNONYM_FIT)}


def test_a_named_relation_is_still_followed_both_ways_and_fits_fully(memory):
    cause, effect, after = chain(memory)
    assert walk(memory, effect, "LED_TO") == {cause: ("LED_TO", 1.0), after: ("RESULTED_IN", SYNONYM_FIT)}
    assert walk(memory, cause, "LED_TO") == {effect: ("LED_TO", 1.0)}


def test_query_walk_and_cli_follow_the_synonym(memory, tmp_path):
    cause, effect, _after = chain(memory)
    result = memory.recall(concepts=["billing database connections"], relations=["CAUSED_BY"], depth=1, top_k=5)
    reached = {n.card_id: n.matched_rel for n in result.nodes}
    assert reached.get(cause) == "LED_TO"
    proc = alaya(tmp_path / "data", "recall", "--from-nodes", effect, "--rel", "CAUSED_BY", "--depth", "1")
    out = ok(proc)
    assert "PgBouncer" in out and "via LED_TO" in out
    assert b"no link has the relation" not in proc.stderr  # a synonym of CAUSED_BY is in use
    described = {r["name"]: r["description"] for r in memory.schema()["relations"]}
    assert described["LED_TO"] == "custom relation, a synonym of CAUSED_BY the other way round"
    assert described["RESULTED_IN"] == "custom relation, a synonym of CAUSED_BY the other way round"


def test_synonym_table_directions_and_symmetric_meanings():
    follow = following(["CAUSED_BY"])
    assert follow["CAUSED_BY"] == (1.0, None) and follow["BECAUSE_OF"] == (SYNONYM_FIT, True)
    assert follow["LED_TO"] == (SYNONYM_FIT, False) and follow["CAUSES"] == (SYNONYM_FIT, False)
    assert following(["CONTRADICTS"])["SUPERSEDES"] == (SYNONYM_FIT, None)  # 矛盾/替代: both ways
    assert following(["DEPENDS_ON"])["REQUIRED_BY"] == (SYNONYM_FIT, False)
    assert following(["CAUSED_BY", "CAUSES"])["LED_TO"] == (SYNONYM_FIT, None)  # asked both ways
    assert "DEPENDS_ON" not in follow and following(["NOT_LISTED"]) == {"NOT_LISTED": (1.0, None)}


# --- alias candidates ----------------------------------------------------------------------


def test_alias_candidates_by_spelling_are_proposed_offline_and_confirmed(memory, tmp_path):
    from openclaw_alaya.maintenance import consolidate

    put(memory, [card(f"card-i{i}", text, session=f"s{i}") for i, text in enumerate([
        "The relay rewrite borrowed the actor model from Erlang", "Erlang's supervisors restart crashed actors",
        "灵感来自 Erlang 的监督树", "The queue design came from the Kafka paper"])])
    memory.link("card-i0", "card-i1", "INSPIRED_BY")
    memory.link("card-i2", "card-i1", "INSPIRED_BY_IDEA")
    memory.link("card-i3", "card-i1", "LED_TO")
    memory.link("card-i0", "card-i3", "RESULTED_IN")
    report = consolidate.consolidate(memory, dry_run=True)["relations"]
    by_pair = {(a["name"], a["alias_of"]): a for a in report["alias_candidates"]}
    found = by_pair[("INSPIRED_BY_IDEA", "INSPIRED_BY")]  # the hash embedder alone misses it
    assert "extends" in found["why"] and found["counts"] == [1, 1]
    assert "synonym" in by_pair[("RESULTED_IN", "LED_TO")]["why"]  # both mean CAUSES

    # not merged by itself: INSPIRED_BY_IDEA is followed for INSPIRED_BY only as far as its
    # words embed close, until the owner confirms the alias with the command given
    before = walk(memory, "card-i1", "INSPIRED_BY")
    assert before["card-i0"] == ("INSPIRED_BY", 1.0) and before.get("card-i2", ("", 0.0))[1] < 1
    command = shlex.split(found["confirm"])
    assert command[:3] == ["alaya", "config", "set"]
    ok(alaya(tmp_path / "data", *command[1:]))
    memory = Alaya(tmp_path / "data")
    assert walk(memory, "card-i1", "INSPIRED_BY") == {"card-i0": ("INSPIRED_BY", 1.0),
                                                      "card-i2": ("INSPIRED_BY_IDEA", 1.0)}
    again = consolidate.consolidate(memory, dry_run=True)["relations"]["alias_candidates"]
    assert ("INSPIRED_BY_IDEA", "INSPIRED_BY") not in {(a["name"], a["alias_of"]) for a in again}


def test_alias_names_must_be_relation_names():
    import pytest

    from openclaw_alaya.config import RecallConfig

    assert RecallConfig(relation_aliases={"INSPIRED_BY_IDEA": "INSPIRED_BY"}).relation_aliases == {
        "INSPIRED_BY_IDEA": "INSPIRED_BY"}
    with pytest.raises(ValueError, match="no relation name"):
        RecallConfig(relation_aliases={"inspired by": "INSPIRED_BY"})


# --- entity relations and hierarchy --------------------------------------------------------


def distilled(memory, sid: str, text: str) -> None:
    from helpers import session_json

    memory.ingest(session_json(sid, [("user", text)]))
    memory.distill()


def test_entities_get_is_a_and_part_of_relations_from_the_distiller(memory, tmp_path):
    from openclaw_alaya.distill.entity_links import entity_links
    from openclaw_alaya.models import Card

    distilled(memory, "s-pool", "PgBouncer is a connection pooler for Postgres.")
    distilled(memory, "s-react", "React 是一个前端框架。")
    shown = memory.entities("show", "pgbouncer")
    assert {(r["rel"], r["dst"]) for r in shown["relations"]} >= {("IS_A", "connection pooler"), ("DEPENDS_ON", "Postgres")}
    assert ("React", "IS_A", "前端框架") in {(r["src"], r["rel"], r["dst"]) for r in memory.entities("show", "React")["relations"]}
    out = ok(alaya(tmp_path / "data", "entities", "show", "React"))
    assert "React IS_A 前端框架" in out

    # navigate: a concept reaches the cards of the entities under it, which never name it
    distilled(memory, "s-size", "PgBouncer's pool size was 20 while the workers opened 50.")
    distilled(memory, "s-hook", "React 的 useEffect 在严格模式下会运行两次。")
    for concept, card_text in (("connection pooler", "pool size was 20"), ("前端框架", "useEffect")):
        nodes = memory.recall(concepts=[concept], depth=0, top_k=10).nodes
        assert any(card_text in n.content for n in nodes), concept

    tagged = Card(id="c", title="hooks", content="useState keeps state", tags=["技术/前端/React"],
                  created_at="2026-01-01T00:00:00+00:00", updated_at="2026-01-01T00:00:00+00:00")
    assert entity_links(tagged) == [("前端", "PART_OF", "技术"), ("React", "PART_OF", "前端")]  # a tag path
    part = Card(id="d", title="ledger", content="Redis 属于缓存层的一部分。", entities=["Redis"],
                created_at="2026-01-01T00:00:00+00:00", updated_at="2026-01-01T00:00:00+00:00")
    assert entity_links(part) == [("Redis", "PART_OF", "缓存层")]
    vague = part.model_copy(update={"content": "This is a problem for us.", "entities": []})
    assert entity_links(vague) == []  # no entity, nothing stated


def test_entity_relations_follow_a_merge_and_a_category_outlives_the_sweep(memory_on_backend):
    memory = memory_on_backend
    distilled(memory, "s-pool", "PgBouncer is a connection pooler for Postgres.")
    memory.entities("rename", "pgbouncer", "PgBouncer")
    links = {(r["src"], r["rel"], r["dst"]) for r in memory.entities("show", "PgBouncer")["relations"]}
    assert ("PgBouncer", "IS_A", "connection pooler") in links
    with memory.writing("test") as graph:
        with graph:
            graph.remove_unmentioned_entities()
    # no card mentions "connection pooler", yet it stays: it is still PgBouncer's category
    assert memory.entities("show", "connection pooler")["relations"]


# --- action items --------------------------------------------------------------------------


def test_action_items_are_tagged_todo_and_listed_in_english_and_chinese(memory, tmp_path):
    import json

    from openclaw_alaya.distill.actions import is_action_item

    for sid, text in (("s-en", "TODO: rotate the staging database password before Friday."),
                      ("s-will", "I'll write the billing migration script tomorrow."),
                      ("s-zh", "待办：给 billing 服务加上连接池监控。"),
                      ("s-need", "我们需要在周五前把证书续期。"),
                      ("s-fact", "Kuzu is the embedded graph database we use for cards."),
                      ("s-dep", "这个服务需要 Redis 才能启动。")):
        distilled(memory, sid, text)
    listed = json.loads(ok(alaya(tmp_path / "data", "list", "--tag", "todo", "--json")))["cards"]
    assert {c["sources"][0]["session_id"] for c in listed} == {"s-en", "s-will", "s-zh", "s-need"}
    assert all("todo" in c["tags"] for c in listed)
    assert not is_action_item("需要注意：不要在周五部署。") and not is_action_item("I'll never use MongoDB again.")
    assert is_action_item("We need to add an index on events.created_at.")
