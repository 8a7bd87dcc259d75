"""Regression: Kuzu 0.11.3 corrupted Session.last_card (then segfaulted) when a new session
with a NULL last_card was written after a few hundred cards had been distilled."""

from __future__ import annotations

from openclaw_alaya.maintenance.status import status as alaya_status
from openclaw_alaya.models import Session, Turn


def _session(k: int) -> Session:
    turns = [
        Turn(id=f"t{i}", role="user" if i % 2 else "assistant",
             content=f"We decided to use pnpm in project {k} step {i} because npm was slow.")
        for i in range(1, 13)
    ]
    return Session(id=f"s{k}", turns=turns)


def test_many_ingest_and_distill_rounds_keep_the_graph_readable(memory):
    k = 0
    for _round in range(4):
        for _ in range(20):
            k += 1
            memory.ingest(_session(k))
        memory.distill()
    sessions = memory.pending_sessions()
    assert sessions == []
    status = alaya_status(memory)
    assert status["sessions"] == 80 and status["cards"] > 700
    memory.ingest(_session(k + 1))  # a new session with no last card yet, after all the updates
    assert [s["id"] for s in memory.pending_sessions()] == [f"s{k + 1}"]
