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
