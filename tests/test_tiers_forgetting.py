"""Issue 31: tiers that save cost, never findability, and forgetting that removes noise, not
knowledge, on real stores (Kuzu and LanceDB on disk) with the memory clock moved forward.

- A COLD card keeps its L1 row: recall finds it by a word query and by a query only its vector
  matches, 60 and 365 days after it was written (before issue 31 it lost both at ~day 49).
- introspect at +181 and +365 days forgets no owner-stated card (before: every old, unrecalled,
  COLD one); it forgets the agent's filler and old superseded facts, and `alaya introspect
  --dry-run` lists each with its reason; the curation log keeps the reason (metrics counts it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone

from test_maintenance import card, cards_of, put

from openclaw_alaya.maintenance import introspect, temperature
from openclaw_alaya.maintenance.common import iso
from openclaw_alaya.maintenance.verify import verify
from openclaw_alaya.store.raw import read_log

FACT = "The billing pool runs on PostgreSQL with forty connections"
# no word of FACT after stemming (so full-text search misses it), but its character n-grams
# ("postgre", "billin") are the hash embedder's features: only the vector matches
ONLY_BY_MEANING = "postgre billin"
MAINTENANCE = ["fold-access", "cool-down", "forget"]


def _found(memory, query: str, now: datetime) -> list[str]:
    return [n.card_id for n in memory.recall(query, now=now).nodes[:5]]


def test_cold_card_is_found_by_words_and_by_meaning_after_60_and_365_days(memory):
    cid = memory.remember(FACT).card_id
    made = datetime.fromisoformat(cards_of(memory)[cid].created_at)
    assert not memory.index.text_search(ONLY_BY_MEANING, 10)  # words alone cannot reach it
    for days in (60, 365):
        later = made + timedelta(days=days)
        assert introspect.run(memory, steps=MAINTENANCE, now=later)["ok"]
        assert cards_of(memory)[cid].tier == "COLD"
        assert cid in _found(memory, "billing pool", later), days
        assert cid in _found(memory, ONLY_BY_MEANING, later), days
    report = introspect.run(memory, steps=["cool-down"], now=made + timedelta(days=365))
    assert report["steps"][0]["result"]["tiers"] == {"COLD": 1}
    assert verify(memory)["ok"]  # a COLD card's row is where it belongs, not stale
    saved = temperature.footprint(memory)
    assert saved["unfindable_cards"] == 0 and saved["tiers"] == {"COLD": 1} and saved["l1_bytes"] > 0


def test_a_year_of_introspect_forgets_no_owner_stated_card(memory):
    facts = ["I prefer pnpm over npm for every project", "We decided to deploy on Fridays only before noon",
             "My dentist appointment is on the third of March", FACT]
    owned = {memory.remember(text).card_id for text in facts}
    made = min(datetime.fromisoformat(c.created_at) for c in cards_of(memory).values())
    for days in (181, 365):
        report = introspect.run(memory, steps=MAINTENANCE, now=made + timedelta(days=days))
        forget_step = next(s for s in report["steps"] if s["step"] == "forget")
        assert forget_step["result"]["forgotten"] == 0, forget_step
        assert owned <= set(cards_of(memory))
    later = made + timedelta(days=365)
    for text in facts:  # and each is still found by what it says
        assert any(n.card_id in owned for n in memory.recall(text, now=later).nodes[:5]), text


T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def test_filler_and_superseded_are_forgotten_with_their_reason(memory, tmp_path):
    old = T0
    superseded = card("card-old-pool", "The billing pool size is 20 connections", created=old, importance=0.7)
    superseded = superseded.model_copy(update={"valid_until": iso(old + timedelta(days=10))})
    put(memory, [
        card("card-thanks", "Assistant: Thanks, that helps!", created=old, importance=0.7),
        superseded,
        card("card-new-pool", "The billing pool size is 40 connections", created=old + timedelta(days=10),
             importance=0.7),
        card("card-owner-old", "The billing pool size was 10 connections at launch", created=old,
             origin="owner").model_copy(update={"valid_until": iso(old + timedelta(days=5))}),
    ])
    later = old + timedelta(days=181)
    env = dict(os.environ, ALAYA_NOW=iso(later))
    dry = subprocess.run([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(memory.dirs.root), "introspect",
                          "--dry-run", "--steps", ",".join(MAINTENANCE), "--json"],
                         capture_output=True, text=True, timeout=120, env=env)
    assert dry.returncode == 0, dry.stderr
    step = next(s for s in json.loads(dry.stdout)["steps"] if s["step"] == "forget")["result"]
    assert {c["card"]: c["reason"] for c in step["cards"]} == {"card-thanks": "filler",
                                                                 "card-old-pool": "superseded"}
    assert step["reasons"] == {"filler": 1, "superseded": 1}
    assert set(cards_of(memory)) >= {"card-thanks", "card-old-pool"}  # a dry run changes nothing

    assert introspect.run(memory, steps=MAINTENANCE, now=later)["ok"]
    assert set(cards_of(memory)) == {"card-new-pool", "card-owner-old"}  # the owner's history stays
    logged = {r["card"]: r["reason"] for r in read_log(memory.dirs.raw / "curation.jsonl") if r.get("op") == "forget"}
    assert logged == {"card-thanks": "filler", "card-old-pool": "superseded"}
