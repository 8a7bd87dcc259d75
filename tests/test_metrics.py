"""Memory health (issue 31, must-show 3): `alaya metrics --json` on a store built so that every
metric's value is known in advance, the one line in `alaya status`, and the daily history that
introspect's `metrics` step keeps (one line per simulated day, `ALAYA_NOW`). Real Kuzu files,
real subprocesses; the recalls are the access-log lines and usage history recall and the fold
write (maintenance/access.py, usage.py), written here with known outcomes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from openclaw_alaya.models import Card
from openclaw_alaya.store import tombstones
from openclaw_alaya.store.raw import CURATION_LOG

NOW = datetime(2027, 3, 1, 12, 0, tzinfo=timezone.utc)

# (type, origin, session kind, tier, age in days, access_count): cards 0-7 are a month old,
# 8 and 9 a day old. Returned by recall: 0 (access_count), 1 (usage history), 2 and 8 (the
# access log not folded yet).
CARDS = [("decision", "owner", "interactive", "HOT", 30, 2), ("decision", "owner", "interactive", "HOT", 30, 0),
         ("decision", "agent", "interactive", "WARM", 30, 0), ("decision", "owner", "cron", "WARM", 30, 0),
         ("fact", "agent", "cron", "WARM", 30, 0), ("fact", "untrusted", "interactive", "COLD", 30, 0),
         ("fact", None, None, "COLD", 30, 0), ("preference", "owner", "interactive", "COLD", 30, 0),
         ("preference", "owner", "interactive", "WARM", 1, 0), ("gotcha", "agent", "interactive", "HOT", 1, 0)]
ENTITY_TYPES = {"Ana": "person", "Bo": "person", "Billing": "project", "Kuzu": ""}


def cid(i: int) -> str:
    return f"card-{i:04d}"


def day(delta: int) -> str:
    return (NOW + timedelta(days=delta)).date().isoformat()


@pytest.fixture
def store(memory) -> Path:
    stamp = lambda age: (NOW - timedelta(days=age)).isoformat()  # noqa: E731
    cards = [Card(id=cid(i), title=f"card {i}", content=f"content {i}", type=t, origin=o, session_kind=k, tier=tier,
                  created_at=stamp(age), updated_at=stamp(age), access_count=n, entities=[])
             for i, (t, o, k, tier, age, n) in enumerate(CARDS)]
    with memory.writing("test") as graph:
        with graph:
            graph.upsert_cards(cards)
            for name, kind in ENTITY_TYPES.items():
                graph.set_entity_type(name, kind)
    state = memory.dirs.state
    # folded: 10 recalls 40 days ago (6 found something), 4 ten days ago (3 did); a damaged entry
    usage = {"version": 1,
             "days": {day(-40): {"recalls": 10, "hits": 6}, day(-10): {"recalls": 4, "hits": 3},
                      day(-5): {"recalls": "many"}, day(-4): "damaged"},
             "cards": {cid(1): {"queries": ["k1"], "days": [day(-10)], "returned": 1}, "card-bad": {"returned": "x"}}}
    (state / "usage.json").write_text(json.dumps(usage))
    ts = (NOW - timedelta(days=1)).timestamp()
    lines = [{"ts": ts, "cards": [cid(2)], "q": "a"}, {"ts": ts, "cards": [], "q": "b"},
             {"ts": ts, "cards": [cid(8)], "q": "c"}]
    (state / "access.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines) + "not json\n{\"ts\": 1\n")
    memory.raw.append_log(CURATION_LOG, [{"op": "forget", "card": "card-old", "ts": stamp(20)},
                                         {"op": "forget", "card": "card-dup", "ts": stamp(2), "reason": "duplicate"},
                                         {"op": "merge", "keep": cid(0), "drop": "card-m", "ts": stamp(3)}])
    tombstones.record(memory.raw, [{"kind": "card", "id": "card-mine", "ts": stamp(3), "reason": "forgotten by request"},
                                   {"kind": "session", "id": "s-gone", "ts": stamp(3)}])
    return memory.dirs.root


def alaya(data: Path, *args: str, now: datetime = NOW) -> subprocess.CompletedProcess:
    env = {**os.environ, "ALAYA_NO_SERVE": "1", "ALAYA_NOW": now.isoformat()}
    return subprocess.run([sys.executable, "-m", "openclaw_alaya", "--data-dir", str(data), *args],
                          capture_output=True, text=True, env=env, timeout=120)


def ok(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result.stdout


def test_metrics_json_has_the_values_the_store_was_built_for(store):
    report = json.loads(ok(alaya(store, "metrics", "--json")))
    assert report["at"] == "2027-03-01" and report["cards"] == 10
    # 17 recalls: 10 + 4 folded, 3 in the log; 11 found something; the damaged entries skipped
    assert report["recall"] == {"recalls": 17, "hits": 11, "hit_rate": round(11 / 17, 4),
                                "last_7_days": {"recalls": 3, "hits": 2, "hit_rate": 0.6667},
                                "last_30_days": {"recalls": 7, "hits": 5, "hit_rate": 0.7143}}
    # 8 cards a month old, 3 of them returned (0, 1, 2); card 8 was returned but is a day old
    assert report["signal"] == {"min_age_days": 7, "cards": 8, "returned": 3, "ratio": 0.375, "by_origin": {
        "owner": {"cards": 4, "returned": 2, "ratio": 0.5}, "agent": {"cards": 2, "returned": 1, "ratio": 0.5},
        "unknown": {"cards": 1, "returned": 0, "ratio": 0.0}, "untrusted": {"cards": 1, "returned": 0, "ratio": 0.0}}}
    # types 4/3/2/1 of 10: H = 1.8464 bits, H / log2 4 = 0.9232; entities 2 person, 1 project
    assert report["entropy"]["card_types"] == {"types": 4, "bits": 1.8464, "normalised": 0.9232,
                                               "counts": {"decision": 4, "fact": 3, "preference": 2, "gotcha": 1}}
    assert report["entropy"]["entity_types"] == {"types": 2, "bits": 0.9183, "normalised": 0.9183,
                                                 "counts": {"person": 2, "project": 1}, "untyped": 1}
    assert report["cards_by_origin"] == {"owner": 5, "agent": 3, "unknown": 1, "untrusted": 1}
    assert report["cards_by_session_kind"] == {"interactive": 7, "cron": 2, "unknown": 1}
    assert report["tiers"] == {"HOT": 3, "WARM": 4, "COLD": 3}
    # introspect's forget without a reason (the age rule), one with a reason, the owner's tombstone
    assert report["forgotten"] == {"total": 3, "by_reason": {"age": 1, "duplicate": 1, "owner": 1}, "restored": 0}
    text = ok(alaya(store, "metrics"))
    assert "recall hit rate: 11/17 (65%)" in text and "3/8 (38%) of the cards at least 7 days old" in text


def test_status_has_the_health_line(store):
    status = json.loads(ok(alaya(store, "status", "--json")))
    assert status["health"].startswith("recall hit rate 65% of 17 recalls (last 7 days 67%);")
    assert "signal-to-noise 38% (3 of 8 cards ≥ 7 d old returned)" in status["health"]
    assert "cards 1.85 bits (4 types), entities 0.92 bits (2 types)" in status["health"]
    assert "health: recall hit rate 65%" in ok(alaya(store, "status"))


def test_introspect_keeps_one_line_per_simulated_day(store):
    history = store / "state" / "metrics.jsonl"
    ok(alaya(store, "introspect", "--steps", "metrics", "--dry-run"))
    assert not history.exists()  # a dry run computes and writes nothing
    for delta in (0, 0, 1, 2):  # the first day twice: its line is replaced, not doubled
        ok(alaya(store, "introspect", "--steps", "metrics", now=NOW + timedelta(days=delta)))
        if delta == 1:
            with open(history, "a") as handle:
                handle.write("{damaged\n[1, 2]\n")
    days = json.loads(ok(alaya(store, "metrics", "--history", "--json")))
    assert [d["day"] for d in days] == ["2027-03-01", "2027-03-02", "2027-03-03"]
    first, last = days[0], days[-1]
    assert (first["cards"], first["recalls"], first["hit_rate"], first["signal"]) == (10, 17, 0.6471, 0.375)
    assert (first["card_type_entropy"], first["tiers"], first["forgotten"]) == (1.8464, {"HOT": 3, "WARM": 4, "COLD": 3}, 3)
    # two days on, card 8 is still 3 days old and the log's recalls still within the week
    assert (last["hit_rate_7d"], last["signal"]) == (0.6667, 0.375)
    assert len(history.read_text().splitlines()) == 3  # the damaged lines dropped on the next write
    table = ok(alaya(store, "metrics", "--history"))
    assert table.splitlines()[1].split()[:5] == ["2027-03-01", "10", "17", "65%", "67%"]


def test_damaged_history_and_usage_read_without_a_traceback(store):
    (store / "state" / "usage.json").write_text("{not json")
    (store / "state" / "metrics.jsonl").write_text('{"day": "2027-02-01"}\nnot json\n')
    assert "no matching memories" in ok(alaya(store, "recall", "zzqx quibble"))  # a real recall that finds nothing
    report = json.loads(ok(alaya(store, "metrics", "--json")))
    assert (report["recall"]["recalls"], report["recall"]["hits"]) == (4, 2)  # the log alone, and that miss
    assert "2027-02-01" in ok(alaya(store, "metrics", "--history"))
