"""Session start keeps the request's time (issue 31): "Recent sessions" are those that happened
lately by their own time (their turns' time stamps, else their start), not those captured lately
(a bulk import of year-old sessions is not recent); the block's recall counts from
`StartRequest.now`, as the short-term window does; and a naive `now` is read as UTC, as recall
reads one (`recall.periods.aware`), rather than raising a TypeError against the stored, zoned
stamps."""

from __future__ import annotations

import json
import os
from datetime import datetime, timedelta, timezone

import pytest

from openclaw_alaya.bridge.inject import StartRequest, build

HEADING = "## Recent sessions"
NOW = datetime(2026, 12, 3, 9, 0, tzinfo=timezone.utc)


def _session(session_id: str, text: str, at: datetime) -> bytes:
    stamp = at.isoformat(timespec="seconds")
    turns = [{"id": "t1", "role": "user", "content": text, "timestamp": stamp},
             {"id": "t2", "role": "assistant", "content": "Noted, I will keep that in mind.", "timestamp": stamp}]
    return json.dumps({"session_id": session_id, "started_at": stamp, "turns": turns}).encode()


@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    """Captured today (ALAYA_NOW): an import of two sessions from a year ago, one from two days
    ago, and two decisions a month apart (the later one in the week before today)."""
    from openclaw_alaya import Alaya

    before = os.environ.get("ALAYA_NOW")
    os.environ["ALAYA_NOW"] = NOW.isoformat()
    try:
        memory = Alaya(tmp_path_factory.mktemp("start-time") / "data")
        memory.init()
        memory.ingest(_session("imported-1", "We migrated the wiki to Confluence last spring.", NOW - timedelta(days=370)))
        memory.ingest(_session("imported-2", "The offsite in Porto was a success for the whole team.", NOW - timedelta(days=365)))
        memory.ingest(_session("lately", "We renamed the relay service to courier.", NOW - timedelta(days=2)))
        memory.ingest(_session("pg", "We decided to use Postgres for the billing ledger.", NOW - timedelta(days=40)))
        memory.ingest(_session("kafka", "We decided to use Kafka for the billing events.", NOW - timedelta(days=4)))
        memory.distill()
    finally:
        os.environ.pop("ALAYA_NOW", None)
        if before is not None:
            os.environ["ALAYA_NOW"] = before
    return memory


def _recent(block: str) -> str:
    start = block.index(HEADING)
    end = block.find("\n## ", start + 1)
    return block[start:end if end > 0 else None]


def test_an_import_of_old_sessions_is_not_recent(memory):
    """Main: all five, imported today, were "recent"."""
    recent = _recent(build(memory, StartRequest(now=NOW, budget=4000)))
    assert "courier" in recent and "Kafka" in recent
    assert "Confluence" not in recent and "Porto" not in recent and "Postgres" not in recent


def test_the_blocks_recall_counts_from_the_requests_now(memory):
    """Asked as of a week after the Postgres decision, "last week" is that week (main: the
    clock's week, the Kafka decision's)."""
    block = build(memory, StartRequest(prompt="what did we decide last week?", now=NOW - timedelta(days=33), budget=4000))
    cards = block[block.index("Cards relevant to this prompt"):]
    assert "Postgres" in cards and ("Kafka" not in cards or cards.index("Postgres") < cards.index("Kafka")), cards


def test_a_naive_now_is_read_as_utc(memory):
    """Main: TypeError (can't compare offset-naive and offset-aware datetimes)."""
    naive = build(memory, StartRequest(prompt="what did we rename?", now=NOW.replace(tzinfo=None), budget=4000))
    assert naive == build(memory, StartRequest(prompt="what did we rename?", now=NOW, budget=4000))
    assert "courier" in _recent(naive)
