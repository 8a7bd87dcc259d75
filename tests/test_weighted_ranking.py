"""Weighted ranking (issue 31): recall's relevance weighed by recency, importance, use counted
at recall time and tag hierarchy, as a bounded factor; hierarchical tags filter recall and
listing; the current version of a changed fact ranks above the ones it superseded. Real Kuzu
and LanceDB stores, the default offline configuration."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from openclaw_alaya import Alaya
from openclaw_alaya.bridge import inject
from openclaw_alaya.recall import tags
from openclaw_alaya.recall.usage_now import unfolded
from openclaw_alaya.recall.weights import Weigher

T0 = datetime(2026, 3, 1, 9, tzinfo=timezone.utc)


@pytest.fixture
def at(monkeypatch):
    """Set the memory's clock (ALAYA_NOW) for what is stored next."""
    def move(moment: datetime) -> None:
        monkeypatch.setenv("ALAYA_NOW", moment.isoformat())
    return move


def _ids(memory: Alaya, query: str, **options) -> list[str]:
    return [n.card_id for n in memory.recall(query, **options).nodes]


def _weigher(memory: Alaya, now: datetime, **weights: float) -> Weigher:
    """The weighing of a recall at `now` as the engine sets it up (the unfolded log read)."""
    return Weigher(memory.config.recall.weights.model_copy(update=weights), now, unfolded(memory.dirs.state))


def test_recency_breaks_a_tie_toward_the_newer_card(memory, at):
    at(T0)
    old = memory.remember("The staging deploy key rotates on the first Monday").card_id
    at(T0 + timedelta(days=200))
    new = memory.remember("The production deploy key rotates every second Friday").card_id
    cards = {c.id: c for c in memory.list_cards().cards}
    weigh = _weigher(memory, T0 + timedelta(days=200))
    assert weigh.factor(cards[new]) > weigh.factor(cards[old])  # the same relevance: the newer first


def test_importance_breaks_a_tie(memory):
    low = memory.remember("The build cache lives on the runner disk", importance=0.1).card_id
    high = memory.remember("The build cache lives on the runner disk, always", importance=0.9).card_id
    cards = {c.id: c for c in memory.list_cards().cards}
    weigh = _weigher(memory, datetime.now(timezone.utc))
    assert weigh.factor(cards[high]) > weigh.factor(cards[low])


def test_a_recall_not_yet_folded_already_raises_the_card(memory):
    first = memory.remember("The on-call pager rota is in the wiki").card_id
    second = memory.remember("The escalation list sits next to the on-call pager rota").card_id
    now = datetime.now(timezone.utc)
    before = _weigher(memory, now, access=0.03)  # off by default (config.py says why)
    cards = {c.id: c for c in memory.list_cards().cards}
    assert before.factor(cards[first]) == pytest.approx(before.factor(cards[second]), rel=1e-6)
    for _ in range(3):  # recalls returning only the second card; no introspect folds them
        assert _ids(memory, "escalation list", top_k=1) == [second]
    assert all(c.access_count == 0 for c in memory.list_cards().cards)  # the cards' own counters
    after = _weigher(memory, now, access=0.03)
    assert after.factor(cards[second]) > after.factor(cards[first])
    assert unfolded(memory.dirs.state).count(second) == 3


def test_tag_filter_keeps_the_tag_and_its_children(memory):
    react = memory.remember("We use Zustand for state in the web app", tags=["技术/前端/React"]).card_id
    front = memory.remember("The web app state is kept small", tags=["技术/前端"]).card_id
    back = memory.remember("The billing service keeps state in Postgres", tags=["技术/后端"]).card_id
    near = memory.remember("The 技术/前 tag is a typo for state", tags=["技术/前"]).card_id
    assert set(_ids(memory, "state", tags=["技术/前端"])) == {react, front}
    assert set(_ids(memory, "state", tags=["技术/前端/react"])) == {react}
    assert set(_ids(memory, "state", tags=["技术"])) == {react, front, back, near}
    listed = memory.list_cards(tag="技术/前端").cards
    assert {c.id for c in listed} == {react, front}
    assert {c.id for c in memory.list_cards(tag="TECH").cards} == set()


def test_tag_grades_exact_parent_child_sibling():
    card = ["tech/frontend/react"]
    assert tags.grade(card, [tags.path("Tech/Frontend/React")]) == tags.EXACT
    assert tags.grade(card, [tags.path("tech/frontend")]) == tags.PARENT
    assert tags.grade(card, [tags.path("tech/frontend/react/hooks")]) == tags.CHILD
    assert tags.grade(card, [tags.path("tech/frontend/vue")]) == tags.SIBLING
    assert tags.grade(card, [tags.path("tech/backend")]) == 0
    assert tags.asked_in("what did we pick in tech/frontend?") == [("tech", "frontend")]


def test_a_tag_named_in_the_query_ranks_the_closer_tag_first(memory):
    ids = {}
    for tag in ("tech/backend/db", "tech/frontend/vue", "tech/frontend", "tech/frontend/react"):
        ids[tag] = memory.remember(f"Pick the state library carefully ({tag.split('/')[-1]} notes)",
                                   tags=[tag]).card_id
    found = _ids(memory, "tech/frontend/react state library")
    order = [found.index(ids[t]) for t in ("tech/frontend/react", "tech/frontend", "tech/frontend/vue")]
    assert order == sorted(order), found
    assert found.index(ids["tech/frontend/vue"]) < found.index(ids["tech/backend/db"])


def test_a_fact_changed_three_times_ranks_its_current_value_first(memory, at):
    values = ["Acme", "Initech", "Globex", "Umbrella"]
    cards = []
    for i, company in enumerate(values):
        at(T0 + timedelta(days=90 * i))
        done = memory.commit([{"subject": "Alice", "relation": "works at", "object": company}])
        cards.append(done.cards[0])
    now = T0 + timedelta(days=300)
    nodes = memory.recall("where does Alice work", concepts=["Alice"], now=now).nodes
    assert nodes[0].card_id == cards[-1] and not nodes[0].superseded
    assert all(n.superseded for n in nodes if n.card_id in cards[:-1])
    block = inject.build(memory, inject.StartRequest(prompt="where does Alice work", now=now))
    relevant = block.split("Cards relevant to this prompt", 1)[1].splitlines()[1:]  # the session-start block
    assert "works at Umbrella" in relevant[0], block


def test_an_old_card_that_answers_beats_a_new_one_that_barely_does(memory, at):
    at(T0)
    old = memory.remember("The VPN gateway for the Berlin office is vpn-ber.example.com").card_id
    at(T0 + timedelta(days=365))
    for i in range(3):
        memory.remember(f"Lunch order number {i} for the office party", importance=0.9)
    new = memory.remember("The office wifi is slow today", importance=0.9).card_id
    for _ in range(3):
        memory.recall("office wifi slow", now=T0 + timedelta(days=365))
    found = _ids(memory, "VPN gateway Berlin office", now=T0 + timedelta(days=365))
    assert found[0] == old and (new not in found or found.index(new) > 0)
