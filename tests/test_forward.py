"""The ids of cards merged into others keep resolving (issue 13): introspect's merges leave a
`Forward` from the dropped id to the kept card, chains end at the card that exists now, and
forwards to a card go when it is forgotten. Real Kuzu and LanceDB stores."""

from __future__ import annotations

from datetime import timedelta

from test_maintenance import DUP, T0, card, put

from openclaw_alaya.maintenance import consolidate, forget, temperature
from openclaw_alaya.store.embedded.graph import GraphStore
from openclaw_alaya.store.embedded.snapshot import GraphSnapshot


def resolved(memory, ids: list[str]) -> dict[str, str]:
    """What the graph and, on the embedded backend, an in-memory snapshot of it answer (they must agree)."""
    with memory.reading("test") as graph:
        found = graph.resolve_ids(ids)
        if isinstance(graph, GraphStore):
            assert GraphSnapshot(graph).resolve_ids(ids) == found
    return found


def forwards(memory) -> set[tuple[str, str]]:
    with memory.reading("test") as graph:  # through the port: every forward leads to a card
        return set(graph.forwards_to(sorted(graph.all_card_ids())).items())


def test_a_merged_id_forwards_to_the_kept_card_and_only_ids_that_are_no_card_resolve(memory):
    put(memory, [card("card-a", DUP, session="s1"),
                 card("card-b", DUP + ".", session="s2", created=T0 + timedelta(days=1)),
                 card("card-c", "The pgbouncer pool in billing holds fifty connections", session="s3")])
    assert resolved(memory, ["card-b"]) == {}
    consolidate.consolidate(memory, now=T0)
    assert forwards(memory) == {("card-b", "card-a")}
    assert resolved(memory, ["card-b", "card-a", "card-c", "card-nope", "card-b"]) == {"card-b": "card-a"}


def test_chains_of_merges_end_at_the_card_that_exists_now(memory):
    put(memory, [card("card-a", DUP, session="s1"),
                 card("card-b", DUP + ".", session="s2", created=T0 + timedelta(days=1))])
    consolidate.consolidate(memory, now=T0)  # b → a
    # a later duplicate that is used more: the next run keeps it and merges a into it
    put(memory, [card("card-d", DUP + "!", session="s4", access_count=5)])
    report = consolidate.consolidate(memory, now=T0)
    assert [(m["keep"], m["drop"]) for m in report["merges"]] == [("card-d", "card-a")]
    assert forwards(memory) == {("card-b", "card-d"), ("card-a", "card-d")}
    assert resolved(memory, ["card-a", "card-b"]) == {"card-a": "card-d", "card-b": "card-d"}


def test_forgetting_a_card_drops_the_forwards_to_it(memory):
    put(memory, [card("card-a", DUP, session="s1"), card("card-b", DUP + ".", session="s2")])
    consolidate.consolidate(memory, now=T0)
    later = T0 + timedelta(days=365)
    temperature.cool_down(memory, now=later)
    assert [c["card"] for c in forget.forget(memory, now=later)["cards"]] == ["card-a"]  # issue 31: with reasons
    assert forwards(memory) == set()
    assert resolved(memory, ["card-a", "card-b"]) == {}
