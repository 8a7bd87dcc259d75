"""Forget (docs/architecture.md, "Cards, relations, temperature"): remove from L2 (and L1) only
cards that are all of

- COLD (after the cool-down step of the same run),
- old: created at least `introspect.forget_min_age_days` ago, and not recalled within that time,
- rarely used: `access_count` ≤ `introspect.forget_max_access`,
- not depended on: no incoming DEPENDS_ON, CAUSED_BY or CAUSES edge (another card needs it,
  was caused by it, or cites it as a cause).

L3 keeps everything: the session files and the card's context file stay, and the forget is
recorded in `raw/curation.jsonl` so that `alaya rebuild` does not bring the card back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..store.raw import CURATION_LOG
from .common import as_datetime, iso, parse_time

if TYPE_CHECKING:
    from ..memory import Memory
    from ..store.ports.upkeep import CardRow


def eligible(rows: list["CardRow"], protected: set[str], now: Any, config: Any) -> list[str]:
    chosen = []
    for row in rows:
        if row.tier != "COLD" or row.access_count > config.forget_max_access or row.id in protected:
            continue
        created = parse_time(row.created_at)
        seen = parse_time(row.last_accessed)
        if created is None or (now - created).total_seconds() < config.forget_min_age_days * 86400:
            continue
        if seen is not None and (now - seen).total_seconds() < config.forget_min_age_days * 86400:
            continue
        chosen.append(row.id)
    return chosen


def forget(memory: "Memory", *, now: Any = None, dry_run: bool = False) -> dict[str, Any]:
    moment = as_datetime(now)
    config = memory.config.introspect
    with memory.reading("introspect forget (reading cards)") as graph:
        rows = graph.card_rows()
        protected = graph.depended_on()
    chosen = eligible(rows, protected, moment, config)
    cold = sum(1 for r in rows if r.tier == "COLD")
    report: dict[str, Any] = {"cold": cold, "eligible": len(chosen), "forgotten": 0, "cards": chosen[:50]}
    if dry_run or not chosen:
        return report
    stamp = iso(moment)
    with memory.writing("introspect forget") as graph:
        with graph:
            # re-check under the lock: a card recalled, warmed up or newly depended on stays
            now_chosen = eligible(graph.card_rows(chosen), graph.depended_on(), moment, config)
            memory.raw.append_log(CURATION_LOG, [{"op": "forget", "card": c, "ts": stamp} for c in now_chosen])
            graph.remove_cards(now_chosen)
        memory.index.delete_cards(now_chosen)
    report["forgotten"] = len(now_chosen)
    return report
