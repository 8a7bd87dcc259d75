"""What counts as a use of a card (issue 31): the access log's lines are the agent's and the
owner's recalls, folded once into the cards' counts and the usage history alike.

- The fold reads each log once (maintenance/access.py): a recall that opened the log just
  before the fold renamed it writes its line into the renamed file while the fold runs; that
  line is counted on the card and in the usage history both, never in one only (the history
  used to re-read the files under the lock and saw lines the counts had not).
- Session start's own recall (bridge/inject.py) and forget-by-query's search (curate/forget.py)
  are exposure, not use (engine.recall's `log_access`): they lift no card's access count, no
  metrics recall, and no core evidence; an agent's recall does.

Real Kuzu and LanceDB stores; `alaya hook session-start`, `alaya forget --query` and the
agent's `memory_search` tool as subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from openclaw_alaya.bridge import inject
from openclaw_alaya.maintenance import access, core, introspect, metrics, usage

DAY = [datetime(2027, 3, d, 9, tzinfo=timezone.utc) for d in range(1, 12)]
ALICE = "Alice is the billing lead at Acme and owns the invoice pipeline."
PROMPTS = ["who leads billing at Acme", "invoice pipeline owner", "Alice billing lead"]


def alaya(data: Path, now: datetime, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "ALAYA_NOW": now.isoformat(), "ALAYA_NO_SERVE": "1"}
    env.pop("ALAYA_HOME", None)
    proc = subprocess.run([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(data), *args], input=stdin,
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc


def access_count(memory, card_id: str) -> int:
    return next(c.access_count for c in memory.list_cards().cards if c.id == card_id)


@pytest.mark.parametrize("steps", [["fold-access"], ["fold-access", "cool-down"]], ids=["fold", "batch"])
def test_a_line_written_into_the_log_while_it_is_folded_counts_on_the_card_and_in_the_history_alike(
        memory, monkeypatch, steps):
    alice = memory.remember(ALICE).card_id
    assert memory.recall(PROMPTS[0], now=DAY[0]).nodes[0].card_id == alice
    # a recall that opened the log (append_line's O_APPEND open) just before the fold renamed it,
    # and writes its line once the fold has read the renamed file
    slow = os.open(memory.dirs.access_log, os.O_WRONLY | os.O_APPEND)
    late = json.dumps({"ts": DAY[1].timestamp(), "cards": [alice], "q": "late"}) + "\n"
    real, written = memory.writing, []

    def writing(operation, **options):
        if access.pending(memory) and not written:  # renamed and read: the hold comes next
            written.append(os.write(slow, late.encode()))
        return real(operation, **options)

    monkeypatch.setattr(memory, "writing", writing)
    try:
        report = next(s for s in introspect.run(memory, steps=steps, now=DAY[2])["steps"] if s["step"] == "fold-access")
    finally:
        os.close(slow)
    assert written and report["ok"], report
    history = usage.load(memory)
    assert access_count(memory, alice) == history.cards[alice].returned == 2
    assert report["result"]["lines"] == 2 and report["result"]["accesses"] == 2, report
    assert sum(d["recalls"] for d in history.days.values()) == 2
    assert not access.pending(memory)


def test_session_start_and_forget_by_query_are_no_use_and_an_agent_recall_is(memory):
    alice = memory.remember(ALICE).card_id
    data = memory.dirs.root
    start = alaya(data, DAY[0], "hook", "session-start",
                  stdin=json.dumps({"agentId": "main", "sessionId": "s-new", "prompt": PROMPTS[0]}))
    assert alice in json.loads(start.stdout)["prependContext"]  # the card was injected…
    dry = alaya(data, DAY[0], "forget", "--query", PROMPTS[1], "--dry-run", "--json")
    assert alice in dry.stdout  # …and found by forget's search, which forgot nothing
    introspect.run(memory, steps=["fold-access"], now=DAY[1])
    assert access_count(memory, alice) == 0  # …and neither was a use
    assert metrics.compute(memory, now=DAY[1])["recall"]["recalls"] == 0
    assert alice not in usage.load(memory).cards
    # the agent's own recall is
    tool = alaya(data, DAY[1], "hook", "tool", "memory_search",
                 stdin=json.dumps({"agentId": "main", "sessionId": "s-new", "params": {"query": PROMPTS[2]}}))
    assert alice in tool.stdout
    introspect.run(memory, steps=["fold-access"], now=DAY[2])
    assert access_count(memory, alice) == 1
    assert metrics.compute(memory, now=DAY[2])["recall"]["last_7_days"] == {"recalls": 1, "hits": 1, "hit_rate": 1.0}


def test_a_card_injected_at_every_session_start_is_not_promoted_to_the_core_and_one_recalled_is(memory, monkeypatch):
    """Injection feeding core evidence would promote a card for being injected, and keep it there."""
    alice = memory.remember(ALICE).card_id
    for prompt, day in zip(PROMPTS, DAY):  # three questions on three days, at session start only
        monkeypatch.setenv("ALAYA_NOW", day.isoformat())
        assert alice in inject.build(memory, inject.StartRequest(agent_id="main", prompt=prompt, now=day))
    monkeypatch.delenv("ALAYA_NOW")
    report = introspect.run(memory, steps=["fold-access", "core"], now=DAY[3])
    assert next(s["result"] for s in report["steps"] if s["step"] == "core")["promoted"] == []
    for prompt, day in zip(PROMPTS, DAY[4:]):  # the same three questions asked by the agent
        assert memory.recall(prompt, top_k=1, now=day).nodes[0].card_id == alice
    report = introspect.run(memory, steps=["fold-access", "core"], now=DAY[7])
    assert next(s["result"] for s in report["steps"] if s["step"] == "core")["promoted"] == [alice]
    assert core.core_state.path_of(memory).exists()
