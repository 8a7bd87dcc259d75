"""What recall was asked and gave back, kept after the access log is folded (issue 31):
`state/usage.json`. The fold (access.py) turns the log into `access_count` and `last_accessed`
and removes it; the curated core (which cards were recalled by how many distinct questions on
how many days) and the metrics (how many recalls found anything, per day) need more than those
two columns, so the same hold that removes a folded log first merges it here.

    {"version": 1,
     "days":  {"YYYY-MM-DD": {"recalls": n, "hits": m}},         recalls that day; hits: found ≥ 1 card
     "cards": {"<card id>": {"queries": ["<query key>", …],       distinct `q`s that returned it (≤ 32)
                             "days": ["YYYY-MM-DD", …],           distinct days it was returned (≤ 32, newest)
                             "returned": n}}}                     times it was returned

Days are UTC, on the memory's clock (the log's `ts`). Bounded: at most `MAX_KEYS` queries and
days per card (the newest days kept), `MAX_DAYS` days of counts. A damaged file is read as
empty (its history is a statistic, never memory) and rewritten whole on the next fold.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..store.fsutil import atomic_write
from ..store.trust import read_trusted

if TYPE_CHECKING:
    from ..memory import Memory

VERSION = 1
MAX_KEYS = 32
MAX_DAYS = 800


@dataclass
class CardUsage:
    queries: list[str] = field(default_factory=list)
    days: list[str] = field(default_factory=list)
    returned: int = 0


@dataclass
class Usage:
    days: dict[str, dict[str, int]] = field(default_factory=dict)
    cards: dict[str, CardUsage] = field(default_factory=dict)

    def add(self, record: dict[str, Any]) -> None:
        """One access-log line (access.py's shape); a line that is not one is skipped."""
        cards, ts, key = record.get("cards"), record.get("ts"), record.get("q")
        if not isinstance(cards, list) or not isinstance(ts, (int, float)):
            return
        day = datetime.fromtimestamp(float(ts), timezone.utc).date().isoformat()
        counts = self.days.setdefault(day, {"recalls": 0, "hits": 0})
        counts["recalls"] += 1
        counts["hits"] += 1 if cards else 0
        for cid in dict.fromkeys(c for c in cards if isinstance(c, str)):
            entry = self.cards.setdefault(cid, CardUsage())
            entry.returned += 1
            if isinstance(key, str) and key not in entry.queries and len(entry.queries) < MAX_KEYS:
                entry.queries.append(key)
            if day not in entry.days:
                entry.days = sorted([*entry.days, day])[-MAX_KEYS:]

    def dump(self) -> dict[str, Any]:
        days = dict(sorted(self.days.items())[-MAX_DAYS:])
        return {"version": VERSION, "days": days,
                "cards": {cid: {"queries": u.queries, "days": u.days, "returned": u.returned}
                          for cid, u in sorted(self.cards.items())}}


def path_of(memory: "Memory") -> Path:
    return memory.dirs.state / "usage.json"


def load(memory: "Memory") -> Usage:
    """The history so far (empty when there is none, or it cannot be read)."""
    try:
        data = json.loads(read_trusted(path_of(memory)).decode("utf-8"))
    except (OSError, ValueError):
        return Usage()
    if not isinstance(data, dict) or data.get("version") != VERSION:
        return Usage()
    usage = Usage()
    for day, counts in _entries(data, "days"):
        try:
            usage.days[str(day)] = {"recalls": int(counts.get("recalls", 0)), "hits": int(counts.get("hits", 0))}
        except (TypeError, ValueError):  # one damaged entry is skipped, not the whole history
            continue
    for cid, entry in _entries(data, "cards"):
        try:
            usage.cards[str(cid)] = CardUsage(queries=[str(q) for q in entry.get("queries", [])][:MAX_KEYS],
                                              days=[str(d) for d in entry.get("days", [])][-MAX_KEYS:],
                                              returned=int(entry.get("returned", 0)))
        except (TypeError, ValueError):
            continue
    return usage


def _entries(data: dict[str, Any], key: str) -> list[tuple[Any, dict[str, Any]]]:
    """The part `key` of the file as (key, entry) pairs, leaving out what is not an object."""
    part = data.get(key)
    return [(k, v) for k, v in part.items() if isinstance(v, dict)] if isinstance(part, dict) else []


def record(memory: "Memory", records: Iterable[dict[str, Any]]) -> None:
    """Under the write lock, before the folded logs are removed: the records the fold read from
    them (the same ones it counted on the cards) merged into the history (one atomic rewrite)."""
    usage = load(memory)
    for line in records:
        usage.add(line)
    atomic_write(path_of(memory), json.dumps(usage.dump(), ensure_ascii=False, separators=(",", ":")))
