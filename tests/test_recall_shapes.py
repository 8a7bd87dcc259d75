"""Issue 16's entity and opinion recall shapes on the workspace fixture, after `alaya reflect`:
"tell me about Bob" gives reflect's summary of Bob first, then his cards; "what does Bob
prefer?" gives his opinion with its confidence and the evidence reflect counted; the summary
card is updated in place by a later reflect, replayed by rebuild and never evidence itself."""

from __future__ import annotations

import pytest

from openclaw_alaya.cli.render import render_recall
from openclaw_alaya.maintenance.rebuild import rebuild
from openclaw_alaya.maintenance.reflect import reflect
from openclaw_alaya.maintenance.workspace import sync
from openclaw_alaya.models import ENTITY_TYPE
from openclaw_alaya.tools.catalog import _node

from test_reflect import CONTRA, OPINION, SUPPORT, note
from test_workspace import all_cards, make_workspace


@pytest.fixture
def workspace(tmp_path):
    return make_workspace(tmp_path / "workspace")


def reflected(memory, root) -> dict:
    sync(memory, root, agent_id="main")
    return reflect(memory)["reports"][0]


def summaries(memory) -> dict[str, object]:
    return {c.entities[0]: c for c in all_cards(memory).values() if c.type == ENTITY_TYPE}


def test_tell_me_about_an_entity_gives_its_summary_then_its_facts(memory, workspace):
    note(workspace, "2025-12-01", SUPPORT)
    reflected(memory, workspace)
    found = summaries(memory)
    assert {"Bob", "Acme", "张三", "billing"} <= set(found)
    bob = found["Bob"]
    assert bob.scope == "main" and bob.origin == "agent" and bob.session_kind == "import"
    assert bob.sources[0].path == "bank/entities/Bob.md" and "Bob caught the race condition" in bob.content

    nodes = memory.recall("tell me about Bob", scope="main").nodes
    assert nodes[0].card_id == bob.id and nodes[0].source == "bank/entities/Bob.md"
    assert all("Bob" in n.entities for n in nodes[1:3]), [(n.title, n.entities) for n in nodes]
    # a question that only mentions Bob ranks as before: no shape, the summary is just a card
    assert memory.recall("Bob race condition review", scope="main").nodes[0].card_id != bob.id


def test_a_later_reflect_updates_the_same_card_and_rebuild_replays_it(memory, workspace):
    reflected(memory, workspace)
    before = summaries(memory)["Bob"]
    again = reflected(memory, workspace)
    assert again["summaries"] == []  # nothing new: not written again

    note(workspace, "2025-12-01", SUPPORT)
    later = reflected(memory, workspace)
    after = summaries(memory)["Bob"]
    assert after.id == before.id and before.id in later["summaries"]
    assert "race condition" in after.content and "race condition" not in before.content
    assert len([c for c in summaries(memory).values() if "Bob" in c.entities]) == 1

    report = rebuild(memory)  # L2 from L3: the summary's record in raw/curation.jsonl
    assert report["replayed"]["summary"] >= 1
    rebuilt = summaries(memory)["Bob"]
    assert (rebuilt.id, rebuilt.content) == (after.id, after.content)
    assert memory.recall("tell me about Bob", scope="main").nodes[0].card_id == after.id


def test_what_does_an_entity_prefer_gives_its_opinion_with_confidence_and_evidence(memory, workspace):
    note(workspace, "2025-12-01", SUPPORT)
    note(workspace, "2025-12-02", CONTRA)
    report = reflected(memory, workspace)
    counted = report["updated"][0]
    assert len(counted["supporting"]) == 1 and len(counted["contradicting"]) == 1

    result = memory.recall("what does Bob prefer?", scope="main")
    opinion = next(n for n in result.nodes if n.kind == "opinion")
    assert OPINION in opinion.content and opinion is result.nodes[0]
    assert opinion.confidence == 0.9049 and opinion.source == "memory/2025-11-27.md#L7"
    assert (opinion.supporting, opinion.contradicting) == (counted["supporting"], counted["contradicting"])
    assert all(n.supporting is None for n in result.nodes if n.kind != "opinion")
    assert f"opinion: confidence 0.9049 · supporting: {counted['supporting'][0]}" in render_recall(result)
    assert _node(opinion)["contradicting"] == counted["contradicting"]
    assert "supporting" not in _node(next(n for n in result.nodes if n.kind != "opinion"))


def test_reflect_never_counts_its_own_summary_as_evidence(memory, workspace):
    reflected(memory, workspace)  # the summaries now exist, quoting the opinion word for word
    note(workspace, "2025-12-01", SUPPORT)
    report = reflected(memory, workspace)
    ids = {c.id for c in summaries(memory).values()}
    assert [len(u["supporting"]) for u in report["updated"]] == [1]
    assert not ids & {i for u in report["updated"] for i in u["supporting"] + u["contradicting"]}
    bob_page = (workspace / "bank/entities/Bob.md").read_text(encoding="utf-8")
    assert "What the workspace says" not in bob_page.split("## What is known")[1]  # the summary is not one of its facts
