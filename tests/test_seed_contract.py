"""The seed's design contract (issue 17): the session JSON format's `agent`, `channel`,
`metadata` and per-turn `tokens` and `tool_calls` are kept; Session nodes carry `channel` and
`summary`; relations carry a `reason`; `recall --rel` follows similar relations too; `alaya
backup` writes a `.tar.gz`. (A card HOT on creation: test_maintenance.py.)"""

from __future__ import annotations

import json

SEED = {
    "session_id": "seed-1",
    "agent": "ops-bot",
    "channel": "telegram",
    "started_at": "2026-03-02T09:00:00+00:00",
    "title": "Billing connection pool",
    "metadata": {"project": "billing", "labels": ["incident"], "token": "sk-proj-abcdefghijklmnopqrstuvwxyz123456"},
    "turns": [
        {"id": "t1", "role": "user", "content": "Why did billing run out of database connections?", "tokens": 12},
        {"id": "t2", "role": "assistant", "content": "PgBouncer's pool size was 20 while the workers opened 50.",
         "tokens": 18, "tool_calls": [{"name": "grep_logs", "arguments": {"pattern": "too many clients"}}]},
    ],
}


def test_seed_session_fields_are_kept(memory):
    result = memory.ingest(json.dumps(SEED).encode())
    session = memory.raw.load(result.session_id)
    assert session.agent_id == "ops-bot"  # `agent`: the scope its cards get
    assert session.channel == "telegram"
    assert session.metadata["project"] == "billing" and session.metadata["labels"] == ["incident"]
    assert "sk-proj-abcdefghijklmnopqrstuvwxyz123456" not in json.dumps(session.metadata)  # redacted like the turns
    first, second = session.turns
    assert (first.tokens, first.tool_calls) == (12, None)
    assert second.tokens == 18 and second.tool_calls == [{"name": "grep_logs", "arguments": {"pattern": "too many clients"}}]
    doc = json.loads(memory.raw.find(result.session_id).read_text())
    assert doc["agent_id"] == "ops-bot" and doc["channel"] == "telegram"
    assert "tool_calls" not in doc["turns"][0] and doc["turns"][1]["tool_calls"][0]["name"] == "grep_logs"
    memory.distill()
    assert {c.scope for c in memory.list_cards().cards} == {"ops-bot"}


def node(memory, session_id: str) -> dict:
    with memory.reading("test") as graph:
        return graph.get_session(session_id)


def test_session_node_has_channel_and_summary(memory):
    memory.ingest(json.dumps(SEED).encode())
    row = node(memory, "seed-1")
    assert row["channel"] == "telegram" and row["summary"] == "Billing connection pool"  # its title, until distilled
    untitled = {"session_id": "seed-2", "agent": "ops-bot", "turns": [
        {"id": "t1", "role": "user", "content": "We decided to deploy the billing service on Tuesdays only."}]}
    memory.ingest(json.dumps(untitled).encode())
    assert node(memory, "seed-2")["summary"] is None and node(memory, "seed-2")["channel"] is None
    memory.distill()
    cards = {c.title for c in memory.list_cards().cards if c.sources[0].session_id == "seed-2"}
    assert node(memory, "seed-2")["summary"] in cards  # offline: its first card's title
    assert node(memory, "seed-1")["summary"] == "Billing connection pool"


def cards(memory, *texts: str) -> list[str]:
    from test_maintenance import card, put

    made = [card(f"card-{i}", text, session=f"s{i}") for i, text in enumerate(texts)]
    put(memory, made)
    return [c.id for c in made]


def test_link_reason_is_kept_replayed_and_recalled(memory, tmp_path):
    from test_cli import alaya, ok

    from openclaw_alaya.maintenance.rebuild import rebuild
    from openclaw_alaya.store.raw import read_log

    from helpers import session_json

    for sid, text in (("s-a", "We found that the nightly export job timed out at 02:00."),
                      ("s-b", "We decided the export query must stop scanning the whole events table.")):
        memory.ingest(session_json(sid, [("user", text)]))
    memory.distill()
    by_session = {c.sources[0].session_id: c.id for c in memory.list_cards().cards}
    a, b = by_session["s-a"], by_session["s-b"]  # derived from L3, so a rebuild makes them again
    out = ok(alaya(tmp_path / "data", "link", a, b, "--rel", "CAUSED_BY", "--reason", "the slow query log shows it"))
    assert "the slow query log shows it" in out
    assert read_log(memory.dirs.raw / "links.jsonl")[-1]["reason"] == "the slow query log shows it"
    default = memory.link(b, a)  # RELATES_TO unless told
    assert default.rel == "RELATES_TO" and default.reason is None

    def walked():
        result = memory.recall(from_nodes=[a], relations=["CAUSED_BY"], depth=1)
        return [(n.card_id, n.matched_rel, n.matched_reason) for n in result.nodes]

    assert walked() == [(b, "CAUSED_BY", "the slow query log shows it")]
    shown = ok(alaya(tmp_path / "data", "recall", "--from-nodes", a, "--rel", "CAUSED_BY", "--depth", "1"))
    assert "via CAUSED_BY (rel 1.00): the slow query log shows it" in shown  # the text form says why too
    back = memory.recall(from_nodes=[b], relations=["CAUSES"], depth=1).nodes  # the inverse edge has it too
    assert [(n.card_id, n.matched_reason) for n in back] == [(a, "the slow query log shows it")]
    rebuild(memory)
    assert walked() == [(b, "CAUSED_BY", "the slow query log shows it")]  # replayed from raw/links.jsonl


