"""Introspect at scale: build N synthetic cards (default 10,000) directly in real stores, then
run `alaya introspect` and report the total time and how long the write lock was held.

    .venv/bin/python bench/introspect_scale.py [--cards 10000] [--keep DIR]

The cards come from 500-card-ish synthetic sessions stored in L3 (so verify stays clean), with
about 2% near-duplicates, similar pairs, a chain of TEMPORAL_NEXT links per session, creation
times spread over 180 days and an access log of 5,000 recalls. Target: the write lock is held
for under 5% of the introspect run (docs/architecture.md, "The lock protocol": slow work outside
the lock). From the batch's log it also prints whether the graph work went through a shadow copy, and where the hold went.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import shutil
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from openclaw_alaya import Alaya  # noqa: E402
from openclaw_alaya.distill.plan import card_id  # noqa: E402
from openclaw_alaya.maintenance.introspect import run  # noqa: E402
from openclaw_alaya.models import (  # noqa: E402
    Card,
    Session,
    SourceRef,
    Turn,
    expand_link,
    index_row,
    index_text,
)

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)
WORDS = ("billing pool pgbouncer kuzu lance graph index deploy staging cluster frontend pnpm monorepo "
         "timeout retry queue worker cron backup schema migration token auth mobile release checklist "
         "oncall rotation alert latency cache redis postgres vector embedding recall summary budget "
         "customer invoice export warehouse nightly pipeline airflow dashboard metric trace span log").split()
TYPES = ["concept", "pattern", "gotcha", "decision", "preference", "fact"]


def synthetic(n: int, rng: random.Random) -> list[tuple[Session, list[Card]]]:
    per = 20
    out = []
    base_texts: list[str] = []
    for s in range(0, n, per):
        sid = f"bench-{s // per:05d}"
        started = NOW - timedelta(days=rng.uniform(0, 180))
        turns, cards = [], []
        for k in range(min(per, n - s)):
            roll = rng.random()
            if base_texts and roll < 0.02:
                text = rng.choice(base_texts) + "."  # a near-duplicate of an earlier card
            elif base_texts and roll < 0.05:
                text = rng.choice(base_texts) + " " + rng.choice(WORDS)  # similar
            else:
                text = " ".join(rng.choice(WORDS) for _ in range(12)) + f" item {s + k}"
                base_texts.append(text)
            tid = f"t{k + 1}"
            turns.append(Turn(id=tid, role="user", content=text))
            stamp = (started + timedelta(minutes=k)).isoformat(timespec="seconds")
            cards.append(Card(id=card_id(sid, tid), title=text[:60], content=text, type=rng.choice(TYPES),
                              importance=round(rng.uniform(0.2, 1.0), 2), scope="shared",
                              sources=[SourceRef(session_id=sid, turn_ids=[tid])], created_at=stamp, updated_at=stamp))
        out.append((Session(id=sid, started_at=started.isoformat(timespec="seconds"), turns=turns), cards))
    return out


def build(memory: Alaya, n: int, rng: random.Random) -> None:
    data = synthetic(n, rng)
    all_cards = [c for _, cards in data for c in cards]
    vectors = memory.embedder.embed([index_text(c) for c in all_cards])
    with memory.writing("bench build") as graph:
        for session, _cards in data:
            memory.raw.write(session)
        with graph:
            for session, cards in data:
                graph.upsert_session({"id": session.id, "agent_id": "shared", "started_at": session.started_at,
                                      "ingested_at": session.started_at, "path": str(memory.raw.find(session.id)),
                                      "title": None, "source_format": "session-json", "turn_count": len(session.turns),
                                      "distilled_turns": len(session.turns), "last_card": cards[-1].id})
            graph.upsert_cards(all_cards)
            graph.link_to_sessions([{"card": c.id, "session": c.sources[0].session_id, "turns": c.sources[0].turn_ids}
                                    for c in all_cards])
            graph.add_links([link for _, cards in data for a, b in zip(cards, cards[1:])
                             for link in expand_link(a.id, b.id, "TEMPORAL_NEXT", 1.0, a.created_at)])
        memory.index.upsert_cards([index_row(c) for c in all_cards], vectors)
    with open(memory.dirs.access_log, "w") as log:
        for _ in range(5000):
            picks = rng.sample(all_cards, 3)
            log.write(json.dumps({"ts": (NOW - timedelta(days=rng.uniform(0, 30))).timestamp(),
                                  "cards": [c.id for c in picks]}) + "\n")


def _ids(memory: Alaya) -> list:
    with memory.reading("bench") as graph:
        return graph.query("MATCH (c:Card) RETURN c.id ORDER BY c.id")


class BatchLog(logging.Handler):
    """The batch's log records: how it applied (on a shadow copy or in place) and where the
    write-lock hold's milliseconds went (maintenance/batch.py)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.records: list[logging.LogRecord] = []
        batch_log = logging.getLogger("openclaw_alaya.maintenance.batch")
        batch_log.setLevel(logging.INFO)
        batch_log.addHandler(self)

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def lines(self) -> list[str]:
        def ms(parts: dict) -> str:
            return ", ".join(f"{name} {value:.0f}ms" for name, value in parts.items())

        return [f"  batch applied {r.applied}; in the hold: {ms(r.hold_ms)}; outside it: {ms(r.outside_ms)}"
                for r in self.records if hasattr(r, "applied")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=10_000)
    parser.add_argument("--keep", help="build the store in this folder and keep it")
    args = parser.parse_args()
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="alaya-bench-"))
    try:
        memory = Alaya(root / "data")
        memory.init()
        started = time.perf_counter()
        build(memory, args.cards, random.Random(5))
        print(f"built {args.cards} cards in {time.perf_counter() - started:.1f}s")
        ids = [r[0] for r in _ids(memory)]
        batch_log = BatchLog()
        for label, now in (("first run", NOW), ("next day", NOW + timedelta(days=1))):
            if label == "next day":  # a day of recalls later: the steady state of a scheduled job
                rng = random.Random(9)
                with open(memory.dirs.access_log, "a") as log:
                    for _ in range(500):
                        log.write(json.dumps({"ts": now.timestamp() - 3600, "cards": rng.sample(ids, 3)}) + "\n")
            memory.lock.write_holds.clear()
            batch_log.records.clear()
            started = time.perf_counter()
            report = run(memory, now=now)
            total = time.perf_counter() - started
            held = sum(seconds for _op, seconds in memory.lock.write_holds)
            print(f"{label}:")
            for step in report["steps"]:
                result = step.get("result") or {}
                brief = {k: v for k, v in result.items() if not isinstance(v, (list, dict))} if step["ok"] else step["error"]
                print(f"  {step['step']:<16} {step['seconds']:7.2f}s  {brief}")
            print("  write-lock holds: " + ", ".join(f"{op.split(' (')[0].replace('introspect ', '')} {s * 1000:.0f}ms"
                                                    for op, s in memory.lock.write_holds))
            print("\n".join(batch_log.lines()))
            print(f"introspect ({label}) on {args.cards} cards: {total:.2f}s total, write lock held {held:.3f}s "
                  f"({100 * held / total:.2f}% of the run; target < 5%)")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
