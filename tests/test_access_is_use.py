"""What counts as a use of a card (issue 31): the access log's lines are the agent's and the
owner's recalls, folded once into the cards' counts and the usage history alike.

- The fold reads each log once (maintenance/access.py): a recall that opened the log just
  before the fold renamed it writes its line into the renamed file while the fold runs; that
  line is counted on the card and in the usage history both, never in one only (the history
  used to re-read the files under the lock and saw lines the counts had not).

Real Kuzu and LanceDB stores."""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone

import pytest

from openclaw_alaya.maintenance import access, introspect, usage

DAY = [datetime(2027, 3, d, 9, tzinfo=timezone.utc) for d in range(1, 12)]
ALICE = "Alice is the billing lead at Acme and owns the invoice pipeline."
PROMPTS = ["who leads billing at Acme", "invoice pipeline owner", "Alice billing lead"]


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