def test_llm_distiller_keeps_the_proposed_reason_and_session_summary(monkeypatch):
    import httpx
    import respx
    from test_llm import API, SESSION, chat_body, config

    from openclaw_alaya.llm.distiller import LLMDistiller

    monkeypatch.setenv("ALAYA_TEST_KEY", "sk-test")
    answer = json.dumps({
        "cards": [{"title": "Kuzu for the card graph", "content": "The team uses Kuzu for the card graph.", "turns": [1]},
                  {"title": "Kuzu single writer", "content": "Kuzu allows one writer at a time.", "turns": [2]}],
        "links": [{"src": 1, "dst": 0, "rel": "DEPENDS_ON", "reason": "a  property of\nthe chosen database"}],
        "session_summary": "Chose Kuzu for the card graph and noted its single writer.",
    })
    with respx.mock(base_url=API) as mock:
        mock.post("/chat/completions").mock(return_value=httpx.Response(200, json=chat_body(answer)))
        result = LLMDistiller(config()).distill(SESSION)
    assert [link.reason for link in result.links] == ["a property of the chosen database"]
    assert result.summary == "Chose Kuzu for the card graph and noted its single writer."


def test_recall_rel_follows_similar_relations(memory):
    hub, cause, bug, needed = cards(memory, "Checkout failed for an hour", "The payment gateway rotated its keys",
                                    "A race in the retry loop doubled the requests", "Checkout needs the tax service")
    memory.link(hub, cause, "CAUSED_BY")
    memory.link(hub, bug, "CAUSED_BY_BUG")
    memory.link(hub, needed, "DEPENDS_ON")
    result = memory.recall(from_nodes=[hub], relations=["CAUSED_BY"], depth=1)
    got = {n.card_id: (n.matched_rel, n.rel_similarity) for n in result.nodes}
    assert got[cause] == ("CAUSED_BY", 1.0)  # the relation named fits fully
    rel, similarity = got[bug]
    assert rel == "CAUSED_BY_BUG" and 0.6 <= similarity < 1  # a similar one, as close as its name
    assert needed not in got  # not a kind of CAUSED_BY
    assert [n.card_id for n in result.nodes] == sorted(got, key=lambda c: next(n.h_distance for n in result.nodes if n.card_id == c))
    memory.config.recall.rel_similarity_threshold = 0.9
    assert {n.card_id for n in memory.recall(from_nodes=[hub], relations=["CAUSED_BY"], depth=1).nodes} == {cause}


def test_a_store_without_channel_summary_and_reason_gains_them_before_a_read(memory):
    import kuzu

    from openclaw_alaya.store.embedded import graph as graph_module

    a, b = cards(memory, "The nightly export timed out", "The export query scans the whole events table")
    memory.link(a, b, "CAUSED_BY")
    memory.link(a, b, "LED_TO")
    db = kuzu.Database(str(memory.dirs.graph))  # back to schema 2: no Session.channel/summary, no edge reasons
    conn = kuzu.Connection(db)
    conn.execute("ALTER TABLE Session DROP channel")
    conn.execute("ALTER TABLE Session DROP summary")
    for rel in [*graph_module.CARD_RELATIONS, graph_module.CUSTOM]:
        conn.execute(f"ALTER TABLE {rel} DROP reason")
    conn.close()
    db.close()
    (memory.dirs.graph.parent / (memory.dirs.graph.name + ".schema")).write_text("2")
    graph_module._MIGRATED.clear()

    memory.upgrade()  # `alaya init`: a read would refuse the old schema
    result = memory.recall(from_nodes=[a], relations=["CAUSED_BY"], depth=1)
    assert [(n.card_id, n.matched_reason) for n in result.nodes] == [(b, None)]
    assert node(memory, "s0")["channel"] is None
    memory.link(a, b, "LED_TO", reason="seen in the logs")  # an edge made again takes the reason given now
    assert [n.matched_reason for n in memory.recall(from_nodes=[a], relations=["LED_TO"], depth=1).nodes] == ["seen in the logs"]
