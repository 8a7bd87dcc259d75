"""The curation port's named operations (store/ports/curation.py) against a real Kuzu graph
made through the engine: a triplet commit, a note and its correction."""

from __future__ import annotations

import pytest

from openclaw_alaya.models import CONCEPT_TAG

TRIPLETS = [{"subject": "Robert", "relation": "maintains", "object": "billing-api"},
            {"subject": "Bob", "relation": "owns", "object": "the pager rota"}]


@pytest.fixture
def stored(memory):
    """The memory, and ids: the commit's session and fact cards, the old and the new note."""
    commit = memory.commit(TRIPLETS, entity_types=["person", "service"])
    old = memory.remember("The release train leaves every second Tuesday.", type="decision", tags=["Release"])
    new = memory.correct(old.card_id, "The release train leaves every Thursday since November.")
    maintains, owns = commit.cards
    return memory, {"commit": commit.session_id, "maintains": maintains, "owns": owns, "old": old.card_id,
                    "new": new.card_id, "new_session": new.session_id}


def test_entity_reads(stored):
    memory, ids = stored
    with memory.reading("test") as graph:
        assert [tuple(e) for e in graph.entities_named("robert")] == [("Robert", "person", [])]
        assert [tuple(e) for e in graph.entities_named("BILLING-API")] == [("billing-api", "service", [])]
        assert graph.entities_named("nobody") == []
        assert (graph.entity_count(), graph.entity_count("person"), graph.entity_count("project")) == (4, 1, 0)
        page = graph.entities_by_mentions(limit=10, offset=0)
        assert [(e.name, e.type, e.mentions) for e in page] == [
            ("Bob", None, 1), ("Robert", "person", 1), ("billing-api", "service", 1), ("the pager rota", None, 1)]
        assert [e.name for e in graph.entities_by_mentions(limit=2, offset=1)] == ["Robert", "billing-api"]
        assert [e.name for e in graph.entities_by_mentions("service", limit=10, offset=0)] == ["billing-api"]
        assert graph.entities_by_mentions("project", limit=10, offset=0) == []  # not every entity
        [card] = graph.entity_cards("Robert")
        assert (card.id, card.title, card.type, card.valid_until or "") == (  # "" or None: still valid
            ids["maintains"], "Robert maintains billing-api", "fact", "")
        assert graph.entity_cards("robert") == []  # the exact name only


def test_entity_changes(stored):
    memory, ids = stored
    with memory.writing("test") as graph:
        with graph:
            graph.add_entity_alias("Robert", "Rob")
            graph.add_entity_alias("nobody", "x")  # no such entity: nothing
            graph.set_entity_type("Carol", "person")  # made
            assert graph.merge_entities("Robert", "Bob") == [ids["owns"]]
            assert graph.merge_entities("Robert", "Robert") == graph.merge_entities("Robert", "nobody") == []
            assert graph.rename_entity("billing-api", "billing-service") == [ids["maintains"]]
            assert graph.rename_entity("nobody", "somebody") == []
    with memory.reading("test") as graph:
        assert [tuple(e) for e in graph.entities_named("bob")] == [("Robert", "person", ["Rob", "Bob"])]
        assert [tuple(e) for e in graph.entities_named("billing-api")] == [("billing-service", "service", ["billing-api"])]
        assert [tuple(e) for e in graph.entities_named("carol")] == [("Carol", "person", [])]
        assert graph.entities_named("somebody") == []
        assert {c.id for c in graph.entity_cards("Robert")} == {ids["maintains"], ids["owns"]}
        cards = graph.get_cards([ids["maintains"], ids["owns"]])
    assert cards[ids["owns"]].entities == ["Robert", "the pager rota"]
    assert cards[ids["maintains"]].entities == ["Robert", "billing-service"]


def test_sessions_and_supersedes(stored):
    memory, ids = stored
    with memory.reading("test") as graph:
        assert sorted(graph.session_card_ids(ids["commit"])) == sorted([ids["maintains"], ids["owns"]])
        assert graph.session_card_ids("nope") == []
        newest = max(sorted(graph.sessions(), key=lambda s: s["id"]), key=lambda s: s["ingested_at"])  # ties: first id
        assert graph.newest_session_id() == newest["id"]
        assert graph.superseded_by([ids["new"]]) == [ids["old"]]
        assert graph.superseded_by([ids["new"], ids["old"]]) == []  # not one of `ids`
        assert graph.superseded_by([ids["maintains"]]) == []


def test_no_session_has_no_newest(memory):
    with memory.reading("test") as graph:
        assert graph.newest_session_id() is None


def test_purge_matching(stored):
    memory, ids = stored
    release = sorted([ids["old"], ids["new"]])
    with memory.reading("test") as graph:
        assert graph.cards_matching_purge(subject="robert") == [ids["maintains"]]  # an entity
        assert graph.cards_matching_purge(subject="release train") == release  # a title
        assert graph.cards_matching_purge(relation="CONTRADICTS") == release  # a core relation's edge
        assert graph.cards_matching_purge(relation="MAINTAINS") == [ids["maintains"]]  # a triplet's tag
        assert graph.cards_matching_purge(before="2000-01-01T00:00:00+00:00") == []
        assert len(graph.cards_matching_purge(before="2999-01-01T00:00:00+00:00")) == 4
        assert graph.cards_matching_purge(subject="robert", relation="CONTRADICTS") == []  # every criterion
        assert graph.cards_matching_purge() == []


def test_card_page_and_headlines(stored):
    memory, ids = stored
    with memory.reading("test") as graph:
        page = graph.card_page(limit=2, offset=0)
        assert (page.total, len(page.cards), page.limit) == (4, 2, 2)
        assert [c.created_at for c in page.cards] == sorted((c.created_at for c in page.cards), reverse=True)
        assert {c.id for c in graph.card_page(tag="release", limit=10, offset=0).cards} == {ids["old"], ids["new"]}
        assert [c.id for c in graph.card_page(entities=["bob"], limit=10, offset=0).cards] == [ids["owns"]]
        assert graph.card_page(type="fact", tier="COLD", limit=10, offset=0).total == 0
        assert graph.card_page(scopes=["elsewhere"], limit=10, offset=0).total == 0
        assert graph.card_page(since="2999-01-01T00:00:00+00:00", limit=10, offset=0).total == 0
        empty = graph.card_page(type="fact", limit=0, offset=0)
        assert (empty.total, empty.cards) == (2, [])
        headlines = {h.id: h for h in graph.card_headlines()}
    assert set(headlines) == set(ids.values()) - {ids["commit"], ids["new_session"]}
    title, type_, importance, tags, origin = headlines[ids["old"]][1:]
    assert (title, type_, importance, origin) == ("The release train leaves every second Tuesday.", "decision", 0.7, "manual")
    assert [t for t in tags if not t.startswith(CONCEPT_TAG)] == ["Release"]  # and its concepts (distill/concepts.py)
